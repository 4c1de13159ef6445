"""fol-refine's output handling is safe (issue 15, items 1, 2, 3, 10, 17); no model is loaded.

Every run answers its queries from a lookup table, so nothing is searched: the tests
exercise what happens to the output file, not the refiner.
"""

from __future__ import annotations

import doctest
import errno
import importlib
import io
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run_fol_refine

from fortekit.errors import QueryFileError
from fortekit.search.refine import output as output_module
from fortekit.search.refine.output import ResultWriter, result_record, same_file, write_error
from fortekit.search.refine.resume import ResumeState, settings_path

QUERIES = ["rain on a tin roof", "a dog barks twice", "wind through the trees"]


run = run_fol_refine


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    """A folder with q.txt (three queries) and lookup.jsonl answering all of them."""
    (tmp_path / "q.txt").write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    with ResultWriter(tmp_path / "lookup.jsonl") as writer:
        for line, query in enumerate(QUERIES, start=1):
            stored = {"refined_text": query + ", loud", "phi_star": "∃x Rain(x)"}
            writer.write(result_record(line, query, stored))
    return tmp_path


def refine(work: Path, output: str, *extra: str, stdout: io.StringIO | None = None) -> tuple[int, str, str]:
    """fol-refine q.txt --lookup lookup.jsonl -o OUTPUT ...: every query is known."""
    lookup = str(work / "lookup.jsonl")
    return run(str(work / "q.txt"), "--lookup", lookup, "-o", output, *extra, stdout=stdout)


def lines_of(path: Path) -> list[int]:
    return [json.loads(line)["line"] for line in path.read_text(encoding="utf-8").splitlines()]


# --- item 1: a file that is not fol-refine output is never cut or overwritten ---


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("notes.txt", b"remember the milk\n"),
        ("notes.jsonl", b"remember the milk"),
        ("config.json", b'{"learning_rate": 0.001, "epochs": 3}\n'),
        ("table.tsv", b"id\tcaption\n"),
        ("picture.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 12),
        ("blob.bin", bytes(range(11, 256)) * 12),  # 3 KB without a line break
    ],
)
def test_a_one_line_file_that_is_not_an_output_is_refused_untouched(
    work: Path, name: str, content: bytes,
) -> None:
    target = work / name
    target.write_bytes(content)
    status, _, err = refine(work, str(target))
    assert status == 2 and "[E662]" in err and "--overwrite" in err and "-o" in err
    assert "removed a torn last line" not in err and "Traceback" not in err
    assert target.read_bytes() == content
    assert not settings_path(target).exists()
    status, _, err = refine(work, str(target), "--overwrite")  # the user's explicit choice
    assert status == 0 and "3 from the lookup table" in err


def test_a_torn_last_line_is_cut_only_when_the_settings_file_matches(work: Path) -> None:
    out = work / "out.jsonl"
    assert refine(work, str(out))[0] == 0
    complete = out.read_bytes()
    sidecar = settings_path(out)
    recorded = sidecar.read_bytes()
    first = complete[: complete.index(b"\n") + 1]
    torn = first + b'{"line": 2, "query": "a do'
    out.write_bytes(torn)
    status, _, err = refine(work, str(out), "-B", "4")  # other settings
    assert status == 2 and "[E663]" in err and "config.beam_width: 3 then, 4 now" in err
    assert out.read_bytes() == torn
    sidecar.unlink()  # no settings file: unknown settings
    status, _, err = refine(work, str(out))
    assert status == 2 and "[E663]" in err and "is missing" in err and out.read_bytes() == torn
    assert not sidecar.exists()
    sidecar.write_bytes(recorded)
    status, _, err = refine(work, str(out))
    assert status == 0 and f"removed a torn last line ({len(torn) - len(first)} bytes)" in err
    assert "2 from the lookup table, 1 already done" in err
    assert lines_of(out) == [1, 2, 3]


