"""Issue 43: one rule for every output path, and a walk that makes it impossible to skip.

The walk goes over every parser of ``fortekit`` and ``fol-refine``: every option that looks like
an output must be declared one (``OutputPath``, what the central check at dispatch finds), and
each declared output is run against a FIFO, a character device, a symbolic link, a folder, an
existing file of the user's and a read-only folder. Each gives a coded error (status 2, one
``[E…]`` line) or the documented behaviour (a FIFO or a device written in place; a folder output
that exists is its command's to judge; a resumable output that exists is checked by its command,
E662), and no target changes. Cases 1 (``eval --fuse -o`` over a FIFO or a device), 2 (``search
--format trec|tsv -o`` over an existing file) and 11 (a TREC id with white space) end to end.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_fixtures import assert_clean, run_in_process

from fortekit.errors import OutputError
from fortekit.search.cli import main
from fortekit.search.cli.main import build_parser, build_refine_parser, refuse_outputs
from fortekit.search.cli.output_options import OutputPath, output_actions, walk_parsers
from fortekit.search.eval.runs import check_trec_id, format_run, read_run, write_run

TOPS: dict[str, Callable[[], argparse.ArgumentParser]] = {"fortekit": build_parser,
                                                          "fol-refine": build_refine_parser}

# --- the walk: every option that names an output is declared one ---------------------------------
#: What makes an option look like an output: its spelling, or its help.
_NAME = re.compile(r"(^|[-_])(o|out|output|out[-_]?dir|png|pdf|svg|plot|export|cache[-_]dir|save|write|log|"
                   r"dump|report)([-_]|$)")
_HELP = re.compile(r"\b(write|writes|written|output|outputs|save|saves|export|cache)\b", re.I)
#: Options that look like outputs and are not, each with the reason.
NOT_OUTPUTS = {
    "--index": "an index the command reads (index add/remove/compact update it in place, under its "
               "lock and the index's own checks)",
    "--lookup": "an earlier fol-refine output, read",
    "--run": "a TREC run file, read",
    "--eval": "an evaluation run folder, read and shown",
    "--corpus": "captions, read",
    "--tokenizer": "a tokenizer folder, read",
}


def _looks_like_an_output(action: argparse.Action) -> bool:
    if action.nargs == 0 or action.choices or action.type in (int, float):
        return False
    names = [name.lstrip("-").lower() for name in (*action.option_strings, action.dest, action.metavar or "")]
    helped = action.help not in (None, argparse.SUPPRESS) and _HELP.search(action.help or "")
    return any(_NAME.search(name) for name in names if name) or bool(helped)


def _every_parser() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for build in TOPS.values():
        for _, parser in walk_parsers(build()):
            yield parser.prog, parser


def test_every_option_that_names_an_output_is_declared_one() -> None:
    unmarked = [
        f"{prog} {'/'.join(action.option_strings) or action.dest}"
        for prog, parser in _every_parser() for action in parser._actions
        if _looks_like_an_output(action) and not isinstance(action.type, OutputPath)
        and not set(action.option_strings) & set(NOT_OUTPUTS)
    ]
    assert not unmarked, ("options that name an output without type=OutputPath (add_output_option), "
                          f"so the central check skips them: {unmarked}")


def test_the_central_check_can_find_every_command() -> None:
    for prog, parser in _every_parser():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                assert action.dest != argparse.SUPPRESS, f"{prog}: sub-commands without a dest"


def test_every_file_output_can_be_replaced_on_purpose() -> None:
    """An existing file is refused without --overwrite (E746): the command must then have one."""
    for prog, parser in _every_parser():
        files = [a for a in output_actions(parser) if getattr(a.type, "kind", None) != "folder"]
        if files:
            assert any("--overwrite" in a.option_strings for a in parser._actions), f"{prog}: no --overwrite"


# --- the rule against six targets, on every declared output ---------------------------------------
def _output_cases() -> list[tuple[str, tuple[str, ...], str, dict[str, Any]]]:
    """(top, sub-command path, dest, overrides) of every declared output, and the variants."""
    found = []
    for top, build in TOPS.items():
        for path, parser in walk_parsers(build()):
            for action in output_actions(parser):
                found.append((top, path, action.dest, {}))
    found.append(("fortekit", ("eval",), "out", {"fuse": ["a.trec", "b.trec"]}))  # -o is the fused file
    found.append(("fortekit", ("search",), "output", {"format": "trec"}))  # written whole, not resumed
    return found


OUTPUTS = _output_cases()
TARGETS = ("fifo", "device", "symlink", "folder", "user_file", "read_only_folder")


def _namespace(top: argparse.ArgumentParser, path: tuple[str, ...]) -> tuple[argparse.Namespace, Any]:
    """The arguments of ``top PATH...`` with every default (what parse_args would give), and the leaf."""
    args, parser, chosen = argparse.Namespace(), top, []
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        chosen.append((parser, sub.dest, name))
        parser = sub.choices[name]
    for each in [*(p for p, _, _ in chosen), parser]:
        for action in each._actions:
            if action.dest != argparse.SUPPRESS and action.default != argparse.SUPPRESS:
                setattr(args, action.dest, action.default)
        for key, value in each._defaults.items():
            setattr(args, key, value)
    for _, dest, name in chosen:
        setattr(args, dest, name)
    return args, parser


def _device(folder: Path) -> Path:
    """A character device node in the test's folder (like /dev/null), or /dev/null where mknod is denied."""
    node = folder / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return node
    except OSError:
        return Path(os.devnull)


