"""The V_audio vocabulary: a read-only set of entries, its TSV file and its loader.

The shipped file ``vocab/vocabulary.tsv`` is the output of ``fortekit vocab build``
(see :mod:`fortekit.vocab.builder`); :func:`load_vocabulary` reads it once per process.

Example:
    >>> from fortekit.vocab import load_vocabulary, Category
    >>> vocab = load_vocabulary()
    >>> vocab["Chirping"].lemma, vocab["Chirping"].category is Category.SOUND_EVENT
    ('chirp', True)
    >>> "Quiet" in {e.symbol for e in vocab.contrasts("Loud")}
    True
"""

from __future__ import annotations

import difflib
import io
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path

from fortekit.errors import Errors, UnknownPredicateError, VocabularyError
from fortekit.textio import split_text_lines
from fortekit.vocab.model import POS_TAGS, Category, Origin, VocabEntry

__all__ = ["COLUMNS", "Vocabulary", "load_vocabulary", "read_tsv", "write_tsv"]

#: Columns of the vocabulary TSV, in order. Lists are joined with "|".
COLUMNS: tuple[str, ...] = (
    "symbol",
    "category",
    "pos",
    "lemma",
    "surface",
    "freq_clotho",
    "freq_audiocaps",
    "origin",
    "audioset_ids",
    "aliases",
    "contrasts",
)
_SHIPPED = "vocabulary.tsv"


