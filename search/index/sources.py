"""What ``fortekit index build`` reads: caption files, audio folders and lists, backbone options.

* Caption files: ``.csv``/``.tsv`` (columns chosen by name; Clotho's ``file_name`` and
  ``caption_1`` by default, else ``id`` and ``caption``), ``.jsonl`` (one object per line,
  the same keys), ``.txt`` (one caption per line, ``id<TAB>caption`` or just the caption,
  whose id is then its line number). Files are read by :mod:`fortekit.textio`: lines end at
  ``"\\n"`` only (never at U+2028 or U+0085), CSV records follow ``newline=""``, and a line
  that is not UTF-8, malformed or too long refuses the file (E615, naming the line).
* Audio: a folder (WAV, FLAC, OGG and MP3 files found recursively; the id is the path
  relative to the folder) or a text file listing one path per line (relative to the list's
  folder; the id is the line as written). An item's caption comes from a sidecar
  ``<name>.txt`` beside the audio file when there is one.
* ``--backbone-option key=value`` is read by :mod:`fortekit.search.cli.options`.

Example:
    >>> group_duplicates(["a.wav", "b.wav", "a.wav"])
    (['a.wav', 'b.wav'], [[0, 2], [1]])
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fortekit.errors import AudioIndexError, Errors
from fortekit.fol.caption.pipeline import MAX_CHARS
from fortekit.plugins.protocols import AudioItem
from fortekit.textio import BadLine, read_csv_records, read_jsonl, read_text_lines

__all__ = [
    "AUDIO_SUFFIXES",
    "CaptionTable",
    "find_audio_items",
    "group_duplicates",
    "read_caption_file",
]

#: The audio files a folder scan picks up (case-insensitive).
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".mp3")
#: (id, caption) column names tried, in order, when none is named.
DEFAULT_COLUMNS = (("file_name", "caption_1"), ("id", "caption"))
_SURROGATE = re.compile("[\ud800-\udfff]")
_CAPTION_HINT = (
    "A captions file is .csv/.tsv with a header (--id-column, --text-column; Clotho's file_name "
    "and caption_1 by default), .jsonl with one object per line, or .txt with one caption per line."
)


@dataclass(frozen=True, slots=True)
class CaptionTable:
    """Ids and captions read from a captions file, in file order (ids may repeat)."""

    ids: list[str]
    captions: list[str | None]


def _unreadable(path: Path, problem: str, hint: str = _CAPTION_HINT) -> AudioIndexError:
    return AudioIndexError(Errors.E615.format(what="captions file", path=path, problem=problem, hint=hint))


def _pick_columns(
    path: Path, names: Sequence[str], id_column: str | None, caption_column: str | None,
) -> tuple[str, str]:
    if id_column is None and caption_column is None:
        for pair in DEFAULT_COLUMNS:
            if set(pair) <= set(names):
                return pair
        accepted = ", or ".join(f"{id_name!r} with {caption!r}" for id_name, caption in DEFAULT_COLUMNS)
        raise _unreadable(path, f"it has none of the default column pairs ({accepted})",
                          f"Its columns are {', '.join(map(repr, names))}; name the two to use with "
                          f"--id-column and --text-column{_suggestion(names)}.")
    chosen = (id_column or DEFAULT_COLUMNS[0][0], caption_column or DEFAULT_COLUMNS[0][1])
    absent = [name for name in chosen if name not in names]
    if absent:
        raise _unreadable(path, f"it has no column {', '.join(map(repr, absent))}",
                          f"Its columns are {', '.join(map(repr, names))}; name them with --id-column "
                          f"and --text-column{_suggestion(names)}.")
    return chosen


def _suggestion(names: Sequence[str]) -> str:
    """An example pair of options from the header: its caption column and the first other one.

    >>> _suggestion(["audiocap_id", "youtube_id", "caption"])
    ' (here, for example: --id-column audiocap_id --text-column caption)'
    """
    caption = next((name for name in names if "caption" in name.lower()), None)
    other = next((name for name in names if name != caption), None)
    if caption is None or other is None:
        return ""
    return f" (here, for example: --id-column {other} --text-column {caption})"


def read_caption_file(
    path: str | os.PathLike[str], *, id_column: str | None = None, caption_column: str | None = None,
) -> CaptionTable:
    """Read ids and captions from a .csv, .tsv, .jsonl or .txt file.

    Args:
        path: the file.
        id_column: the id column or key (default: ``file_name``, else ``id``).
        caption_column: the caption column or key (default: ``caption_1``, else ``caption``).

    Returns:
        The :class:`CaptionTable`; blank captions are None.

    Raises:
        AudioIndexError: a missing, undecodable or malformed file, missing columns, a blank
            id (E615); no rows (E606).

    Example:
        >>> read_caption_file("clotho_captions_development.csv").ids[:1]  # doctest: +SKIP
        ['Distorted AM Radio noise.wav']
    """
    source = Path(path)
    if not source.is_file():
        raise _unreadable(source, "no such file")
    suffix = source.suffix.lower()
    try:
        if suffix in (".csv", ".tsv"):
            rows = _csv_rows(source, "\t" if suffix == ".tsv" else ",", id_column, caption_column)
        elif suffix == ".jsonl":
            rows = _jsonl_rows(source, id_column, caption_column)
        elif suffix == ".txt":
            rows = _txt_rows(source)
        else:
            raise _unreadable(source, f"unknown file type {suffix or '(none)'!r}")
    except OSError as exc:
        raise _unreadable(source, exc.strerror or str(exc)) from None
    if not rows:
        raise AudioIndexError(Errors.E606.format(what=f"{source} has no captions"))
    return CaptionTable([row[0] for row in rows], [row[1] for row in rows])


def _clean(caption: Any) -> str | None:
    if caption is None:
        return None
    caption = str(caption).strip()
    return caption or None


def _bad(path: Path, bad: BadLine) -> AudioIndexError:
    return _unreadable(path, f"line {bad.line}: {bad.reason}", "Fix or remove that line (re-save the file as "
                       f"UTF-8; a caption is at most {MAX_CHARS:,} characters).")


def _csv_rows(
    path: Path, delimiter: str, id_column: str | None, caption_column: str | None,
) -> list[tuple[str, str | None]]:
    rows = []
    keys: tuple[int, int] | None = None
    for number, cells, _ in read_csv_records(path, delimiter=delimiter, max_chars=MAX_CHARS + 1_000):
        if isinstance(cells, BadLine):
            raise _bad(path, cells)
        if keys is None:
            names = [name.strip() for name in cells]
            id_key, caption_key = _pick_columns(path, names, id_column, caption_column)
            keys = names.index(id_key), names.index(caption_key)
            continue
        if not any(cell.strip() for cell in cells):
            continue  # a blank line
        item_id = cells[keys[0]].strip() if keys[0] < len(cells) else ""
        if not item_id:
            raise _unreadable(path, f"line {number} has no id", "Every row needs an id.")
        rows.append((item_id, _clean(cells[keys[1]] if keys[1] < len(cells) else None)))
    if keys is None:
        raise _unreadable(path, "it has no header row")
    return rows


def _jsonl_rows(
    path: Path, id_column: str | None, caption_column: str | None,
) -> list[tuple[str, str | None]]:
    rows = []
    keys: tuple[str, str] | None = None
    for number, record in read_jsonl(path, max_chars=4 * MAX_CHARS):
        if isinstance(record, BadLine):
            raise _bad(path, record)
        if not isinstance(record, dict):
            raise _unreadable(path, f"line {number} is not a JSON object")
        keys = keys or _pick_columns(path, list(record), id_column, caption_column)
        item_id = record.get(keys[0])
        if item_id is None or not str(item_id).strip():
            raise _unreadable(path, f"line {number} has no {keys[0]!r}", "Every line needs an id.")
        if any(_surrogate(record.get(key)) for key in keys):
            raise _unreadable(path, f"line {number} holds a lone surrogate (\\ud800-\\udfff), not text",
                              "Fix or remove that line.")
        rows.append((str(item_id).strip(), _clean(record.get(keys[1]))))
    return rows


def _surrogate(value: Any) -> bool:
    return isinstance(value, str) and _SURROGATE.search(value) is not None


def _txt_rows(path: Path) -> list[tuple[str, str | None]]:
    rows = []
    for number, line in read_text_lines(path, max_chars=MAX_CHARS + 1_000):
        if isinstance(line, BadLine):
            raise _bad(path, line)
        if not line.strip() or line.startswith("#"):
            continue
        item_id, tab, caption = line.partition("\t")
        if tab and not item_id.strip():
            raise _unreadable(path, f"line {number} has a tab but no id before it", "Write id<TAB>caption.")
        rows.append((item_id.strip(), _clean(caption)) if tab else (str(number), _clean(line)))
    return rows


def group_duplicates(ids: Sequence[str]) -> tuple[list[str], list[list[int]]]:
    """The unique ids in first-seen order and, for each, the positions where it occurs.

    Example:
        >>> group_duplicates(["a", "b", "a"])
        (['a', 'b'], [[0, 2], [1]])
    """
    groups: dict[str, list[int]] = {}
    for position, item_id in enumerate(ids):
        groups.setdefault(item_id, []).append(position)
    return list(groups), list(groups.values())


def _sidecar_caption(audio: Path) -> str | None:
    sidecar = audio.with_suffix(".txt")
    if not sidecar.is_file():
        return None
    lines = []
    for _, line in read_text_lines(sidecar, max_chars=MAX_CHARS):
        if isinstance(line, BadLine):
            raise _bad(sidecar, line)
        lines.append(line)
    return _clean("\n".join(lines))


def find_audio_items(source: str | os.PathLike[str]) -> list[AudioItem]:
    """Audio items from a folder (searched recursively) or from a text file listing paths.

    Args:
        source: a folder, or a text file with one audio path per line (# starts a comment).

    Returns:
        One :class:`AudioItem` per file (path, id, and the sidecar caption if any), sorted
        by path for a folder, in list order for a list.

    Raises:
        AudioIndexError: a missing source or listed file (E615), no audio files (E606).

    Example:
        >>> [item.item_id for item in find_audio_items("clips/")]  # doctest: +SKIP
        ['dog/bark.wav', 'rain.flac']
    """
    root = Path(source)
    if root.is_dir():
        files = sorted(
            path for path in root.rglob("*") if path.suffix.lower() in AUDIO_SUFFIXES and path.is_file()
        )
        labelled = [(path.relative_to(root).as_posix(), path) for path in files]
        where = f"no {', '.join(AUDIO_SUFFIXES)} files under {root}"
    elif root.is_file():
        entries = []
        for _, line in read_text_lines(root, max_chars=MAX_CHARS):
            if isinstance(line, BadLine):
                raise AudioIndexError(Errors.E615.format(
                    what="audio list", path=root, problem=f"line {line.line}: {line.reason}",
                    hint="Fix or remove that line; the list holds one audio path a line, in UTF-8.",
                ))
            if line.strip() and not line.strip().startswith("#"):
                entries.append(line.strip())
        labelled = [(entry, (root.parent / entry).expanduser()) for entry in entries]
        absent = [entry for entry, path in labelled if not path.is_file()]
        if absent:
            raise AudioIndexError(Errors.E615.format(
                what="audio list", path=root, problem=f"{len(absent)} listed file(s) do not exist "
                f"(first: {absent[0]!r})", hint="Paths are relative to the list file's folder.",
            ))
        where = f"{root} lists no audio files"
    else:
        raise AudioIndexError(Errors.E615.format(
            what="audio folder or list", path=root, problem="no such file or folder",
            hint="Pass a folder of audio files or a text file with one path per line.",
        ))
    if not labelled:
        raise AudioIndexError(Errors.E606.format(what=where))
    return [AudioItem(path=str(path), item_id=label, text=_sidecar_caption(path)) for label, path in labelled]
