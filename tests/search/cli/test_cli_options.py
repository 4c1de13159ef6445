"""One KEY=VALUE grammar for --backbone-option in fol-refine and fortekit index (issue 14)."""

from __future__ import annotations

import argparse

import pytest

from fortekit.errors import QueryFileError
from fortekit.search.cli import index as index_cli
from fortekit.search.cli import refine as refine_cli
from fortekit.search.cli.options import option_type, parse_option, parse_option_value, parse_options


@pytest.mark.parametrize(("text", "value"), [
    ("8", 8), ("-3", -3), ("+4", 4), ("007", 7),
    ("0.5", 0.5), ("-1.25", -1.25), ("1e-3", 0.001), (".5", 0.5), ("2.", 2.0),
    ("true", True), ("False", False), ("TRUE", True), ("none", None), ("Null", None),
    ("/models/clap", "/models/clap"), ("two words", "two words"), ("", ""),
    ("nan", "nan"), ("inf", "inf"), ("-Infinity", "-Infinity"), ('"quoted"', '"quoted"'),
    ("[1, 2]", "[1, 2]"), ("1_000", "1_000"), ("0x10", "0x10"), ("yes", "yes"),
    ("a=b", "a=b"),
])
def test_the_value_grammar(text: str, value: object) -> None:
    parsed = parse_option_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_keys_are_stripped_and_dashes_become_underscores() -> None:
    assert parse_option(" batch-size =16") == ("batch_size", 16)
    assert parse_option("url=http://x/?a=1") == ("url", "http://x/?a=1")  # the first '=' splits
    assert parse_options(["seed=1", "seed=2"]) == {"seed": 2}


@pytest.mark.parametrize("bad", ["model", "=value", "2x=1", "a b=1", ""])
def test_malformed_pairs_are_e458(bad: str) -> None:
    with pytest.raises(QueryFileError, match=r"\[E668\] --opt takes KEY=VALUE") as info:
        parse_option(bad, option="--opt")
    assert isinstance(info.value, ValueError)
    with pytest.raises(argparse.ArgumentTypeError, match=r"\[E668\]"):
        option_type("--opt")(bad)


def _index_build_options(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="fortekit")
    index_cli.add_index_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["index", "build", "--captions", "x.csv", "-o", "o", *argv])
    return index_cli.backbone_options(args)


def test_fol_refine_and_index_build_read_options_alike() -> None:
    pairs = ["model=/m x", "batch-size=8", "allow_download=TRUE", "seed=none", "scale=1e-2", "tag=[a]"]
    argv = [arg for pair in pairs for arg in ("--backbone-option", pair)]
    refined = dict(refine_cli.build_refine_parser().parse_args(["q.txt", *argv]).backbone_option)
    built = _index_build_options(argv)
    assert refined == built == parse_options(pairs) == {
        "model": "/m x", "batch_size": 8, "allow_download": True, "seed": None, "scale": 0.01, "tag": "[a]",
    }


def test_index_add_options_override_the_recorded_ones() -> None:
    from fortekit.search.index.from_files import backbone_options

    parser = argparse.ArgumentParser(prog="fortekit")
    index_cli.add_index_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["index", "add", "--index", "idx", "--captions", "new.csv",
                              "--backbone-option", "batch_size=4"])
    given = dict(args.backbone_option)
    assert backbone_options(given, args.device, recorded={"batch_size": 16, "model": "/m"}) == {
        "batch_size": 4, "model": "/m",
    }
