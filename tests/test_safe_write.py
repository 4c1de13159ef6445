"""The one safe writer (fortekit.safe_write): atomic files and folders, inputs, links, markers, locks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fortekit.errors import OutputError, OutputLockedError, OutputWriteError
from fortekit.safe_write import (
    MARKER_FILE,
    OutputLock,
    atomic_write,
    atomic_write_bytes,
    atomic_write_text,
    check_not_input,
    create_output_directory,
    is_fortekit_directory,
    output_lock,
    remove_output_directory,
    replace_directory,
)


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- atomic files -------------------------------------------------------------------------------
def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = atomic_write_text(tmp_path / "out.json", "old")

    def fail(path: Path) -> None:
        path.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputWriteError, match=r"\[E743\] Cannot write .*out.json.*disk is full"):
        atomic_write(target, fail)
    assert target.read_text() == "old"
    assert names(tmp_path) == ["out.json"]


def test_an_exception_of_the_writer_itself_also_leaves_nothing(tmp_path: Path) -> None:
    def fail(path: Path) -> None:
        path.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(tmp_path / "out.json", fail)
    assert names(tmp_path) == []


def test_a_file_size_limit_is_a_coded_error_naming_the_file(tmp_path: Path) -> None:
    """``ulimit -f``: the kernel sends SIGXFSZ (ignored here, as a shell would not) and EFBIG."""
    script = textwrap.dedent(
        f"""
        import resource, signal
        from pathlib import Path
        from fortekit.safe_write import atomic_write_bytes, atomic_write_text
        from fortekit.errors import OutputWriteError
        target = Path({str(tmp_path / "big.bin")!r})
        atomic_write_text(target, "previous")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            atomic_write_bytes(target, b"x" * 100_000)
        except OutputWriteError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("[E743] Cannot write ") and "big.bin" in out.stdout
    assert "ulimit -f" in out.stdout
    assert (tmp_path / "big.bin").read_text() == "previous"
    assert names(tmp_path) == ["big.bin"]


def test_a_symbolic_link_is_never_written_through(tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep")
    (tmp_path / "out.jsonl.settings.json").symlink_to(precious)
    with pytest.raises(OutputError, match=r"\[E741\]"):
        atomic_write_text(tmp_path / "out.jsonl.settings.json", "{}")
    assert precious.read_text() == "keep"


def test_a_folder_or_an_existing_file_without_overwrite_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(OutputError, match=r"\[E745\]"):
        atomic_write_bytes(tmp_path / "d", b"")
    atomic_write_bytes(tmp_path / "f", b"1")
    with pytest.raises(OutputError, match=r"\[E746\]"):
        atomic_write_bytes(tmp_path / "f", b"2", overwrite=False)
    assert (tmp_path / "f").read_bytes() == b"1"


# --- outputs that are inputs --------------------------------------------------------------------
def test_an_output_that_is_an_input_by_any_name_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("{}\n")
    os.link(corpus, tmp_path / "hard.jsonl")
    (tmp_path / "soft.jsonl").symlink_to(corpus)
    spellings = (corpus, tmp_path / "hard.jsonl", tmp_path / "soft.jsonl", tmp_path / "." / "corpus.jsonl")
    for spelling in spellings:
        with pytest.raises(OutputError, match=r"\[E740\].*the same file as the corpus"):
            check_not_input(spelling, {"corpus": corpus, "queries": None})
    check_not_input(tmp_path / "out.jsonl", {"corpus": corpus})


def test_an_output_inside_an_input_folder_or_holding_an_input_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    (index / "items.jsonl").write_text("")
    with pytest.raises(OutputError, match=r"\[E740\].*inside the index"):
        check_not_input(index / "new.jsonl", [("index", index)])
    with pytest.raises(OutputError, match=r"\[E740\].*a folder that holds the captions"):
        check_not_input(tmp_path, [("captions", index / "items.jsonl")])


# --- folders ------------------------------------------------------------------------------------
def test_only_folders_fortekit_created_are_replaced_or_removed(tmp_path: Path) -> None:
    users = tmp_path / "users"
    (users / "audio").mkdir(parents=True)
    (users / "audio" / "mine.wav").write_bytes(b"RIFF")
    with pytest.raises(OutputError, match=r"\[E744\].*audio"):
        replace_directory(users, lambda folder: None, overwrite=True)
    with pytest.raises(OutputError, match=r"\[E744\]"):
        remove_output_directory(users)
    assert (users / "audio" / "mine.wav").read_bytes() == b"RIFF"
    # an existing folder of the user's is written into but never marked unless empty
    create_output_directory(users)
    assert not is_fortekit_directory(users)
    ours = create_output_directory(tmp_path / "ours")
    assert is_fortekit_directory(ours)
    remove_output_directory(ours)
    assert not ours.exists()


def test_a_failed_folder_build_leaves_the_previous_folder(tmp_path: Path) -> None:
    target = replace_directory(tmp_path / "gen", lambda folder: (folder / "a.txt").write_text("1"))

    def fail(folder: Path) -> None:
        (folder / "b.txt").write_text("2")
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputWriteError, match=r"\[E743\]"):
        replace_directory(target, fail, overwrite=True)
    assert names(target) == [MARKER_FILE, "a.txt"]
    assert names(tmp_path) == ["gen"]
    with pytest.raises(OutputError, match=r"\[E746\]"):
        replace_directory(target, lambda folder: None)


