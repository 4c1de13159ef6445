"""Query files of fol-refine: readers, writers, resuming, lookup tables (no model needed)."""

from __future__ import annotations

import csv
import doctest
import importlib
import json
from pathlib import Path

import pytest
from conftest import SHARED_DATA, require

from fortekit.errors import QueryFileError
from fortekit.search.refine.lookup import LookupTable
from fortekit.search.refine.output import (
    ResultWriter,
    ResumeState,
    check_settings,
    result_record,
    settings_path,
    tsv_columns,
    tsv_escape,
    tsv_unescape,
    write_settings,
)
from fortekit.search.refine.query_io import QueryLine, count_lines, detect_format, read_queries

CLOTHO = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
AUDIOCAPS_VAL = SHARED_DATA / "audiocaps" / "val.csv"


def codes(lines: list[QueryLine]) -> dict[int, str]:
    """line number -> the error code of its problem ("" for a good line)."""
    return {item.line: (item.problem or "")[1:5] for item in lines}


@pytest.mark.parametrize(
    "name",
    [
        "fortekit.search.refine.query_io", "fortekit.search.refine.output", "fortekit.search.refine.lookup",
        "fortekit.search.refine.run", "fortekit.search.cli.refine",
    ],
)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.fixture(scope="module")
def val_captions() -> list[str]:
    """The first 20 distinct captions of AudioCaps val, as real queries."""
    with require(AUDIOCAPS_VAL).open(encoding="utf-8") as handle:
        captions = list(dict.fromkeys(row["caption"].strip() for row in csv.DictReader(handle)))
    return captions[:20]


def test_txt_reports_bad_lines_by_number_and_keeps_the_rest(tmp_path: Path, val_captions: list[str]) -> None:
    good = [c.encode() for c in val_captions[:5]]
    raw = b"\r\n".join([
        b"\xef\xbb\xbf# a comment (with a UTF-8 byte-order mark before it)",
        good[0], b"", good[1], b"  \t ", b"\xff\xfe " + good[2], good[3], b"x" * 1001, good[4],
    ]) + b"\r\n"
    path = tmp_path / "queries.txt"
    path.write_bytes(raw)
    lines = list(read_queries(path))
    assert codes(lines) == {2: "", 3: "E655", 4: "", 5: "E655", 6: "E656", 7: "", 8: "E657", 9: ""}
    assert [item.query for item in lines if item.ok] == [val_captions[i] for i in (0, 1, 3, 4)]
    assert "byte 0xff at column 1" in (lines[4].problem or "")
    assert lines[0].key == f"2:{val_captions[0]}"
    # the limit moves with max_chars; the parser's own limit is the ceiling the CLI allows
    assert codes(list(read_queries(path, max_chars=2000)))[8] == ""
    assert count_lines(path) == 9