class Vocabulary:
    """An immutable, indexed set of :class:`VocabEntry`.

    Args:
        entries: the entries; symbols must be unique and every contrast must name
            an entry of the same vocabulary.

    Raises:
        VocabularyError: for a repeated symbol or a dangling contrast (E103).

    Example:
        >>> from fortekit.vocab.model import VocabEntry, Category
        >>> v = Vocabulary([VocabEntry("Dog", Category.SOUND_EVENT, "NOUN", "dog", "dog")])
        >>> len(v), v["Dog"].surface, [e.symbol for e in v.lookup("DOG")]
        (1, 'dog', ['Dog'])
    """

    __slots__ = ("_by_category", "_by_key", "_by_symbol", "_entries")

    def __init__(self, entries: Iterable[VocabEntry]) -> None:
        self._entries: tuple[VocabEntry, ...] = tuple(entries)
        self._by_symbol: dict[str, VocabEntry] = {}
        for entry in self._entries:
            if entry.symbol in self._by_symbol:
                raise VocabularyError(Errors.E103.format(problem=f"symbol {entry.symbol!r} appears twice"))
            self._by_symbol[entry.symbol] = entry
        for entry in self._entries:
            for other in entry.contrasts:
                if other not in self._by_symbol:
                    problem = f"{entry.symbol} lists the contrast {other!r}, which is not an entry"
                    raise VocabularyError(Errors.E103.format(problem=problem))
        by_key: dict[str, list[VocabEntry]] = {}
        for entry in self._entries:
            for key in entry.keys:
                by_key.setdefault(key, []).append(entry)
        # Multi-word keys also match written solid ("lawnmower", "highpitched").
        for entry in self._entries:
            for key in entry.keys:
                solid = key.replace(" ", "").replace("-", "")
                if solid != key and solid not in by_key:
                    by_key.setdefault(solid, []).append(entry)
        # Most frequent first, so callers that take one candidate get the commonest reading.
        self._by_key: dict[str, tuple[VocabEntry, ...]] = {
            key: tuple(sorted(found, key=lambda e: (-e.freq, e.symbol))) for key, found in by_key.items()
        }
        self._by_category: dict[Category, tuple[VocabEntry, ...]] = {
            category: tuple(e for e in self._entries if e.category is category) for category in Category
        }

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[VocabEntry]:
        return iter(self._entries)

    def __contains__(self, symbol: object) -> bool:
        return symbol in self._by_symbol

    def __getitem__(self, symbol: str) -> VocabEntry:
        """The entry of a symbol; raises :class:`UnknownPredicateError` (E104) with suggestions."""
        try:
            return self._by_symbol[symbol]
        except KeyError:
            close = difflib.get_close_matches(str(symbol), self._by_symbol, n=3)
            message = Errors.E104.format(symbol=symbol, suggestions=", ".join(close) or "none")
            raise UnknownPredicateError(message) from None

    def __repr__(self) -> str:
        return f"<Vocabulary of {len(self)} predicates>"

    def get(self, symbol: str) -> VocabEntry | None:
        """The entry of a symbol, or None.

        Example:
            >>> load_vocabulary().get("NoSuchPredicate") is None
            True
        """
        return self._by_symbol.get(symbol)

    @property
    def entries(self) -> tuple[VocabEntry, ...]:
        """All entries, in file order (by category, then symbol)."""
        return self._entries

    @property
    def symbols(self) -> frozenset[str]:
        """All predicate symbols."""
        return frozenset(self._by_symbol)

    def by_category(self, category: Category | str) -> tuple[VocabEntry, ...]:
        """The entries of one category.

        Args:
            category: a :class:`Category` or its name (``"intensity"``).

        Returns:
            The entries, in file order.

        Raises:
            VocabularyError: for an unknown category name (E111).

        Example:
            >>> "Loud" in {e.symbol for e in load_vocabulary().by_category("intensity")}
            True
        """
        if not isinstance(category, Category):
            category = Category.parse(category)
        return self._by_category[category]

    def counts(self) -> dict[Category, int]:
        """Number of predicates per category, in the paper's order.

        Example:
            >>> counts = load_vocabulary().counts()
            >>> sum(counts.values()) == len(load_vocabulary()) and min(counts.values()) > 0
            True
        """
        return {category: len(self._by_category[category]) for category in Category}

    def lookup(self, key: str) -> tuple[VocabEntry, ...]:
        """Entries whose lemma, surface form or an alias equals ``key`` (case-insensitive).

        This is tier (i) of grounding without the POS preference; most callers want
        :func:`fortekit.vocab.ground`.

        Example:
            >>> [e.symbol for e in load_vocabulary().lookup("Barking")]
            ['Barking']
        """
        return self._by_key.get(key.lower(), ())

    @property
    def key_index(self) -> Mapping[str, tuple[VocabEntry, ...]]:
        """The lower-case key -> entries index behind :meth:`lookup` (read-only use)."""
        return self._by_key

    def contrasts(self, symbol: str) -> tuple[VocabEntry, ...]:
        """The contrast set of a predicate: its antonyms and acoustic opposites.

        Raises:
            UnknownPredicateError: for an unknown symbol (E104).

        Example:
            >>> contrasts = {e.symbol for e in load_vocabulary().contrasts("Continuous")}
            >>> {"Intermittent", "Occasional"} <= contrasts
            True
        """
        return tuple(self._by_symbol[s] for s in self[symbol].contrasts)

    def to_tsv(self) -> str:
        """The vocabulary as TSV text, exactly as :func:`write_tsv` writes it."""
        return _format_tsv(self._entries)


def _format_tsv(entries: Iterable[VocabEntry]) -> str:
    out = io.StringIO()
    out.write("\t".join(COLUMNS) + "\n")
    for e in entries:
        row = (
            e.symbol,
            e.category.value,
            e.pos,
            e.lemma,
            e.surface,
            str(e.freq_clotho),
            str(e.freq_audiocaps),
            e.origin.value,
            "|".join(e.audioset_ids),
            "|".join(e.aliases),
            "|".join(e.contrasts),
        )
        out.write("\t".join(row) + "\n")
    return out.getvalue()


