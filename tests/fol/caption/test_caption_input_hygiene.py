"""Input hygiene for captions (issue 15, items 14-16 for `fortekit caption`).

* 14: `fortekit caption --file` (and `fortekit parse --file`) decode as fol-refine does:
  strict UTF-8 line by line, an undecodable line is a numbered bad line (E656), the
  other lines still run, exit 1; a UTF-16 file is refused (E311).
* 15: errors go to stderr; echoes of the input are cut to 200 characters and escaped.
* 16: ANSI escape sequences, bidi controls, zero-width and control characters are taken
  out before spaCy, the spans still index the caption as given, and a caption of
  nothing else is empty (E300).
"""

from __future__ import annotations

import contextlib
import random
from pathlib import Path

import pytest
from caption_fixtures import HOSTILE

from fortekit.errors import CaptionTooLongError, EmptyCaptionError
from fortekit.fol.caption import ParseResult, parse_caption, parse_captions
from fortekit.fol.caption.pipeline import (
    MAX_WORD_CHARS,
    check_text,
    checked_caption,
    clean_controls,
    plain_caption_limit,
    prepare,
    prepare_caption,
)
from fortekit.search.cli import main
from fortekit.search.refine.query_io import read_queries

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
C0_C1 = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0))]
RANDOM = random.Random(15).randbytes(64)  # as os.urandom gives, but the same every run
REAL = [  # captions as they are in Clotho and AudioCaps
    "a man speaks while birds chirp (loudly!) and a car passes by on a wet road",
    "A dog barks in the distance while rain falls on a metal roof.",
    "Someone is typing on a keyboard, then a phone rings twice",
    "naïve café ☕ … ✓",
]


def same_parse(result: ParseResult, reference: ParseResult) -> None:
    """The same formula from the same rules, tokens and words (spans may differ)."""
    assert str(result.formula) == str(reference.formula)

    def view(r: ParseResult) -> list[tuple[object, ...]]:
        return [(p.symbol, p.lemma, p.args, p.negated, p.rule, p.tokens, p.source, p.tier)
                for p in r.predicates]

    assert view(result) == view(reference)


def spans_point_at_the_words(result: ParseResult) -> None:
    for record in result.predicates:
        start, end = record.span
        assert 0 <= start < end <= len(result.text)
        shown = clean_controls(result.text[start:end])
        assert shown == record.source, (shown, record.source)


# --- 16: escape sequences and invisible characters --------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "\x1b[31mdog barking\x1b[0m",
        "\x1b[1;4;38;5;196mdog barking\x1b[m",
        "\x1b]0;pwned\x07dog barking",  # an OSC window title
        "\x1b]8;;https://example.org\x1b\\dog barking\x1b]8;;\x1b\\",  # an OSC hyperlink
        "\u202edog barking\u202c",
        "\u2066dog barking\u2069",
        "\ufeffdog barking",
        "dog\u200b barking\x00",
        "\x07\x07dog barking\r",
        "dog\u202ebarking",
        "dog\u2067barking",
        "dog\x1b[2Kbarking".replace("\x1b[2K", "\x1b[2K "),
        "d\u200do\u00adg barking",  # joiners inside a word: taken out
    ],
)
def test_hidden_characters_parse_exactly_like_the_plain_caption(text: str) -> None:
    result = parse_caption(text)
    assert result.text == text
    same_parse(result, parse_caption("dog barking"))
    assert not any(p.symbol[:1].isdigit() or p.symbol in {"A", "31mdog", "Sound"} for p in result.predicates)
    spans_point_at_the_words(result)


def test_the_issue_examples() -> None:
    ansi = parse_caption("\x1b[31mdog barking\x1b[0m")
    assert str(ansi.formula) == "∃x [Dog(x) ∧ Barking(x)]"
    assert [p.span for p in ansi.predicates] == [(5, 8), (9, 16)]  # the words of the caption as given
    assert {p.symbol for p in parse_caption("dog\u202ebarking").predicates} == {"Dog", "Barking"}


@pytest.mark.parametrize("char", BIDI + ZERO_WIDTH + C0_C1)
def test_no_stray_predicate_for_any_control_or_format_character(char: str) -> None:
    reference = parse_caption("a dog barks")
    for text in (f"a dog{char} barks", f"{char}a dog barks{char}", f"a {char}dog barks"):
        result = parse_caption(text)
        assert str(result.formula) == str(reference.formula), repr(text)
        spans_point_at_the_words(result)


