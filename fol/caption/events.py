"""Event terms: an order between two events of one entity relates the events, not the entity.

"A machine is pumping and then it slows down" orders two events of one machine. A
relation ``Before(x, x)`` would say the machine is before itself; instead each of the
two verbs gets a fresh event variable as its first argument and the relation links
the events (docs/annotation.md, "Event terms"):

    ``∃x ∃e1 ∃e2 [Machine(x) ∧ Pumping(e1, x) ∧ Slowing(e2, x) ∧ Before(e1, e2)]``

Verbs stay unary (``Pumping(x)``) everywhere else. Event nodes are negative integers
(``-1``, ``-2``, ...), so that they never collide with the token nodes of the Pass 1
graph; the parser names them ``e1``, ``e2``, ... (:func:`fortekit.fol.events.event_name`).

Example:
    >>> from fortekit.fol.caption.emit import Candidate
    >>> found = [Candidate("machine", "NOUN", (1,), False, "nsubj", (1,)),
    ...          Candidate("pump", "VERB", (1,), False, "root", (3,)),
    ...          Candidate("slow", "VERB", (1,), False, "conj", (7,))]
    >>> order = [Candidate("before", "ADP", (1, 1), False, "then", (6,))]
    >>> [(c.lemma, c.args) for c in with_event_terms(found, order, [(3, 7)], {})]
    [('machine', (1,)), ('pump', (-1, 1)), ('slow', (-2, 1)), ('before', (-1, -2))]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # emit.py imports this module
    from fortekit.fol.caption.emit import Candidate

__all__ = ["EVENT_POS", "is_event_node", "with_event_terms"]

#: Parts of speech of the predicates that can name an event (a verb, or a participle
#: or adjective said of the entity, as in "gets louder and then quieter").
EVENT_POS = frozenset({"VERB", "ADJ"})


def is_event_node(node: int) -> bool:
    """Whether a node of a candidate's arguments is an event (made by :func:`with_event_terms`).

    Example:
        >>> is_event_node(-1), is_event_node(0)
        (True, False)
    """
    return node < 0


def with_event_terms(
    found: Sequence[Candidate],
    orders: Sequence[Candidate],
    tokens: Sequence[tuple[int, int]],
    complements: Mapping[int, Sequence[int]],
    gerunds: frozenset[int] = frozenset(),
) -> list[Candidate]:
    """Give the events that an order of one entity links event terms, and link those.

    Args:
        found: the candidates (unary and binary literals) of the caption.
        orders: the temporal relations whose two arguments are one entity (``Before(x, x)``).
        tokens: for each order, the tokens of its two clauses (usually their verbs).
        complements: for a token with no predicate of its own (a copula, "is loud
            then quiet"), the complement tokens that carry its predicates.
        gerunds: tokens whose noun predicate names an event ("crackling" in "food
            crackling as it fries").

    Returns:
        ``found`` with each ordered event's predicates taking its event node first
        (``Pumping(e1, x)``), followed by the orders between event nodes. An order
        whose clauses name no event of the entity (or one event twice) is left out:
        nothing can be said of an entity ordered after itself.
    """
    events: dict[tuple[int, int], int] = {}  # (token, entity node) -> event node
    linked: list[Candidate] = []
    for order, pair in zip(orders, tokens, strict=True):
        node = order.args[0]
        ends = [_carriers(found, token, node, complements, gerunds) for token in pair]
        if not ends[0] or not ends[1] or set(ends[0]) & set(ends[1]):
            continue  # no event of the entity on one side, or one event twice
        nodes = []
        for carriers in ends:
            event = next((events[(c, node)] for c in carriers if (c, node) in events), None)
            if event is None:
                event = -(len(set(events.values())) + 1)
            for carrier in carriers:
                events[(carrier, node)] = event
            nodes.append(event)
        if nodes[0] != nodes[1]:
            linked.append(_with_args(order, (nodes[0], nodes[1])))
    if not events:
        return list(found)
    out: list[Candidate] = []
    for cand in found:
        event = None
        if cand.pos in EVENT_POS or (cand.tokens[:1] and cand.tokens[0] in gerunds):
            for token in cand.tokens:
                event = events.get((token, cand.args[0]))
                if event is not None:
                    break
        if event is None:
            out.append(cand)
        else:
            out.append(_with_args(cand, (event, *cand.args)))
    out.extend(linked)
    return out


def _with_args(cand: Candidate, args: tuple[int, ...]) -> Candidate:
    """``cand`` with other arguments (``dataclasses.replace`` without its cost)."""
    return type(cand)(cand.lemma, cand.pos, args, cand.negated, cand.rule, cand.tokens, cand.excluded)


def _carriers(
    found: Sequence[Candidate],
    token: int,
    node: int,
    complements: Mapping[int, Sequence[int]],
    gerunds: frozenset[int],
) -> list[int]:
    """The tokens whose predicates name the event of ``node`` that ``token``'s clause says."""
    if _carries(found, token, node, gerunds):
        return [token]
    return [c for c in complements.get(token, ()) if _carries(found, c, node, gerunds)]


def _carries(found: Sequence[Candidate], token: int, node: int, gerunds: frozenset[int]) -> bool:
    """Whether the caption has an event predicate of ``node`` made from ``token``.

    An event inside a denied clause ("detecting nothing and then registering activity")
    is no event that happens: it takes no event term.
    """
    return any(
        (c.pos in EVENT_POS or token in gerunds) and c.args[0] == node and token in c.tokens
        and not c.excluded
        for c in found
    )
