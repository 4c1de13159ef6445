"""violated@10: the share of a top 10 whose captions hold a sound the query excludes, by meaning.

The evaluation's side of the one violation check (:mod:`fortekit.fol.violation`): an item
*violates* a query when its captions' predicate symbols hold a sound the query's formula Π(q)
excludes, as :meth:`~fortekit.fol.violation.ViolationCheck.holds` judges it; the mark of a
hit (``fortekit search``, its JSON), Stage 3's polarity conflicts, ``fortekit eval --beir``'s
:data:`~fortekit.search.eval.beir_metrics.GROUNDED_VIOLATION` and the badge of the evaluation
page (``fortekit serve --eval``) all ask it. The measure applies to every query whose formula
has an excluded sound, whatever its metadata says, and needs no ``item_concepts.jsonl``; it is
the system's own check, so a consistency figure rather than an independent one (the dataset's
concept annotation, ``violation@10``, is that).

:class:`GroundedMarks` judges (query, item) pairs once each, given how to find a query's
formula and an item's caption symbols; :func:`add_grounded` writes the measure and the marks
into the per-query records of ``fortekit eval --beir``.

Example:
    >>> from fortekit.fol import parse_formula, predicates
    >>> phi = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    >>> captions = {"a": predicates(parse_formula("∃x [Man(x) ∧ Speaking(x)]")),
    ...             "b": predicates(parse_formula("∃x [Bird(x) ∧ Chirping(x)]"))}
    >>> marks = GroundedMarks({"q": phi}.get, captions.get)
    >>> marks.marks("q", ["a", "b", "c"])
    [('¬∃y [Person(y) ∧ Talking(y)]',), (), None]
    >>> marks.share("q", ["a", "b"])
    0.5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from fortekit.search.eval.beir_metrics import GROUNDED_VIOLATION

if TYPE_CHECKING:
    from fortekit.fol.ast import Formula
    from fortekit.fol.predicates import PredicateSymbol
    from fortekit.fol.violation import ViolationCheck
    from fortekit.search.eval.beir_data import BeirData

__all__ = ["TOP_MARKS", "GroundedMarks", "add_grounded", "beir_marks", "held_sounds"]

#: The per-query field with each stored top item's held excluded sounds (null for an item with no
#: caption to judge; null for the query when its formula excludes no sound).
TOP_MARKS = "top_violated"

Symbols = Iterable["PredicateSymbol | str"]


def held_sounds(phi: Formula | None, symbols: Symbols,
                check: ViolationCheck | None = None) -> tuple[str, ...]:
    """The excluded sounds of ``phi`` that an item's caption symbols hold, as written in ``phi``.

    Empty exactly when ``check.holds(phi, symbols)`` is False (the item does not violate).

    Args:
        phi: the query's formula (None: nothing is excluded).
        symbols: the item's caption predicate symbols (or their names).
        check: the violation check (default: :func:`~fortekit.fol.violation.default_check`).

    Returns:
        The held sounds' formulas as strings, in formula order.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> held_sounds(parse_formula("∃x [Rain(x) ∧ ¬∃y Thunder(y)]"), ["Thunder", "Rain"])
        ('¬∃y Thunder(y)',)
    """
    from fortekit.fol.violation import Evidence, default_check

    check = check or default_check()
    if not check.holds(phi, symbols):
        return ()
    held = tuple(str(j.sound) for j in check.judge_formula(phi, symbols) if j.evidence is Evidence.HOLDS)
    return held or tuple(check.violated(phi, symbols)) or (str(phi),)


class GroundedMarks:
    """(query, item) pairs judged by the grounded violation check, each once.

    Args:
        formula_of: query id -> Π(q) (None: the parser refused the text; nothing is excluded).
        symbols_of: item id -> its caption predicate symbols (None, or no asserted symbol: the
            item has no caption the parser read, so the check cannot judge it).
        check: the violation check (default: the shipped one).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> marks = GroundedMarks({"q": parse_formula("∃x Rain(x)")}.get, {"a": ["Rain"]}.get)
        >>> marks.applies("q"), marks.share("q", ["a"])
        (False, None)
    """

    def __init__(self, formula_of: Callable[[str], Formula | None],
                 symbols_of: Callable[[str], Symbols | None], check: ViolationCheck | None = None) -> None:
        from fortekit.fol.violation import default_check

        self.check = check or default_check()
        self._formula_of = formula_of
        self._symbols_of = symbols_of
        self._names: dict[str, frozenset[str] | None] = {}
        self._marks: dict[tuple[str, str], tuple[str, ...] | None] = {}

    def formula(self, query: str) -> Formula | None:
        """Π(q) of a query id."""
        return self._formula_of(query)

    def applies(self, query: str) -> bool:
        """Whether the query's formula excludes a sound (else it has no grounded violation)."""
        return bool(self.check.excluded(self.formula(query)))

    def _item_names(self, item: str) -> frozenset[str] | None:
        if item not in self._names:
            from fortekit.fol.violation import positive_names

            symbols = self._symbols_of(item)
            names = None if symbols is None else positive_names(symbols)
            self._names[item] = names or None
        return self._names[item]

    def mark(self, query: str, item: str) -> tuple[str, ...] | None:
        """The excluded sounds of the query the item holds (empty: none; None: no caption to judge,
        which :meth:`share` counts as no violation)."""
        key = (query, item)
        if key not in self._marks:
            names = self._item_names(item)
            self._marks[key] = None if names is None else held_sounds(self.formula(query), names, self.check)
        return self._marks[key]

    def marks(self, query: str, items: Sequence[str]) -> list[tuple[str, ...] | None]:
        """:meth:`mark` of each item, in order."""
        return [self.mark(query, item) for item in items]

    def share(self, query: str, top: Sequence[str], k: int = 10) -> float | None:
        """violated@k: the share of the first ``k`` items that hold an excluded sound.

        Returns:
            A share in [0, 1] (0.0 for an empty ranking), or None when the query's formula
            excludes no sound.
        """
        if not self.applies(query):
            return None
        head = list(top[:k])
        if not head:
            return 0.0
        return sum(1 for item in head if self.mark(query, item)) / len(head)


