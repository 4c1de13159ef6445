"""A formula-level order check: does an item's caption put the query's events in the same order?

The caption parser Π writes "a dog barks, then a bell rings" as
``∃x ∃y [Dog(x) ∧ Barking(x) ∧ Before(x, y) ∧ Bell(y) ∧ Ringing(y)]``. An *event order* of a
formula is each asserted ``Before(a, b)`` between two different variables, as the pair
(unary predicate names of a, unary predicate names of b). A query's order is checked against
the item caption's formula: an item pair whose sides share a predicate name with the query's
sides, in the same direction, agrees (+1); in the opposite direction, disagrees (-1); no such
pair says nothing (0). :class:`OrderCheck` sorts a ranking's head by it (the ``Retriever``'s
``order_check``, ``fortekit search --order-check``; the benchmark's ``default+order``). Pure
logic: no torch at module level.

Example:
    >>> from fortekit.fol import parse_formula
    >>> q = parse_formula("∃x ∃y [Dog(x) ∧ Barking(x) ∧ Before(x, y) ∧ Bell(y) ∧ Ringing(y)]")
    >>> same = parse_formula("∃x ∃y [Loud(x) ∧ Dog(x) ∧ Before(x, y) ∧ Bell(y)]")
    >>> swapped = parse_formula("∃x ∃y [Bell(x) ∧ Ringing(x) ∧ Before(x, y) ∧ Dog(y)]")
    >>> order_agreement(q, same), order_agreement(q, swapped), order_agreement(q, None)
    (1.0, -1.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula

__all__ = ["ORDER_PREDICATES", "OrderCheck", "event_orders", "order_agreement"]

ORDER_PREDICATES = frozenset({"Before"})
"""Binary predicates that say their first argument sounds before the second."""

Side = frozenset[str]


def event_orders(phi: Formula | None) -> list[tuple[Side, Side]]:
    """The asserted ``Before(a, b)`` of ``phi`` as (predicates of a, predicates of b).

    A ``Before`` under a negation, between a variable and itself, or with a side that has no
    unary predicate is left out (it orders nothing that can be compared).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> event_orders(parse_formula("∃x ∃y [Rain(x) ∧ Before(x, y) ∧ Thunder(y)]"))
        [(frozenset({'Rain'}), frozenset({'Thunder'}))]
    """
    from fortekit.fol.ast import Var
    from fortekit.fol.predicates import Polarity, atom_occurrences

    if phi is None:
        return []
    unary: dict[str, set[str]] = {}
    relations: list[tuple[str, str]] = []
    for atom, polarity in atom_occurrences(phi):
        if polarity is not Polarity.POSITIVE:
            continue
        if atom.arity == 1 and isinstance(atom.args[0], Var):
            unary.setdefault(atom.args[0].name, set()).add(atom.predicate)
        elif atom.arity == 2 and atom.predicate in ORDER_PREDICATES:
            first, second = atom.args
            if isinstance(first, Var) and isinstance(second, Var) and first.name != second.name:
                relations.append((first.name, second.name))
    return [(frozenset(unary[a]), frozenset(unary[b])) for a, b in relations if unary.get(a) and unary.get(b)]


def order_agreement(query: Formula | None, item: Formula | None) -> float:
    """The mean over the query's event orders of +1 (the item agrees), -1 (reversed), 0 (unknown).

    Args:
        query: the query's formula (Π(q) or phi*).
        item: the item caption's formula, or None (no caption: 0).

    Returns:
        A value in [-1, 1]; 0 when the query states no order.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> order_agreement(parse_formula("Rain(x)"), parse_formula("Rain(x)"))
        0.0
    """
    wanted = event_orders(query)
    if not wanted:
        return 0.0
    found = event_orders(item)
    total = 0.0
    for first, second in wanted:
        if any(first & u and second & v for u, v in found):
            total += 1.0
        elif any(first & v and second & u for u, v in found):
            total -= 1.0
    return total / len(wanted)


class OrderCheck:
    """Sort the head of each ranking by :func:`order_agreement` with the items' captions.

    For a query whose formula states an event order, its best ``top_n`` items are sorted by
    agreement (agreeing first, unknown next, reversed last; ties keep their order); other
    queries are left as they are. The scores stay with their places, so each row is still
    best first: an item that moves takes the score of the place it lands on. Item captions
    are parsed on first use, one at a time, and kept: a query log over a large index parses
    only the items that reach some head.

    Args:
        captions: one caption per index row (None: no caption, agreement 0).
        top_n: how many of each ranking's best items are sorted.
        formulas: the captions' formulas when the caller has parsed them already (one per row).

    Example:
        >>> import torch
        >>> from fortekit.fol import parse_formula
        >>> check = OrderCheck(["a bell rings, then a dog barks", "a dog barks, then a bell rings"])
        >>> phi = parse_formula("∃x ∃y [Dog(x) ∧ Barking(x) ∧ Before(x, y) ∧ Bell(y) ∧ Ringing(y)]")
        >>> scores, rows = check.apply([phi], torch.tensor([[0.9, 0.8]]), torch.tensor([[0, 1]]))
        >>> rows.tolist(), [round(v, 2) for v in scores[0].tolist()]
        ([[1, 0]], [0.9, 0.8])
    """

    def __init__(self, captions: Sequence[str | None], top_n: int = 50, *,
                 formulas: Sequence[Formula | None] | None = None) -> None:
        self.captions = list(captions)
        self.top_n = top_n
        self._formulas: dict[int, Formula | None] = {} if formulas is None else dict(enumerate(formulas))

    def __repr__(self) -> str:
        return f"OrderCheck({len(self.captions)} captions, top_n={self.top_n})"

    def item_formula(self, row: int) -> Formula | None:
        """The parsed caption of index row ``row`` (None: no caption, or one the parser rejects)."""
        if row not in self._formulas:
            from fortekit.errors import FortekitError
            from fortekit.fol.caption.parser import parse_caption

            text = self.captions[row] if 0 <= row < len(self.captions) else None
            try:
                self._formulas[row] = parse_caption(text).formula if text and text.strip() else None
            except FortekitError:  # an unparsable caption says nothing about order
                self._formulas[row] = None
        return self._formulas[row]

    def apply(
        self, formulas: Sequence[Formula | None], scores: torch.Tensor, rows: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Each query's head re-ordered by agreement; the scores keep their places.

        Args:
            formulas: one formula per query (None: left as it is).
            scores: (queries, n) scores, best first.
            rows: (queries, n) index rows.

        Returns:
            ``(scores, rows)`` of the same shapes (``scores`` as given).
        """
        import torch

        rows = rows.clone()
        head = min(self.top_n, int(rows.shape[1]))
        for q, phi in enumerate(formulas):
            if head < 2 or not event_orders(phi):
                continue
            top = rows[q, :head].tolist()
            agreement = torch.tensor([order_agreement(phi, self.item_formula(int(i))) for i in top])
            order = torch.sort(-agreement, stable=True).indices.to(rows.device)
            rows[q, :head] = rows[q, :head][order]
        return scores, rows
