"""The formula parser: ``grammars/fol.lark`` with Lark's LALR(1) parser.

The AST is built while parsing (Lark's inline transformer), so the parser never
recurses and a 100 kB input costs one linear pass. Every failure surfaces as one
exception type, :class:`fortekit.errors.FormulaSyntaxError`, with line, column
and the tokens that were expected. Lark is imported on the first parse, so that
``import fortekit.fol`` (and every command that parses no formula) does without it.

Example:
    >>> phi = parse_formula("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]")
    >>> str(phi)
    '∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]'
    >>> parse_formula("exists x.(Bird(x) & -Loud(x))") == parse_formula("∃x [Bird(x) ∧ ¬Loud(x)]")
    True
"""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

from fortekit.errors import Errors, FormulaSyntaxError, FreeVariableWarning, warn
from fortekit.fol._lalr import FastPathFailed, LalrDriver
from fortekit.fol.ast import (
    And,
    Atom,
    Const,
    Eq,
    Formula,
    Func,
    Iff,
    Implies,
    Not,
    Or,
    Quant,
    Quantifier,
    Term,
    Var,
    Xor,
    is_variable_name,
)
from fortekit.fol.terms import bound_names, free_variables, rebind_constant

if TYPE_CHECKING:
    from lark import Lark, Token
    from lark.exceptions import UnexpectedInput

#: The deepest nesting :func:`parse_formula` accepts, counting connectives,
#: quantifiers and function terms (``P(f(g(x)))`` is 3 levels deep: the atom and two
#: function terms). Real formulas stay below 20; the limit keeps recursive consumers
#: (printers, ``==``, ``hash()``, substitution) safe.
MAX_DEPTH = 200

_QUANTIFIERS = {
    "∀": Quantifier.FORALL,
    "all": Quantifier.FORALL,
    "forall": Quantifier.FORALL,
    "∃": Quantifier.EXISTS,
    "exists": Quantifier.EXISTS,
}
# The NLTK printer writes these look-alikes for characters NLTK cannot take in a name.
_UNESCAPE = str.maketrans({"‐": "-", "․": ".", "·": " "})
_TERMINAL_NAMES = {
    "NAME": "a name",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "DOT": "'.'",
    "END_DOT": "'.'",
    "NOT": "¬",
    "AND": "∧",
    "OR": "∨",
    "XOR": "⊕",
    "IMPLIES": "→",
    "IFF": "↔",
    "EQUALS": "=",
    "NOT_EQUALS": "≠",
    "QUANTIFIER": "∀/∃",
    "WORD_QUANTIFIER": "all/exists",
    "BOUND_VAR": "a variable",
    "BOUND_VAR_LIST": "variables and '.'",
    "MEMBER": "∈",
    "DOMAIN": "a domain name",
    "$END": "end of input",
}