@pytest.mark.parametrize(
    "text",
    ["\x1b[0m", "\x1b[31m\x1b[0m", "\u202e", "\u200b\u200d\ufeff", "\x00\x07\x1b", " \u2066 \u2069 ",
     "\x1b]0;title\x07", "\x1b(B\x1b[m\x1b7\x1b8"],
)
def test_nothing_but_hidden_characters_is_an_empty_caption(text: str) -> None:
    with pytest.raises(EmptyCaptionError, match=r"\[E300\] The caption is empty \(only control"):
        parse_caption(text)
    with pytest.raises(EmptyCaptionError):
        list(parse_captions(["a dog barks", text]))


def test_real_captions_pass_unchanged() -> None:
    for text in REAL:
        assert clean_controls(text) == text
        assert prepare(text) == (text, False)
        assert prepare_caption(text).offsets is None  # nothing taken out, nothing to map
    text = "rain on a roof\tthen\nthunder"  # tab and newline are kept
    assert clean_controls(text) == text


@pytest.mark.parametrize(("max_chars", "max_words"), [(100_000, 256), (40, 256), (100_000, 8), (100_000, 1)])
def test_checks_and_hygiene_change_nothing_up_to_the_plain_caption_limit(
    max_chars: int, max_words: int
) -> None:
    # parse_many skips check_text and prepare_caption for a printable caption up to the
    # limit: they must give it back as it is
    limit = plain_caption_limit(max_chars, max_words)
    words = ["dog", "barks", "x" * MAX_WORD_CHARS, *REAL[:2]]
    texts = [(" ".join(words) * 3)[:n] for n in range(1, limit + 1)] + ["a" * limit, "a " * (limit // 2)]
    for text in texts:
        if text.isprintable() and text and not text.isspace():
            assert prepare_caption(check_text(text, max_chars=max_chars), max_words=max_words) == (
                text, False, None,
            ), text
            assert checked_caption(text, max_chars=max_chars, max_words=max_words) == (text, False, None)
    for text in [*REAL, "\x1b[31mdog\x1b[0m barks", "a\u200bb", "rain\tthen\nthunder", "word " * 300]:
        if len(text) > max_chars:  # both refuse it, with the same error
            with pytest.raises(CaptionTooLongError):
                checked_caption(text, max_chars=max_chars, max_words=max_words)
            continue
        slow = prepare_caption(check_text(text, max_chars=max_chars), max_words=max_words)
        assert checked_caption(text, max_chars=max_chars, max_words=max_words) == slow


def test_hostile_captions_are_not_touched_by_the_hygiene() -> None:
    for make in HOSTILE.values():
        text = make(2_500)
        assert clean_controls(text) == text


def test_batches_agree_with_single_parses() -> None:
    texts = ["\x1b[31mdog barking\x1b[0m", "a b\u200darking dog", *REAL]
    for batched, text in zip(parse_captions(texts, batch_size=2), texts, strict=True):
        single = parse_caption(text)
        assert batched.text == text and str(batched.formula) == str(single.formula)
        assert [p.span for p in batched.predicates] == [p.span for p in single.predicates]


def test_offsets_map_back_to_the_caption() -> None:
    text = "\x1b[1mrain\x1b[0m\u202eon a r\u200doof"
    prepared = prepare_caption(text)
    assert prepared.text == "rain on a roof" and prepared.offsets is not None
    assert len(prepared.offsets) == len(prepared.text)
    assert prepared.offsets == sorted(set(prepared.offsets))  # in order, each once
    for char, offset in zip(prepared.text, prepared.offsets, strict=True):
        assert text[offset] == char or (char == " " and text[offset] == "\u202e")
    roof = parse_caption(text).predicates[-1]
    assert roof.symbol == "Roof" and text[roof.span[0]:roof.span[1]] == "r\u200doof"


def test_long_hidden_input_stays_linear() -> None:
    import time

    for text in ("\x1b[31m" * 20_000, "\u200d" * 99_999, "a\u200d" * 50_000, "\x1b]" * 50_000):
        started = time.perf_counter()
        with contextlib.suppress(EmptyCaptionError):
            parse_caption(text)
        assert time.perf_counter() - started < 5.0


# --- 14 and 15: the CLI ------------------------------------------------------------------


def caption_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["caption", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"a dog barks\n" + RANDOM.replace(b"\n", b"") + b"\xff\nrain falls\n", id="random"),
        pytest.param("a dog barks\ncaf\u00e9 noise\nrain falls\n".encode("latin-1"), id="latin-1"),
    ],
)
def test_undecodable_lines_are_numbered_bad_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], payload: bytes,
) -> None:
    source = tmp_path / "captions.txt"
    source.write_bytes(payload)
    status, out, err = caption_cli(capsys, "--file", str(source))
    assert status == 1
    assert f"{source}:2: error: [E656] not valid UTF-8 (byte 0x" in err
    assert "re-save the file as UTF-8" in err
    assert f"{source}:1: a dog barks" in out and f"{source}:3: rain falls" in out  # the others run
    assert f"{source}:2" not in out
    # fol-refine rejects the same line, with the same code
    problems = {q.line: q.problem for q in read_queries(source) if not q.ok}
    assert list(problems) == [2] and problems[2].startswith("[E656] not valid UTF-8 (byte 0x")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str) -> None:
    source = tmp_path / "captions.txt"
    text = "a dog barks\nrain falls\n"
    data = text.encode(encoding)
    if encoding != "utf-16":
        data = "\ufeff".encode(encoding) + data  # the byte-order mark Windows tools write
    source.write_bytes(data)
    status, out, err = caption_cli(capsys, "--file", str(source))
    assert status == 1 and out == ""
    assert f"{source}: error: [E311] The file {source} is UTF-16" in err and "iconv" in err


