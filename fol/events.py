"""Event terms: variables that stand for events, so that two events of one entity can be ordered.

"A machine is pumping and then it slows down" says that one event of the machine
comes before another. fortekit writes such events as variables named ``e1``, ``e2``,
... (``e`` and ``e`` followed by digits), taken as the *first* argument of the verbs
that name them (a neo-Davidsonian event argument):

    ``∃x ∃e1 ∃e2 [Machine(x) ∧ Pumping(e1, x) ∧ Slowing(e2, x) ∧ Before(e1, e2)]``

An atom whose first argument is an event variable and that has a later argument that
is not one is an *event predicate*: ``Pumping(e1, x)`` is the event ``Pumping`` of
``x``, and ``Hitting(e1, x, y)`` the event ``Hitting`` of ``x`` on ``y``. Its
*participant arity* leaves the event out (1 and 2 here), which is the arity
:func:`fortekit.fol.predicates` reports, so that ``Pumping(e1, x)`` and the ordinary
``Pumping(x)`` are the same symbol ``Pumping/1`` for Stage 3 and formula scoring. A
relation between events (``Before(e1, e2)``) is an ordinary binary atom. The caption
parser gives verbs event terms only where an order would otherwise relate an entity
to itself; everywhere else verbs stay unary.

Example:
    >>> from fortekit.fol import parse_formula
    >>> phi = parse_formula("∃x ∃e1 ∃e2 [Machine(x) ∧ Pumping(e1, x) ∧ Slowing(e2, x) ∧ Before(e1, e2)]")
    >>> {event: str(entity) for event, entity in event_participants(phi).items()}
    {'e1': 'x', 'e2': 'x'}
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fortekit.fol.ast import And, Atom, Formula, Not, Quant, Term, Var, children

__all__ = [
    "EVENT_VARIABLE",
    "event_name",
    "event_participants",
    "is_event_predicate",
    "is_event_variable",
    "participant_arity",
    "participant_names",
]

#: The names of event variables: ``e``, ``e1``, ``e2``, ...
EVENT_VARIABLE = re.compile(r"e[0-9]*\Z")


def is_event_variable(term: Term) -> bool:
    """Whether a term is an event variable (``e``, ``e1``, ``e2``, ...).

    Example:
        >>> from fortekit.fol.ast import Const
        >>> is_event_variable(Var("e1")), is_event_variable(Var("x")), is_event_variable(Const("eve"))
        (True, False, False)
    """
    return type(term) is Var and EVENT_VARIABLE.match(term.name) is not None


def event_name(k: int) -> str:
    """The name of the ``k``-th event variable (0-based) of a formula.

    Example:
        >>> event_name(0), event_name(1)
        ('e1', 'e2')
    """
    return f"e{k + 1}"


def is_event_predicate(atom: Atom) -> bool:
    """Whether ``atom`` names an event of its later arguments (``Pumping(e1, x)``).

    Example:
        >>> x, e1, e2 = Var("x"), Var("e1"), Var("e2")
        >>> is_event_predicate(Atom("Pumping", (e1, x))), is_event_predicate(Atom("Before", (e1, e2)))
        (True, False)
    """
    args = atom.args
    if len(args) < 2 or not is_event_variable(args[0]):
        return False
    return any(not is_event_variable(arg) for arg in args[1:])


def participant_arity(atom: Atom) -> int:
    """The atom's arity without its event argument (the arity ``Pred(φ)`` reports).

    Example:
        >>> participant_arity(Atom("Hitting", (Var("e1"), Var("x"), Var("y")))), participant_arity(
        ...     Atom("On", (Var("x"), Var("y"))))
        (2, 2)
    """
    return len(atom.args) - 1 if is_event_predicate(atom) else len(atom.args)


def participant_names(names: Sequence[str]) -> tuple[str, ...]:
    """The variable names of a literal's arguments without its event variable.

    The string-level twin of :func:`participant_arity`, for the caption parser's
    predicate records (whose arguments are variable names): ``("e1", "x")`` is the
    event ``Pumping`` *of x*, so ``Pumping(e1, x)`` is said of one participant, while
    ``Before(e1, e2)`` relates two events and keeps both. Code that tells a property
    ``P(x)`` from a relation ``R(x, y)`` by its number of arguments must count these.

    Example:
        >>> participant_names(("e1", "x")), participant_names(("e1", "e2")), participant_names(("x", "y"))
        (('x',), ('e1', 'e2'), ('x', 'y'))
    """
    if len(names) >= 2 and EVENT_VARIABLE.match(names[0]) and any(
        EVENT_VARIABLE.match(name) is None for name in names[1:]
    ):
        return tuple(names[1:])
    return tuple(names)


def event_participants(phi: Formula) -> dict[str, Term]:
    """Each event variable of ``phi`` with the entity its first event predicate is said of.

    Only the literals of the formula's conjunctions are read (under ∃, ∧ and ¬), as
    the caption parser and the operators build them.
    """
    found: dict[str, Term] = {}
    stack: list[Formula] = [phi]
    while stack:
        node = stack.pop()
        if isinstance(node, Atom):
            if is_event_predicate(node):
                found.setdefault(node.args[0].name, node.args[1])
        elif isinstance(node, (And, Not, Quant)):
            stack.extend(reversed(children(node)))
    return found
