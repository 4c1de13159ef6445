"""Stage 2: the projection head h_psi, its loss, training, resume and files, on real Clotho captions.

The "collection" is 256 real Clotho development clips embedded with the bundled MiniLM: the query is
caption_1 (standing in for q*), the "audio" embedding is the mean of captions 2-5 (the clip's other
descriptions), the negative is the lexical elaborator's first contrastive negative of caption_1
(same source, one acoustic dimension changed, as f_T(G(phi-))). 192 clips train, 64 validate.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SHARED_DATA, require
from safetensors.torch import load_file, save_file

from fortekit.errors import ProjectionError
from fortekit.plugins import Backbone, get_backbone, get_elaborator
from fortekit.search.cli import main
from fortekit.search.projection import (
    ProjectionConfig,
    ProjectionData,
    ProjectionHead,
    load_projection,
    load_projection_data,
    project_embeddings,
    projection_loss,
    save_projection,
    save_projection_data,
)
from fortekit.search.projection.checkpoint import EpochStats
from fortekit.search.projection.training import TrainingReport, recall_at_1, train_projection

N_TRAIN, N_VALIDATION = 192, 64
DIM = 384
# A short, fast schedule for tests (the paper's lr 1e-4 over 20 epochs is the default).
FAST = ProjectionConfig(dim=DIM, epochs=3, batch_size=64, lr=1e-3)
Split = tuple[ProjectionData, ProjectionData]


@pytest.fixture(scope="module")
def backbone() -> Backbone:

    return get_backbone("minilm", device="cpu")


@pytest.fixture(scope="module")
def clotho(backbone: Backbone) -> Split:
    path = require(SHARED_DATA / "clotho" / "clotho_captions_development.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [row for _, row in zip(range(N_TRAIN + N_VALIDATION), csv.DictReader(handle), strict=False)]
    firsts = [row["caption_1"] for row in rows]
    elaborator = get_elaborator("lexical")
    elaborations = [elaborator.elaborate(caption) for caption in firsts]
    # A query the elaborator finds no contrast for takes another clip's caption as its negative.
    negatives = [
        e.negatives[0] if e.negatives else firsts[(i + 1) % len(rows)] for i, e in enumerate(elaborations)
    ]
    # One intra-op thread: on a busy 2-core machine two OpenMP threads spin and run 2-3x slower.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        query = backbone.encode_text(firsts)
        others = backbone.encode_text([row[f"caption_{k}"] for row in rows for k in range(2, 6)])
        negative = backbone.encode_text(negatives)
    finally:
        torch.set_num_threads(threads)
    audio = torch.nn.functional.normalize(others.view(len(rows), 4, DIM).mean(dim=1), dim=-1)
    train = ProjectionData(query[:N_TRAIN], audio[:N_TRAIN], negative[:N_TRAIN])
    validation = ProjectionData(query[N_TRAIN:], audio[N_TRAIN:], negative[N_TRAIN:])
    return train, validation


@pytest.fixture(scope="module")
def trained(clotho: Split, tmp_path_factory: pytest.TempPathFactory) -> TrainingReport:
    train, validation = clotho
    out = tmp_path_factory.mktemp("projection")
    return train_projection(
        train, config=FAST, validation=validation, out_dir=out, device="cpu", progress=False,
    )


def _full_loss(head: ProjectionHead, data: ProjectionData) -> float:
    head.eval()
    with torch.no_grad():
        return float(projection_loss(data.query, data.audio, data.negative, head, mu=0.1).total)


# -- the loss and training -------------------------------------------------------------------------


def test_training_lowers_the_loss_and_reports_validation_r1(clotho: Split, trained: TrainingReport) -> None:
    train, _ = clotho
    before = _full_loss(ProjectionHead(DIM), train)
    after = _full_loss(load_projection(trained.weights_path), train)
    assert after < before
    assert trained.history[-1].loss < trained.history[0].loss
    assert [s.epoch for s in trained.history] == [1, 2, 3]
    assert all(s.val_r1 is not None and 0.0 <= s.val_r1 <= 1.0 for s in trained.history)
    assert trained.baseline_r1 is not None and trained.final_r1 is not None
    document = json.loads(trained.config_path.read_text(encoding="utf-8"))
    assert document["config"] == FAST.to_dict() and len(document["history"]) == 3
    assert document["baseline_r1"] == trained.baseline_r1


def test_untrained_head_keeps_the_frozen_ranking(clotho: Split) -> None:
    # W2 = 0: h starts as LayerNorm(e), whose direction only loses each vector's mean coordinate.
    _, validation = clotho
    raw = recall_at_1(validation.query, validation.audio)
    projected = recall_at_1(validation.query, ProjectionHead(DIM).project(validation.audio))
    assert abs(raw - projected) <= 1 / N_VALIDATION


def test_gradients_reach_only_psi_and_gamma(clotho: Split, backbone: Backbone, tmp_path: Path) -> None:
    from fortekit.plugins.backbones.minilm import MiniLMBackbone

    train, _ = clotho
    assert isinstance(backbone, MiniLMBackbone) and train.negative is not None
    encoder = list(backbone._model.parameters())
    snapshot = [p.detach().clone() for p in encoder]
    inputs = (train.query[:64], train.audio[:64], train.negative[:64])
    head = ProjectionHead(DIM)
    projection_loss(*inputs, head).total.backward()  # type: ignore[no-untyped-call]
    assert all(p.grad is not None for p in head.parameters())
    assert head.fc2.weight.grad is not None and head.fc2.weight.grad.abs().sum() > 0
    assert head.log_temperature.grad is not None and head.log_temperature.grad != 0
    assert all(not t.requires_grad and t.grad is None for t in inputs)
    assert all(p.grad is None for p in encoder)
    inputs_before = [train.query.clone(), train.audio.clone(), train.negative.clone()]
    train_projection(train, config=FAST.replace(epochs=1), out_dir=tmp_path, device="cpu", progress=False)
    assert all(torch.equal(a, b) for a, b in zip(snapshot, encoder, strict=True))
    inputs_after = (train.query, train.audio, train.negative)
    assert all(torch.equal(a, b) for a, b in zip(inputs_before, inputs_after, strict=True))


def test_loss_terms_and_bad_shapes(clotho: Split) -> None:
    train, _ = clotho
    assert train.negative is not None
    head = ProjectionHead(DIM).eval()
    terms = projection_loss(train.query[:8], train.audio[:8], train.negative[:8], head, mu=0.5)
    assert torch.allclose(terms.total, terms.align + 0.5 * terms.logic)
    assert float(projection_loss(train.query[:8], train.audio[:8], None, head).logic) == 0.0
    with pytest.raises(ProjectionError, match="E461"):
        projection_loss(train.query[:1], train.audio[:1], None, head)
    with pytest.raises(ProjectionError, match="E461"):
        projection_loss(train.query[:8], train.audio[:7], None, head)
    with pytest.raises(ProjectionError, match="E461"):
        projection_loss(train.query[:8, :100], train.audio[:8, :100], None, head)


def test_resume_gives_the_same_weights_as_one_run(clotho: Split, tmp_path: Path) -> None:
    train, validation = clotho
    whole = train_projection(train, config=FAST, validation=validation, out_dir=tmp_path / "whole",
                             device="cpu", progress=False)

    class Stop(Exception):
        pass

    def stop_after_two(stats: EpochStats) -> None:
        if stats.epoch == 2:
            raise Stop

    with pytest.raises(Stop):
        train_projection(train, config=FAST, validation=validation, out_dir=tmp_path / "cut", device="cpu",
                         progress=False, on_epoch_end=stop_after_two)
    assert json.loads((tmp_path / "cut" / "checkpoint.json").read_text(encoding="utf-8"))["epoch"] == 2
    assert not (tmp_path / "cut" / "projection.safetensors").exists()
    resumed = train_projection(train, config=FAST, validation=validation, out_dir=tmp_path / "cut",
                               device="cpu", progress=False)
    assert (resumed.start_epoch, resumed.epochs_run) == (2, 1)
    a, b = load_file(whole.weights_path), load_file(resumed.weights_path)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert [(s.loss, s.val_r1) for s in whole.history] == [(s.loss, s.val_r1) for s in resumed.history]
    again = train_projection(train, config=FAST, validation=validation, out_dir=tmp_path / "cut",
                             device="cpu", progress=False)
    assert again.epochs_run == 0
    with pytest.raises(ProjectionError, match=r"E467.*lr"):
        train_projection(train, config=FAST.replace(lr=1e-4), out_dir=tmp_path / "cut", progress=False)
    with pytest.raises(ProjectionError, match=r"E467.*other data"):
        train_projection(validation, config=FAST, out_dir=tmp_path / "cut", progress=False)


# -- files -----------------------------------------------------------------------------------------


def test_save_load_round_trip_is_bit_exact(clotho: Split, trained: TrainingReport, tmp_path: Path) -> None:
    _, validation = clotho
    head = load_projection(trained.weights_path.parent)
    assert not head.training and head.fc2.weight.abs().sum() > 0
    save_projection(head, tmp_path / "copy.safetensors", config=trained.config)
    copy = load_projection(tmp_path / "copy.safetensors")
    original, loaded = head.state_dict(), copy.state_dict()
    assert original.keys() == loaded.keys() and all(torch.equal(original[k], loaded[k]) for k in original)
    assert torch.equal(head.project(validation.audio), copy.project(validation.audio))


def test_pickled_files_are_refused(
    trained: TrainingReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_unpickling(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch.load must never be called")

    head = load_projection(trained.weights_path)
    torch.save(head.state_dict(), tmp_path / "projection.pt")
    disguised = tmp_path / "disguised"
    disguised.mkdir()
    torch.save(head.state_dict(), disguised / "projection.safetensors")
    shutil.copy(trained.config_path, disguised / "projection.json")
    legacy = tmp_path / "legacy.safetensors"
    torch.save(head.state_dict(), legacy, _use_new_zipfile_serialization=False)
    monkeypatch.setattr(torch, "load", no_unpickling)
    with pytest.raises(ProjectionError, match=r"E463.*suffix \.pt"):
        load_projection(tmp_path / "projection.pt")
    with pytest.raises(ProjectionError, match=r"E463.*zip archive"):
        load_projection(disguised)
    with pytest.raises(ProjectionError, match=r"E463.*pickle stream"):
        load_projection_data(legacy)


def test_bad_projection_files(trained: TrainingReport, tmp_path: Path) -> None:
    with pytest.raises(ProjectionError, match="E462"):
        load_projection(tmp_path / "nowhere")
    tensors = load_file(trained.weights_path)
    config = trained.config_path.read_text(encoding="utf-8")

    def saved(name: str, changed: dict[str, torch.Tensor], json_text: str | None = config) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        save_file(changed, str(folder / "projection.safetensors"))
        if json_text is not None:
            (folder / "projection.json").write_text(json_text, encoding="utf-8")
        return folder

    with pytest.raises(ProjectionError, match=r"E462.*JSON config is missing"):
        load_projection(saved("no-json", tensors, None))
    with pytest.raises(ProjectionError, match="E465"):
        load_projection(saved("bad-json", tensors, "{not json"))
    with pytest.raises(ProjectionError, match=r"E464.*fc1\.weight has shape \(10, 384\)"):
        load_projection(saved("shape", {**tensors, "fc1.weight": torch.zeros(10, DIM)}))
    without = {k: v for k, v in tensors.items() if k != "log_temperature"}
    with pytest.raises(ProjectionError, match=r"E464.*missing log_temperature"):
        load_projection(saved("missing", without))
    with pytest.raises(ProjectionError, match=r"E464.*unexpected extra"):
        load_projection(saved("extra", {**tensors, "extra": torch.zeros(1)}))
    wrong_dim = json.loads(config)
    wrong_dim["config"]["dim"] = 512
    with pytest.raises(ProjectionError, match="E464"):
        load_projection(saved("dim", tensors, json.dumps(wrong_dim)))


def test_data_files(clotho: Split, tmp_path: Path) -> None:
    train, _ = clotho
    path = save_projection_data(tmp_path / "train.safetensors", train, metadata={"backbone": "minilm"})
    back = load_projection_data(path)
    assert back.negative is not None and train.negative is not None
    assert torch.equal(back.query, train.query) and torch.equal(back.negative, train.negative)
    save_file({"query": train.query}, str(tmp_path / "no-audio.safetensors"))
    with pytest.raises(ProjectionError, match=r"E466.*missing audio"):
        load_projection_data(tmp_path / "no-audio.safetensors")
    save_file({"query": train.query, "audio": train.audio[:10]}, str(tmp_path / "short.safetensors"))
    with pytest.raises(ProjectionError, match=r"E466.*short.safetensors.*shape"):
        load_projection_data(tmp_path / "short.safetensors")
    broken = train.audio.clone()
    broken[3, 5] = float("nan")
    with pytest.raises(ProjectionError, match=r"E466.*NaN"):
        ProjectionData(train.query, broken)


def test_project_embeddings(clotho: Split, trained: TrainingReport) -> None:
    _, validation = clotho
    head = load_projection(trained.weights_path).train()
    projected = project_embeddings(head, validation.audio.numpy().astype(np.float64), batch_size=10)
    assert projected.dtype == np.float32 and projected.shape == (N_VALIDATION, DIM)
    assert np.allclose(np.linalg.norm(projected, axis=1), 1.0, atol=1e-5)
    assert head.training  # project() switches dropout off only while it runs
    assert torch.allclose(torch.from_numpy(projected), head.project(validation.audio), atol=1e-6)
    with pytest.raises(ProjectionError, match="E461"):
        project_embeddings(head, np.zeros((3, 100), dtype=np.float32))


def test_config_validation_and_json_round_trip() -> None:
    config = ProjectionConfig(dim=DIM, mu=0.2, warmup_steps=5)
    assert ProjectionConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    for bad in ({"dim": 0}, {"batch_size": 1}, {"dropout": 1.0}, {"lr": 0.0}, {"epochs": True},
                {"temperature_init": 5.0}, {"mu": float("nan")}):
        with pytest.raises(ProjectionError, match="E460"):
            ProjectionConfig(**{"dim": DIM, **bad})  # type: ignore[arg-type]
    with pytest.raises(ProjectionError, match=r"E460.*colour"):
        ProjectionConfig.from_dict({"dim": DIM, "colour": "red"})


# -- the command line ------------------------------------------------------------------------------


def test_cli_trains_resumes_and_reports_errors(
    clotho: Split, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    train, validation = clotho
    save_projection_data(tmp_path / "train.safetensors", train)
    save_projection_data(tmp_path / "validation.safetensors", validation)
    argv = ["train-projection", "--train", str(tmp_path / "train.safetensors"), "--validation",
            str(tmp_path / "validation.safetensors"), "-o", str(tmp_path / "run"), "--epochs", "2",
            "--batch-size", "64", "--lr", "1e-3", "--device", "cpu", "--quiet"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "validation R@1: unprojected" in printed and "wrote" in printed
    assert load_projection(tmp_path / "run").dim == DIM
    assert main(argv) == 0
    assert "resumed after epoch 2 of 2" in capsys.readouterr().out
    torch.save({"query": train.query}, tmp_path / "pickled.safetensors")
    assert main([*argv[:2], str(tmp_path / "pickled.safetensors"), *argv[3:]]) == 1
    assert "E463" in capsys.readouterr().err
    assert main([*argv, "--epochs", "0"]) == 1
    assert "E460" in capsys.readouterr().err


def test_a_projected_index_copy_is_one_call(clotho: Split, trained: TrainingReport) -> None:
    index_module = pytest.importorskip("fortekit.search.index")
    _, validation = clotho
    ids = [f"clip{i}" for i in range(N_VALIDATION)]
    index = index_module.AudioIndex.from_captions(
        ids, [None] * N_VALIDATION, "minilm", embeddings=validation.audio.numpy(), parse_captions=False,
    )
    head = load_projection(trained.weights_path)
    projected = index_module.AudioIndex.from_captions(
        index.ids, index.captions, index.backbone_name,
        embeddings=project_embeddings(head, index.embeddings), parse_captions=False,
    )
    _, rows = projected.search(validation.query.numpy(), k=1, device="cpu")
    hits = float((rows[:, 0] == torch.arange(N_VALIDATION)).float().mean())
    assert hits == pytest.approx(recall_at_1(validation.query, head.project(validation.audio)))


def test_a_safetensors_header_whose_length_starts_with_0x80_is_not_taken_for_a_pickle(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A header 128 bytes past a multiple of 256 begins with byte 0x80, as a pickle stream does."""
    import struct

    from fortekit.search.projection.files import _not_safetensors

    header = b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    header += b" " * (0x180 - len(header))  # padded with spaces, as the format allows
    path = tmp_path / "weights.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\x00\x00\x80\x3f")
    assert path.read_bytes()[:1] == b"\x80"
    assert _not_safetensors(path) is None
    pickled = tmp_path / "head.safetensors"
    pickled.write_bytes(b"\x80\x04\x95" + b"\x00" * 40)
    assert _not_safetensors(pickled) == "it is a pickle stream"
