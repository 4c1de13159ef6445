"""The registry: built-ins, in-code registration, entry points (simulated here; a real
installed package is in test_plugins_entry_points.py), errors and the `plugins` command."""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import json
import subprocess
import sys

import pytest

import fortekit.plugins as plugins
from fortekit.errors import (
    PluginConflictWarning,
    PluginLoadError,
    PluginOptionError,
    PluginRegistrationError,
    UnknownPluginError,
)
from fortekit.plugins import Elaboration, list_plugins
from fortekit.search.cli.plugins import add_plugin_commands


class EchoElaborator:
    """Echo: the query as its own positive, 'not' + query as negative."""

    name = "echo"

    def __init__(self, prefix: str = "not ") -> None:
        self.prefix = prefix

    def elaborate(self, query: str) -> Elaboration:
        return Elaboration(query, (query,), (self.prefix + query,))


@pytest.fixture
def echo():
    plugins.register_elaborator("echo", EchoElaborator)
    yield
    plugins.unregister_elaborator("echo")


def fake_entry_points(monkeypatch: pytest.MonkeyPatch, *points: importlib.metadata.EntryPoint) -> None:
    real = importlib.metadata.entry_points

    def entry_points(**params):
        if params.get("group") == points[0].group:
            return importlib.metadata.EntryPoints(points)
        return real(**params)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_importing_the_registry_does_not_import_torch() -> None:
    code = "import sys, fortekit.plugins as p; p.available_backbones(); p.list_plugins(); " \
           "print('torch' in sys.modules, 'transformers' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_builtins_are_listed_by_kind() -> None:
    assert {"minilm", "hf-clap", "laion-clap", "msclap"} <= set(plugins.available_backbones())
    assert {"hf-llm", "file"} <= set(plugins.available_elaborators())
    assert {"stored", "hf-captioner"} <= set(plugins.available_captioners())
    rows = {row.name: row for row in list_plugins("backbone")}
    assert rows["minilm"].source == "built-in"
    assert rows["minilm"].target == "fortekit.plugins.backbones.minilm:MiniLMBackbone"
    with pytest.raises(PluginOptionError, match="kind"):
        list_plugins("encoder")


def test_register_with_the_decorator_and_build_with_options(echo) -> None:
    assert "echo" in plugins.available_elaborators()
    elaborator = plugins.get_elaborator("echo", prefix="no ")
    positives, negatives = elaborator.elaborate("rain")
    assert (positives, negatives) == (("rain",), ("no rain",))
    row = next(row for row in list_plugins("elaborator") if row.name == "echo")
    assert (row.source, row.target) == ("code", f"{__name__}:EchoElaborator")
    assert row.summary.startswith("Echo:")


def test_decorator_form_returns_the_class_unchanged() -> None:
    @plugins.register_captioner("shout")
    class Shout:
        name = "shout"

        def caption(self, items):
            return ["LOUD" for _ in items]

    try:
        assert Shout.__name__ == "Shout"
        assert plugins.get_captioner("shout").caption(["a.wav", "b.wav"]) == ["LOUD", "LOUD"]
    finally:
        plugins.unregister_captioner("shout")
    assert "shout" not in plugins.available_captioners()


def test_names_are_checked_and_taken_names_need_override(echo) -> None:
    with pytest.raises(PluginRegistrationError, match=r"E201.*echo"):
        plugins.register_elaborator("echo", EchoElaborator)
    with pytest.raises(PluginRegistrationError, match=r"E201.*built-in"):
        plugins.register_backbone("minilm", EchoElaborator)
    for bad in ("", "Has Space", "UPPER", "-x", 3):
        with pytest.raises(PluginRegistrationError, match="E202"):
            plugins.register_backbone(bad, EchoElaborator)  # type: ignore[arg-type]
    with pytest.raises(PluginRegistrationError, match="callable"):
        plugins.register_backbone("not-callable", "EchoElaborator")  # type: ignore[arg-type]
    plugins.register_elaborator("echo", lambda: EchoElaborator("never "), override=True)
    assert plugins.get_elaborator("echo").elaborate("x").negatives == ("never x",)


