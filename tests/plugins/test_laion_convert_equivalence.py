"""The converted model against the reference: laion_clap's own classes and embedding methods.

A tiny LAION-CLAP model is built with the laion_clap package (tests/laion_reference.py),
saved as its training loop saves checkpoints, converted with ``fortekit convert laion-clap``
and loaded by the ``hf-clap`` backbone's real loading code; the embeddings of the same texts
and clips must equal ``CLAP_Module.get_text_embedding`` / ``get_audio_embedding_from_data``
within 1e-5, fused and unfused. Needs laion_clap: ``bash scripts/setup-laion.sh`` installs it
into .laion-deps/ (CI does, after the main suite); without it the tests skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("soundfile")

import laion_reference as ref
import torch

from fortekit.plugins import get_backbone
from fortekit.plugins.backbones.laion_convert import convert_laion_clap

TOLERANCE = 1e-5
TEXTS = [
    "a dog barks",
    "rain falling on a tin roof at night",
    "birds",
    "Ünïcödé & symbols: 42!",
    "a very long description " * 20,
]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ref.write_tokenizer(tmp_path_factory.mktemp("roberta-tiny"))


@pytest.fixture(scope="module")
def laion_clap(tokenizer_dir: Path) -> Any:
    try:
        return ref.import_laion_clap(tokenizer_dir)
    except ImportError as exc:
        if os.environ.get("FORTEKIT_REQUIRE_LAION") == "1":
            raise
        pytest.skip(
            f"laion_clap is not importable ({exc}); run `bash scripts/setup-laion.sh` (CI does) "
            "to install it into .laion-deps/"
        )


@pytest.fixture(scope="module", params=[False, True], ids=["unfused", "fused"])
def pair(
    request: pytest.FixtureRequest,
    laion_clap: Any,
    tokenizer_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Any, Any]:
    fusion = request.param
    folder = tmp_path_factory.mktemp("fused" if fusion else "unfused")
    reference = ref.build_reference(laion_clap, tokenizer_dir, fusion=fusion)
    checkpoint = ref.save_like_laion(reference, folder / "laion.pt")
    report = convert_laion_clap(checkpoint, folder / "hf", tokenizer=tokenizer_dir, trust_pickle=True)
    assert report.fusion is fusion and report.unpickled
    return reference, get_backbone("hf-clap", model=str(folder / "hf"), device="cpu", batch_size=3)


def _report(name: str, difference: float) -> None:
    print(f"\n{name}: max |difference| = {difference:.3g}")


def test_text_embeddings_equal_the_reference(pair: tuple[Any, Any], request: pytest.FixtureRequest) -> None:
    reference, clap = pair
    with torch.no_grad():
        expected = torch.as_tensor(reference.get_text_embedding(TEXTS))
    got = clap.encode_text(TEXTS)
    difference = float((expected - got).abs().max())
    _report(f"text {request.node.callspec.id}", difference)
    assert got.shape == expected.shape and difference < TOLERANCE


def test_audio_embeddings_equal_the_reference(pair: tuple[Any, Any], request: pytest.FixtureRequest) -> None:
    reference, clap = pair
    clips = ref.waveforms()
    with torch.no_grad():  # one clip a call: the reference's fused model looks at the whole batch
        expected = torch.cat(
            [torch.as_tensor(reference.get_audio_embedding_from_data([clip])) for clip in clips]
        )
    got = clap.encode_audio([(ref.quantise(clip), 48_000) for clip in clips])
    difference = float((expected - got).abs().max())
    _report(f"audio {request.node.callspec.id}", difference)
    assert got.shape == expected.shape and difference < TOLERANCE


def test_long_clips_take_the_same_seeded_crop(pair: tuple[Any, Any], request: pytest.FixtureRequest) -> None:
    """Clips over 10 s: both sides draw their crops from numpy's global generator. Seeded alike
    (fortekit seeds it with seed= before each clip), the unfused model picks the same crop and
    gives the same embedding; the fused one picks the same three chunks but shrinks the whole
    clip differently (torchvision's antialiased Resize in laion_clap, bilinear interpolation in
    transformers), so only closeness is asserted there. Either way fortekit is deterministic."""
    reference, clap = pair
    rng = np.random.default_rng(3)
    clip = (0.3 * rng.standard_normal(48_000 * 23)).astype(np.float32)
    np.random.seed(clap.seed)
    with torch.no_grad():
        expected = torch.as_tensor(reference.get_audio_embedding_from_data([clip]))[0]
    first, second = clap.encode_audio([(ref.quantise(clip), 48_000)] * 2)
    assert torch.equal(first, second)
    difference = float((expected - first).abs().max())
    _report(f"long clip {request.node.callspec.id}", difference)
    if clap.fusion:
        assert float(expected @ first) > 0.99
    else:
        assert difference < TOLERANCE


def test_the_laion_clap_backbone_runs_the_same_model(
    pair: tuple[Any, Any], tokenizer_dir: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The laion-clap backbone (laion_clap's own code, offline) on the reference's weights,
    saved as tensors only, agrees with the reference and with the converted model."""
    reference, converted = pair
    checkpoint = tmp_path / "clean.pt"
    torch.save({"state_dict": reference.model.state_dict()}, checkpoint)
    clap = get_backbone(
        "laion-clap",
        checkpoint=checkpoint,
        amodel=ref.MODEL_NAME,
        text_model_path=tokenizer_dir,
        device="cpu",
    )
    assert clap.fusion is converted.fusion
    clips = [(ref.quantise(clip), 48_000) for clip in ref.waveforms()]
    text = float((clap.encode_text(TEXTS) - converted.encode_text(TEXTS)).abs().max())
    audio = float((clap.encode_audio(clips) - converted.encode_audio(clips)).abs().max())
    _report(f"laion-clap backbone vs converted {request.node.callspec.id}: text {text:.3g}, audio", audio)
    assert text < TOLERANCE and audio < TOLERANCE


