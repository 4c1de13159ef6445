"""The neural parser plug-in with a tiny randomly initialised T5 built and saved by the test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fortekit.errors import (
    NeuralModelLoadError,
    NeuralModelNotFoundError,
    NeuralParserError,
    PluginError,
)
from fortekit.fol.caption import parse_caption

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from fortekit.fol.caption.neural import NeuralCaptionParser  # noqa: E402

TARGET = "Bird ( x ) ∧ Chirp ( x )"  # the lemma form: grounding must rename Chirp -> Chirping


def _save_tiny_t5(path: Path, words: list[str], seed: int = 0) -> tuple[object, object]:
    """A word-level tokenizer and a 1-layer T5, saved with save_pretrained() (no download)."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    vocab = ["<pad>", "</s>", "<unk>", *words]
    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    tok.pre_tokenizer = WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    torch.manual_seed(seed)
    config = T5Config(
        vocab_size=len(vocab),
        d_model=32,
        d_ff=64,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        d_kv=16,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    model = T5ForConditionalGeneration(config)
    fast.save_pretrained(path)
    model.save_pretrained(path)
    return fast, model


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny T5 taught (a few hundred steps on one pair) to answer TARGET for one prompt."""
    path = tmp_path_factory.mktemp("tiny-t5")
    words = ["Bird", "Chirp", "(", ")", "x", "∧", "Translate", "birds", "chirping", "Chirping"]
    fast, model = _save_tiny_t5(path, words)
    prompt = NeuralCaptionParser(path).prompt("birds chirping", parse_caption("birds chirping"))
    inputs = fast([prompt], return_tensors="pt")  # type: ignore[operator]
    labels = torch.cat([fast([TARGET], return_tensors="pt").input_ids, torch.tensor([[1]])], dim=1)  # type: ignore[operator]
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)  # type: ignore[attr-defined]
    model.train()  # type: ignore[attr-defined]
    for _ in range(200):
        loss = model(input_ids=inputs.input_ids, attention_mask=inputs.attention_mask, labels=labels).loss  # type: ignore[operator]
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.save_pretrained(path)  # type: ignore[attr-defined]
    return path


def test_valid_output_is_validated_grounded_and_closed(trained_dir: Path) -> None:
    neural = NeuralCaptionParser(trained_dir)
    prompt = neural.prompt("birds chirping", parse_caption("birds chirping"))
    assert prompt == "Translate to first-order logic. Predicates: Bird, Chirping. Sentence: birds chirping"
    assert neural.generate([prompt]) == [TARGET]
    result = neural.parse("birds chirping")
    assert result.backend == "neural" and not result.used_fallback
    assert str(result.formula) == "∃x [Bird(x) ∧ Chirping(x)]"  # Chirp grounded to V_audio's Chirping
    chirping = result.predicates[1]
    assert (chirping.rule, chirping.tier, chirping.lemma, chirping.source) == (
        "neural",
        "exact",
        "chirp",
        "chirping",
    )


def test_invalid_or_empty_output_falls_back_to_the_rule_parser(tmp_path: Path) -> None:
    # A vocabulary of brackets and connectives only: no output can be a formula.
    _save_tiny_t5(tmp_path, ["(", "∧", "¬", "→"], seed=3)
    neural = NeuralCaptionParser(tmp_path, max_new_tokens=8)
    result = neural.parse("wind blowing without rain")
    assert result.backend == "rules"
    assert result.formula == parse_caption("wind blowing without rain").formula
    rules = parse_caption("a dog barks")
    for output in ("", "   ", "Dog(x", "∧ ∧", "x = y"):
        assert neural.from_output("a dog barks", output, rules) is rules


def test_output_handling_without_the_model(trained_dir: Path) -> None:
    neural = NeuralCaptionParser(trained_dir)
    rules = parse_caption("a dog barks at a cat")
    result = neural.from_output(
        "a dog barks at a cat", "Dog(x) ∧ Bark(x) ∧ At(x, y) ∧ Cat(y) ∧ ¬Meow(y)", rules
    )
    assert str(result.formula) == "∃x ∃y [Dog(x) ∧ Barking(x) ∧ At(x, y) ∧ Cat(y) ∧ ¬Meowing(y)]"
    assert [r.negated for r in result.predicates] == [False, False, False, False, True]
    assert result.predicates[0].source == "dog" and result.predicates[0].tokens == (1,)
    streamed = list(neural.parse_many(["birds chirping", "birds chirping"], batch_size=1))
    assert [r.backend for r in streamed] == ["neural", "neural"]


def test_missing_model_directory(tmp_path: Path) -> None:
    with pytest.raises(NeuralModelNotFoundError, match=r"\[E307\].*no such directory"):
        NeuralCaptionParser(tmp_path / "absent")
    with pytest.raises(NeuralModelNotFoundError, match=r"config\.json"):
        NeuralCaptionParser(tmp_path)


def test_the_logic_core_raises_its_own_errors_not_the_plug_ins(tmp_path: Path) -> None:
    with pytest.raises(NeuralParserError) as info:
        NeuralCaptionParser(tmp_path / "absent")
    assert isinstance(info.value, FileNotFoundError) and not isinstance(info.value, PluginError)
    assert str(info.value).startswith("[E307]")  # not "[Errno None] None: ..."
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(NeuralModelLoadError, match=r"\[E308\]") as loading:
        NeuralCaptionParser(tmp_path)
    assert isinstance(loading.value, NeuralParserError) and not isinstance(loading.value, PluginError)


def test_the_plug_in_module_imports_torch_only_when_used() -> None:
    code = "import sys, fortekit.fol.caption.neural; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
