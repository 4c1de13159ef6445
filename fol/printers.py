"""Printers: Unicode, ASCII, NLTK and LaTeX notation for formulas.

Unicode and ASCII round-trip exactly through :func:`fortekit.fol.parse_formula`.
The NLTK printer writes what ``nltk.sem.logic.Expression.fromstring`` reads: NLTK
has no ⊕ and no restricted quantifier, so ``φ ⊕ ψ`` becomes ``-(φ <-> ψ)`` and
``∀x∈X φ`` becomes ``all x.(Member(x,X) -> φ)``; NLTK splits names on ``-`` and
``.`` and spaces, so those are written as the look-alikes ‐ (U+2010), ․ (U+2024)
and · (U+00B7), which fortekit's parser reads back. LaTeX is for papers.

Example:
    >>> from fortekit.fol import parse_formula
    >>> phi = parse_formula("∀x (Republicans(x) → Anti-abortion(x))")
    >>> format_formula(phi, "ascii")
    'all x.(Republicans(x) -> Anti-abortion(x))'
    >>> format_formula(phi, "latex")
    '\\\\forall x\\\\, [\\\\mathrm{Republicans}(x) \\\\rightarrow \\\\mathrm{Anti\\\\text{-}abortion}(x)]'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fortekit.errors import Errors, FormulaStyleError
from fortekit.fol.ast import (
    And,
    Atom,
    Const,
    Eq,
    Formula,
    Iff,
    Implies,
    Not,
    Or,
    Quant,
    Quantifier,
    Term,
    Var,
    Xor,
    check_formula,
)

Style = Literal["unicode", "ascii", "nltk", "latex"]


@dataclass(frozen=True, slots=True)
class Notation:
    """The symbols of one notation and how it writes quantifiers and names."""

    forall: str
    exists: str
    member: str
    not_: str
    and_: str
    or_: str
    xor: str | None  # None: rewrite φ ⊕ ψ as ¬(φ ↔ ψ)
    implies: str
    iff: str
    eq: str
    neq: str
    dotted: bool  # `all x.` (wide scope) rather than `∀x` (narrow scope)
    body_open: str
    body_close: str
    name: Callable[[str], str]
    variable: Callable[[str], str]
    restricted: bool  # can write ∀x∈X; otherwise rewrite with Member(x, X)
    gap: str = " "  # between an undotted binder and its body


def _verbatim(name: str) -> str:
    return name


_NLTK_ESCAPES = str.maketrans({"-": "‐", ".": "․", " ": "·"})


def _nltk_name(name: str) -> str:
    return name.translate(_NLTK_ESCAPES)


_LATEX_ESCAPES = str.maketrans(
    {"_": r"\_", "-": r"\text{-}", "’": "'", "+": r"{+}", " ": r"\ ", "&": r"\&", "^": r"\^{}"}
)


def _latex_name(name: str) -> str:
    return rf"\mathrm{{{name.translate(_LATEX_ESCAPES)}}}"


def _latex_variable(name: str) -> str:
    return name.translate(_LATEX_ESCAPES)


NOTATIONS: dict[str, Notation] = {
    "unicode": Notation(
        "∀", "∃", "∈", "¬", " ∧ ", " ∨ ", " ⊕ ", " → ", " ↔ ", " = ", " ≠ ",
        dotted=False, body_open="[", body_close="]", name=_verbatim, variable=_verbatim,
        restricted=True,
    ),
    "ascii": Notation(
        "all ", "exists ", " in ", "-", " & ", " | ", " <~> ", " -> ", " <-> ", " = ", " != ",
        dotted=True, body_open="(", body_close=")", name=_verbatim, variable=_verbatim,
        restricted=True,
    ),
    "nltk": Notation(
        "all ", "exists ", "", "-", " & ", " | ", None, " -> ", " <-> ", " = ", " != ",
        dotted=True, body_open="(", body_close=")", name=_nltk_name, variable=_nltk_name,
        restricted=False,
    ),
    "latex": Notation(
        r"\forall ", r"\exists ", r" \in ", r"\lnot ", r" \land ", r" \lor ", r" \oplus ",
        r" \rightarrow ", r" \leftrightarrow ", " = ", r" \neq ",
        dotted=False, body_open="[", body_close="]", name=_latex_name, variable=_latex_variable,
        restricted=True, gap=r"\, ",
    ),
}
STYLES: tuple[str, ...] = tuple(NOTATIONS)


class _Printer:
    """Writes one formula in one notation; parenthesises by operator class."""

    def __init__(self, notation: Notation) -> None:
        self.n = notation

    def term(self, term: Term) -> str:
        if isinstance(term, Var):
            return self.n.variable(term.name)
        if isinstance(term, Const):
            return self.n.name(term.name)
        return f"{self.n.name(term.name)}({', '.join(self.term(arg) for arg in term.args)})"

    def formula(self, phi: Formula, *, top: bool = True) -> str:
        n = self.n
        if isinstance(phi, Atom):
            name = n.name(phi.predicate)
            return f"{name}({', '.join(self.term(a) for a in phi.args)})" if phi.args else name
        if isinstance(phi, Eq):
            return f"{self.term(phi.left)}{n.eq}{self.term(phi.right)}"
        if isinstance(phi, Not):
            if isinstance(phi.body, Eq):
                return f"{self.term(phi.body.left)}{n.neq}{self.term(phi.body.right)}"
            if isinstance(phi.body, Eq) or (isinstance(phi.body, Not) and isinstance(phi.body.body, Eq)):
                return f"{n.not_}({self.formula(phi.body)})"  # NLTK would negate the term
            return f"{n.not_}{self.operand(phi.body)}"
        if isinstance(phi, Quant):
            text = self.quantifier(phi)
            return text if top or not n.dotted else f"({text})"
        if isinstance(phi, And):
            return n.and_.join(self.operand(op) for op in phi.operands)
        if isinstance(phi, Or):
            return n.or_.join(self.operand(op) for op in phi.operands)
        if isinstance(phi, Implies):
            return f"{self.operand(phi.antecedent)}{n.implies}{self.operand(phi.consequent)}"
        if isinstance(phi, Iff):
            return f"{self.operand(phi.left)}{n.iff}{self.operand(phi.right)}"
        if n.xor is None:
            return f"{n.not_}({self.operand(phi.left)}{n.iff}{self.operand(phi.right)})"
        return f"{self.operand(phi.left)}{n.xor}{self.operand(phi.right)}"

    def operand(self, phi: Formula) -> str:
        """A sub-formula in operand position: compound ones get parentheses."""
        if isinstance(phi, (And, Or, Implies, Iff, Xor)):
            return f"({self.formula(phi)})"
        return self.formula(phi, top=False)

    def quantifier(self, phi: Quant) -> str:
        n = self.n
        symbol = n.forall if phi.quantifier is Quantifier.FORALL else n.exists
        binder = f"{symbol}{n.variable(phi.variable.name)}"
        body = phi.body
        if phi.domain is not None:
            if n.restricted:
                binder += f"{n.member}{self.term(phi.domain)}"
            else:
                member = Atom("Member", (phi.variable, phi.domain))
                body = (
                    Implies(member, body)
                    if phi.quantifier is Quantifier.FORALL
                    else And((member, body))
                )
        if isinstance(body, Quant):
            inner = self.quantifier(body)
        elif isinstance(body, (And, Or, Implies, Iff, Xor)):
            inner = f"{n.body_open}{self.formula(body)}{n.body_close}"
        else:
            inner = self.formula(body, top=False)
        if n.dotted:
            return f"{binder}.{inner}"
        return f"{binder}{n.gap}{inner}"


_PRINTERS = {style: _Printer(notation) for style, notation in NOTATIONS.items()}


def format_formula(phi: Formula, style: Style | str = "unicode") -> str:
    """Write a formula in one of the notations in :data:`STYLES`.

    Args:
        phi: the formula.
        style: ``"unicode"`` (also what ``str(phi)`` gives), ``"ascii"``, ``"nltk"``
            or ``"latex"``.

    Returns:
        The formula as text.

    Raises:
        FormulaStyleError: ``style`` is not one of :data:`STYLES`.
        FormulaTypeError: (a ``TypeError``) ``phi`` is not a formula, e.g. None or a formula
            string, which is refused, not parsed (E009): ``format_formula(parse_formula(text))``.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> format_formula(parse_formula("Bird(x) ⊕ Plane(x)"), "nltk")
        '-(Bird(x) <-> Plane(x))'
    """
    check_formula(phi, "format_formula")
    printer = _PRINTERS.get(style)
    if printer is None:
        raise FormulaStyleError(Errors.E002.format(style=style, options=", ".join(STYLES)))
    return printer.formula(phi)