def _make(target: str, folder: Path, kind: str) -> Path:
    (folder / "mine.txt").write_text("my notes\n")
    (folder / "mine").mkdir()
    (folder / "mine" / "keep.txt").write_text("keep\n")
    if target == "fifo":
        os.mkfifo(folder / "out.fifo")
        return folder / "out.fifo"
    if target == "device":
        return _device(folder)
    if target == "symlink":
        (folder / "link").symlink_to(folder / ("mine.txt" if kind == "file" else "mine"))
        return folder / "link"
    if target == "folder":
        return folder / "mine"
    if target == "user_file":
        return folder / "mine.txt"
    (folder / "ro").mkdir()
    (folder / "ro").chmod(0o555)
    return folder / "ro" / "out"


def _state(folder: Path, *extra: Path) -> dict[str, tuple[Any, ...]]:
    """Type, inode, size, mode, time and bytes (or link) of everything under ``folder`` (and ``extra``)."""
    seen: dict[str, tuple[Any, ...]] = {}
    for path in [*sorted(folder.rglob("*")), *extra]:
        info = path.lstat()
        content: Any = (path.read_bytes() if stat.S_ISREG(info.st_mode)
                        else os.readlink(path) if stat.S_ISLNK(info.st_mode) else None)
        seen[str(path)] = (stat.S_IFMT(info.st_mode), info.st_ino, info.st_rdev, info.st_size,
                           info.st_mode, info.st_mtime_ns, content)
    return seen


def _expected(target: str, kind: str, resumed: bool, whole: bool) -> str | None:
    """The code the rule gives, or None where the documented behaviour is to go on."""
    if kind == "folder":
        return {"fifo": "E745", "device": "E745", "symlink": "E741", "folder": None, "user_file": "E745",
                "read_only_folder": "E743"}[target]
    if target == "user_file":
        return None if resumed else "E749" if whole else "E746"
    return {"fifo": None, "device": None, "symlink": "E741", "folder": "E745",
            "read_only_folder": "E743"}[target]


@pytest.fixture()
def as_a_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """Root may write into a read-only folder; the rule is checked as a user sees it (mode bits)."""
    if os.geteuid() != 0:
        return
    real = os.access

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if mode & os.W_OK and not os.stat(path).st_mode & stat.S_IWUSR:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("top", "path", "dest", "overrides"), OUTPUTS,
                         ids=[f"{t} {' '.join(p)} {d}{' ' + str(o) if o else ''}" for t, p, d, o in OUTPUTS])