class _Rejected(Exception):
    """Raised inside a grammar callback; becomes a FormulaSyntaxError with the token's position."""

    def __init__(self, problem: str, token: Token | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.token = token


class _ParseState(threading.local):
    """Book-keeping of the parse running in this thread."""

    def __init__(self) -> None:
        # Depth of the nodes built so far, by id(): formulas deeper than an atom of
        # plain terms, and function terms. None when the text is too short to nest
        # past MAX_DEPTH (depth never exceeds the token count).
        self.depth_of: dict[int, tuple[int, Formula | Term]] | None = None
        # Set when a quantified formula is the left operand of a connective: the
        # only way a bracket-less quantifier can leave its variable free.
        self.scope_ended_early = False

    def reset(self, text: str) -> None:
        self.depth_of = {} if len(text) > MAX_DEPTH else None
        self.scope_ended_early = False


_state = _ParseState()


def _name(token: Token) -> str:
    return str(token).translate(_UNESCAPE)


@lru_cache(maxsize=1 << 16)
def _term_for(name: str) -> Term:
    """The term a free name denotes (raises ValueError for an invalid name)."""
    name = name.translate(_UNESCAPE)
    if " " not in name and is_variable_name(name):
        return Var(name)
    return Const(name)


def _term_from_name(token: Token) -> Term:
    try:
        return _term_for(str(token))
    except ValueError as exc:
        raise _Rejected(str(exc), token) from None


def _build(cls: Any, token: Token | None, *args: Any) -> Any:
    try:
        return cls(*args)
    except ValueError as exc:
        raise _Rejected(str(exc), token) from None


def _track(node: Formula, *parts: Any, token: Token | None = None) -> Formula:
    """Record the node's depth; reject it when it passes MAX_DEPTH."""
    of = _state.depth_of
    if of is None:
        return node
    level = 1 + max((of[id(part)][0] if id(part) in of else 1 for part in parts), default=0)
    if level > MAX_DEPTH:
        raise _Rejected("depth", token)
    if level > 1:
        of[id(node)] = (level, node)  # holding the node keeps its id from being reused
    return node


def _track_terms(node: Formula | Term, terms: tuple[Term, ...], base: int, token: Token | None) -> None:
    """Record the depth of a node over terms: ``base`` plus the deepest term.

    A variable or constant adds nothing, a function term one level per nesting, so
    ``P(x)`` is 1 deep and ``P(f(g(x)))`` 3.
    """
    of = _state.depth_of
    if of is None:
        return
    level = base + max((of[id(term)][0] if id(term) in of else 0 for term in terms), default=0)
    if level > MAX_DEPTH:
        raise _Rejected("depth", token)
    if level > 1 or isinstance(node, Func):  # unrecorded: 1 for a formula, 0 for a term
        of[id(node)] = (level, node)


def _carry_depth(old: Formula, new: Formula) -> Formula:
    """Give a rebuilt formula (a constant rebound as a variable) its original's depth."""
    of = _state.depth_of
    if of is not None and new is not old and id(old) in of:
        of[id(new)] = (of[id(old)][0], new)
    return new


def _note_left_operand(left: Formula) -> None:
    """Flag a quantifier whose scope ends where a connective starts (`∀x A(x) → B(x)`)."""
    node = left
    while True:
        if isinstance(node, Quant):
            _state.scope_ended_early = True
            return
        if isinstance(node, Not):
            node = node.body
        elif isinstance(node, (And, Or)):
            node = node.operands[-1]
        elif isinstance(node, Implies):
            node = node.consequent
        elif isinstance(node, (Iff, Xor)):
            node = node.right
        else:
            return


class _BuildAst:
    """Grammar callbacks: each rule of fol.lark to its AST node (Lark's ``Transformer`` is
    mixed in by :func:`_parser`, so that Lark is imported on the first parse)."""

    def start(self, items: list[Any]) -> Formula:
        formula: Formula = items[0]
        return formula

    def iff(self, items: list[Any]) -> Formula:
        _note_left_operand(items[0])
        return _track(Iff(items[0], items[2]), items[0], items[2], token=items[1])

    def implies(self, items: list[Any]) -> Formula:
        _note_left_operand(items[0])
        return _track(Implies(items[0], items[2]), items[0], items[2], token=items[1])

    def xor(self, items: list[Any]) -> Formula:
        _note_left_operand(items[0])
        return _track(Xor(items[0], items[2]), items[0], items[2], token=items[1])

    def first_operands(self, items: list[Any]) -> list[Formula]:
        _note_left_operand(items[0])
        return [items[0], items[2]]

    def more_operands(self, items: list[Any]) -> list[Formula]:
        operands: list[Formula] = items[0]
        _note_left_operand(operands[-1])
        operands.append(items[2])  # the list is private to this parse: grow it in place
        return operands

    def disjunction(self, items: list[Any]) -> Formula:
        node = Or(tuple(items[0]))
        return _track(node, *node.operands)

    def conjunction(self, items: list[Any]) -> Formula:
        node = And(tuple(items[0]))
        return _track(node, *node.operands)

    def not_(self, items: list[Any]) -> Formula:
        return _track(Not(items[1]), items[1], token=items[0])

    def binder(self, items: list[Any]) -> tuple[Quantifier, Var, Term | None, Token]:
        quantifier, variable = items[0], items[1]
        domain = _term_from_name(items[3]) if len(items) > 3 else None
        return _QUANTIFIERS[str(quantifier)], _build(Var, variable, _name(variable)), domain, quantifier

    def binder_list(self, items: list[Any]) -> tuple[Quantifier, list[Var], Token]:
        names = str(items[1]).rstrip(". \t").split()
        variables = [_build(Var, items[1], name.translate(_UNESCAPE)) for name in names]
        return _QUANTIFIERS[str(items[0])], variables, items[0]

    def quantified(self, items: list[Any]) -> Formula:
        (quantifier, variable, domain, token), body = items[0], items[-1]
        if not is_variable_name(variable.name):
            body = _carry_depth(body, rebind_constant(body, variable.name))
        return _track(Quant(quantifier, variable, body, domain), body, token=token)

    def quantified_list(self, items: list[Any]) -> Formula:
        (quantifier, variables, token), body = items
        for variable in reversed(variables):
            if not is_variable_name(variable.name):
                body = _carry_depth(body, rebind_constant(body, variable.name))
            body = _track(Quant(quantifier, variable, body), body, token=token)
        result: Formula = body
        return result

    def bracketed(self, items: list[Any]) -> Formula:
        formula: Formula = items[1]
        return formula

    def equality(self, items: list[Any]) -> Formula:
        node = Eq(items[0], items[2])
        _track_terms(node, (items[0], items[2]), 1, items[1])
        return node

    def inequality(self, items: list[Any]) -> Formula:
        node = Not(Eq(items[0], items[2]))
        _track_terms(node, (items[0], items[2]), 2, items[1])
        return node

    def atom(self, items: list[Any]) -> Formula:
        result: Formula = _build(Atom, items[0], _name(items[0]), items[2])
        _track_terms(result, items[2], 1, items[0])
        return result

    def proposition(self, items: list[Any]) -> Formula:
        result: Formula = _build(Atom, items[0], _name(items[0]))
        return result

    def first_term(self, items: list[Any]) -> tuple[Term, ...]:
        return (items[0],)

    def more_terms(self, items: list[Any]) -> tuple[Term, ...]:
        terms: tuple[Term, ...] = items[0]
        return (*terms, items[2])

    def name_term(self, items: list[Any]) -> Term:
        return _term_from_name(items[0])

    def first_word(self, items: list[Any]) -> list[str]:
        return [_name(items[0])]

    def more_words(self, items: list[Any]) -> list[str]:
        words: list[str] = items[0]
        return [*words, _name(items[1])]

    def multiword_term(self, items: list[Any]) -> Term:
        from lark import Token

        token = items[1] if isinstance(items[1], Token) else None
        result: Term = _build(Const, token, " ".join([*items[0], _name(items[1])]))
        return result

    def function_term(self, items: list[Any]) -> Term:
        result: Term = _build(Func, items[0], _name(items[0]), items[2])
        # One level per function term; an atom over it adds one more, so a term at
        # MAX_DEPTH could never stand in a formula: reject it here, at its name.
        _track_terms(result, items[2], 1, items[0])
        of = _state.depth_of
        if of is not None and id(result) in of and of[id(result)][0] >= MAX_DEPTH:
            raise _Rejected("depth", items[0])
        return result


@lru_cache(maxsize=1)
def _parser() -> Lark:
    from lark import Lark, Token, Transformer

    class _Transformer(_BuildAst, Transformer[Token, Formula]):
        """Lark's inline transformer with the callbacks of :class:`_BuildAst`."""

    grammar = resources.files("fortekit.grammars").joinpath("fol.lark").read_text("utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", transformer=_Transformer(),
                maybe_placeholders=False)


@lru_cache(maxsize=1)
def _driver() -> LalrDriver:
    return LalrDriver(_parser())


def _describe(expected: set[str] | frozenset[str]) -> str:
    names = sorted({_TERMINAL_NAMES.get(name, name) for name in expected})
    return ", ".join(names) if names else "nothing"


def _context(text: str, pos: int | None) -> str:
    """The offending line with a caret under the error (a window of it, if long)."""
    pos = min(pos or 0, len(text))
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start : end if end != -1 else len(text)]
    column = pos - start
    if len(line) > 80:  # show a window around the error on very long lines
        lo = max(0, column - 40)
        line, column = line[lo : lo + 80], column - lo
    line = "".join(ch if ch.isprintable() else "?" for ch in line)
    return f"  {line}\n  {' ' * column}^\n"


