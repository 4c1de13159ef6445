"""Hugging Face's "Loading weights" bar stays off stderr while fortekit loads a model (issue 14)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fortekit._hf_progress import progress_asked_for, quiet_model_loading

transformers = pytest.importorskip("transformers")
hf_logging = pytest.importorskip("transformers.utils.logging")


@pytest.fixture
def bars_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Progress bars on, as in a fresh process, and not forced by the environment."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_PROGRESS_BARS", None)
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.enable_progress_bar()
    yield
    (hf_logging.enable_progress_bar if was else hf_logging.disable_progress_bar)()


@pytest.mark.usefixtures("bars_on")
def test_loading_minilm_prints_no_loading_weights_bar(capfd: pytest.CaptureFixture[str]) -> None:
    from fortekit.plugins import get_backbone

    backbone = get_backbone("minilm")
    assert backbone.dim == 384
    captured = capfd.readouterr()
    assert "Loading weights" not in captured.err
    assert "Loading weights" not in captured.out
    assert hf_logging.is_progress_bar_enabled()  # the user's setting is back after the load


@pytest.mark.usefixtures("bars_on")
def test_the_block_restores_the_hub_s_group_states() -> None:
    import importlib

    hub_tqdm = importlib.import_module("huggingface_hub.utils.tqdm")
    hub_tqdm.progress_bar_states["some.group"] = False
    before = dict(hub_tqdm.progress_bar_states)
    with quiet_model_loading():
        assert not hf_logging.is_progress_bar_enabled()
    assert hf_logging.is_progress_bar_enabled()
    assert hub_tqdm.progress_bar_states == before
    hub_tqdm.progress_bar_states.pop("some.group")


def test_bars_that_are_off_stay_off() -> None:
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with quiet_model_loading():
            pass
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        if was:
            hf_logging.enable_progress_bar()


@pytest.mark.usefixtures("bars_on")
def test_the_environment_can_ask_for_the_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_PROGRESS_BARS", False)  # HF_HUB_DISABLE_PROGRESS_BARS=0
    assert progress_asked_for()
    with quiet_model_loading():
        assert hf_logging.is_progress_bar_enabled()