# --- locks --------------------------------------------------------------------------------------
LOCK_HOLDER = """
import sys, time
from fortekit.safe_write import OutputLock
with OutputLock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_a_second_run_on_a_locked_output_is_told_the_holders_pid(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(OutputLockedError, match=rf"\[E742\].*pid {holder.pid}"):
            OutputLock(target).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    # the kernel dropped the killed holder's lock: a new run takes it over
    with output_lock(target, None, "-") as locks:
        assert len(locks) == 1
    assert names(tmp_path) == []


def test_a_lock_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    (tmp_path / ".out.jsonl.lock").symlink_to(elsewhere)
    with pytest.raises(OutputError, match=r"\[E741\]"):
        OutputLock(tmp_path / "out.jsonl").acquire()
    assert elsewhere.read_text() == "keep"


def test_locks_in_one_process_exclude_each_other_and_release(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    with OutputLock(target), pytest.raises(OutputLockedError):  # non-blocking: raises, not waits
        OutputLock(target).acquire()
    with OutputLock(target):
        pass


def test_a_users_folder_is_written_into_but_none_of_its_files_replaced(tmp_path: Path) -> None:
    from fortekit.safe_write import check_no_foreign_files

    (tmp_path / "result.json").write_text("mine")
    check_no_foreign_files(tmp_path, ["small_clap.json"])
    with pytest.raises(OutputError, match=r"\[E747\].*result.json"):
        check_no_foreign_files(tmp_path, ["small_clap.json", "result.json"])
    ours = create_output_directory(tmp_path / "run")
    (ours / "result.json").write_text("an earlier run's")
    check_no_foreign_files(ours, ["result.json"])  # fortekit's own folder: written again


def test_an_evaluation_never_replaces_a_users_results(tmp_path: Path) -> None:
    from fortekit.errors import EvaluationError
    from fortekit.search.eval.report import open_output_folder

    (tmp_path / "results.md").write_text("mine")
    with pytest.raises(EvaluationError, match=r"\[E526\].*results.md"):
        open_output_folder(tmp_path)
    assert (tmp_path / "results.md").read_text() == "mine"
    earlier = tmp_path / "earlier"
    (earlier / "stage1").mkdir(parents=True)  # an earlier run's cache, copied to be reused
    open_output_folder(earlier).release()
    assert is_fortekit_directory(earlier)


def test_a_written_file_gets_the_mode_open_would_give_it_and_a_replaced_one_keeps_its_own(
    tmp_path: Path,
) -> None:
    """mkstemp makes 0o600 files: a run file or an index in a shared folder must stay readable."""
    import os
    import stat

    from fortekit.safe_write import atomic_write_text

    mask = os.umask(0o022)
    try:
        new = atomic_write_text(tmp_path / "run.trec", "q1 Q0 d1 1 1.0 fortekit\n")
        assert stat.S_IMODE(new.stat().st_mode) == 0o644
        os.chmod(new, 0o640)
        atomic_write_text(new, "q1 Q0 d2 1 1.0 fortekit\n")
        assert stat.S_IMODE(new.stat().st_mode) == 0o640
    finally:
        os.umask(mask)