def test_the_rule_on_every_output(top: str, path: tuple[str, ...], dest: str, overrides: dict[str, Any],
                                  target: str, tmp_path: Path, as_a_user: None,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    parser = TOPS[top]()
    args, leaf = _namespace(parser, path)
    vars(args).update(overrides)
    spec = next(a.type for a in output_actions(leaf) if a.dest == dest)
    assert isinstance(spec, OutputPath)
    kind = spec.kind_for(args)
    resumes = spec.resumes(args) if spec.resumes is not None else "never"
    value = _make(target, tmp_path, kind)
    setattr(args, dest, spec(str(value)))
    before = _state(tmp_path, *([value] if not value.is_relative_to(tmp_path) else []))
    status = refuse_outputs(parser, args)
    err = capsys.readouterr().err
    code = _expected(target, kind, resumes is None, resumes not in (None, "never"))
    if code is None:
        assert status is None and err == "", err
    else:
        lines = err.splitlines()
        assert status == 2 and len(lines) == 1 and f"[{code}]" in lines[0], (code, err)
    assert _state(tmp_path, *([value] if not value.is_relative_to(tmp_path) else [])) == before, target


# --- case 1: eval --fuse -o into a FIFO and a device, in place ------------------------------------
def _runs(folder: Path) -> tuple[str, str]:
    (folder / "a.trec").write_text("q1 Q0 d1 1 0.9 a\nq1 Q0 d2 2 0.5 a\nq2 Q0 d1 1 0.3 a\n")
    (folder / "b.trec").write_text("q1 Q0 d2 1 0.9 b\nq1 Q0 d3 2 0.5 b\n")
    return str(folder / "a.trec"), str(folder / "b.trec")


def test_eval_fuse_writes_a_fifo_in_place(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    fifo = tmp_path / "fused.fifo"
    os.mkfifo(fifo)
    inode, read = fifo.stat().st_ino, []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text()))
    reader.start()
    result = run_in_process(main, ["eval", "--fuse", a, b, "-o", str(fifo)])
    reader.join(timeout=60)
    assert_clean(result, [0], "eval --fuse -o FIFO")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and fifo.stat().st_ino == inode  # never renamed over
    assert read and read[0].startswith("q1 Q0 d2 1 ") and len(read[0].splitlines()) == 4


