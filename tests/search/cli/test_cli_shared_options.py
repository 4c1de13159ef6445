"""One command line: every command spells the same idea the same way, and exits with the same codes.

Walks every sub-parser of ``fortekit`` and ``fol-refine`` and checks the shared options
(``--index``, ``-k/--top-k``, ``-o/--output``, ``-q/--quiet`` ...); then the query-file rules of
``fortekit search`` (``--queries``, E760), ``--format trec``, a closed pipe (141), that the old
spellings are gone (CHANGELOG.md) and ``python -m fortekit``.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fortekit.search.cli import build_parser, build_refine_parser, main
from fortekit.search.cli.common import EXIT_CODES, run_cli

REPO = Path(__file__).resolve().parents[3]

#: Each idea and its one spelling: an option that has one of the strings must have all of them.
SPELLINGS = {
    "-k": ["-k", "--top-k"], "--top-k": ["-k", "--top-k"],
    "-o": ["-o", "--output"], "--output": ["-o", "--output"],
    "-q": ["-q", "--quiet"], "--quiet": ["-q", "--quiet"],
    "--index": ["--index"], "--json": ["--json"], "--stage1": ["--stage1"], "--format": ["--format"],
    "-D": ["-D", "--depth"], "--depth": ["-D", "--depth"],
    "-B": ["-B", "--beam-width"], "--beam-width": ["-B", "--beam-width"],
    "--text-column": ["--text-column"], "--id-column": ["--id-column"], "--queries": ["--queries"],
}
#: Each idea's dest, when it has one: an option with this dest must be spelled as above.
DESTS = {"top_k": "-k", "output": "-o", "quiet": "-q", "json": "--json", "stage1": "--stage1"}
#: Spellings renamed before 0.2.0 (CHANGELOG.md): no command has them.
OLD = {"--out", "--online", "--offline", "--column", "--caption-column", "--max-depth"}


def _parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    def walk(name: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    yield from walk(f"{name} {sub_name}", sub)

    yield from walk("fortekit", build_parser())
    yield from walk("fol-refine", build_refine_parser())


PARSERS = list(_parsers())


def test_every_command_is_in_search_cli() -> None:
    for name, parser in PARSERS:
        handler = parser.get_default("handler")
        if handler is not None:
            module = getattr(handler, "__module__", "")
            assert module.startswith("fortekit.search.cli"), (name, module)
    names = {name for name, _ in PARSERS}
    assert {"fortekit search", "fortekit parse", "fortekit caption", "fortekit vocab build",
            "fortekit plugins", "fortekit convert laion-clap", "fortekit parse-report",
            "fortekit relations build", "fortekit index build"} <= names


@pytest.mark.parametrize(("name", "parser"), PARSERS, ids=[name for name, _ in PARSERS])
def test_the_same_idea_has_the_same_spelling(name: str, parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        if not action.option_strings or action.help is argparse.SUPPRESS:
            continue
        strings = list(action.option_strings)
        assert not OLD & set(strings), f"{name}: {strings} is an old spelling shown in --help"
        for string in strings:
            if string in SPELLINGS:
                assert strings == SPELLINGS[string], f"{name}: {strings} should be {SPELLINGS[string]}"
        if action.dest in DESTS:
            assert strings == SPELLINGS[DESTS[action.dest]], f"{name}: dest {action.dest} spelled {strings}"
        if "--stage1" in strings:
            assert set(action.choices or ()) <= {"auto", "off", "feedback", "online", "offline"}
        for switch in ("--formula-scoring", "--stage3", "--order-check"):  # one vocabulary for every stage
            if switch in strings:
                assert set(action.choices or ()) == {"auto", "on", "off"}, f"{name}: {switch}"
        if "--format" in strings:
            assert set(action.choices or ()) <= {"table", "jsonl", "tsv", "trec"}
        if "--json" in strings:
            assert action.nargs == 0


def test_a_positional_query_that_names_a_file_is_refused(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    queries = tmp_path / "queries.txt"
    queries.write_text("rain\n", encoding="utf-8")
    assert main(["search", "--index", str(tmp_path / "no.index"), str(queries), "-k", "3"]) == 2
    err = capsys.readouterr().err
    assert "[E760]" in err and f"--queries {queries}" in err and str(queries) in err


def test_queries_from_standard_input(cafe: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"rain on a roof\na bell ringing\n")))
    assert main(["search", "--index", str(cafe), "--queries", "-", "-k", "1", "-q", "--device", "cpu",
                 "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["line"], r["query"]) for r in records] == [(1, "rain on a roof"), (2, "a bell ringing")]
    assert records[0]["hits"][0]["id"] == "clip3" and records[1]["hits"][0]["id"] == "clip6"


def test_format_trec_writes_a_run_file(cafe: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    queries = tmp_path / "q.csv"
    queries.write_text("qid,text\nq7,rain on a roof\nq9,a bell ringing\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    argv = ["search", "--index", str(cafe), "--queries", str(queries), "--id-column", "qid",
            "--text-column", "text", "--format", "trec", "-k", "2", "-o", str(run), "-q", "--device", "cpu"]
    assert main(argv) == 0
    lines = [line.split() for line in run.read_text("utf-8").splitlines()]
    assert len(lines) == 4 and all(len(line) == 6 for line in lines)
    assert [line[:4] for line in lines][::2] == [["q7", "Q0", "clip3", "1"], ["q9", "Q0", "clip6", "1"]]
    assert {line[5] for line in lines} == {"fortekit"} and float(lines[0][4]) >= float(lines[1][4])
    capsys.readouterr()
    assert main(["search", "--index", str(cafe), "rain on a roof", "--format", "trec", "-k", "1",
                 "--device", "cpu"]) == 0
    assert capsys.readouterr().out.split()[:4] == ["1", "Q0", "clip3", "1"]


def test_a_closed_pipe_is_141_without_a_traceback(tmp_path: Path) -> None:
    formulas = tmp_path / "formulas.txt"
    formulas.write_text("P(a) & Q(b)\n" * 20_000, encoding="utf-8")
    script = (f"{sys.executable} -m fortekit parse --file {formulas} --style ascii | head -1; "
              "echo status=${PIPESTATUS[0]} >&2")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.stdout == "arg 1: P(a) & Q(b)\n" or result.stdout.startswith(f"{formulas}:1:")
    assert "status=141" in result.stderr
    assert "Traceback" not in result.stderr and "Broken pipe" not in result.stderr


def test_a_closed_standard_output_in_process(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert main(["plugins"]) == 141


def test_the_exit_codes() -> None:
    def interrupted() -> int:
        raise KeyboardInterrupt

    assert sorted(EXIT_CODES) == [0, 1, 2, 130, 141]
    assert run_cli(interrupted, "demo") == 130
    readme = (REPO / "README.md").read_text("utf-8")
    assert "## Exit codes" in readme and "| 141 |" in readme and "| 130 |" in readme


@pytest.mark.parametrize("argv", [
    ["index", "build", "--captions", "c.csv", "-o", "o.index", "--caption-column", "text"],
    ["eval", "--test", "t.csv", "--max-depth", "3", "-o", "runs"],
    ["search", "--index", "i", "rain", "--column", "text"],
    ["index", "info", "i.index"],  # a positional index
    ["index", "query", "--index", "i.index", "rain"],  # fortekit search --index i.index rain
], ids=" ".join)
def test_old_spellings_are_usage_errors(argv: list[str], capsys) -> None:  # type: ignore[no-untyped-def]
    """The spellings renamed before 0.2.0 (CHANGELOG.md, "Renamed") are gone, not hidden aliases.

    (``--out`` is still read, as argparse reads any unambiguous prefix: of ``--output``.)
    """
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(argv)
    assert stop.value.code == 2 and "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["q.txt", "--offline"], ["q.txt", "--online"],
                                  ["q.txt", "--column", "text"]])
def test_old_fol_refine_spellings_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        build_refine_parser().parse_args(argv)
    assert stop.value.code == 2


def test_the_new_spellings_parse() -> None:
    parser = build_parser()
    cases = [
        (["index", "build", "--captions", "c.csv", "-o", "o.index", "--text-column", "text"],
         {"out": "o.index", "text_column": "text"}),
        (["eval", "--test", "t.csv", "-D", "3", "-o", "runs"], {"max_depth": 3, "out": Path("runs")}),
        (["relations", "build", "c.csv", "-o", "r.tsv"], {"out": "r.tsv"}),
        (["search", "--index", "i", "rain", "--text-column", "text"], {"text_column": "text"}),
    ]
    for argv, expected in cases:
        args = parser.parse_args(argv)
        assert {key: getattr(args, key) for key in expected} == expected, argv
    args = build_refine_parser().parse_args(["q.txt", "--stage1", "offline", "--text-column", "text"])
    assert (args.stage1, args.column) == ("offline", "text")
    args = build_refine_parser().parse_args(["--queries", "q.txt"])
    assert (args.stage1, args.queries_file) == ("online", "q.txt")


def test_index_info_takes_the_index_by_its_option(cafe: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["index", "info", "--index", str(cafe), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["count"] == 8 and "warning" not in captured.err


def test_parse_points_english_to_caption_and_reads_standard_input(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["parse", "a dog barking"]) == 1
    err = capsys.readouterr().err
    assert "[E761]" in err and "fortekit caption 'a dog barking'" in err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"P(a)\n# a comment\nQ(b) & R(c)\n")))
    assert main(["parse", "--file", "-", "--style", "ascii"]) == 0
    out = capsys.readouterr().out
    assert "<stdin>:1: P(a)" in out and "<stdin>:3: Q(b) & R(c)" in out


def test_progress_bars_only_on_a_terminal() -> None:
    args = build_parser().parse_args(["index", "build", "--captions", "c.csv", "-o", "o.index"])
    assert args.quiet is (not sys.stderr.isatty())  # a redirected log gets no progress lines


def test_python_dash_m_fortekit() -> None:
    from fortekit import __version__

    result = subprocess.run([sys.executable, "-m", "fortekit", "--version"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == f"fortekit {__version__}"


@pytest.mark.parametrize(("argv", "message"), [
    (["--explain"], "add --query TEXT"),
    (["--explain", "a dog barking"], "add --query TEXT"),  # the spelling before 0.2.0: --explain QUERY
    (["q.txt", "--query", "a dog"], "not both"),
    ([], "--query TEXT"),
])
def test_fol_refine_explain_is_a_flag_of_one_query(argv: list[str], message: str, capsys) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.cli.refine_args import check_usage

    parser = build_refine_parser()
    with pytest.raises(SystemExit) as stop:
        check_usage(parser, parser.parse_args(argv))
    assert stop.value.code == 2 and message in capsys.readouterr().err