def add_grounded(records: Sequence[dict[str, Any]], marks: GroundedMarks, k: int = 10) -> None:
    """Fill each per-query record's :data:`GROUNDED_VIOLATION` and :data:`TOP_MARKS` in place.

    Args:
        records: ``fortekit eval --beir``'s records (``query_id`` and ``top``, the stored top items).
        marks: the judged pairs.
        k: the cut-off.

    Example:
        >>> marks = GroundedMarks({"q": None}.get, {}.get)
        >>> rows = [{"query_id": "q", "top": ["a"]}]
        >>> add_grounded(rows, marks)
        >>> rows[0]["violated@10"], rows[0]["top_violated"]
        (None, None)
    """
    for record in records:
        query, top = record["query_id"], list(record["top"])
        applies = marks.applies(query)
        record[GROUNDED_VIOLATION] = marks.share(query, top, k) if applies else None
        record[TOP_MARKS] = ([None if mark is None else list(mark) for mark in marks.marks(query, top)]
                             if applies else None)



def beir_marks(data: BeirData) -> GroundedMarks:
    """:class:`GroundedMarks` of a ``fortekit eval --beir`` run: Π(q) of each query and, per item,
    :attr:`~fortekit.search.eval.beir_data.BeirData.caption_sets` (the union over the clip's
    captions; the captioner's captions with ``--captioner``), both parsed on first use.

    Example:
        >>> beir_marks(data).share("q0001", ["d1", "d2"])  # doctest: +SKIP
        0.5
    """
    formulas = dict(zip(data.query_ids, data.query_formulas, strict=True))
    captions = dict(zip(data.item_ids, data.caption_sets, strict=True))
    return GroundedMarks(formulas.get, captions.get)