def test_jsonl_fields_and_bad_records(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    records = [
        json.dumps({"query": "a dog barks", "id": "Y1"}), "", "{not json", "[1, 2]",
        json.dumps({"text": "rain"}), json.dumps({"query": 7}), json.dumps({"query": "   "}),
        json.dumps({"query": "wind howling", "id": 9}), json.dumps({"title": "rain"}),
    ]
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    lines = list(read_queries(path, target="id"))
    # BEIR's "text" is read where "query" is absent (fortekit.collection_reader.query_field)
    assert codes(lines) == {1: "", 2: "E655", 3: "E658", 4: "E658", 5: "", 6: "E659", 7: "E655", 8: "",
                            9: "E659"}
    assert (lines[0].query, lines[0].target, lines[7].target) == ("a dog barks", "Y1", "9")
    assert (lines[0].query_id, lines[4].query, lines[4].query_id) == ("Y1", "rain", None)
    assert lines[7].query_id == "9"
    assert "is missing, and so is 'text' (the object's fields: 'title')" in (lines[-1].problem or "")
    assert "holds a JSON int" in (lines[5].problem or "")
    assert [item.query for item in read_queries(path, field="text") if item.ok] == ["rain"]


def test_clotho_csv_by_named_column() -> None:
    path = require(CLOTHO)
    with pytest.raises(QueryFileError, match=r"\[E652\].*'caption_1'.*--text-column caption_1"):
        read_queries(path)
    lines = list(read_queries(path, column="caption_1", target="file_name"))
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert all(item.ok for item in lines)
    assert [item.query for item in lines] == [row["caption_1"].strip() for row in rows]
    assert [item.target for item in lines] == [row["file_name"] for row in rows]
    assert lines[0].line == 2  # line 1 is the header


def test_csv_multiline_fields_and_broken_rows(tmp_path: Path) -> None:
    path = tmp_path / "queries.csv"
    path.write_bytes(
        b'id,query\n1,"a dog barks,\nthen a car passes"\n2,\xff\xfe wind\n3,\n4\n5,"birds chirping"\n'
    )
    lines = list(read_queries(path))
    assert codes(lines) == {2: "", 4: "E656", 5: "E655", 6: "E655", 7: ""}
    assert lines[0].query == "a dog barks,\nthen a car passes"
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("query\tid\nrain on a roof\t1\n", encoding="utf-8")
    assert [item.query for item in read_queries(tsv)] == ["rain on a roof"]
    # --format overrides the extension
    assert [item.query for item in read_queries(tsv, file_format="txt")] == ["query\tid", "rain on a roof\t1"]


@pytest.mark.parametrize(
    ("name", "content", "code"),
    [
        ("missing.txt", None, "E650"),
        ("queries.json", b"{}", "E651"),
        ("empty.csv", b"", "E653"),
        ("utf16.txt", "a dog barks\n".encode("utf-16"), "E654"),
    ],
)
def test_unusable_files_are_typed_errors(tmp_path: Path, name: str, content: bytes | None, code: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(QueryFileError, match=rf"\[{code}\]"):
        read_queries(path)


def test_a_directory_or_a_target_of_a_txt_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QueryFileError, match=r"\[E650\].*directory"):
        read_queries(tmp_path)
    (tmp_path / "q.txt").write_text("rain\n")
    with pytest.raises(QueryFileError, match=r"\[E667\]"):
        read_queries(tmp_path / "q.txt", target="id")
    with pytest.raises(QueryFileError, match=r"\[E667\] a column \(--column"):
        read_queries(tmp_path / "q.txt", column="caption")
    with pytest.raises(QueryFileError, match=r"\[E651\]"):
        detect_format(tmp_path / "q.txt", "xml")


def _record(line: int, query: str, refined: str) -> dict[str, object]:
    result = {"query": query, "refined_text": refined, "phi_star": "∃x Rain(x)", "depth": 1,
              "feasible": True, "objective": {"F": -0.1, "complexity": 2.0, "utility": 0.14, "pivot": 0.2}}
    return result_record(line, query, result)


def test_jsonl_output_resumes_after_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "out" / "refined.jsonl"
    with ResultWriter(path, fsync_every=2) as writer:
        for line, query in enumerate(["a dog barks", "rain", "wind"], start=1):
            writer.write(_record(line, query, query + ", loud"))
    full = path.read_bytes()
    path.write_bytes(full[:-25])  # a crash in the middle of the third line
    state = ResumeState.read(path)
    assert state.done == {"1:a dog barks", "2:rain"} and state.records == 2
    assert path.read_bytes() == full[: full.rindex(b"\n", 0, len(full) - 1) + 1]  # cut at the last line break
    assert state.cut_bytes == len(full) - 25 - len(path.read_bytes())
    with ResultWriter(path) as writer:  # appends after the cut
        writer.write(_record(3, "wind", "wind, loud"))
    assert path.read_bytes() == full


def test_a_bad_line_before_the_last_is_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "refined.jsonl"
    content = '{"line": 1, "query": "rain"}\nnot json\n{"line": 3, "query": "wind"}\n'
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QueryFileError, match=r"\[E662\].*line 2 is not JSON.*--overwrite"):
        ResumeState.read(path)
    assert path.read_text(encoding="utf-8") == content
    # overwrite starts over
    with ResultWriter(path, overwrite=True) as writer:
        writer.write(_record(1, "rain", "steady rain"))
    assert ResumeState.read(path).done == {"1:rain"}