@pytest.mark.parametrize("where", ["/dev/null", "node in the test folder"])
def test_eval_fuse_writes_a_device_in_place(where: str, tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    device = Path(os.devnull) if where == "/dev/null" else _device(tmp_path)
    if where != "/dev/null" and device == Path(os.devnull):
        pytest.skip("mknod is not permitted here")
    before = os.lstat(device)
    result = run_in_process(main, ["eval", "--fuse", a, b, "-o", str(device)])
    assert_clean(result, [0], "eval --fuse -o device")
    after = os.lstat(device)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_eval_fuse_refuses_a_socket_and_a_block_device(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    targets = [tmp_path / "sock"]
    try:
        os.mknod(tmp_path / "disk", stat.S_IFBLK | 0o600, os.makedev(7, 255))
        targets.append(tmp_path / "disk")
    except OSError:
        pass  # mknod denied: the socket stands for every special file
    for target in targets:
        before = _state(tmp_path)
        result = run_in_process(main, ["eval", "--fuse", a, b, "-o", str(target), "--overwrite"])
        assert_clean(result, [2], str(target))
        assert "[E748]" in result.err and _state(tmp_path) == before
    server.close()


def test_eval_fuse_replaces_a_file_only_with_overwrite(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    out = tmp_path / "fused.trec"
    out.write_text("my notes\n")
    refused = run_in_process(main, ["eval", "--fuse", a, b, "-o", str(out)])
    assert_clean(refused, [2])
    assert "[E746]" in refused.err and out.read_text() == "my notes\n"
    assert_clean(run_in_process(main, ["eval", "--fuse", a, b, "-o", str(out), "--overwrite"]), [0])
    assert set(read_run(out)) == {"q1", "q2"} and sorted(p.name for p in tmp_path.iterdir()) == [
        "a.trec", "b.trec", "fused.trec"]


# --- case 11: the TREC writer never writes a line its reader refuses --------------------------------
@pytest.mark.parametrize("blank", [" ", "\t", "\r", "\n", "\x0b", "\x1c", "\x85", "\xa0", "\u2028", "\u3000"])
def test_a_trec_id_with_white_space_is_refused_not_written(blank: str, tmp_path: Path) -> None:
    out = tmp_path / "run.trec"
    for run in ({"q": {f"a{blank}b": 1.0}}, {f"q{blank}1": {"a": 1.0}}):
        with pytest.raises(OutputError, match=r"\[E750\].*white space"):
            write_run(out, run)
        assert not out.exists()
    with pytest.raises(OutputError, match=r"\[E750\]"):
        check_trec_id("\ufeffq1", "query id")


def test_what_the_trec_writer_writes_its_reader_reads_back(tmp_path: Path) -> None:
    run = {"q-é": {"clip_1.wav": 0.5, "dir/clip(2)#x": 0.25, "\u00e9\u0301": -1.0}, "2": {"a": 1e-300}}
    assert read_run(write_run(tmp_path / "r.trec", run)) == run
    assert format_run(run).count("\n") == 4


# --- cases 2 and 11 end to end: fortekit search --format trec|tsv -o --------------------------------
@pytest.fixture()
def shared_minilm(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every run of these tests gets the module's MiniLM instead of loading its own."""
    import fortekit.plugins as plugins

    real = plugins.get_backbone
    monkeypatch.setattr(plugins, "get_backbone",
                        lambda name, **options: minilm if name == "minilm" else real(name, **options))
    return minilm


def _search(index: Path, queries: Path, out: Path, *extra: str) -> Any:
    return run_in_process(main, ["search", "--index", str(index), "--queries", str(queries), "-o", str(out),
                                 "-k", "2", "--device", "cpu", "-q", *extra])


def test_search_trec_or_tsv_never_replaces_a_file_without_overwrite(
        cafe: Path, tmp_path: Path, shared_minilm: Any) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text("rain on a roof\na dog barks\n")
    notes, finished = tmp_path / "notes.txt", tmp_path / "ranked.jsonl"
    notes.write_text("my notes\n")
    assert_clean(_search(cafe, queries, finished), [0], "a finished JSONL run")
    before = _state(tmp_path)
    for file_format in ("trec", "tsv"):
        for target in (notes, finished):
            refused = _search(cafe, queries, target, "--format", file_format)
            assert_clean(refused, [2], f"{file_format} over {target.name}")
            assert "[E749]" in refused.err and f"--format {file_format}" in refused.err
    assert _state(tmp_path) == before  # and no lock or temporary file was left
    assert_clean(_search(cafe, queries, finished, "--format", "trec", "--overwrite"), [0])
    assert set(read_run(finished)) == {"1", "2"}
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_search_trec_refuses_ids_that_its_reader_would_split(minilm: Any, tmp_path: Path,
                                                             shared_minilm: Any) -> None:
    from fortekit.search.index import AudioIndex

    index = tmp_path / "spaced.index"
    # (an index refuses tabs and line breaks in ids itself, E640; a space inside an id is allowed)
    AudioIndex.from_captions(["clip 1", "clip 2", "clip3"], ["rain on a roof", "a dog barks",
                                                             "birds chirp"], minilm).save(index)
    queries = tmp_path / "q.csv"
    queries.write_text("id,text\nq1,rain on a roof\nq 2,a dog barks\n")
    run = tmp_path / "run.trec"
    refused = _search(index, queries, run, "--format", "trec", "--text-column", "text")
    assert_clean(refused, [2])
    assert "[E750]" in refused.err and "'clip 1'" in refused.err and not run.exists()
    tsv = tmp_path / "run.tsv"
    assert_clean(_search(index, queries, tsv, "--format", "tsv", "--text-column", "text"), [0])
    assert "\tclip 2\t" in tsv.read_text()  # a TSV cell keeps it (tabs would be escaped: \\t)
    # a query id with a space (--id-column): refused as its rows come, and the old file stands
    AudioIndex.from_captions(["c1", "c2"], ["rain on a roof", "a dog barks"], minilm).save(tmp_path / "ok")
    run.write_text("old\n")
    stopped = _search(tmp_path / "ok", queries, run, "--format", "trec", "--text-column", "text",
                      "--id-column", "id", "--overwrite", "--batch-size", "1")
    assert_clean(stopped, [1])
    assert "[E750]" in stopped.err and "'q 2'" in stopped.err and run.read_text() == "old\n"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
