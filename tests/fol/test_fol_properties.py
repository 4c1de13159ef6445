"""Property tests (hypothesis): random formulas round-trip, random text fails only cleanly."""

from __future__ import annotations

import re
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nltk_fixtures import as_nltk_reads_it, from_nltk

from fortekit.errors import FormulaSyntaxError, FreeVariableWarning
from fortekit.fol import (
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
    Var,
    Xor,
    format_formula,
    parse_formula,
)
from fortekit.fol.ast import RESERVED_WORDS, is_variable_name

nltk_logic = __import__("nltk.sem.logic", fromlist=["Expression"])

FREE_VARIABLES = st.sampled_from(["x", "y", "z", "t", "x1", "y'"]).map(Var)
_word = st.from_regex(
    r"[A-Za-zé_][A-Za-z0-9é_’+']{0,6}(?:[-.][A-Za-z0-9_][A-Za-z0-9_]{0,4}){0,2}", fullmatch=True
)
NAMES = _word.filter(lambda name: name.split(" ")[0] not in RESERVED_WORDS)
CONSTANTS = (
    st.lists(NAMES, min_size=1, max_size=3)
    .map(" ".join)
    # "X" is also a binder below: a constant X inside ∀X could not be told from the variable
    .filter(lambda name: not is_variable_name(name) and name.split(" ")[0] not in RESERVED_WORDS)
    .filter(lambda name: name != "X")
    .map(Const)
)


def terms(
    variables: st.SearchStrategy[Var], functions: st.SearchStrategy[str] = NAMES
) -> st.SearchStrategy[Var | Const | Func]:
    return st.recursive(
        variables | CONSTANTS,
        lambda inner: st.builds(Func, functions, st.lists(inner, min_size=1, max_size=3).map(tuple)),
        max_leaves=4,
    )


def formulas(
    variables: st.SearchStrategy[Var] = FREE_VARIABLES, predicates: st.SearchStrategy[str] = NAMES
) -> st.SearchStrategy[Formula]:
    arguments = terms(variables, predicates)
    atoms = st.builds(Atom, predicates, st.lists(arguments, max_size=3).map(tuple)) | st.builds(
        Eq, arguments, arguments
    )

    binders = variables | st.just(Var("X"))

    def compound(inner: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
        domains = st.none() | variables | st.sampled_from(["rooms", "Flock"]).map(Const)
        return st.one_of(
            st.builds(Not, inner),
            st.builds(And, st.lists(inner, min_size=2, max_size=4).map(tuple)),
            st.builds(Or, st.lists(inner, min_size=2, max_size=4).map(tuple)),
            st.builds(Implies, inner, inner),
            st.builds(Iff, inner, inner),
            st.builds(Xor, inner, inner),
            st.builds(Quant, st.sampled_from(Quantifier), binders, inner, domains),
        )

    return st.recursive(atoms, compound, max_leaves=12)


def parse_quietly(text: str) -> Formula:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FreeVariableWarning)
        return parse_formula(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formulas())
def test_random_formulas_round_trip_through_unicode_and_ascii(phi: Formula) -> None:
    for style in ("unicode", "ascii"):
        assert parse_quietly(format_formula(phi, style)) == phi


# NLTK refuses predicate names that look like its variables (a, x1, e2, P, F3), reads its
# own keywords (not, and, some, iota, ...) as operators, and quantifies only names of its
# variable forms (x, y1; not y').
_NLTK_KEYWORDS = frozenset(token for token in nltk_logic.Tokens.TOKENS if token.isalpha())
NLTK_PREDICATES = NAMES.filter(
    lambda name: re.fullmatch(r"[a-zA-Z]\d*", name) is None and name.split(" ")[0] not in _NLTK_KEYWORDS
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formulas(variables=st.sampled_from(["x", "y", "z", "t", "x1"]).map(Var), predicates=NLTK_PREDICATES))
def test_random_formulas_round_trip_through_nltk(phi: Formula) -> None:
    printed = format_formula(phi, "nltk")
    assert parse_quietly(printed) == as_nltk_reads_it(phi)
    assert from_nltk(nltk_logic.Expression.fromstring(printed)) == as_nltk_reads_it(phi)


@settings(max_examples=200, deadline=None)
@given(formulas())
def test_random_formulas_print_in_latex(phi: Formula) -> None:
    text = format_formula(phi, "latex")
    assert text.count("[") == text.count("]")


def _only_syntax_errors(text: str) -> None:
    try:
        parse_quietly(text)
    except FormulaSyntaxError as exc:
        assert exc.line >= 1 and exc.column >= 1


FORMULA_ALPHABET = st.sampled_from([*list("∀∃¬∧∨→↔⊕≠=∈()[],.-&|~!<>x yPQab'’+\t\n"), "all ", "exists "])


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_random_text_raises_only_the_syntax_error(text: str) -> None:
    _only_syntax_errors(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(FORMULA_ALPHABET, max_size=40).map("".join))
def test_formula_like_noise_raises_only_the_syntax_error(text: str) -> None:
    _only_syntax_errors(text)


def _tile_to_100kb(seed: str) -> str:
    return (seed * (100_000 // len(seed) + 1))[:100_000]


@settings(max_examples=10, deadline=None)
@given(
    st.text(min_size=1, max_size=300).map(_tile_to_100kb)
    | st.lists(FORMULA_ALPHABET, min_size=1, max_size=60).map("".join).map(_tile_to_100kb)
)
def test_100kb_strings_raise_only_the_syntax_error(text: str) -> None:
    _only_syntax_errors(text)


def test_100kb_of_control_characters_and_brackets() -> None:
    for text in ["\x00\x01\x1b" * 34_000, "(" * 100_000, "¬" * 100_000, "P(x) ∧ " * 14_000]:
        _only_syntax_errors(text)