def test_unknown_name_lists_the_available_ones() -> None:
    with pytest.raises(UnknownPluginError) as caught:
        plugins.get_backbone("hf_clap")
    message = str(caught.value)
    assert "E200" in message and "Did you mean 'hf-clap'" in message
    assert "minilm" in message and "fortekit.backbones" in message
    assert caught.value.kind == "backbone" and "minilm" in caught.value.available
    assert isinstance(caught.value, LookupError)


def test_a_plugin_missing_members_is_reported() -> None:
    plugins.register_backbone("half", lambda: EchoElaborator())
    try:
        with pytest.raises(PluginLoadError, match=r"E204.*lacks dim, device, sample_rate, encode_text"):
            plugins.get_backbone("half")
    finally:
        plugins.unregister_backbone("half")


def test_entry_points_are_found_loaded_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    group = "fortekit.elaborators"
    fake_entry_points(
        monkeypatch,
        importlib.metadata.EntryPoint("from-ep", f"{__name__}:EchoElaborator", group),
        importlib.metadata.EntryPoint("broken", "fortekit_no_such_module:Thing", group),
        importlib.metadata.EntryPoint("not-callable", "json:__name__", group),
    )
    assert {"from-ep", "broken", "not-callable"} <= set(plugins.available_elaborators())
    assert plugins.get_elaborator("from-ep").elaborate("wind").positives == ("wind",)
    row = next(row for row in list_plugins("elaborator") if row.name == "from-ep")
    assert row.source == "entry point" and row.target == f"{__name__}:EchoElaborator"
    with pytest.raises(PluginLoadError, match=r"E203.*fortekit_no_such_module.*ModuleNotFoundError"):
        plugins.get_elaborator("broken")
    with pytest.raises(PluginLoadError, match="not a class or function"):
        plugins.get_elaborator("not-callable")


def test_an_entry_point_cannot_shadow_a_builtin(monkeypatch: pytest.MonkeyPatch) -> None:
    shadow = importlib.metadata.EntryPoint("file", "json:dumps", "fortekit.elaborators")
    fake_entry_points(monkeypatch, shadow)
    with pytest.warns(PluginConflictWarning, match=r"W200.*'file'.*ignored"):
        names = plugins.available_elaborators()
    assert names.count("file") == 1
    row = next(row for row in list_plugins("elaborator") if row.name == "file")
    assert row.source == "built-in"


def test_plugins_command_lists_sources_and_json() -> None:
    parser = argparse.ArgumentParser(prog="fortekit")
    add_plugin_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["plugins"])
    out = io.StringIO()
    assert args.handler(args, out) == 0
    text = out.getvalue()
    for heading in ("backbones (", "elaborators (", "captioners ("):
        assert heading in text
    assert "minilm" in text and "built-in" in text
    assert "fortekit.plugins.backbones.minilm:MiniLMBackbone" in text
    args = parser.parse_args(["plugins", "--kind", "elaborator", "--json"])
    out = io.StringIO()
    assert args.handler(args, out) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert {row["kind"] for row in rows} == {"elaborator"}
    assert {"name", "source", "target", "distribution", "available", "missing"} <= set(rows[0])


def test_options_that_do_not_fit_the_factory_are_a_coded_error() -> None:
    from fortekit.errors import PluginLoadError
    from fortekit.plugins import get_elaborator

    with pytest.raises(PluginLoadError, match=r"\[E219\].*'file'.*missing a required argument: 'path'"):
        get_elaborator("file")
    with pytest.raises(PluginLoadError, match=r"\[E219\].*unexpected keyword argument 'bogus'.*n_positives"):
        get_elaborator("lexical", bogus=1)
