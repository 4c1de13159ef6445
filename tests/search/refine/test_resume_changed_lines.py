"""A query file that changes under its output: the grown last line is refused on resume (E672).

Issue 43, case 4: a query file read while it was being written had its unfinished last line
searched, and a resumed run then wrote that line a second time. A last line without a line end
is a query like any other (a finished file often lacks the final line break); each record holds
its line's number and text, so a resumed run that finds the line grown refuses the output
(E672, exit 2) instead of writing a second record of it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fortekit.errors import QueryFileError, ResumeConflictError
from fortekit.search.refine.output import ResultWriter
from fortekit.search.refine.query_io import read_queries
from fortekit.search.refine.resume import ResumeState


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_line_whose_text_changed_is_refused_with_both_texts(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    with ResultWriter(output) as writer:
        writer.write({"line": 1, "query": "a dog barks", "refined_text": "a dog barks"})
        writer.write({"line": 2, "query": "rain on a", "refined_text": "rain"})
    queries = tmp_path / "q.txt"
    queries.write_text("a dog barks\nrain on a roof\n", encoding="utf-8")
    state = ResumeState.read(output)
    first, second = read_queries(queries)
    assert state.holds(first, where=str(queries))
    with pytest.raises(ResumeConflictError, match=r"\[E672\] .*line 2 of .*q.txt for the text 'rain on a', "
                                                  r"but that line now reads 'rain on a roof'"):
        state.holds(second, where=str(queries))


def test_a_new_line_is_not_done_and_an_unchanged_unterminated_line_is(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    with ResultWriter(output) as writer:
        writer.write({"line": 1, "query": "a dog barks", "refined_text": "a dog barks"})
    queries = tmp_path / "q.txt"
    queries.write_bytes(b"a dog barks\nbirds sing")  # a finished file without its last line end
    state = ResumeState.read(output)
    first, second = read_queries(queries)
    assert second.query == "birds sing"  # the unterminated last line is a query
    assert state.holds(first) and not state.holds(second)


def test_two_records_of_one_line_with_other_texts_are_e670(tmp_path: Path) -> None:
    """What an older fortekit left after resuming a grown file: the line twice, with two texts."""
    output = tmp_path / "out.jsonl"
    with ResultWriter(output) as writer:
        writer.write({"line": 1, "query": "rain on a", "refined_text": "rain"})
        writer.write({"line": 1, "query": "rain on a roof", "refined_text": "rain on a roof"})
    with pytest.raises(QueryFileError, match=r"\[E670\] .*line 2 holds a second record of the query of "
                                             r"line 1"):
        ResumeState.read(output)


def test_search_refuses_to_resume_after_the_last_line_grew(  # type: ignore[no-untyped-def]
        minilm, cafe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.cli.main import main

    queries, output = tmp_path / "grow.txt", tmp_path / "out.jsonl"
    queries.write_bytes(b"a dog barks\nrain on a")  # read while another program still writes it
    command = ["search", "--index", str(cafe), "--stage1", "off", "-k", "2", "--queries", str(queries),
               "-o", str(output), "-q"]
    assert main(command) == 0
    assert [(r["line"], r["query"]) for r in _records(output)] == [(1, "a dog barks"), (2, "rain on a")]
    capsys.readouterr()
    with queries.open("ab") as handle:  # the writer finishes the line and adds one
        handle.write(b" roof\nbirds sing\n")
    before = output.read_bytes()
    assert main(command) == 2
    err = capsys.readouterr().err
    assert "[E672]" in err and "line 2 of" in err and "'rain on a roof'" in err and "E669" not in err
    assert output.read_bytes() == before  # nothing written: no second record of line 2
    assert main([*command, "--overwrite"]) == 0
    assert [(r["line"], r["query"]) for r in _records(output)] == [
        (1, "a dog barks"), (2, "rain on a roof"), (3, "birds sing")]
    assert main(command) == 0  # finished and unchanged: resumed with nothing to do
    assert len(_records(output)) == 3