@pytest.mark.skipif(
    os.environ.get("FORTEKIT_LAION_FULL_SIZE") != "1",
    reason="the released audio sizes take about a minute: set FORTEKIT_LAION_FULL_SIZE=1 to run them",
)
@pytest.mark.parametrize(
    ("amodel", "fusion"), [("HTSAT-tiny", False), ("HTSAT-tiny", True), ("HTSAT-base", False)]
)
def test_released_audio_sizes_convert_equally(
    laion_clap: Any, tokenizer_dir: Path, tmp_path: Path, amodel: str, fusion: bool
) -> None:
    """laion_clap's own HTSAT-tiny and HTSAT-base at their released sizes (random weights)."""
    from laion_clap.clap_module.htsat import create_htsat_model

    models = [sys.modules[prefix + ".model"] for prefix in ("laion_clap.clap_module", "clap_module")]
    tiny = [module.create_htsat_model for module in models]
    try:
        for module in models:
            module.create_htsat_model = create_htsat_model
        torch.manual_seed(0)
        with ref.offline_hub(tokenizer_dir):
            reference = laion_clap.CLAP_Module(enable_fusion=fusion, device="cpu", amodel=amodel).eval()
    finally:
        for module, original in zip(models, tiny, strict=True):
            module.create_htsat_model = original
    checkpoint = ref.save_like_laion(reference, tmp_path / "laion.pt")
    report = convert_laion_clap(checkpoint, tmp_path / "hf", tokenizer=tokenizer_dir, trust_pickle=True)
    assert report.audio_model == amodel and report.fusion is fusion
    clap = get_backbone("hf-clap", model=str(tmp_path / "hf"), device="cpu")
    clips = ref.waveforms()[:2]
    with torch.no_grad():
        expected = torch.cat(
            [torch.as_tensor(reference.get_audio_embedding_from_data([clip])) for clip in clips]
        )
        expected_text = torch.as_tensor(reference.get_text_embedding(TEXTS))
    audio = float((expected - clap.encode_audio([(ref.quantise(c), 48_000) for c in clips])).abs().max())
    text = float((expected_text - clap.encode_text(TEXTS)).abs().max())
    _report(f"{amodel} fusion={fusion}: text {text:.3g}, audio", audio)
    assert audio < TOLERANCE and text < TOLERANCE
