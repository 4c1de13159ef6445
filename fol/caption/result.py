"""What the caption parser returns: the formula and, per predicate, where it came from.

Example:
    >>> from fortekit.fol import Var
    >>> rec = PredicateRecord("Bird", "bird", ("x",), False, "nsubj", (0,), (0, 5), "birds",
    ...                       "wordnet", 1.0, "sound_event", "NOUN")
    >>> result = ParseResult("birds", build_formula([rec]), (rec,), False, ())
    >>> str(result.formula), result.grounded_count, result.to_dict()["predicates"][0]["tier"]
    ('∃x Bird(x)', 1, 'wordnet')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fortekit.fol.ast import And, Atom, Formula, Not, Quant, Quantifier, Var, _Printable, conjoin
from fortekit.fol.events import participant_names
from fortekit.textio import shorten

if TYPE_CHECKING:
    from fortekit.fol.caption.negation import ScopeNote

__all__ = [
    "ParseResult",
    "PredicateRecord",
    "build_formula",
    "clauses",
    "closed_conjunction",
    "literal_for",
    "new_record",
    "new_result",
    "variable_names",
]

_ENTITY_LETTERS = ("x", "y", "z", "w", "v", "u")
_VARS: dict[str, Var] = {}


def _var(name: str) -> Var:
    """A shared Var per name (they are immutable; building one validates its name)."""
    found = _VARS.get(name)
    if found is None:
        found = _VARS[name] = Var(name)
    return found


def variable_names(n_entities: int, n_times: int) -> tuple[list[str], list[str]]:
    """Names for entity and time variables, in order of first mention.

    Example:
        >>> variable_names(8, 2)
        (['x', 'y', 'z', 'w', 'v', 'u', 'x1', 'y1'], ['t', 't1'])
    """
    if n_entities > len(_ENTITY_NAMES):
        _ENTITY_NAMES.extend(_entity_name(k) for k in range(len(_ENTITY_NAMES), n_entities))
    if n_times > len(_TIME_NAMES):
        _TIME_NAMES.extend("t" if k == 0 else f"t{k}" for k in range(len(_TIME_NAMES), n_times))
    return _ENTITY_NAMES[:n_entities], _TIME_NAMES[:n_times]


def _entity_name(k: int) -> str:
    letter, round_ = _ENTITY_LETTERS[k % len(_ENTITY_LETTERS)], k // len(_ENTITY_LETTERS)
    return letter if round_ == 0 else f"{letter}{round_}"


# The names made so far (a caption has a few; the lists grow to the longest seen).
_ENTITY_NAMES: list[str] = [_entity_name(k) for k in range(24)]
_TIME_NAMES: list[str] = ["t" if k == 0 else f"t{k}" for k in range(8)]


@dataclass(frozen=True, slots=True)
class PredicateRecord:
    """One literal of the formula and its provenance.

    Attributes:
        symbol: the predicate symbol in the formula (V_audio's, or the CamelCase lemma).
        lemma: the lemma words it was made from (``chirp``, ``in front of``).
        args: its variables (``("x",)``, ``("x", "y")``).
        negated: whether it is negated in the formula.
        rule: the arc rule that produced it (``nsubj``, ``amod``, ``prep``, ``fallback``, ...).
        tokens: indices of its source tokens in the spaCy parse.
        span: character span ``(start, end)`` of those tokens in the caption.
        source: the source text (the tokens as written).
        tier: grounding tier: ``exact``, ``wordnet``, ``edit_distance`` or ``none`` (OOV).
        confidence: grounding confidence (1.0; sigma in [0.5, 1) for a soft match; 0.0 OOV).
        category: its V_audio category, None when out of vocabulary.
        pos: the part of speech it was grounded with.
        excluded: whether the literal belongs to a denied entity's clause: "without
            people talking" gives ``¬∃y [Person(y) ∧ Talking(y)]``, whose two records
            are ``excluded`` (and not ``negated``: the literals inside are positive).
    """

    symbol: str
    lemma: str
    args: tuple[str, ...]
    negated: bool
    rule: str
    tokens: tuple[int, ...]
    span: tuple[int, int]
    source: str
    tier: str
    confidence: float
    category: str | None
    pos: str
    excluded: bool = False

    @property
    def grounded(self) -> bool:
        """Whether the predicate is in V_audio."""
        return self.tier != "none"

    @property
    def soft(self) -> bool:
        """Whether it was grounded only by edit distance (tier iii)."""
        return self.tier == "edit_distance"

    @property
    def participants(self) -> tuple[str, ...]:
        """Its arguments without its event variable (docs/annotation.md, "Event terms").

        ``Pumping(e1, x)`` is said of one entity, like ``Pumping(x)``: tell a property
        from a relation by ``len(record.participants)``, never by ``len(record.args)``.

        Example:
            >>> rec = PredicateRecord("Pumping", "pump", ("e1", "x"), False, "root", (3,), (12, 19),
            ...                       "pumping", "exact", 1.0, "sound_event", "VERB")
            >>> rec.args, rec.participants
            (('e1', 'x'), ('x',))
        """
        return participant_names(self.args)

    @property
    def atom(self) -> Atom:
        """The atom ``symbol(args)``."""
        return Atom(self.symbol, tuple(_var(name) for name in self.args))

    @property
    def literal(self) -> Formula:
        """The atom, negated if :attr:`negated`."""
        return Not(self.atom) if self.negated else self.atom

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "symbol": self.symbol,
            "lemma": self.lemma,
            "args": list(self.args),
            "negated": self.negated,
            "rule": self.rule,
            "tokens": list(self.tokens),
            "span": list(self.span),
            "source": self.source,
            "tier": self.tier,
            "confidence": self.confidence,
            "category": self.category,
            "pos": self.pos,
            "excluded": self.excluded,
        }


class _Draft:
    """A record's slots, without the frozen ``__init__`` (see :func:`new_record`)."""

    __slots__ = PredicateRecord.__slots__


_new = object.__new__


def new_record(
    symbol: str,
    lemma: str,
    args: tuple[str, ...],
    negated: bool,
    rule: str,
    tokens: tuple[int, ...],
    span: tuple[int, int],
    source: str,
    tier: str,
    confidence: float,
    category: str | None,
    pos: str,
    excluded: bool,
) -> PredicateRecord:
    """``PredicateRecord(...)`` made in a quarter of the time, for the parser's inner loop.

    A frozen dataclass's ``__init__`` sets each of the 13 fields through
    ``object.__setattr__``; a class with the same slots sets them directly, and the
    instance then takes the record's class (the layouts are the same, so CPython
    allows it). What comes out is an ordinary frozen ``PredicateRecord``.

    Example:
        >>> fields = ("Dog", "dog", ("x",), False, "nsubj", (1,), (2, 5), "dog", "exact", 1.0, None,
        ...           "NOUN", False)
        >>> new_record(*fields) == PredicateRecord(*fields), type(new_record(*fields)).__name__
        (True, 'PredicateRecord')
    """
    record: Any = _new(_Draft)
    record.symbol = symbol
    record.lemma = lemma
    record.args = args
    record.negated = negated
    record.rule = rule
    record.tokens = tokens
    record.span = span
    record.source = source
    record.tier = tier
    record.confidence = confidence
    record.category = category
    record.pos = pos
    record.excluded = excluded
    record.__class__ = PredicateRecord
    return record  # type: ignore[no-any-return]


_LITERALS: dict[tuple[str, tuple[str, ...], bool], Formula] = {}
_MAX_LITERALS = 1 << 16


def _literal(record: PredicateRecord) -> Formula:
    """The record's literal (:func:`literal_for`)."""
    return literal_for((record.symbol, record.args, record.negated))


def literal_for(key: tuple[str, tuple[str, ...], bool]) -> Formula:
    """The literal of a ``(symbol, argument names, negated)`` key, shared per key: literals
    are immutable, and building an atom validates its name.

    Example:
        >>> str(literal_for(("Barking", ("x",), True)))
        '¬Barking(x)'
        >>> literal_for(("Dog", ("x",), False)) is literal_for(("Dog", ("x",), False))
        True
    """
    found = _LITERALS.get(key)
    if found is None:
        symbol, args, negated = key
        atom = Atom(symbol, tuple([_var(name) for name in args]))
        found = Not(atom) if negated else atom
        if len(_LITERALS) >= _MAX_LITERALS:  # a stream of new OOV words: start again
            _LITERALS.clear()
        _LITERALS[key] = found
    return found


def clauses(records: Sequence[PredicateRecord]) -> list[list[PredicateRecord]]:
    """The records grouped as the formula's conjuncts, in its order.

    A group of one asserted record is a literal; a group of excluded records is one
    denied clause ``¬∃y [..]``: excluded records share a clause when they share a
    variable that no asserted record has. A clause stands where its first record was.

    Example:
        >>> def rec(symbol, args, excluded=False):
        ...     return PredicateRecord(symbol, symbol.lower(), args, False, "r", (), (0, 0), "",
        ...                            "exact", 1.0, None, "NOUN", excluded)
        >>> groups = clauses([rec("Dog", ("x",)), rec("Person", ("y",), True),
        ...                   rec("Barking", ("x",)), rec("Talking", ("y",), True)])
        >>> [[r.symbol for r in group] for group in groups]
        [['Dog'], ['Person', 'Talking'], ['Barking']]
    """
    if not any(record.excluded for record in records):
        return [[record] for record in records]
    asserted = {name for record in records if not record.excluded for name in record.args}
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    for record in records:
        own = [name for name in record.args if name not in asserted]
        if record.excluded and own:
            for name in own[1:]:
                parent[find(name)] = find(own[0])
    groups: list[list[PredicateRecord]] = []
    by_root: dict[str, list[PredicateRecord]] = {}
    for record in records:
        own = [name for name in record.args if name not in asserted]
        if not record.excluded or not own:
            groups.append([record])
            continue
        root = find(own[0])
        group = by_root.get(root)
        if group is None:
            group = by_root[root] = []
            groups.append(group)
        group.append(record)
    return groups


def build_formula(records: Sequence[PredicateRecord]) -> Formula:
    """The existential closure of the conjunction of the records' literals and denied clauses.

    Variables are bound in order of first mention: ``∃x ∃t [Bird(x) ∧ Morning(t)]``;
    the variables of an excluded entity are bound inside its own negated clause:
    ``∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]``.

    Raises:
        ValueError: for no records (the parser always has at least one).

    Example:
        >>> def rec(symbol, args, excluded=False):
        ...     return PredicateRecord(symbol, symbol.lower(), args, False, "r", (), (0, 0), "",
        ...                            "exact", 1.0, None, "NOUN", excluded)
        >>> str(build_formula([rec("Bird", ("x",)), rec("Traffic", ("y",), True)]))
        '∃x [Bird(x) ∧ ¬∃y Traffic(y)]'
    """
    literals: list[Formula] = []
    order: dict[str, None] = {}
    for record in records:  # no excluded record, the common case, in one pass
        if record.excluded:
            break  # a denied clause: the general case below
        for name in record.args:
            order.setdefault(name, None)
        literals.append(_literal(record))  # once per caption parsed: kept direct
    else:
        return _close(_conjunction(literals), order)
    conjuncts: list[Formula] = []
    outer: dict[str, None] = {}
    asserted = {name for record in records if not record.excluded for name in record.args}
    for group in clauses(records):
        if len(group) == 1 and not group[0].excluded:
            for name in group[0].args:
                outer.setdefault(name, None)
            conjuncts.append(_literal(group[0]))
            continue
        inner: dict[str, None] = {}
        for record in group:
            for name in record.args:
                if name not in asserted:
                    inner.setdefault(name, None)
                else:
                    outer.setdefault(name, None)
        conjuncts.append(Not(_close(conjoin(*[_literal(r) for r in group]), inner)))
    return _close(conjoin(*conjuncts), outer)


def closed_conjunction(literals: list[Formula], names: dict[str, None]) -> Formula:
    """:func:`build_formula` of records none of which is excluded, from their literals
    (:func:`literal_for`) and their argument names in order of first mention; for a caller
    that has both at hand (the parser, which builds them as it makes the records).

    Example:
        >>> dog, barks = literal_for(("Dog", ("x",), False)), literal_for(("Barking", ("x",), False))
        >>> str(closed_conjunction([dog, barks], {"x": None}))
        '∃x [Dog(x) ∧ Barking(x)]'
    """
    return _close(_conjunction(literals), names)


class _AndDraft(_Printable):
    """An ``And``'s slots on its base, without its ``__init__`` (see :func:`new_record`)."""

    __slots__ = And.__slots__


class _QuantDraft(_Printable):
    """A ``Quant``'s slots on its base, without its ``__init__``."""

    __slots__ = Quant.__slots__


def _conjunction(literals: list[Formula]) -> Formula:
    """``conjoin(*literals)`` for literals (atoms or negated atoms): nothing to flatten,
    so the node is made directly, without the dataclass's ``__init__`` and its checks."""
    if len(literals) == 1:
        return literals[0]
    node: Any = _new(_AndDraft)
    node.operands = tuple(literals)
    node.__class__ = And
    return node  # type: ignore[no-any-return]


_EXISTS = Quantifier.EXISTS


def _close(formula: Formula, names: dict[str, None]) -> Formula:
    """``∃`` each name over ``formula``, the first name outermost (nodes made directly:
    a variable and no domain is what ``Quant.__post_init__`` would accept)."""
    for name in reversed(names):
        node: Any = _new(_QuantDraft)
        node.quantifier = _EXISTS
        node.variable = _var(name)
        node.body = formula
        node.domain = None
        node.__class__ = Quant
        formula = node
    return formula


@dataclass(frozen=True, slots=True)
class ParseResult:
    """The logical form of one caption.

    Attributes:
        text: the caption as given.
        formula: the existentially closed formula; ``str()`` gives the Unicode notation.
        predicates: one record per literal, in the formula's order.
        used_fallback: whether the fallback rule produced the formula (no arc rule fired).
        oov: lemmas of the predicates V_audio does not have, in order, without repeats.
        truncated: whether only the first words of a very long text were parsed.
        backend: ``rules``, or ``neural`` when the neural plug-in's output was used.
        scopes: the negation cues and co-occurrence connectives the scope pass read, each
            with its scope, and ``resolved=False`` where no construction decided it
            (:class:`~fortekit.fol.caption.negation.ScopeNote`; docs/negation.md).
    """

    text: str
    formula: Formula
    predicates: tuple[PredicateRecord, ...]
    used_fallback: bool
    oov: tuple[str, ...]
    truncated: bool = False
    backend: str = "rules"
    # diagnostics of the parse, not part of what it says: results compare by their logic
    scopes: tuple[ScopeNote, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return str(self.formula)

    def __repr__(self) -> str:
        """The caption (its first 60 characters) and the formula in Unicode, not the whole AST.

        Example:
            >>> rec = PredicateRecord("Rain", "rain", ("x",), False, "root", (0,), (0, 4), "rain",
            ...                       "exact", 1.0, "sound_event", "NOUN")
            >>> ParseResult("rain", build_formula([rec]), (rec,), False, ())
            ParseResult('rain', ∃x Rain(x))
        """
        flags = "".join(f", {name}=True" for name in ("used_fallback", "truncated") if getattr(self, name))
        backend = "" if self.backend == "rules" else f", backend={self.backend!r}"
        return f"ParseResult({shorten(self.text, 60)!r}, {self.formula}{flags}{backend})"

    def _repr_html_(self) -> str:
        """For Jupyter: the caption, the formula and a table of its clauses (each HTML-escaped).

        Example:
            >>> rec = PredicateRecord("Rain", "rain", ("x",), False, "root", (0,), (0, 4), "<b>",
            ...                       "exact", 1.0, "sound_event", "NOUN")
            >>> "&lt;b&gt;" in ParseResult("rain", build_formula([rec]), (rec,), False, ())._repr_html_()
            True
        """
        from html import escape

        rows = []
        for number, group in enumerate(clauses(self.predicates), 1):
            denied = any(record.excluded for record in group)
            text = str(build_formula(group)) if denied else str(group[0].literal)
            rows.append(
                f"<tr><td>{number}</td><td>{escape(text)}</td><td>{'denied' if denied else ''}</td>"
                f"<td>{escape(', '.join(record.source for record in group))}</td>"
                f"<td>{escape(', '.join(record.tier for record in group))}</td></tr>"
            )
        notes = [note for note in ("used_fallback", "truncated") if getattr(self, note)]
        return (
            f"<div class=\"fortekit-parse\"><p><b>{escape(self.text)}</b><br>"
            f"<code>{escape(str(self.formula))}</code>"
            f"{' (' + escape(', '.join(notes)) + ')' if notes else ''}</p>"
            "<table><thead><tr><th>#</th><th>clause</th><th></th><th>words</th><th>grounding</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
        )

    @property
    def symbols(self) -> frozenset[str]:
        """The predicate symbols of the formula."""
        return frozenset(record.symbol for record in self.predicates)

    @property
    def unresolved(self) -> tuple[ScopeNote, ...]:
        """The negations whose scope the parser could not resolve (they add nothing to the formula)."""
        return tuple(note for note in self.scopes if not note.resolved)

    @property
    def grounded_count(self) -> int:
        """How many literals are grounded in V_audio."""
        return sum(1 for record in self.predicates if record.grounded)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the formula as text and every record.

        Example:
            >>> import fortekit.fol.caption as caption  # doctest: +SKIP
            >>> caption.parse_caption("a dog barks").to_dict()["formula"]  # doctest: +SKIP
            '∃x [Dog(x) ∧ Barking(x)]'
        """
        return {
            "text": self.text,
            "formula": str(self.formula),
            "used_fallback": self.used_fallback,
            "truncated": self.truncated,
            "backend": self.backend,
            "oov": list(self.oov),
            "predicates": [record.to_dict() for record in self.predicates],
            "scopes": [note.to_dict() for note in self.scopes],
        }




class _ResultDraft:
    """A result's slots, without the frozen ``__init__`` (see :func:`new_record`)."""

    __slots__ = ParseResult.__slots__


def new_result(
    text: str,
    formula: Formula,
    predicates: tuple[PredicateRecord, ...],
    used_fallback: bool,
    oov: tuple[str, ...],
    truncated: bool,
    scopes: tuple[ScopeNote, ...] = (),
) -> ParseResult:
    """``ParseResult(...)`` of the rule-based parser, made as :func:`new_record` makes a record.

    Example:
        >>> new_result("", build_formula([new_record("Dog", "dog", ("x",), False, "nsubj", (0,), (0, 3),
        ...            "dog", "exact", 1.0, None, "NOUN", False)]), (), False, (), False).backend
        'rules'
    """
    result: Any = _new(_ResultDraft)
    result.text = text
    result.formula = formula
    result.predicates = predicates
    result.used_fallback = used_fallback
    result.oov = oov
    result.truncated = truncated
    result.backend = "rules"
    result.scopes = scopes
    result.__class__ = ParseResult
    return result  # type: ignore[no-any-return]