def write_tsv(vocabulary: Vocabulary | Iterable[VocabEntry], path: str | Path) -> Path:
    """Write a vocabulary as TSV (UTF-8, ``\\n`` line ends, one header row).

    Args:
        vocabulary: a :class:`Vocabulary` or its entries.
        path: where to write; parent folders are created.

    Returns:
        The path written.

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "v.tsv"
        >>> len(read_tsv(write_tsv(load_vocabulary(), out))) == len(load_vocabulary())
        True
    """
    entries = vocabulary.entries if isinstance(vocabulary, Vocabulary) else tuple(vocabulary)
    from fortekit.safe_write import atomic_write

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = _format_tsv(entries)
    return atomic_write(target, lambda temporary: temporary.write_text(text, encoding="utf-8", newline="\n"))


def _split(cell: str) -> tuple[str, ...]:
    return tuple(part for part in cell.split("|") if part)


def _parse_tsv(text: str, where: str) -> Vocabulary:
    lines = split_text_lines(text)  # "\n" only, as fortekit.textio splits every line file
    if not lines or tuple(lines[0].split("\t")) != COLUMNS:
        found = lines[0].split("\t") if lines else []
        problem = f"the header must be {', '.join(COLUMNS)}; found {', '.join(found) or 'nothing'}"
        raise VocabularyError(Errors.E102.format(path=where, line=1, problem=problem))
    entries = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(COLUMNS):
            problem = f"expected {len(COLUMNS)} tab-separated cells, found {len(cells)}"
            raise VocabularyError(Errors.E102.format(path=where, line=number, problem=problem))
        symbol, category, pos, lemma, surface, f_clotho, f_ac, origin, ids, aliases, contrasts = cells
        try:
            if pos not in POS_TAGS:
                raise ValueError(f"unknown POS {pos!r} (valid: {', '.join(sorted(POS_TAGS))})")
            entry = VocabEntry(
                symbol=symbol,
                category=Category.parse(category),
                pos=pos,
                lemma=lemma,
                surface=surface,
                freq_clotho=int(f_clotho),
                freq_audiocaps=int(f_ac),
                origin=Origin(origin),
                audioset_ids=_split(ids),
                aliases=_split(aliases),
                contrasts=_split(contrasts),
            )
        except (ValueError, VocabularyError) as exc:
            raise VocabularyError(Errors.E102.format(path=where, line=number, problem=exc)) from None
        entries.append(entry)
    return Vocabulary(entries)


def read_tsv(path: str | Path) -> Vocabulary:
    """Read a vocabulary TSV written by :func:`write_tsv`.

    Args:
        path: the file.

    Returns:
        The vocabulary.

    Raises:
        VocabularyError: for a malformed file (E102, with the line number) or an
            inconsistent one (E103).
        FileNotFoundError: if the file does not exist.

    Example:
        >>> import tempfile, pathlib
        >>> bad = pathlib.Path(tempfile.mkdtemp()) / "bad.tsv"
        >>> _ = bad.write_text("symbol\\tcategory\\n")
        >>> try:
        ...     read_tsv(bad)
        ... except Exception as exc:
        ...     print(type(exc).__name__, str(exc)[:6])
        VocabularyError [E102]
    """
    target = Path(path)
    return _parse_tsv(target.read_text(encoding="utf-8"), str(target))


@cache
def _shipped() -> Vocabulary:
    text = resources.files("fortekit.vocab").joinpath(_SHIPPED).read_text(encoding="utf-8")
    return _parse_tsv(text, f"fortekit/vocab/{_SHIPPED}")


def load_vocabulary(path: str | Path | None = None) -> Vocabulary:
    """Load V_audio: the shipped vocabulary by default (read once, then shared).

    Args:
        path: a vocabulary TSV to read instead of the shipped one.

    Returns:
        The vocabulary.

    Raises:
        VocabularyError: if the file is malformed.

    Example:
        >>> vocab = load_vocabulary()
        >>> len(vocab) >= 642 and load_vocabulary() is vocab
        True
    """
    if path is None:
        return _shipped()
    return read_tsv(path)
