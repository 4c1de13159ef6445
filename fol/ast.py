"""The predicate AST: immutable, hashable terms and formulas.

Every node is a frozen, slotted dataclass, so formulas can be used as dict keys
and set members (the beam search de-duplicates candidates this way). ``str()``
of any formula gives the Unicode notation of :mod:`fortekit.fol.printers`.

Example:
    >>> from fortekit.fol.ast import Atom, Var, And
    >>> x = Var("x")
    >>> phi = And((Atom("Bird", (x,)), Atom("Chirping", (x,))))
    >>> str(phi)
    'Bird(x) ∧ Chirping(x)'
    >>> phi == And((Atom("Bird", (x,)), Atom("Chirping", (x,))))
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import TypeAlias

# A free name is read as a variable when it looks like one (x, y2, t', X1 is not):
# the NLTK convention, and the one textbooks and FOLIO follow.
VARIABLE_NAME = re.compile(r"[a-z][0-9]*'*\Z")
# One word of a name: letters, digits, underscore, apostrophes and plus signs, with
# single hyphens or dots inside (FOLIO: ``Anti-abortion``, ``mr.smith``, ``c++``).
_WORD = r"\w[\w'’+]*(?:[-.]\w[\w'’+]*)*"
NAME_PATTERN = re.compile(rf"{_WORD}\Z")
CONSTANT_PATTERN = re.compile(rf"{_WORD}(?: {_WORD})*\Z")


#: Words the notations use as keywords; no name may be (or, for a constant, start with) one.
RESERVED_WORDS = frozenset({"all", "exists", "forall", "in"})
# A restricted quantifier's domain is a plain name: ∀x∈X.
DOMAIN_PATTERN = re.compile(r"[A-Za-z_][\w'’]*\Z")


def is_variable_name(name: str) -> bool:
    """Whether a free occurrence of ``name`` is read as a variable.

    Example:
        >>> is_variable_name("x1"), is_variable_name("rina")
        (True, False)
    """
    return VARIABLE_NAME.match(name) is not None


@lru_cache(maxsize=1 << 16)
def _matches(pattern: re.Pattern[str], name: str) -> bool:
    return pattern.match(name) is not None


def _check_name(kind: str, name: str, pattern: re.Pattern[str]) -> None:
    if not isinstance(name, str) or not _matches(pattern, name):
        raise ValueError(f"invalid {kind} name {name!r}: expected {pattern.pattern!r}")
    if name.split(" ", 1)[0] in RESERVED_WORDS:
        raise ValueError(f"{kind} name {name!r} is a keyword ({', '.join(sorted(RESERVED_WORDS))})")


@dataclass(frozen=True, slots=True)
class Var:
    """A variable term, such as ``x`` or the plural entity ``X``."""

    name: str

    def __post_init__(self) -> None:
        _check_name("variable", self.name, NAME_PATTERN)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Const:
    """A constant term; FOLIO writes them in lower case and sometimes as several words.

    A constant may not look like a free variable (``x``, ``y2``), since no notation
    could tell the two apart.
    """

    name: str

    def __post_init__(self) -> None:
        _check_name("constant", self.name, CONSTANT_PATTERN)
        if is_variable_name(self.name):
            raise ValueError(
                f"constant name {self.name!r} reads as a variable; use Var({self.name!r})"
            )

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Func:
    """A function term used as an argument, such as ``MetalRoof(y)`` in ``On(x, MetalRoof(y))``.

    The constructors do not limit nesting; :func:`~fortekit.fol.parse_formula` does
    (``MAX_DEPTH``, counting each function term as a level). A term built by hand
    thousands of levels deep exceeds Python's recursion limit in ``str()``, ``==``
    and ``hash()``.
    """

    name: str
    args: tuple[Term, ...]

    def __post_init__(self) -> None:
        _check_name("function", self.name, NAME_PATTERN)
        if not self.args:
            raise ValueError("a function term needs at least one argument; use Const")

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


Term: TypeAlias = Var | Const | Func


class _Printable:
    """Mixin: ``str()`` of a formula is its Unicode notation, and ``repr()`` names the node too.

    Example:
        >>> phi = And((Atom("Dog", (Var("x"),)), Not(Atom("Loud", (Var("x"),)))))
        >>> phi, phi.operands[1]
        (<And Dog(x) ∧ ¬Loud(x)>, <Not ¬Loud(x)>)
    """

    __slots__ = ()

    def __str__(self) -> str:
        from fortekit.fol.printers import format_formula

        return format_formula(self, "unicode")  # type: ignore[arg-type]

    def __repr__(self) -> str:
        # The formula as it reads, not its nested fields: a caption's AST is hundreds of characters.
        return f"<{type(self).__name__} {self}>"


@dataclass(frozen=True, slots=True, repr=False)
class Atom(_Printable):
    """A predicate applied to terms: ``Bird(x)``, ``On(x, y)``; arity 0 is a proposition."""

    predicate: str
    args: tuple[Term, ...] = ()

    def __post_init__(self) -> None:
        _check_name("predicate", self.predicate, NAME_PATTERN)

    @property
    def arity(self) -> int:
        return len(self.args)


@dataclass(frozen=True, slots=True, repr=False)
class Eq(_Printable):
    """Term equality ``a = b``; ``a ≠ b`` is ``Not(Eq(a, b))``."""

    left: Term
    right: Term


@dataclass(frozen=True, slots=True, repr=False)
class Not(_Printable):
    """Negation ``¬φ``."""

    body: Formula


def _flatten(cls: type[And] | type[Or], operands: tuple[Formula, ...]) -> tuple[Formula, ...]:
    flat: list[Formula] = []
    for operand in operands:
        if isinstance(operand, cls):
            flat.extend(operand.operands)
        else:
            flat.append(operand)
    return tuple(flat)


@dataclass(frozen=True, slots=True, repr=False)
class And(_Printable):
    """n-ary conjunction; nested conjunctions are flattened on construction."""

    operands: tuple[Formula, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "operands", _flatten(And, tuple(self.operands)))
        if len(self.operands) < 2:
            raise ValueError("And needs at least two operands; use conjoin()")


@dataclass(frozen=True, slots=True, repr=False)
class Or(_Printable):
    """n-ary disjunction; nested disjunctions are flattened on construction."""

    operands: tuple[Formula, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "operands", _flatten(Or, tuple(self.operands)))
        if len(self.operands) < 2:
            raise ValueError("Or needs at least two operands; use disjoin()")


@dataclass(frozen=True, slots=True, repr=False)
class Implies(_Printable):
    """Material implication ``φ → ψ``."""

    antecedent: Formula
    consequent: Formula


@dataclass(frozen=True, slots=True, repr=False)
class Iff(_Printable):
    """Biconditional ``φ ↔ ψ``."""

    left: Formula
    right: Formula


@dataclass(frozen=True, slots=True, repr=False)
class Xor(_Printable):
    """Exclusive or ``φ ⊕ ψ`` (FOLIO's "either ... or")."""

    left: Formula
    right: Formula


class Quantifier(StrEnum):
    """The two quantifiers; the value is the Unicode symbol."""

    FORALL = "∀"
    EXISTS = "∃"


@dataclass(frozen=True, slots=True, repr=False)
class Quant(_Printable):
    """``∀x φ`` / ``∃x φ``, or the restricted form ``∀x∈X φ`` when ``domain`` is set."""

    quantifier: Quantifier
    variable: Var
    body: Formula
    domain: Var | Const | None = None

    def __post_init__(self) -> None:
        if self.domain is not None and (
            isinstance(self.domain, Func) or DOMAIN_PATTERN.match(self.domain.name) is None
        ):
            raise ValueError(f"a quantifier's domain must be a plain name, not {self.domain}")


Formula: TypeAlias = Atom | Eq | Not | And | Or | Implies | Iff | Xor | Quant
BINARY_TYPES = (Implies, Iff, Xor)
NARY_TYPES = (And, Or)
FORMULA_TYPES = (Atom, Eq, Not, And, Or, Implies, Iff, Xor, Quant)


def check_formula(phi: object, function: str) -> None:
    """Refuse anything but a formula at a public entry point, with the coded E009.

    Without it, a str or None goes on into the recursion and fails there with an
    ``AttributeError`` deep inside (or, for :func:`~fortekit.fol.predicates`, silently
    gives an empty set). A formula string is refused, not parsed: the caller parses it
    once with :func:`~fortekit.fol.parse_formula` and keeps the syntax error's position.

    Args:
        phi: what the caller passed as the formula.
        function: the public function's name, for the message.

    Raises:
        FormulaTypeError: (a ``TypeError``) ``phi`` is not a formula (E009).

    Example:
        >>> check_formula(Atom("Dog", (Var("x"),)), "predicates")
        >>> check_formula("Dog(x)", "predicates")
        Traceback (most recent call last):
        ...
        fortekit.errors.FormulaTypeError: [E009] predicates() takes a formula (an Atom, Not, And, Quant ... of fortekit.fol), not str. Parse the text first: predicates(parse_formula(text)). (See docs/errors.md#e009.)
    """  # noqa: E501
    if isinstance(phi, FORMULA_TYPES):
        return
    from fortekit.errors import Errors, FormulaTypeError

    hint = (f" Parse the text first: {function}(parse_formula(text))." if isinstance(phi, str)
            else " Pass the formula itself, e.g. a ParseResult's .formula.")
    raise FormulaTypeError(Errors.E009.format(function=function, type_name=type(phi).__name__, hint=hint))


def conjoin(*formulas: Formula) -> Formula:
    """Conjunction of one or more formulas (a single formula is returned as is).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> str(conjoin(parse_formula("Bird(x)"), parse_formula("Loud(x) ∧ Near(x)")))
        'Bird(x) ∧ Loud(x) ∧ Near(x)'
    """
    if not formulas:
        raise ValueError("conjoin() needs at least one formula")
    return formulas[0] if len(formulas) == 1 else And(formulas)


def disjoin(*formulas: Formula) -> Formula:
    """Disjunction of one or more formulas (a single formula is returned as is)."""
    if not formulas:
        raise ValueError("disjoin() needs at least one formula")
    return formulas[0] if len(formulas) == 1 else Or(formulas)


def children(phi: Formula) -> tuple[Formula, ...]:
    """The immediate sub-formulas of ``phi``."""
    if isinstance(phi, (Atom, Eq)):
        return ()
    if isinstance(phi, (Not, Quant)):
        return (phi.body,)
    if isinstance(phi, (And, Or)):
        return phi.operands
    if isinstance(phi, Implies):
        return (phi.antecedent, phi.consequent)
    return (phi.left, phi.right)


def depth(phi: Formula) -> int:
    """Nesting depth of the connective tree (an atom has depth 1)."""
    return 1 + max((depth(child) for child in children(phi)), default=0)