def test_a_crash_in_the_first_record_is_resumed(work: Path) -> None:
    out = work / "out.jsonl"
    assert refine(work, str(out))[0] == 0
    out.write_bytes(b'{"line": 1, "que')
    status, _, err = refine(work, str(out))
    assert status == 0 and "removed a torn last line (16 bytes)" in err and lines_of(out) == [1, 2, 3]
    settings_path(out).unlink()
    out.write_bytes(b'{"line": 1, "que')
    assert refine(work, str(out))[0] == 2  # the same, without its settings file: E663


# --- item 2: -o as a hard link (or a symlink) to the query file ---


@pytest.mark.parametrize("link", [os.link, os.symlink])
def test_an_output_that_is_the_query_file_under_another_name_is_refused(work: Path, link: Any) -> None:
    queries = work / "q.txt"
    before = queries.read_bytes()
    alias = work / "alias.jsonl"
    link(queries, alias)
    status, _, err = refine(work, str(alias), "--overwrite")
    # a symlink meets the one output rule at dispatch first, which names the input it is (E740)
    assert status == 2 and ("[E664]" in err if link is os.link else "[E740]" in err)
    assert queries.read_bytes() == before and not settings_path(alias).exists()
    assert same_file(alias, queries) and not same_file(work / "lookup.jsonl", queries)
    assert not same_file(work / "missing.jsonl", queries)


# --- item 3: an output without its settings file ---


def test_an_output_without_its_settings_file_is_not_resumed(work: Path) -> None:
    out = work / "out.jsonl"
    assert refine(work, str(out), "-B", "5")[0] == 0
    content = out.read_bytes()[: out.read_bytes().index(b"\n") + 1]  # one record, of B = 5
    out.write_bytes(content)
    settings_path(out).unlink()
    status, _, err = refine(work, str(out))
    assert status == 2 and "[E663]" in err and str(settings_path(out)) in err and "--overwrite" in err
    assert out.read_bytes() == content and not settings_path(out).exists()  # nothing claimed
    status, _, err = refine(work, str(out), "--overwrite")
    assert status == 0 and lines_of(out) == [1, 2, 3]
    assert json.loads(settings_path(out).read_text())["config.beam_width"] == 3
    with pytest.raises(QueryFileError, match=r"\[E663\].*holds no JSON object"):
        settings_path(out).write_text("[1, 2]\n")
        ResumeState.read(out, settings={"x": 1})


# --- item 10: a full disk, a missing permission ---


class _Failing:
    """Wraps the writer's file: `flush` raises `error` from the `after`-th call on."""

    def __init__(self, handle: Any, error: OSError, after: int) -> None:
        self.handle, self.error, self.after, self.calls = handle, error, after, 0

    def flush(self) -> None:
        self.calls += 1
        if self.calls >= self.after:
            raise self.error
        self.handle.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handle, name)


def _break_writer(monkeypatch: pytest.MonkeyPatch, error: OSError, after: int) -> None:
    real = ResultWriter.__init__

    def init(self: ResultWriter, *args: Any, **options: Any) -> None:
        real(self, *args, **options)
        if self.path is not None:
            self._handle = _Failing(self._handle, error, after)  # type: ignore[assignment]

    monkeypatch.setattr(ResultWriter, "__init__", init)


@pytest.mark.parametrize(
    ("code", "expected"), [(errno.ENOSPC, "[E661]"), (errno.EACCES, "[E666]"), (errno.EPERM, "[E666]")],
)
def test_a_write_error_in_the_run_is_coded_with_the_summary_and_exit_1(
    work: Path, monkeypatch: pytest.MonkeyPatch, code: int, expected: str,
) -> None:
    out = work / "out.jsonl"
    _break_writer(monkeypatch, OSError(code, os.strerror(code)), after=2)
    status, _, err = refine(work, str(out), "--batch-size", "1")
    assert status == 1 and "Traceback" not in err and "[Errno" not in err
    assert "[E669]" in err and expected in err and str(out) in err and os.strerror(code) in err
    assert "fol-refine: 0 refined, 1 from the lookup table" in err  # the summary counts what was written
    if expected == "[E666]":
        assert "chmod" in err


