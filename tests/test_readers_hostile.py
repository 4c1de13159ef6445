"""Hostile text input to every reader of JSONL, line and CSV/TSV files (issue 15 items 4-8).

U+2028, U+2029 and U+0085 in captions and ids (never line ends), CR-only CSV files and bare
CRs, cells over csv's field limit, JSON nested 100,000 levels deep, bytes that are not UTF-8:
each is one bad line with its number (or plain text), never a traceback, and the valid
lines around it are still read.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from fortekit.errors import AudioIndexError, EvaluationError, GoldFileError, QueryFileError
from fortekit.search.refine.query_io import read_queries

SEPARATORS = ("\u2028", "\u2029", "\u0085")
DEEP = "[" * 100_000


def queries(path: Path, **options: object) -> list[tuple[int, str | None, str | None]]:
    return [(q.line, q.query, (q.problem or "")[:6] or None) for q in read_queries(path, **options)]  # type: ignore[arg-type]


# -- fol-refine query files ------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".txt", ".jsonl", ".csv", ".tsv"])
def test_query_files_keep_unicode_separators_inside_a_query(tmp_path: Path, suffix: str) -> None:
    texts = [f"rain{sep}on a roof" for sep in SEPARATORS]
    path = tmp_path / f"q{suffix}"
    if suffix == ".txt":
        path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps({"query": t}, ensure_ascii=False) + "\n" for t in texts), "utf-8")
    else:
        path.write_text("query\n" + "".join(t + "\n" for t in texts), encoding="utf-8")
    first = 2 if suffix in (".csv", ".tsv") else 1
    assert queries(path) == [(first + i, t, None) for i, t in enumerate(texts)]


def test_csv_query_file_with_cr_line_ends_and_a_bare_cr(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_bytes(b'id,query\r1,rain\r2,"wind,\rthen thunder"\r3,dog\r')
    assert queries(path) == [(2, "rain", None), (3, "wind,\rthen thunder", None), (5, "dog", None)]
    path.write_bytes(b"id,query\n1,rain\rfalling\n2,dog\n")  # a bare CR ends a record, as csv reads it
    assert queries(path) == [(2, "rain", None), (3, None, "[E655]"), (4, "dog", None)]


def test_a_huge_csv_cell_is_one_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text(f"id,query\n1,rain\n2,{'x' * 200_000}\n3,dog\n4,\"{'y' * 150_000}\"\n5,cat\n", "utf-8")
    rows = queries(path)
    assert rows == [(2, "rain", None), (3, None, "[E657]"), (4, "dog", None), (5, None, "[E657]"),
                    (6, "cat", None)]
    problem = [q.problem for q in read_queries(path)][1]
    assert problem is not None and "is 200002 characters long" in problem  # the record's length


def test_a_deep_jsonl_line_is_one_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "rain"}\n' + DEEP + '\n{"query": "dog"}\n', encoding="utf-8")
    assert queries(path) == [(1, "rain", None), (2, None, "[E658]"), (3, "dog", None)]


def test_unclosed_quote_and_bad_bytes_in_a_csv_query_file(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_bytes(b'query\nrain\ncaf\xe9\ndog\n"never closed\ncat\n')
    assert queries(path) == [(2, "rain", None), (3, None, "[E656]"), (4, "dog", None), (5, None, "[E491]")]


def test_lookup_table_reads_separators_and_refuses_deep_lines(tmp_path: Path) -> None:
    from fortekit.search.refine.lookup import LookupTable

    path = tmp_path / "refined.jsonl"
    rows = [{"line": n, "query": f"rain{sep}roof {n}", "refined_text": f"steady{sep}rain"}
            for n, sep in enumerate(SEPARATORS)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    table = LookupTable.load(path)
    assert len(table) == 3 and table.refined_text("rain\u2028roof 0") == "steady\u2028rain"
    path.write_text(json.dumps(rows[0]) + "\n" + DEEP + "\n" + json.dumps(rows[1]) + "\n", encoding="utf-8")
    with pytest.raises(QueryFileError, match=r"\[E665\].*line 2.*nested"):
        LookupTable.load(path)
    path.write_text(json.dumps(rows[0]) + "\n" + DEEP, encoding="utf-8")  # the torn last line of a crash
    assert len(LookupTable.load(path)) == 1


# -- fortekit index build / info / query ----------------------------------------------------


def test_caption_file_readers_keep_separators(tmp_path: Path) -> None:
    from fortekit.search.index.sources import find_audio_items, read_caption_file

    ids = [f"clip{sep}{n}" for n, sep in enumerate(SEPARATORS)]
    captions = [f"rain falling{sep}on a roof" for sep in SEPARATORS]
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "caption": c}, ensure_ascii=False) + "\n"
                             for i, c in zip(ids, captions, strict=True)), encoding="utf-8")
    table = read_caption_file(jsonl)
    assert (table.ids, table.captions) == (ids, captions)
    tsv = tmp_path / "c.tsv"
    lines = "".join(f"{i}\t{c}\n" for i, c in zip(ids, captions, strict=True))
    tsv.write_text("id\tcaption\n" + lines, "utf-8")
    assert read_caption_file(tsv).captions == captions
    txt = tmp_path / "c.txt"
    txt.write_text("".join(c + "\n" for c in captions), encoding="utf-8")
    assert read_caption_file(txt).captions == captions
    # a CR-only CSV with a quoted caption
    cr = tmp_path / "cr.csv"
    cr.write_bytes(b'file_name,caption_1\ra.wav,"falling\ron, a roof"\rb.wav,x\r')
    assert read_caption_file(cr).captions == ["falling\ron, a roof", "x"]
    (tmp_path / "a\u2028b.wav").write_bytes(b"")
    listing = tmp_path / "list.txt"
    listing.write_text("a\u2028b.wav\n", encoding="utf-8")
    assert [item.item_id for item in find_audio_items(listing)] == ["a\u2028b.wav"]


@pytest.mark.parametrize(("content", "problem"), [
    (b"file_name,caption_1\na.wav,rain\nb.wav," + b"x" * 200_000 + b"\n", "line 3"),
    (b"file_name,caption_1\na.wav,caf\xe9\n", "line 2: not UTF-8"),
    (b'file_name,caption_1\na.wav,"open\nb.wav,x\n', "still open"),
])
def test_bad_caption_csv_lines_are_coded_errors(tmp_path: Path, content: bytes, problem: str) -> None:
    from fortekit.search.index.sources import read_caption_file

    path = tmp_path / "c.csv"
    path.write_bytes(content)
    with pytest.raises(AudioIndexError, match=rf"\[E615\].*{problem}"):
        read_caption_file(path)


def test_deep_or_undecodable_caption_jsonl_is_a_coded_error(tmp_path: Path) -> None:
    from fortekit.search.index.sources import read_caption_file

    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "a", "caption": "rain"}\n' + DEEP + "\n", encoding="utf-8")
    with pytest.raises(AudioIndexError, match=r"\[E615\].*line 2: nested"):
        read_caption_file(path)
    path.write_text('{"id": "a", "caption": "\\ud800"}\n', encoding="utf-8")
    with pytest.raises(AudioIndexError, match=r'\[E615\].*line 1: "caption": it holds a lone surrogate'):
        read_caption_file(path)


def _write_caption_file(path: Path, ids: list[str], captions: list[str]) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({"id": i, "caption": c}, ensure_ascii=False) + "\n"
                                for i, c in zip(ids, captions, strict=True)), encoding="utf-8")
    else:
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "caption"])
            writer.writerows(zip(ids, captions, strict=True))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_index_build_info_query_round_trip_with_separators(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str,
) -> None:
    """Captions keep their separators; ids may not hold them (E640): an ids file could not name them."""
    from fortekit.search.cli import main

    ids = [f"clip {n}" for n in range(3)]
    first, second, third = SEPARATORS
    captions = [f"rain falling{first}on a roof", f"a dog{second}barks", f"wind{third}howls"]
    path = tmp_path / f"captions{suffix}"
    _write_caption_file(path, ids, captions)
    out = tmp_path / "index"
    assert main(["index", "build", "--captions", str(path), "-o", str(out), "--quiet", "--no-parse",
                 "--device", "cpu"]) == 0
    assert "indexed 3 items" in capsys.readouterr().out
    assert main(["index", "info", "--index", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 3
    assert main(["search", "--index", str(out), "a dog barks", "-k", "1", "--device", "cpu"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and ids[1] in captured.out

    from fortekit.search.index.format import read_items, read_meta

    records = read_items(out, read_meta(out))
    assert (records.ids, records.captions) == (ids, captions)

    separator_ids = [f"clip{sep}{n}" for n, sep in enumerate(SEPARATORS)]
    _write_caption_file(path, separator_ids, captions)
    refused = tmp_path / "refused"
    assert main(["index", "build", "--captions", str(path), "-o", str(refused), "--quiet", "--no-parse",
                 "--device", "cpu"]) != 0
    captured = capsys.readouterr()
    assert "[E640]" in captured.err and "Traceback" not in captured.err
    assert not refused.exists()


# -- evaluation, parser report, vocabulary --------------------------------------------------


def test_beir_jsonl_deep_line_is_e501(tmp_path: Path) -> None:
    from fortekit.search.eval.beir import read_jsonl

    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a\u2028b", "text": "x\u0085y"}\n' + DEEP + "\n", encoding="utf-8")
    rows = read_jsonl(path)
    assert next(rows) == (1, {"_id": "a\u2028b", "text": "x\u0085y"})
    with pytest.raises(EvaluationError, match=r"\[E501\].*line 2: not JSON \(nested"):
        next(rows)


def test_gold_file_lines(tmp_path: Path) -> None:
    from fortekit.fol.caption.report import read_gold

    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps({"caption": "rain\u2028falls", "formula": "Rain(x)"}, ensure_ascii=False)
                    + "\n" + DEEP + "\n", encoding="utf-8")
    with pytest.raises(GoldFileError, match=r"\[E309\].*line 2: .*nested"):
        read_gold(path)
    good = json.dumps({"caption": "rain\u2028falls", "formula": "Rain(x)"}, ensure_ascii=False)
    path.write_text(good + "\n", encoding="utf-8")
    assert [item.caption for item in read_gold(path)] == ["rain\u2028falls"]


def test_eval_collection_and_cooccurrence_keep_separators(tmp_path: Path) -> None:
    from fortekit.search.eval.datasets import load_collection
    from fortekit.vocab.cooccurrence import format_cooccurrence, parse_cooccurrence

    path = tmp_path / "ac.csv"
    path.write_text("audiocap_id,youtube_id,start_time,caption\n1,v,0,rain\u2029falls\n2,w,0,dog\n", "utf-8")
    assert [clip.captions for clip in load_collection(path)] == [("rain\u2029falls",), ("dog",)]
    path.write_text("audiocap_id,youtube_id,start_time,caption\n1,v,0," + "x" * 200_000 + "\n", "utf-8")
    with pytest.raises(EvaluationError, match=r"\[E491\].*line 2"):
        load_collection(path)
    table = parse_cooccurrence("event\tdescriptor\tcount\nRain/1\tLoud\u2028/1\t3\n")
    assert parse_cooccurrence(format_cooccurrence(table)) == table


def test_other_jsonl_readers_report_deep_lines_with_a_code(tmp_path: Path) -> None:
    from fortekit.errors import CaptionFileError, ElaborationError
    from fortekit.plugins.captioners.stored import read_captions
    from fortekit.plugins.elaborators.file import FileElaborator
    from fortekit.search.eval.per_query import read_per_query
    from fortekit.search.refine.resume import _parse_line

    path = tmp_path / "deep.jsonl"
    path.write_text(DEEP + "\n", encoding="utf-8")
    with pytest.raises(CaptionFileError, match=r"\[E241\].*line 1: not JSON \(nested"):
        read_captions(path)
    with pytest.raises(ElaborationError, match=r"\[E230\].*line 1: not JSON \(nested"):
        FileElaborator(path)
    with pytest.raises(EvaluationError, match=r"\[E488\].*line 1.*nested"):
        read_per_query(path)
    assert _parse_line(DEEP.encode() + b"\n", 1, "jsonl", ())[0] is None
