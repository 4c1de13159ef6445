"""The Stage 2 head shipped for minilm: it loads safely, fits minilm, and knows what it was trained on.

The data-dependent checks read ../shared/data (skipped with the reason when it is absent).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import SHARED_DATA, require

from fortekit.errors import ProjectionError
from fortekit.search.eval.data import file_sha256
from fortekit.search.eval.datasets import load_collection
from fortekit.search.projection.files import CONFIG_NAME, WEIGHTS_NAME, load_projection, read_safetensors
from fortekit.search.projection.shipped import (
    SHIPPED_HEADS,
    TRAINING_CAPTIONS_NAME,
    caption_hash,
    shipped_head,
    shipped_head_training,
    training_overlap,
)

CLOTHO_DEV = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
AUDIOCAPS_TEST = SHARED_DATA / "audiocaps" / "test.csv"
MINILM_DIM = 384


def _minilm() -> Path:
    folder = shipped_head("minilm")
    assert folder is not None, "the minilm head does not ship (run scripts/train_default_head.py)"
    return folder


def _clotho_clips() -> list[tuple[str, ...]]:
    return [clip.captions for clip in load_collection(require(CLOTHO_DEV))]


def test_the_minilm_head_ships_as_package_data() -> None:
    from importlib import resources

    folder = resources.files("fortekit.search.projection") / "shipped" / SHIPPED_HEADS["minilm"]
    for name in (WEIGHTS_NAME, CONFIG_NAME, TRAINING_CAPTIONS_NAME):
        assert (folder / name).is_file(), name
    assert shipped_head("minilm") == Path(str(folder))


def test_it_loads_through_load_projection_and_projects_minilm_rows() -> None:
    folder = shipped_head("minilm", MINILM_DIM)
    assert folder is not None
    tensors, metadata = read_safetensors(folder / WEIGHTS_NAME)  # checks the header: never unpickles
    assert metadata.get("format") == "fortekit-projection"
    assert all(value.dtype == torch.float32 for value in tensors.values())
    head = load_projection(folder)
    assert head.dim == MINILM_DIM and not head.training
    generator = torch.Generator().manual_seed(0)
    rows = torch.nn.functional.normalize(torch.randn(3, MINILM_DIM, generator=generator), dim=-1)
    with torch.no_grad():
        projected = head.project(rows)
    assert projected.shape == (3, MINILM_DIM)
    assert bool(torch.isfinite(projected).all())
    norms = projected.norm(dim=-1)
    assert bool((norms > 1e-6).all())  # unit-normalisable
    unit = torch.nn.functional.normalize(projected, dim=-1)
    assert torch.allclose(unit.norm(dim=-1), torch.ones(3), atol=1e-5)


def test_a_head_is_found_only_for_its_backbone_and_width() -> None:
    assert shipped_head("minilm", MINILM_DIM) is not None
    assert shipped_head("minilm", 512) is None
    assert shipped_head("clap") is None and shipped_head("hf-clap", MINILM_DIM) is None
    with pytest.raises(ProjectionError, match=r"\[E472\].*'clap'"):
        shipped_head_training("clap")
    with pytest.raises(ProjectionError, match=r"\[E472\]"):
        training_overlap("clap", ["a dog barks"])


def test_the_training_block_names_the_training_clips_and_settings() -> None:
    training = shipped_head_training("minilm")
    assert training["clips"] == "clotho development clips 1-2000"
    assert training["n_clips"] == 2000 and training["captions"] == 10_000
    assert training["data"]["file"] == CLOTHO_DEV.name
    assert training["item_text"] == "mean" and training["backbone"] == "minilm"
    assert training["stage1"]["anchors"] == ["feedback"] and training["stage1"]["elaborator"] == "corpus"
    assert (training["epochs"], training["batch_size"], training["seed"]) == (20, 128, 0)
    assert training["command"].startswith("python scripts/train_default_head.py")
    assert {"torch", "fortekit"} <= set(training["versions"])
    document = json.loads((_minilm() / CONFIG_NAME).read_text(encoding="utf-8"))
    assert document["config"]["dim"] == MINILM_DIM and len(document["history"]) == 20


def test_the_training_data_is_the_clotho_file_here() -> None:
    assert shipped_head_training("minilm")["data"]["sha256"] == file_sha256(require(CLOTHO_DEV))


def test_training_captions_hold_every_caption_of_clips_1_to_2000() -> None:
    clips = _clotho_clips()
    lines = (_minilm() / TRAINING_CAPTIONS_NAME).read_text(encoding="ascii").split()
    assert lines == sorted(set(lines))
    assert set(lines) == {caption_hash(caption) for captions in clips[:2000] for caption in captions}
    assert len(lines) == shipped_head_training("minilm")["distinct_caption_hashes"]


def test_training_overlap_counts_training_captions_only() -> None:
    clips = _clotho_clips()
    first = [caption for captions in clips[:10] for caption in captions]
    assert len(first) == 50 and training_overlap("minilm", first) == 50
    assert training_overlap("minilm", [caption.upper() + "  " for caption in first]) == 50  # normalised
    # Clips 2,001-2,010 are unseen, but caption 4 of clip 2,006, "Water flowing in a creek at a fast
    # pace.", was also written, word for word, for a training clip: the guard compares caption
    # texts, so it counts it. The whole reporting part (2,001-2,893) shares 6 such generic captions.
    reporting = [caption for captions in clips[2000:2010] for caption in captions]
    assert len(reporting) == 50 and training_overlap("minilm", reporting) == 1
    assert training_overlap("minilm", clips[2005][3:4]) == 1
    assert training_overlap("minilm", [caption for captions in clips[2000:] for caption in captions]) == 6


def test_no_audiocaps_test_caption_was_trained_on() -> None:
    captions = [caption for clip in load_collection(require(AUDIOCAPS_TEST)) for caption in clip.captions]
    assert len(captions) > 4000
    assert training_overlap("minilm", captions) == 0


def test_importing_the_module_does_not_import_torch() -> None:
    code = (
        "import sys\n"
        "from fortekit.search.projection.shipped import shipped_head, training_overlap\n"
        "assert shipped_head('minilm', 384) is not None\n"
        "assert training_overlap('minilm', ['a dog barks']) >= 0\n"
        "print('torch' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            timeout=120)
    assert result.stdout.strip() == "False", result.stderr