def _syntax_error(text: str, exc: UnexpectedInput) -> FormulaSyntaxError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if isinstance(exc, UnexpectedCharacters):
        expected: set[str] | frozenset[str] = exc.allowed or set()
        pos = exc.pos_in_stream or 0
        char = text[pos] if pos < len(text) else ""
        problem = f"unexpected character {char!r}"
        line, column = exc.line, exc.column
    elif isinstance(exc, UnexpectedEOF):
        expected = set(exc.expected)
        problem = "the formula ends too early"
        line = text.count("\n") + 1
        column = len(text) - text.rfind("\n")
        pos = len(text)
    else:
        assert isinstance(exc, UnexpectedToken)
        expected = exc.accepts or exc.expected
        if exc.token.type == "$END":
            problem = "the formula ends too early"
            line = text.count("\n") + 1
            column = len(text) - text.rfind("\n")
            pos = len(text)
        else:
            problem = f"unexpected {str(exc.token)!r}"
            line, column, pos = exc.line, exc.column, exc.token.start_pos
    described = _describe(expected)
    message = Errors.E001.format(
        line=line, column=column, problem=problem, expected=described, context=_context(text, pos)
    )
    return FormulaSyntaxError(
        message, line=int(line), column=int(column), expected=tuple(sorted(expected)), text=text
    )