def test_tsv_output_escapes_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "refined.tsv"
    tricky = "a dog barks\tthen\na car \\ passes"
    with ResultWriter(path, file_format="tsv", ranking=True) as writer:
        record = _record(2, tricky, "dog barking")
        record["ranking"] = [{"id": "clip 1.wav", "score": 0.5, "caption": "dog"}]
        writer.write(record)
    header, row = path.read_text(encoding="utf-8").splitlines()
    assert tuple(header.split("\t")) == tsv_columns(ranking=True)
    cells = dict(zip(header.split("\t"), row.split("\t"), strict=True))
    assert tsv_unescape(cells["query"]) == tricky and cells["F"] == "-0.1" and cells["feasible"] == "true"
    assert json.loads(cells["ranking"]) == ["clip 1.wav"] and json.loads(cells["scores"]) == [0.5]
    assert ResumeState.read(path, file_format="tsv", ranking=True).done == {f"2:{tricky}"}
    with pytest.raises(QueryFileError, match=r"\[E662\].*line 1 has the columns"):
        ResumeState.read(path, file_format="tsv", ranking=False)
    assert tsv_unescape(tsv_escape("\\t is not a tab")) == "\\t is not a tab"


def test_settings_of_a_resumed_output_must_match(tmp_path: Path) -> None:
    out = tmp_path / "refined.jsonl"
    settings = {"backbone": "minilm", "config": {"beam_width": 3, "max_depth": 2}}
    check_settings(out, settings, resuming=True)  # no sidecar yet: accepted
    write_settings(out, settings)
    assert settings_path(out).is_file()
    check_settings(out, json.loads(json.dumps(settings)), resuming=True)
    changed = {"backbone": "minilm", "config": {"beam_width": 5, "max_depth": 2}}
    with pytest.raises(QueryFileError, match=r"\[E663\].*config\.beam_width: 3 then, 5 now"):
        check_settings(out, changed, resuming=True)
    check_settings(out, changed, resuming=False)  # a fresh output may change anything


def test_lookup_table_from_jsonl_and_tsv(tmp_path: Path) -> None:
    path = tmp_path / "refined.jsonl"
    with ResultWriter(path) as writer:
        writer.write(_record(1, "A dog barks", "a dog barking loudly"))
        writer.write(_record(2, "rain", "rain, steady"))
        writer.write(_record(3, "rain", "rain, heavy"))  # a later run: the last record wins
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"line": 4, "query": "wi')  # torn
    table = LookupTable.load(path)
    assert len(table) == 2 and "a  DOG barks " in table and "wind" not in table
    assert table.refined_text("rain") == "rain, heavy"
    assert (table.get("a dog barks") or {})["phi_star"] == "∃x Rain(x)"
    rows = table.q_stars(["rain", "a dog barks"], lambda texts: texts)  # type: ignore[arg-type,return-value]
    assert rows == ["rain, heavy", "a dog barking loudly"]
    tsv = tmp_path / "refined.tsv"
    with ResultWriter(tsv, file_format="tsv") as writer:
        writer.write(_record(1, "a dog\tbarks", "a dog barking"))
    assert LookupTable.load(tsv).refined_text("a dog\tbarks") == "a dog barking"


def test_lookup_table_errors(tmp_path: Path) -> None:
    with pytest.raises(QueryFileError, match=r"\[E665\].*no such file"):
        LookupTable.load(tmp_path / "none.jsonl")
    path = tmp_path / "bad.jsonl"
    path.write_text('{"query": "rain"}\n{"query": "wind", "refined_text": "wind"}\n', encoding="utf-8")
    with pytest.raises(QueryFileError, match=r"\[E665\].*line 1: no text field 'refined_text'"):
        LookupTable.load(path)


def test_unknown_extension_names_the_input_format_option(tmp_path: Path) -> None:
    """Issue 15, item 12: the option that names a query file's format is --input-format."""
    source = tmp_path / "queries"
    source.write_text("rain\n", encoding="utf-8")
    with pytest.raises(QueryFileError, match=r"\[E651\].*--input-format") as info:
        list(read_queries(source))
    assert "--format (" not in str(info.value)
