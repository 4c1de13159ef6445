"""The generator's files: WAVs, the BEIR folders, the Clotho-style caption CSVs, each written atomically.

Every file is written by fortekit's safe writer (:mod:`fortekit.safe_write`): to a temporary
name in its folder, forced to disk, then moved into place, so a reader never sees half a file.
The layout under the output folder::

    manifest.json                 settings, counts, held-out pairs; "complete": true once done
    clips.jsonl                   every clip's truth: events, timing, attributes, captions, formula
    audio/clipNNNNNN.wav          5 s, mono, 16 kHz, 16-bit PCM (+ .txt: caption 1, for fortekit index)
    captions_train.csv            Clotho layout: file_name,caption_1..caption_5
    captions_test.csv
    train/  corpus.jsonl queries.jsonl qrels/train.tsv item_concepts.jsonl
    test/   corpus.jsonl queries.jsonl qrels/test.tsv  item_concepts.jsonl

Example:
    >>> import tempfile, wave
    >>> import numpy as np
    >>> path = Path(tempfile.mkdtemp()) / "a.wav"
    >>> write_wav(path, np.zeros(16000))
    >>> with wave.open(str(path)) as w: (w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes())
    (16000, 1, 2, 16000)
"""

from __future__ import annotations

import csv
import io
import json
import wave
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fortekit.search.eval.bench.soundgen.dsp import RATE
from fortekit.search.eval.bench.soundgen.queries import Query
from fortekit.search.eval.bench.soundgen.render import to_pcm16

__all__ = ["atomic_write", "write_beir", "write_caption_csv", "write_jsonl", "write_wav"]


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` with fortekit's safe writer (temporary file, fsync, rename).

    The folder is created if needed; a link at ``path`` is refused (E741) and a failed
    write is E743 naming the file, with the old file unchanged (:mod:`fortekit.safe_write`).

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "x.txt"
        >>> atomic_write(target, b"ok"); target.read_bytes()
        b'ok'
    """
    from fortekit.safe_write import atomic_write_bytes, write_error

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(path.parent, exc) from exc
    atomic_write_bytes(path, data)


def write_wav(path: Path, samples: np.ndarray) -> None:
    """A mono 16 kHz 16-bit PCM WAV file of samples in [-1, 1], written atomically."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(RATE)
        file.writeframes(to_pcm16(samples))
    atomic_write(path, buffer.getvalue())


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """One JSON object a line (UTF-8, not ASCII-escaped), written atomically.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "x.jsonl"
        >>> write_jsonl(target, [{"_id": "a"}, {"_id": "b"}]); target.read_text().splitlines()
        ['{"_id": "a"}', '{"_id": "b"}']
    """
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    atomic_write(path, text.encode("utf-8"))


def write_caption_csv(path: Path, rows: Sequence[tuple[str, Sequence[str]]]) -> None:
    """A Clotho-style caption CSV: ``file_name,caption_1..caption_N``, one clip a row.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "c.csv"
        >>> write_caption_csv(target, [("a.wav", ["Rain, then wind", "Rain"])])
        >>> target.read_text().splitlines()
        ['file_name,caption_1,caption_2', 'a.wav,"Rain, then wind",Rain']
    """
    width = max((len(captions) for _, captions in rows), default=5)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["file_name", *(f"caption_{i}" for i in range(1, width + 1))])
    for name, captions in rows:
        writer.writerow([name, *captions])
    atomic_write(path, buffer.getvalue().encode("utf-8"))


def write_beir(folder: Path, split: str, items: Sequence[dict[str, Any]], queries: Sequence[Query],
               concepts: Sequence[dict[str, Any]]) -> None:
    """A BEIR folder: corpus.jsonl, queries.jsonl, qrels/{split}.tsv and item_concepts.jsonl.

    Args:
        folder: the folder to write.
        split: names the qrels file (``test`` is what ``fortekit eval --beir`` reads).
        items: corpus records (``_id``, ``title``, ``text``, ``captions``, ``audio``).
        queries: the split's queries; their ids are ``q`` and five digits, in order.
        concepts: item_concepts records (``_id``, ``concepts``).
    """
    write_jsonl(folder / "corpus.jsonl", items)
    write_jsonl(folder / "queries.jsonl", (
        {"_id": f"q{i:05d}", "text": q.text, "metadata": {**q.metadata, "formula": q.formula}}
        for i, q in enumerate(queries)
    ))
    lines = ["query-id\tcorpus-id\tscore\n"]
    lines += [f"q{i:05d}\t{clip}\t1\n" for i, q in enumerate(queries) for clip in q.relevant]
    atomic_write(folder / "qrels" / f"{split}.tsv", "".join(lines).encode("utf-8"))
    write_jsonl(folder / "item_concepts.jsonl", concepts)