def _rejected_error(text: str, exc: _Rejected) -> FormulaSyntaxError:
    token = exc.token
    line = int(token.line or 1) if token is not None else 1
    column = int(token.column or 1) if token is not None else 1
    pos = token.start_pos if token is not None else 0
    if exc.problem == "depth":
        message = Errors.E003.format(limit=MAX_DEPTH, line=line, column=column)
    else:
        message = Errors.E001.format(
            line=line, column=column, problem=exc.problem, expected="a valid name",
            context=_context(text, pos),
        )
    return FormulaSyntaxError(message, line=line, column=column, expected=(), text=text)


def parse_formula(text: str, *, warn_free: bool = True) -> Formula:
    """Parse a first-order formula written in Unicode, ASCII/NLTK or FOLIO notation.

    Args:
        text: the formula, for example ``"∀x (TalentShows(x) → Engaged(x))"``.
        warn_free: warn (:class:`~fortekit.errors.FreeVariableWarning`) when a
            bracket-less quantifier leaves an occurrence of its variable free.

    Returns:
        The formula's AST.

    Raises:
        FormulaSyntaxError: the text is not a formula; carries ``line``, ``column``
            and ``expected``. This is the only error raised for a ``str`` input.
        TypeError: ``text`` is not a ``str``.

    Example:
        >>> str(parse_formula("all x.(TalentShows(x) -> Engaged(x))"))
        '∀x [TalentShows(x) → Engaged(x)]'
    """
    if not isinstance(text, str):
        raise TypeError(Errors.E004.format(type_name=type(text).__name__))
    if not text.strip():
        raise FormulaSyntaxError(
            Errors.E005, line=1, column=1, expected=("a formula",), text=text
        )
    _state.reset(text)
    try:
        formula: Formula = _driver().parse(text)
    except (FastPathFailed, _Rejected):
        formula = _parse_with_lark(text)
    if warn_free and _state.scope_ended_early:
        _warn_scope_leaks(text, formula)
    return formula


def _parse_with_lark(text: str) -> Formula:
    """Lark's own runtime: slower, but it reports line, column and expected tokens."""
    from lark.exceptions import UnexpectedInput

    _state.reset(text)
    try:
        formula = cast(Formula, _parser().parse(text))
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    except _Rejected as exc:
        raise _rejected_error(text, exc) from None
    return formula


def _warn_scope_leaks(text: str, formula: Formula) -> None:
    leaked = {v.name for v in free_variables(formula)} & bound_names(formula)
    if leaked:
        warn(
            Errors.W001.format(formula=text.strip()[:200], names=", ".join(sorted(leaked))),
            FreeVariableWarning,
            stacklevel=4,
        )


__all__ = ["MAX_DEPTH", "parse_formula"]
