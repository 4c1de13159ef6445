"""Readers for the builder's inputs: Clotho and AudioCaps caption CSVs, the AudioSet ontology.

The package never reads ``../shared``: callers pass paths (the CLI's ``--clotho``,
``--audiocaps``, ``--ontology``).

Example:
    >>> import tempfile, pathlib
    >>> csv_file = pathlib.Path(tempfile.mkdtemp()) / "ac.csv"
    >>> _ = csv_file.write_text("audiocap_id,youtube_id,start_time,caption\\n1,x,0,A dog barks\\n")
    >>> read_captions(csv_file)
    ('A dog barks',)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fortekit.collection_reader import check_caption_csv, read_caption_csv
from fortekit.errors import DataFileError, Errors

__all__ = ["OntologyClass", "class_names", "read_captions", "read_ontology"]

_CLOTHO = tuple(f"caption_{i}" for i in range(1, 6))


def read_captions(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """Read the captions of a Clotho or AudioCaps CSV, in file order.

    Clotho files (``file_name,caption_1..caption_5``) give five captions a row;
    AudioCaps files (``audiocap_id,youtube_id,start_time,caption``) give one.

    Args:
        path: the CSV file.

    Returns:
        The captions, stripped, empty ones left out.

    Raises:
        DataFileError: if the file is missing (E108), has neither layout (E109) or a line
            that is not UTF-8, malformed or too long (E114).

    Example:
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "clotho.csv"
        >>> _ = f.write_text("file_name," + ",".join(f"caption_{i}" for i in range(1, 6))
        ...                  + "\\na.wav,one,two,three,four,five\\n")
        >>> read_captions(f)
        ('one', 'two', 'three', 'four', 'five')
    """
    source = Path(path)
    if not source.is_file():
        hint = "Pass the Clotho development CSV or an AudioCaps CSV (train.csv, val.csv)."
        raise DataFileError(Errors.E108.format(what="The caption file", path=source, hint=hint))
    # the one reader of collections (fortekit.collection_reader): strict UTF-8, bad lines E114, layout E109
    return tuple(check_caption_csv(read_caption_csv(source)).captions())


@dataclass(frozen=True, slots=True)
class OntologyClass:
    """One AudioSet class.

    Attributes:
        id: the class id (``/m/05tny_``).
        name: its display name (``Bark``).
        restrictions: ``abstract`` and/or ``blacklist`` flags.
        child_ids: ids of its children.
        path: names from the root down to this class (the first path if several).
    """

    id: str
    name: str
    restrictions: tuple[str, ...]
    child_ids: tuple[str, ...]
    path: tuple[str, ...]


def read_ontology(path: str | os.PathLike[str]) -> tuple[OntologyClass, ...]:
    """Read the AudioSet ontology JSON (632 classes), each with its path from a root.

    Args:
        path: ``ontology.json``.

    Returns:
        The classes in file order.

    Raises:
        DataFileError: if the file is missing (E108) or not the ontology (E109).

    Example:
        >>> import tempfile, pathlib, json
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "o.json"
        >>> _ = f.write_text(json.dumps([{"id": "/a", "name": "Animal", "child_ids": ["/d"],
        ...     "restrictions": []}, {"id": "/d", "name": "Dog", "child_ids": [], "restrictions": []}]))
        >>> read_ontology(f)[1].path
        ('Animal', 'Dog')
    """
    source = Path(path)
    if not source.is_file():
        hint = "Pass the AudioSet ontology.json (github.com/audioset/ontology)."
        raise DataFileError(Errors.E108.format(what="The AudioSet ontology", path=source, hint=hint))
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
        records = {item["id"]: item for item in raw}
    except (ValueError, TypeError, KeyError) as exc:
        raise DataFileError(
            Errors.E109.format(
                path=source,
                what="the AudioSet ontology",
                expected="id, name, child_ids",
                found=type(exc).__name__,
            )
        ) from None
    parent: dict[str, str] = {}
    for item in raw:
        for child in item.get("child_ids", []):
            parent.setdefault(child, item["id"])

    def lineage(class_id: str) -> tuple[str, ...]:
        names = []
        seen = set()
        while class_id in records and class_id not in seen:
            seen.add(class_id)
            names.append(str(records[class_id]["name"]))
            class_id = parent.get(class_id, "")
        return tuple(reversed(names))

    return tuple(
        OntologyClass(
            id=str(item["id"]),
            name=str(item["name"]),
            restrictions=tuple(item.get("restrictions", [])),
            child_ids=tuple(item.get("child_ids", [])),
            path=lineage(item["id"]),
        )
        for item in raw
    )


_PARENTHESIS = re.compile(r"\s*\([^)]*\)")


def class_names(name: str) -> Iterator[str]:
    """The lower-case synonyms of an AudioSet class name, parentheses removed.

    Example:
        >>> list(class_names("Male speech, man speaking"))
        ['male speech', 'man speaking']
        >>> list(class_names("Rattle (instrument)")), list(class_names("Dishes, pots, and pans"))
        (['rattle'], ['dishes', 'pots', 'pans'])
    """
    for part in _PARENTHESIS.sub("", name).split(","):
        text = " ".join(part.lower().split())
        if text.startswith("and "):  # "Dishes, pots, and pans"
            text = text[4:]
        if text:
            yield text
