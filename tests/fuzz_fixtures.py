"""Helpers of tests/test_fuzz_hostile.py: running the CLIs, snapshots, hostile files, strategies.

The committed corpus lives in tests/data/hostile/ (small files, see its README.md); inputs
that are big by design (a 131,072-character CSV cell, JSON nested 100,000 levels deep,
10,000 nested terms) are generated here at run time.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import struct
import subprocess
import sys
import traceback
import wave
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from hypothesis import strategies as st

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"
TRACEBACK = "Traceback (most recent call last)"
BIN = Path(sys.executable).parent

#: The one-line files that are not fol-refine outputs, given to -o by mistake.
NOT_OUTPUTS = ("notes.txt", "notes_no_newline.txt", "config.json", "table.tsv", "picture.png")


class Result(NamedTuple):
    """What a command did: exit status, standard output, standard error."""

    status: int
    out: str
    err: str

    def show(self) -> str:
        """The result as a failure message shows it (streams cut to 2,000 characters)."""
        return f"status {self.status}\n--- stdout\n{self.out[-2000:]}\n--- stderr\n{self.err[-2000:]}"


def run_in_process(entry: Callable[[list[str]], int], argv: Sequence[str]) -> Result:
    """Run a CLI entry point in this process, its streams captured.

    An exception that escapes the entry point is what the interpreter would print as a
    traceback: it comes back as status 99 with the traceback on standard error, so the
    no-traceback assertion catches it (an in-process KeyboardInterrupt is re-raised).
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = entry(list(argv))
        except SystemExit as exc:  # argparse
            code = exc.code
            status = code if isinstance(code, int) else (0 if code is None else 1)
        except KeyboardInterrupt:
            raise
        except BaseException:  # exactly what a user would see as a traceback
            traceback.print_exc(file=sys.stderr)
            status = 99
    return Result(int(status), out.getvalue(), err.getvalue())