def test_a_full_disk_at_the_last_fsync(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.fsync

    def full(descriptor: int) -> None:
        # Only the output's own fsync fails: the settings sidecar (written first, atomically, by
        # fortekit.safe_write) would otherwise stop the run before it starts, with E743.
        if Path(f"/proc/self/fd/{descriptor}").resolve().name != "out.jsonl":
            return real(descriptor)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(output_module.os, "fsync", full)
    status, _, err = refine(work, str(work / "out.jsonl"))
    assert status == 1 and "[E669]" in err and "[E661]" in err and "No space left on device" in err
    assert "3 from the lookup table" in err and "Traceback" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_dev_full(work: Path) -> None:
    status, _, err = refine(work, "/dev/full")
    assert status == 1 and "[E661]" in err and "No space left on device" in err
    assert "results: /dev/full" in err
    assert not Path("/dev/full.settings.json").exists()


def test_no_permission_to_open_the_output(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = work / "out.jsonl"
    real = Path.open

    def refused(self: Path, mode: str = "r", *args: Any, **options: Any) -> Any:
        if self == out and mode != "rb":
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self, mode, *args, **options)

    monkeypatch.setattr(Path, "open", refused)
    status, _, err = refine(work, str(out))
    assert status == 2 and f"[E666] The run may not write {out} (Permission denied)" in err
    assert "-o" in err and "chmod" in err


def test_write_error_codes() -> None:
    assert str(write_error("o.jsonl", OSError(errno.ENOSPC, "No space left on device"))).startswith("[E661]")
    for code in (errno.EACCES, errno.EPERM, errno.EROFS):
        assert str(write_error("o.jsonl", OSError(code, os.strerror(code)))).startswith("[E666]")
    assert "may not read" in str(write_error("o", PermissionError(errno.EACCES, "x"), action="read"))


def test_the_writer_closes_its_file_even_when_the_last_flush_fails(tmp_path: Path) -> None:
    writer = ResultWriter(tmp_path / "out.jsonl")
    handle = writer._handle
    writer._handle = _Failing(handle, OSError(errno.ENOSPC, "No space left on device"), after=1)  # type: ignore[assignment]
    with pytest.raises(QueryFileError, match=r"\[E661\]"):
        writer.close()
    assert handle.closed
    writer.close()  # a second close does nothing
    with pytest.raises(KeyError), ResultWriter(tmp_path / "other.jsonl") as other:  # the error in flight wins
        other._handle = _Failing(other._handle, OSError(errno.ENOSPC, "full"), after=1)  # type: ignore[assignment]
        raise KeyError("the run's own error")


# --- item 17: a closed standard output, a second Ctrl-C ---


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


def test_a_closed_standard_output_stops_quietly(work: Path) -> None:
    status, _, err = refine(work, "-", stdout=_ClosedPipe())
    assert status == 141 and err == ""  # no E669, no resume hint, no summary, no traceback


def _script(work: Path, body: str) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=work, capture_output=True, text=True, timeout=60, check=False,
    )


def test_a_closed_pipe_in_a_real_process(work: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from fortekit.search.cli import fol_refine_main; "
             "sys.exit(fol_refine_main())", "q.txt", "--lookup", "lookup.jsonl", "-o", "-"],
            cwd=work, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141 and done.stderr == ""


def test_a_second_ctrl_c_during_shutdown_exits_quietly_with_130(work: Path) -> None:
    started = time.perf_counter()
    done = _script(work, """
        import atexit, os, signal, sys, time
        from fortekit.search.refine.run import BatchRunner

        def interrupted(self, lines):
            raise KeyboardInterrupt  # the first Ctrl-C

        def exit_hook():  # stands for torch's: the second Ctrl-C comes while it runs
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)

        BatchRunner.run = interrupted
        atexit.register(exit_hook)
        from fortekit.search.cli import fol_refine_main
        sys.argv = ["fol-refine", "q.txt", "--lookup", "lookup.jsonl", "-o", "out.jsonl"]
        sys.exit(fol_refine_main())
    """)
    assert done.returncode == 130 and "Traceback" not in done.stderr and "[E669]" in done.stderr
    assert time.perf_counter() - started < 25


def test_docstring_examples() -> None:
    for name in ("fortekit.search.refine.resume", "fortekit.search.refine.output"):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0