def test_a_utf8_bom_is_allowed_and_comments_and_blank_lines_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    source = tmp_path / "captions.txt"
    source.write_bytes(b"\xef\xbb\xbfa dog barks\r\n# a comment\r\n\r\nrain falls\r\n")
    status, out, err = caption_cli(capsys, "--file", str(source))
    assert status == 0 and err == ""
    assert f"{source}:1: a dog barks\n" in out and f"{source}:4: rain falls\n" in out


def test_parse_uses_the_same_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "formulas.txt"
    source.write_bytes(b"Bird(x)\n\xc3(x)\nLoud(x)\n")
    assert main(["parse", "--file", str(source), "--style", "ascii"]) == 1
    captured = capsys.readouterr()
    assert f"{source}:2: error: [E656] not valid UTF-8 (byte 0xc3 at column 1)" in captured.err
    assert f"{source}:3: Loud(x)" in captured.out


def test_errors_go_to_stderr_and_echoes_are_cut_and_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    empty = "\x1b[2J\x07" * 300  # only control characters: E300, echoed
    status, out, err = caption_cli(capsys, "a dog barks", empty)
    assert status == 1
    assert "arg 1: a dog barks" in out and "error" not in out and "E300" not in out
    assert "arg 2: " in err and "[E300]" in err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b[2J\\x07" in err
    echo = err.split("\n")[0]  # the first 200 characters, each escaped (at most \\xNN)
    assert len(echo) < 4 * 200 + 60 and echo.endswith(" … (1,500 characters)")
    # --file mode, and --json: the JSON stream on stdout stays clean
    source = tmp_path / "captions.txt"
    source.write_text(f"a dog barks\n{empty}\n", encoding="utf-8")
    status, out, err = caption_cli(capsys, "--json", "--file", str(source))
    assert status == 1 and out.count("\n") == 1 and out.startswith('{"text": "a dog barks"')
    assert f"{source}:2: " in err and "\x1b" not in err and "(1,500 characters)" in err


def test_a_long_good_caption_is_echoed_cut(capsys: pytest.CaptureFixture[str]) -> None:
    text = "a dog barks \x1b[31mloudly\x1b[0m " + "and rain falls " * 100
    status, out, err = caption_cli(capsys, text)
    assert status == 0 and err == ""
    first = out.split("\n")[0]
    assert first.startswith("arg 1: a dog barks \\x1b[31mloudly") and "\x1b" not in out
    assert len(first) < 260