def run_subprocess(command: str, argv: Sequence[str], *, cwd: Path, timeout: float = 120.0,
                   stdout: str | None = None) -> Result:
    """Run the installed console script `command` (fortekit, fol-refine) in a new interpreter.

    `stdout` names a file to write standard output to (e.g. /dev/full); else it is captured.
    """
    env = dict(os.environ, PYTHONIOENCODING="utf-8", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(open(stdout, "wb")) if stdout else subprocess.PIPE
        done = subprocess.run([str(BIN / command), *argv], cwd=cwd, stdout=target, stderr=subprocess.PIPE,
                              timeout=timeout, stdin=subprocess.DEVNULL, env=env, check=False)
    return Result(done.returncode, (done.stdout or b"").decode("utf-8", "replace"),
                  done.stderr.decode("utf-8", "replace"))


def assert_clean(result: Result, allowed: Iterable[int], what: str = "") -> None:
    """The exit status is one of `allowed` and no traceback was printed."""
    allowed = tuple(allowed)
    assert TRACEBACK not in result.err and TRACEBACK not in result.out, f"{what}: traceback\n{result.show()}"
    assert result.status in allowed, (
        f"{what}: status {result.status}, expected one of {allowed}\n{result.show()}")


def snapshot(*paths: Path) -> dict[Path, bytes | None]:
    """The bytes of each path (None when it does not exist), for `assert_unchanged`."""
    return {path: path.read_bytes() if path.exists() else None for path in paths}


def assert_unchanged(before: dict[Path, bytes | None], what: str = "") -> None:
    """Every path holds what `snapshot` saw (and a path that did not exist still does not)."""
    for path, content in before.items():
        now = path.read_bytes() if path.exists() else None
        assert now == content, f"{what}: {path} changed ({_size(content)} -> {_size(now)} bytes)"


def _size(content: bytes | None) -> str:
    return "absent" if content is None else str(len(content))


def jsonl_records(text: str) -> list[dict[str, object]]:
    """Each line of a JSONL output parsed (an assertion error names a line that is not JSON)."""
    records: list[dict[str, object]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:  # pragma: no cover - a failure message
                raise AssertionError(f"output line {number} is not JSON: {line[:200]!r}") from exc
    return records


# --- hostile files generated at run time ------------------------------------------------------

BIG_CELL = 131_072 + 10  # more than csv's default field_size_limit (131,072)
DEEP_JSON = 100_000
DEEP_TERMS = 10_000


def big_cell_csv(path: Path, header: str, before: str, after: str) -> Path:
    """A CSV whose second record has a cell of BIG_CELL characters, between valid records."""
    path.write_text(f"{header}\n{before}\nbig.wav,{'x' * BIG_CELL}\n{after}\n", encoding="utf-8")
    return path


def deep_json_line(depth: int = DEEP_JSON) -> str:
    """A JSONL line nested `depth` levels deep: {"query": [[[...]]]}."""
    return '{"query": ' + "[" * depth + "]" * depth + "}"


def nested_terms(depth: int = DEEP_TERMS) -> str:
    """A(A(A(...(x)...))): `depth` nested term arguments."""
    return "A(" * depth + "x" + ")" * depth


def write_pcm_wav(path: Path, frames: Sequence[int], rate: int) -> Path:
    """A mono 16-bit PCM WAV written with the standard library (0 frames gives a 44-byte file)."""
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(struct.pack(f"<{len(frames)}h", *frames))
    return path


# --- hypothesis strategies ----------------------------------------------------------------------

#: Text of any code point but surrogates, control characters and separators included.
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
#: Text biased to what breaks line readers: line and paragraph separators, CR, NUL, ESC, quotes.
NASTY = "\x00\r\n\t\x0b\x0c\x1b\x1c\x1d\x1e\x85\u2028\u2029\u202e\ufeff\"',;#{}[]()!&|-~\\ "
nasty_text = st.text(st.sampled_from(NASTY) | st.characters(blacklist_categories=("Cs",)), max_size=60)
words = st.sampled_from(["a", "dog", "barks", "rain", "without", "and", "not", "birds", "loud", "engine"])
query_text = st.lists(words, min_size=1, max_size=6).map(" ".join)


@st.composite
def line_bytes(draw: st.DrawFn) -> bytes:
    """One line's bytes: a query, surrogate-free unicode, control characters or random bytes."""
    kind = draw(st.sampled_from(["query", "text", "nasty", "bytes"]))
    if kind == "query":
        return draw(query_text).encode("utf-8")
    if kind == "text":
        return draw(any_text).encode("utf-8")
    if kind == "nasty":
        return draw(nasty_text).encode("utf-8")
    return draw(st.binary(max_size=40))


@st.composite
def line_file(draw: st.DrawFn, max_lines: int = 6) -> bytes:
    """A file of random lines joined by LF, CRLF or CR, with or without a final break."""
    lines = draw(st.lists(line_bytes(), min_size=0, max_size=max_lines))
    end = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    return end.join(lines) + draw(st.sampled_from([b"", end]))


@st.composite
def jsonl_file(draw: st.DrawFn, key: str = "query", max_lines: int = 5) -> bytes:
    """JSONL lines: records with random text in `key` (ids too), random values, random lines."""
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, max_lines))):
        kind = draw(st.sampled_from(["record", "value", "line"]))
        if kind == "record":
            record = {"id": draw(nasty_text), key: draw(nasty_text | query_text), "caption": draw(query_text)}
            lines.append(json.dumps(record, ensure_ascii=draw(st.booleans())).encode("utf-8"))
        elif kind == "value":
            value = draw(st.recursive(st.none() | st.booleans() | st.integers() | any_text,
                                      lambda inner: st.lists(inner, max_size=3), max_leaves=6))
            lines.append(json.dumps(value).encode("utf-8"))
        else:
            lines.append(draw(line_bytes()))
    return b"\n".join(lines) + b"\n"


@st.composite
def csv_file(draw: st.DrawFn, header: Sequence[str], max_rows: int = 5) -> bytes:
    """A CSV with `header` and random rows: nasty cells (quoted or not), ragged rows, random lines."""
    rows = [",".join(header).encode("utf-8")]
    for _ in range(draw(st.integers(0, max_rows))):
        if draw(st.integers(0, 4)) == 0:
            rows.append(draw(line_bytes()))
            continue
        cells = draw(st.lists(nasty_text | query_text, min_size=1, max_size=len(header) + 1))
        quoted = draw(st.booleans())
        text = ",".join('"' + cell.replace('"', '""') + '"' if quoted else cell for cell in cells)
        rows.append(text.encode("utf-8"))
    end = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    return end.join(rows) + end
