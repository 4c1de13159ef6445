"""What ``fortekit index build`` reads: caption files, audio folders and lists, backbone options.

* Caption files, read by :mod:`fortekit.collection_reader` (the one reader of collections):
  ``.jsonl`` (a BEIR ``corpus.jsonl`` as it is: ``_id``, ``text``, ``title``, ``captions``;
  or ``id`` and ``caption``), ``.csv``/``.tsv`` (a Clotho or AudioCaps caption CSV, one item
  per clip; else ``_id``/``id``/``file_name`` and ``text``/``caption``; or the columns named),
  ``.txt`` (one caption per line, ``id<TAB>caption`` or just the caption, whose id is then its
  line number). A clip with a list of captions is one item, the mean of their embeddings (as
  ``fortekit eval`` makes it). Lines end at ``"\\n"`` only (never at U+2028 or U+0085), CSV
  records follow ``newline=""``, and a line that is not UTF-8, malformed or too long refuses
  the file (E615, naming the line).
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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fortekit.errors import AudioIndexError, Errors
from fortekit.fol.caption.pipeline import MAX_CHARS
from fortekit.plugins.protocols import AudioItem
from fortekit.textio import BadLine, read_text_lines

__all__ = [
    "AUDIO_SUFFIXES",
    "CaptionTable",
    "find_audio_items",
    "group_duplicates",
    "read_caption_file",
]

#: The audio files a folder scan picks up (case-insensitive).
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".mp3")
_CAPTION_HINT = (
    "A captions file is .jsonl with one object per line (a BEIR corpus.jsonl as it is), .csv/.tsv "
    "with a header (a Clotho or AudioCaps caption CSV, or --id-column and --text-column), or .txt "
    "with one caption per line."
)


@dataclass(frozen=True, slots=True)
class CaptionTable:
    """Ids and captions read from a captions file, in file order (ids may repeat).

    Attributes:
        ids: the items' ids.
        captions: each item's own caption (stored, parsed for Stage 3), or None.
        texts: what each item's vector is the mean of: its list of captions, else its caption alone.
    """

    ids: list[str]
    captions: list[str | None]
    texts: list[tuple[str, ...]]


def _unreadable(path: Path, problem: str, hint: str = _CAPTION_HINT) -> AudioIndexError:
    return AudioIndexError(Errors.E615.format(what="captions file", path=path, problem=problem, hint=hint))


def _suggestion(names: Sequence[str]) -> str:
    """An example pair of options from the header: its caption column and the first other one.

    >>> _suggestion(["audiocap_id", "youtube_id", "caption"])
    ' (here, for example: --id-column audiocap_id --text-column caption)'
    >>> _suggestion(["clip", "description"])
    ' (here, for example: --id-column clip --text-column description)'
    """
    words = ("caption", "text", "description")
    caption = next((name for name in names if any(word in name.lower() for word in words)), None)
    other = next((name for name in names if name != caption), None)
    if caption is None or other is None:
        return ""
    return f" (here, for example: --id-column {other} --text-column {caption})"


def read_caption_file(
    path: str | os.PathLike[str], *, id_column: str | None = None, caption_column: str | None = None,
) -> CaptionTable:
    """Read ids and captions from a .csv, .tsv, .jsonl or .txt file, one item per clip.

    The file is read by :func:`fortekit.collection_reader.read_items`, the one reader of
    collections: a BEIR ``corpus.jsonl`` as it is, a record with a list of captions (BEIR's
    ``captions``, a Clotho row, an AudioCaps clip) as one item whose ``texts`` are those captions.

    Args:
        path: the file.
        id_column: the id column or key (default: a Clotho or AudioCaps layout's, else ``_id``,
            ``id`` or ``file_name``).
        caption_column: the caption column or key (default: a layout's captions, else ``text``
            or ``caption``, with BEIR's ``captions`` list); a key holding a list is the list of captions.

    Returns:
        The :class:`CaptionTable`; a blank caption is None.

    Raises:
        AudioIndexError: a missing, undecodable or malformed file, missing columns, a blank
            id (E615); no rows (E606).

    Example:
        >>> read_caption_file("clotho_captions_development.csv").ids[:1]  # doctest: +SKIP
        ['Distorted AM Radio noise.wav']
    """
    from fortekit.collection_reader import RecordError, read_items

    source = Path(path)
    if not source.is_file():
        raise _unreadable(source, "no such file")
    try:
        records = read_items(source, id_column=id_column, text_column=caption_column, max_chars=MAX_CHARS)
    except OSError as exc:
        raise _unreadable(source, exc.strerror or str(exc)) from None
    except RecordError as exc:
        raise _refused(source, exc, id_column is None and caption_column is None) from None
    if not records:
        raise AudioIndexError(Errors.E606.format(what=f"{source} has no captions"))
    return CaptionTable([r.id for r in records], [r.text for r in records], [r.texts for r in records])


def _refused(path: Path, exc: Any, defaults: bool) -> AudioIndexError:
    """E615 for what the reader refused (a RecordError): the line, the problem, and how to fix it."""
    if exc.bad is not None:
        return _bad(path, exc.bad)
    problem = exc.problem if exc.line is None else f"line {exc.line}: {exc.problem}"
    if exc.columns:
        names = ", ".join(map(repr, exc.columns))
        what = "name the two to use with" if defaults else "name them with"
        return _unreadable(path, problem, f"Its columns are {names}; {what} --id-column and "
                           f"--text-column{_suggestion(exc.columns)}.")
    return _unreadable(path, problem, "Fix or remove that line." if exc.line is not None else _CAPTION_HINT)


def _clean(caption: Any) -> str | None:
    if caption is None:
        return None
    caption = str(caption).strip()
    return caption or None


def _bad(path: Path, bad: BadLine) -> AudioIndexError:
    return _unreadable(path, f"line {bad.line}: {bad.reason}", "Fix or remove that line (re-save the file as "
                       f"UTF-8; a caption is at most {MAX_CHARS:,} characters).")


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
