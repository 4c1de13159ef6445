"""fortekit.textio and fortekit.collection_reader: one line splitting, one decoding policy, one CSV reader."""

from __future__ import annotations

import ast
import csv
import doctest
import io
import json
from pathlib import Path

import pytest
from conftest import SHARED_DATA, require

import fortekit.collection_reader
import fortekit.textio
from fortekit.collection_reader import caption_layout, check_caption_csv, read_caption_csv
from fortekit.errors import DataFileError
from fortekit.textio import (
    MAX_JSON_DEPTH,
    BadLine,
    json_value,
    read_csv_records,
    read_jsonl,
    read_lines,
    read_text_lines,
    split_text_lines,
)

#: Characters that str.splitlines() splits at and a line reader must not.
SEPARATORS = ("\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
REPO = Path(__file__).resolve().parents[1]


def cells(data: bytes, **options: object) -> list[tuple[int, object]]:
    return [(record.line, record.cells) for record in read_csv_records(io.BytesIO(data), **options)]  # type: ignore[arg-type]


def test_doctests() -> None:
    for module in (fortekit.textio, fortekit.collection_reader):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


@pytest.mark.parametrize("separator", SEPARATORS)
def test_lines_end_at_newline_only(separator: str) -> None:
    text = f"rain{separator}on a roof\r\nwind\n"
    assert list(read_text_lines(io.BytesIO(text.encode()))) == [(1, f"rain{separator}on a roof"), (2, "wind")]
    assert split_text_lines(text) == [f"rain{separator}on a roof", "wind"]


def test_line_ends_bom_and_cr_only_files() -> None:
    assert list(read_text_lines(io.BytesIO(b"\xef\xbb\xbfa\n\nb"))) == [(1, "a"), (2, ""), (3, "b")]
    assert list(read_text_lines(io.BytesIO(b"a\rb\r\rc"))) == [(1, "a"), (2, "b"), (3, ""), (4, "c")]
    # a file with LF keeps a bare CR as text (only one CR before the LF is dropped)
    assert list(read_text_lines(io.BytesIO(b"a\rb\r\r\n"))) == [(1, "a\rb\r")]
    assert [line.ending for line in read_lines(io.BytesIO(b"a\r\nb"))] == ["\r\n", ""]
    assert split_text_lines("a\rb\r") == ["a", "b"]


def test_undecodable_line_is_bad_with_its_number_and_the_rest_is_read() -> None:
    rows = list(read_text_lines(io.BytesIO(b"ok\ncaf\xe9 x\nfine\n")))
    assert rows[0] == (1, "ok") and rows[2] == (3, "fine")
    bad = rows[1][1]
    assert isinstance(bad, BadLine) and (bad.line, bad.kind) == (2, "undecodable")
    assert bad.reason == "not UTF-8: byte 0xe9 at column 4"


def test_long_line_is_bad_and_never_held_whole() -> None:
    data = b"short\n" + "\u00e9".encode() * 300_000 + b"\nafter\n"
    rows = list(read_text_lines(io.BytesIO(data), max_chars=1_000))
    bad = rows[1][1]
    assert isinstance(bad, BadLine) and (bad.kind, bad.length) == ("too_long", 300_000)
    assert rows[0] == (1, "short") and rows[2] == (3, "after")
    # just over the limit, and a long line split across read blocks with its "\r\n"
    assert isinstance(next(read_text_lines(io.BytesIO(b"x" * 11), max_chars=10))[1], BadLine)
    long = b"y" * (1 << 16) + b"\r\nz"
    assert [t for _, t in read_text_lines(io.BytesIO(long))] == ["y" * (1 << 16), "z"]


def test_json_lines_deep_nesting_and_bad_json_are_bad_lines() -> None:
    data = b"[" * 100_000 + b"\n" + b'{"a": 1}\n' + b"{x\n" + b"[" * 150 + b"]" * 150 + b"\n"
    rows = list(read_jsonl(io.BytesIO(data)))
    assert [number for number, _ in rows] == [1, 2, 3, 4]
    assert rows[1][1] == {"a": 1} and isinstance(rows[3][1], list)
    assert isinstance(rows[0][1], BadLine) and "nested more than" in rows[0][1].reason
    assert isinstance(rows[2][1], BadLine) and rows[2][1].kind == "json"
    # brackets inside strings do not count; a RecursionError is caught too
    assert json_value(1, json.dumps({"t": "[" * 10_000})) == {"t": "[" * 10_000}
    assert isinstance(json_value(1, "[" * 5_000, max_depth=10_000), BadLine)
    assert MAX_JSON_DEPTH < 1_000


@pytest.mark.parametrize("separator", SEPARATORS)
def test_csv_records_do_not_split_at_unicode_separators(separator: str) -> None:
    data = f'id,caption\na,"falling{separator}on, a roof"\nb,x{separator}y\n'.encode()
    assert cells(data) == [(1, ["id", "caption"]), (2, ["a", f"falling{separator}on, a roof"]),
                           (3, ["b", f"x{separator}y"])]


def test_csv_records_agree_with_the_csv_module() -> None:
    text = 'h1,h2\r\n"a ""quoted""\r\ncell",x\r\nplain "mid" quote,y\n\n"",z\r"last\nline",w'
    expected = list(csv.reader(io.StringIO(text, newline="")))
    assert [record for _, record in cells(text.encode())] == expected
    assert [line for line, _ in cells(text.encode())] == [1, 2, 4, 5, 6, 7]


def test_csv_bad_records_do_not_stop_the_reader() -> None:
    big = "x" * 200_000
    data = f"id,q\n1,{big}\n2,ok\n3,caf".encode() + b"\xe9\n4,fine\n" + b'5,"open\n6,never closed\n'
    rows = cells(data)
    assert rows[0] == (1, ["id", "q"]) and rows[2] == (3, ["2", "ok"]) and rows[4] == (5, ["4", "fine"])
    assert isinstance(rows[1][1], BadLine) and rows[1][1].kind == "csv" and "131,072" in rows[1][1].reason
    assert isinstance(rows[3][1], BadLine) and rows[3][1].kind == "undecodable"
    unclosed = rows[5][1]
    assert isinstance(unclosed, BadLine) and "still open" in unclosed.reason and "line 7" in unclosed.reason
    # a record over max_chars is too long (its length counted), the next one is read
    capped = cells(f"id,q\n1,{big}\n2,ok\n".encode(), max_chars=1_000)
    assert capped[1][1].kind == "too_long" and capped[2] == (3, ["2", "ok"])  # type: ignore[union-attr]
    assert csv.field_size_limit() == 131_072  # never raised


def test_csv_strict_and_lenient() -> None:
    assert isinstance(cells(b'a,"b"c\n', strict=True)[0][1], BadLine)
    assert cells(b'a,"b"c\n') == [(1, ["a", "bc"])]
    records = list(read_csv_records(io.BytesIO(b"a,caf\xe9\n"), lenient=True))
    assert records[0].cells == ["a", "caf\ufffd"] and records[0].replaced == 1


def test_caption_csv_layouts_and_one_policy(tmp_path: Path) -> None:
    assert caption_layout(["file_name", "caption_1"]).format == "clotho"  # type: ignore[union-attr]
    assert caption_layout(["id", "caption"]) is None
    path = tmp_path / "ac.csv"
    path.write_bytes(b"audiocap_id,youtube_id,start_time,caption\n1,v,0,a\xe2\x80\xa8b\n2,w,0,caf\xe9\n")
    table = read_caption_csv(path)
    assert table.captions() == ["a\u2028b"] and [bad.line for bad in table.bad] == [3]
    with pytest.raises(DataFileError, match=r"\[E114\].*line 3: not UTF-8"):
        check_caption_csv(table)
    path.write_text("a,b\n1,2\n")
    with pytest.raises(DataFileError, match=r"\[E109\]"):
        check_caption_csv(read_caption_csv(path))


def test_caption_readers_share_the_reader(tmp_path: Path) -> None:
    from fortekit.fol.caption.report import read_audiocaps, read_clotho
    from fortekit.search.eval.datasets import load_collection
    from fortekit.vocab.corpus import read_captions

    path = tmp_path / "clotho.csv"
    path.write_text("file_name,caption_1,caption_2,caption_3,caption_4,caption_5\n"
                    'a.wav,"rain\u2028falling","on, a roof",c,d,e\n', encoding="utf-8")
    expected = ["rain\u2028falling", "on, a roof", "c", "d", "e"]
    assert list(read_captions(path)) == expected == read_clotho(path)
    assert list(load_collection(path)[0].captions) == expected
    ac = tmp_path / "ac.csv"
    ac.write_bytes(b"audiocap_id,youtube_id,start_time,caption\r1,v,0,x\xc2\x85y\r")
    assert read_audiocaps(ac) == ["x\x85y"] == list(read_captions(ac))
    ac.write_bytes(b"audiocap_id,youtube_id,start_time,caption\n1,v,0,\xff\n")
    for reader in (read_audiocaps, read_captions):
        with pytest.raises(DataFileError, match=r"\[E114\].*line 2"):
            reader(ac)


def test_real_caption_files_read_alike() -> None:
    clotho, audiocaps = SHARED_DATA / "clotho", SHARED_DATA / "audiocaps"
    for path in (clotho / "clotho_captions_development.csv", audiocaps / "val.csv"):
        require(path)
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            columns = [name for name in reader.fieldnames or () if name.startswith("caption")]
            old = [row[c].strip() for row in reader for c in columns if row[c].strip()]
        table = read_caption_csv(path)
        assert not table.bad and table.captions() == old


def test_textio_is_core() -> None:
    """textio and collection_reader import neither torch nor fortekit.search/plugins."""
    for name in ("textio.py", "collection_reader.py"):
        tree = ast.parse((REPO / name).read_text(encoding="utf-8"))
        imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        assert not any(m.startswith(("torch", "fortekit.search", "fortekit.plugins")) for m in imported), name
