"""The curated, declarative tables the builder applies (all shipped in ``vocab/``).

``lexname_categories.tsv``
    WordNet lexicographer file -> default category (or ``drop``) for open-class words.
``lexicon.tsv``
    ``lemma, pos, category, note``: the category of a word, overriding the defaults;
    ``drop`` removes it (junk, function words, spaCy errors). ``pos`` may be ``*``.
``contrasts.tsv``
    ``axis, pole_a, pole_b``: acoustic opposites; every word of one pole contrasts
    with every word of the other (loud/quiet, near/far, continuous/intermittent, ...).
``overrides.json``
    ``add`` (entries the statistics miss), ``aliases`` (extra surface forms of a
    symbol) and ``audioset`` (which ontology classes may be added below the threshold).

Example:
    >>> from fortekit.vocab.tables import load_tables
    >>> tables = load_tables()
    >>> tables.lexicon_category("loud", "ADJ").value
    'intensity'
    >>> tables.lexname_category("noun.animal").value
    'sound_event'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from fortekit.errors import Errors, VocabularyError
from fortekit.textio import split_text_lines
from fortekit.vocab.model import POS_TAGS, Category

__all__ = ["DROP", "AddedEntry", "Contrast", "Tables", "load_tables"]

#: Marker for "leave this word out" in the category tables.
DROP = "drop"


@dataclass(frozen=True, slots=True)
class Contrast:
    """One row of ``contrasts.tsv``: two poles of an acoustic dimension."""

    axis: str
    pole_a: tuple[str, ...]
    pole_b: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AddedEntry:
    """One curated addition from ``overrides.json``."""

    lemma: str
    pos: str
    category: Category
    surface: str
    aliases: tuple[str, ...]
    note: str


@dataclass(frozen=True, slots=True)
class Tables:
    """All curated tables, parsed and validated."""

    lexnames: dict[str, Category | None]
    lexicon: dict[tuple[str, str], Category | None]
    contrasts: tuple[Contrast, ...]
    added: tuple[AddedEntry, ...]
    aliases: dict[str, tuple[str, ...]]
    audioset_excluded: frozenset[str]
    audioset_min_freq: int

    def lexname_category(self, lexname: str) -> Category | None:
        """Default category of a WordNet lexicographer file (None: drop or unknown)."""
        return self.lexnames.get(lexname)

    def in_lexicon(self, lemma: str, pos: str) -> bool:
        """True if the lexicon decides this word (a category or ``drop``)."""
        return (lemma, pos) in self.lexicon or (lemma, "*") in self.lexicon

    def lexicon_category(self, lemma: str, pos: str) -> Category | None:
        """The lexicon's category for a word; None for ``drop`` or when absent."""
        if (lemma, pos) in self.lexicon:
            return self.lexicon[(lemma, pos)]
        return self.lexicon.get((lemma, "*"))


def _text(name: str) -> str:
    return resources.files("fortekit.vocab").joinpath(name).read_text(encoding="utf-8")


def _rows(name: str, width: int) -> list[tuple[int, list[str]]]:
    rows = []
    for number, line in enumerate(split_text_lines(_text(name)), start=1):  # "\n" only (fortekit.textio)
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) < width:
            raise VocabularyError(
                Errors.E110.format(path=name, problem=f"line {number} has {len(cells)} cells, needs {width}")
            )
        rows.append((number, [cell.strip() for cell in cells]))
    return rows[1:]  # the first non-comment row is the header


def _category(name: str, cell: str, number: int) -> Category | None:
    if cell == DROP:
        return None
    try:
        return Category.parse(cell)
    except VocabularyError as exc:
        raise VocabularyError(Errors.E110.format(path=name, problem=f"line {number}: {exc}")) from None


def _pos(name: str, cell: str, number: int, wildcard: bool) -> str:
    if cell in POS_TAGS or (wildcard and cell == "*"):
        return cell
    raise VocabularyError(Errors.E110.format(path=name, problem=f"line {number}: unknown POS {cell!r}"))


def _words(cell: str) -> tuple[str, ...]:
    return tuple(word.strip().lower() for word in cell.split(",") if word.strip())


def _overrides() -> dict[str, Any]:
    try:
        data = json.loads(_text("overrides.json"))
    except ValueError as exc:
        raise VocabularyError(Errors.E110.format(path="overrides.json", problem=exc)) from None
    if not isinstance(data, dict):
        raise VocabularyError(
            Errors.E110.format(path="overrides.json", problem="the top level must be an object")
        )
    return data


@cache
def load_tables() -> Tables:
    """Read and validate the curated tables shipped in ``vocab/`` (once per process).

    Returns:
        The tables.

    Raises:
        VocabularyError: if a table is malformed (E110, naming file and line).

    Example:
        >>> any(c.axis == "loudness" for c in load_tables().contrasts)
        True
    """
    lexnames = {
        cells[0]: _category("lexname_categories.tsv", cells[1], n)
        for n, cells in _rows("lexname_categories.tsv", 2)
    }
    lexicon: dict[tuple[str, str], Category | None] = {}
    for n, cells in _rows("lexicon.tsv", 3):
        key = (cells[0].lower(), _pos("lexicon.tsv", cells[1], n, wildcard=True))
        if key in lexicon:
            raise VocabularyError(Errors.E110.format(path="lexicon.tsv", problem=f"line {n}: {key} repeats"))
        lexicon[key] = _category("lexicon.tsv", cells[2], n)
    contrasts = tuple(
        Contrast(cells[0], _words(cells[1]), _words(cells[2])) for _, cells in _rows("contrasts.tsv", 3)
    )
    data = _overrides()
    added = []
    for number, item in enumerate(data.get("add", []), start=1):
        try:
            lemma = str(item["lemma"]).lower()
            category = Category.parse(str(item["category"]))
            pos = _pos("overrides.json", str(item["pos"]), number, wildcard=False)
        except (KeyError, TypeError, VocabularyError) as exc:
            problem = f"add[{number - 1}]: {exc} (each addition needs lemma, pos, category)"
            raise VocabularyError(Errors.E110.format(path="overrides.json", problem=problem)) from None
        added.append(
            AddedEntry(
                lemma=lemma,
                pos=pos,
                category=category,
                surface=str(item.get("surface", lemma)).lower(),
                aliases=tuple(str(a).lower() for a in item.get("aliases", [])),
                note=str(item.get("note", "")),
            )
        )
    aliases = {
        str(symbol): tuple(str(a).lower() for a in forms) for symbol, forms in data.get("aliases", {}).items()
    }
    audioset = data.get("audioset", {})
    return Tables(
        lexnames=lexnames,
        lexicon=lexicon,
        contrasts=contrasts,
        added=tuple(added),
        aliases=aliases,
        audioset_excluded=frozenset(str(name) for name in audioset.get("exclude_subtrees", [])),
        audioset_min_freq=int(audioset.get("min_caption_freq", 1)),
    )
