"""spaCy's attribute ruler with its token patterns compiled into a lookup table.

The stock ``attribute_ruler`` of ``en_core_web_sm`` maps tags to POS and morphology
with 179 ``Matcher`` patterns, several with ``REGEX`` or ``IN`` predicates that the
Matcher calls back into Python for every token. On captions that is about a sixth of
the whole pipeline, more than the dependency parser. The patterns read only a token's
own attributes (and, for a few two-token patterns, its neighbour's), so which rules
match a token is a function of a handful of integers: this module compiles the
patterns once and caches, per distinct row of those integers, which rules match.

:class:`TableAttributeRuler` is the stock ``AttributeRuler`` with only ``match`` and
``set_annotations`` replaced; its ``match`` returns the very list the stock one
returns (tested on every Clotho development and AudioCaps caption), so the Doc it
leaves is the same. Patterns the table cannot reproduce exactly (operators, extension
attributes, fuzzy or set-comparison predicates, ``MORPH`` tests, ...) make it fall back
to the stock Matcher for the whole ruler. :func:`use_attribute_table` turns a loaded
pipeline's ruler into one in place: the pipe keeps its name, its factory and its
config, so a pipeline saved from the caption parser is a stock spaCy pipeline that
loads anywhere, fortekit installed or not, and fortekit registers nothing with spaCy.

Example:
    >>> from fortekit.fol.caption.pipeline import load_pipeline
    >>> nlp = load_pipeline()
    >>> type(nlp.get_pipe("attribute_ruler")).__name__
    'TableAttributeRuler'
    >>> nlp.get_pipe("attribute_ruler").fallback_reason is None
    True
    >>> [token.pos_ for token in nlp("A dog barks")]
    ['DET', 'NOUN', 'VERB']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from spacy.attrs import IDS
from spacy.language import Language
from spacy.pipeline import AttributeRuler
from spacy.strings import get_string_id
from spacy.tokens import Doc
from spacy.tokens._retokenize import set_token_attrs

#: Attributes whose value the Matcher and ``Doc.to_array`` read the same way.
_STRING_ATTRS = frozenset(
    ("ORTH", "LOWER", "NORM", "SHAPE", "PREFIX", "SUFFIX", "LEMMA", "POS", "TAG", "DEP")
)
_FLAG_ATTRS = frozenset(name for name in IDS if name.startswith(("IS_", "LIKE_"))) - {"IS_SENT_START"}
_ATTR_ALIASES = {"TEXT": "ORTH"}

#: A distinct token row is cached at most this many times before the cache restarts.
_ROW_CACHE_LIMIT = 200_000

Row = tuple[int, ...]


class _NotCompilable(Exception):
    """A pattern uses a feature the table cannot reproduce exactly (the reason is the message)."""


@dataclass(frozen=True, slots=True)
class TokenTest:
    """What one token of a pattern must be, over the columns of the ruler's table.

    Example:
        >>> test = TokenTest(equals=((0, 7),), within=((1, frozenset({3}), False),), searches=())
        >>> test.passes((7, 3)), test.passes((7, 4))
        (True, False)
    """

    equals: tuple[tuple[int, int], ...]
    within: tuple[tuple[int, frozenset[int], bool], ...]  # (column, values, negated)
    searches: tuple[tuple[int, Callable[[str], Any]], ...]  # (column, compiled REGEX's search)

    def passes(self, row: Row, strings: Any = None) -> bool:
        """Whether a token whose attributes are ``row`` passes (``strings``: the Doc's, for REGEX)."""
        for column, value in self.equals:
            if row[column] != value:
                return False
        for column, values, negated in self.within:
            if (row[column] in values) == negated:
                return False
        return all(search(strings[row[column]]) for column, search in self.searches)


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    """One Matcher pattern of a rule: its token tests in order."""

    rule: int
    tests: tuple[TokenTest, ...]


class AttributeTable:
    """The patterns of an attribute ruler, compiled; :meth:`match` is the stock ``match``.

    Args:
        ruler: the attribute ruler whose patterns to compile.

    Raises:
        _NotCompilable: a pattern uses a feature the table cannot reproduce.
    """

    def __init__(self, ruler: AttributeRuler) -> None:
        strings = ruler.vocab.strings
        self.columns: list[int] = []
        self._column_of: dict[int, int] = {}
        self._match_ids = [strings.add(str(rule)) for rule in range(len(ruler.attrs))]
        single: list[CompiledPattern] = []
        self.multi: list[CompiledPattern] = []
        for rule, pattern in enumerate(ruler.patterns):
            for specs in cast(list[list[Any]], pattern["patterns"]):
                if not specs:
                    raise _NotCompilable("an empty pattern")
                compiled = CompiledPattern(rule, tuple(self._test(spec, strings) for spec in specs))
                index = ruler.indices[rule]
                if not -len(specs) <= index < len(specs):
                    raise _NotCompilable(f"index {index} outside a pattern of {len(specs)} tokens")
                (single if len(specs) == 1 else self.multi).append(compiled)
        self._unanchored: list[CompiledPattern] = []
        self._anchored: dict[tuple[int, int], list[CompiledPattern]] = {}
        for compiled in single:
            anchor = compiled.tests[0].equals[:1]
            if anchor:
                self._anchored.setdefault(anchor[0], []).append(compiled)
            else:
                self._unanchored.append(compiled)
        self._anchor_columns = sorted({column for column, _ in self._anchored})
        self._rows: dict[Row, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        for name in ("ORTH", "LOWER"):  # Doc.to_array gives rows for two attributes or more
            if len(self.columns) < 2:
                self._column(name)

    def _column(self, name: str) -> int:
        attr = IDS[name]
        if attr not in self._column_of:
            self._column_of[attr] = len(self.columns)
            self.columns.append(attr)
        return self._column_of[attr]

    def _test(self, spec: Any, strings: Any) -> TokenTest:
        if not isinstance(spec, dict):
            raise _NotCompilable(f"a token spec that is not a dict: {spec!r}")
        equals: list[tuple[int, int]] = []
        within: list[tuple[int, frozenset[int], bool]] = []
        searches: list[tuple[int, Callable[[str], Any]]] = []
        for key, value in spec.items():
            name = _ATTR_ALIASES.get(str(key).upper(), str(key).upper()) if isinstance(key, str) else ""
            if name not in _STRING_ATTRS and name not in _FLAG_ATTRS:
                raise _NotCompilable(f"the token attribute {key!r}")
            column = self._column(name)
            if isinstance(value, int):  # a bool, or a string's id as the Matcher takes it
                equals.append((column, int(value)))
            elif isinstance(value, str) and name in _STRING_ATTRS:
                equals.append((column, strings.add(value)))
            elif isinstance(value, dict) and value:
                for predicate, argument in value.items():
                    if predicate in ("IN", "NOT_IN") and isinstance(argument, list | tuple):
                        if not all(isinstance(item, str | int) for item in argument):
                            raise _NotCompilable(f"{predicate} values {argument!r}")
                        ids = frozenset(get_string_id(item) for item in argument)
                        within.append((column, ids, predicate == "NOT_IN"))
                    elif predicate == "REGEX" and isinstance(argument, str) and name in _STRING_ATTRS:
                        searches.append((column, re.compile(argument).search))
                    else:
                        raise _NotCompilable(f"the predicate {predicate!r} on {key!r}")
            else:
                raise _NotCompilable(f"the value {value!r} of {key!r}")
        return TokenTest(tuple(equals), tuple(within), tuple(searches))

    def _rules_of(self, row: Row, strings: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        candidates = list(self._unanchored)
        for column in self._anchor_columns:
            candidates += self._anchored.get((column, row[column]), ())
        rules = {compiled.rule for compiled in candidates if compiled.tests[0].passes(row, strings)}
        firsts = (compiled.tests[0] for compiled in self.multi)
        return tuple(sorted(rules)), tuple(
            number for number, first in enumerate(firsts) if first.passes(row, strings)
        )

    def match(self, doc: Doc) -> list[tuple[int, int, int, int]]:
        """The matches the stock ruler's ``match`` gives, sorted the same way.

        Returns:
            ``(rule, match_id, start, end)`` for every match, sorted; a later rule wins.
        """
        rows: list[list[int]] = doc.to_array(list[int | str](self.columns)).tolist()
        cache = self._rows
        if len(cache) > _ROW_CACHE_LIMIT:
            cache.clear()
        match_ids, strings = self._match_ids, doc.vocab.strings
        matches: list[tuple[int, int, int, int]] = []
        several = False
        for start, values in enumerate(rows):
            row = tuple(values)
            found = cache.get(row)
            if found is None:
                found = cache[row] = self._rules_of(row, strings)
            rules, starts = found
            for rule in rules:
                matches.append((rule, match_ids[rule], start, start + 1))
            for number in starts:
                tests = self.multi[number].tests
                end = start + len(tests)
                if end <= len(rows) and all(
                    test.passes(tuple(rows[start + offset]), strings)
                    for offset, test in enumerate(tests[1:], 1)
                ):
                    rule = self.multi[number].rule
                    matches.append((rule, match_ids[rule], start, end))
                    several = True
        if several:  # two patterns of one rule can match the same span; the Matcher keeps one
            matches = list(dict.fromkeys(matches))
        matches.sort()
        return matches


class TableAttributeRuler(AttributeRuler):
    """The stock ``AttributeRuler``, matching through an :class:`AttributeTable`.

    The table is compiled on first use and again after any change to the patterns;
    ``fallback_reason`` says why the stock Matcher is used instead, or is None.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._forget_table()

    def _forget_table(self) -> None:
        self._table: AttributeTable | None = None
        self._compiled = False
        self.fallback_reason: str | None = None

    def add(
        self, patterns: Iterable[list[dict[int | str, Any]]], attrs: dict[Any, Any], index: int = 0
    ) -> None:
        """Add patterns as the stock ruler does (the table is compiled again on next use)."""
        super().add(patterns, attrs, index)
        self._forget_table()

    def clear(self) -> None:
        """Remove every pattern, as the stock ruler does."""
        super().clear()
        self._forget_table()

    def table(self) -> AttributeTable | None:
        """The compiled table, or None when the stock Matcher must be used (see ``fallback_reason``)."""
        if not self._compiled:
            try:
                self._table = AttributeTable(self)
            except _NotCompilable as exc:
                self.fallback_reason = str(exc)
            self._compiled = True
        return self._table

    def match(self, doc: Doc) -> Any:
        """The stock ruler's matches, from the table when it compiles."""
        table = self.table()
        return super().match(doc) if table is None else table.match(doc)

    def set_annotations(self, doc: Doc, matches: Any) -> None:
        """Set each match's attributes on its token, without the stock ruler's ``Span`` per match."""
        if self.table() is None:
            super().set_annotations(doc, matches)  # type: ignore[no-untyped-call]
            return
        attrs, indices = self.attrs, self.indices
        for rule, _, start, end in matches:
            index = indices[rule]
            set_token_attrs(doc[start + index if index >= 0 else end + index], attrs[rule])


def use_attribute_table(nlp: Language, name: str = "attribute_ruler") -> bool:
    """Swap a pipeline's stock attribute ruler for a :class:`TableAttributeRuler` in place.

    The ruler object stays in its place with its patterns; only its class changes, so
    the pipeline's config still names the stock ``attribute_ruler`` factory and
    ``nlp.to_disk`` saves a stock pipeline.

    Args:
        nlp: a loaded spaCy pipeline.
        name: the pipe to swap.

    Returns:
        Whether it was swapped: False when there is no such pipe, it is not a stock
        ``AttributeRuler``, or its patterns do not compile (it is then left as it was).

    Example:
        >>> import spacy
        >>> nlp = spacy.blank("en")
        >>> ruler = nlp.add_pipe("attribute_ruler")
        >>> ruler.add([[{"LOWER": "dog"}]], {"LEMMA": "hound"})
        >>> use_attribute_table(nlp)
        True
        >>> [token.lemma_ for token in nlp("a dog")]
        ['', 'hound']
    """
    ruler: Any = nlp.get_pipe(name) if nlp.has_pipe(name) else None
    if type(ruler) is not AttributeRuler:
        return False
    try:
        table = AttributeTable(ruler)
    except _NotCompilable:
        return False
    # A new pipe would need a factory of its own, which a saved pipeline then names and
    # every spacy.load must find; changing the class keeps the stock one.
    ruler.__class__ = TableAttributeRuler
    swapped = cast(TableAttributeRuler, ruler)
    swapped._forget_table()
    swapped._table, swapped._compiled = table, True
    return True
