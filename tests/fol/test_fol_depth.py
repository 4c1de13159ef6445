"""The parser's depth limit (E003) counts term nesting too (issue 15, item 9).

Every formula :func:`parse_formula` accepts must be safe for the recursive consumers:
each printer style, ``==``, ``hash()``, ``repr()`` and the variable functions.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fortekit.errors import FormulaSyntaxError
from fortekit.fol import MAX_DEPTH, STYLES, Func, Var, format_formula, parse_formula, predicates
from fortekit.fol.ast import Formula
from fortekit.fol.parser import _parse_with_lark
from fortekit.fol.terms import all_variables, free_variables

BIN = Path(sys.executable).parent


def nested_term(levels: int, name: str = "f") -> str:
    """``f(f(...f(x)...))`` with ``levels`` function terms."""
    return f"{name}(" * levels + "x" + ")" * levels


def atom_over_terms(levels: int) -> str:
    """An atom whose argument nests ``levels`` function terms: depth ``levels + 1``."""
    return f"P({nested_term(levels)})"


def use_everywhere(phi: Formula) -> None:
    """Drive every recursive consumer of the AST over ``phi``."""
    for style in STYLES:
        assert format_formula(phi, style)
    text = format_formula(phi, "unicode")
    assert str(phi) == text
    twin = parse_formula(text, warn_free=False)
    assert twin == phi and hash(twin) == hash(phi)
    assert repr(phi)
    predicates(phi)
    free_variables(phi)
    all_variables(phi)


# Formulas exactly MAX_DEPTH deep, one per kind of nesting and mixtures of them.
AT_THE_LIMIT = {
    "function terms": atom_over_terms(MAX_DEPTH - 1),
    "equality": f"a = {nested_term(MAX_DEPTH - 1)}",
    "inequality": f"a ≠ {nested_term(MAX_DEPTH - 2)}",
    "negations over terms": "¬" * 100 + atom_over_terms(MAX_DEPTH - 101),
    "quantifiers over terms": "∃X " * 50 + "∀y " * 50 + f"P(X, {nested_term(MAX_DEPTH - 101, 'g')})",
    "xor chain": "(" * (MAX_DEPTH - 1) + "A" + " ⊕ B)" * (MAX_DEPTH - 1),
    "restricted quantifiers": "∀x∈X " * (MAX_DEPTH - 1) + "A(x)",
    "mixed": "¬∀x [A(x) → (B(x) ∨ " * 40 + atom_over_terms(MAX_DEPTH - 161) + ")]" * 40,
}


@pytest.mark.parametrize("name", sorted(AT_THE_LIMIT))
def test_formulas_at_the_limit_parse_print_compare_and_hash(name: str) -> None:
    phi = parse_formula(AT_THE_LIMIT[name], warn_free=False)
    use_everywhere(phi)


@pytest.mark.parametrize("name", sorted(AT_THE_LIMIT))
def test_one_level_past_the_limit_is_e003(name: str) -> None:
    text = "¬" + AT_THE_LIMIT[name]
    with pytest.raises(FormulaSyntaxError, match=r"\[E003\]"):
        parse_formula(text, warn_free=False)


# One level of nesting each: (prefix, suffix) around the formula inside, and how
# deep the innermost atom is (1, plus the function terms around its argument).
WRAPPERS = [
    ("¬", ""), ("∀y ", ""), ("∃X ", ""), ("all z.", ""), ("∀x∈X ", ""),
    ("(A ∧ ", ")"), ("(", " ∨ B)"), ("[", " ⊕ C]"), ("(D → ", ")"), ("(", " ↔ E)"),
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    wrappers=st.lists(st.sampled_from(WRAPPERS), min_size=0, max_size=260),
    terms=st.integers(min_value=0, max_value=260),
)
def test_whatever_parses_is_safe_for_every_consumer(wrappers: list[tuple[str, str]], terms: int) -> None:
    prefix = "".join(p for p, _ in wrappers)
    text = prefix + atom_over_terms(terms) + "".join(s for _, s in reversed(wrappers))
    try:
        phi = parse_formula(text, warn_free=False)
    except FormulaSyntaxError as exc:
        assert "[E003]" in str(exc)
        assert len(wrappers) + terms + 1 > MAX_DEPTH
        return
    assert len(wrappers) + terms + 1 <= MAX_DEPTH
    use_everywhere(phi)


def test_nested_terms_count_one_level_each() -> None:
    phi = parse_formula(atom_over_terms(MAX_DEPTH - 1))
    term = phi.args[0]  # type: ignore[union-attr]
    levels = 0
    while isinstance(term, Func):
        levels, term = levels + 1, term.args[0]
    assert levels == MAX_DEPTH - 1 and term == Var("x")
    with pytest.raises(FormulaSyntaxError, match=r"\[E003\]") as info:
        parse_formula(atom_over_terms(MAX_DEPTH))
    # reported at the outermost function term, the one that reaches the limit
    assert (info.value.line, info.value.column) == (1, 3)


@pytest.mark.parametrize(
    "text",
    [
        "P(" + "f(" * 10_000 + "x" + ")" * 10_001,
        f"a = {nested_term(10_000)}",
        f"a != {nested_term(10_000)}",
        f"P(x, {nested_term(5_000)}, y) ∧ Q(x)",
        "∃X " * 10_000 + "P(X)",  # each binder of a capital rebuilds its body
        "all X." * 10_000 + "P(X)",
        "¬" * 10_000 + atom_over_terms(10_000),
    ],
)
def test_ten_thousand_levels_are_e003_not_recursion_error(text: str) -> None:
    with pytest.raises(FormulaSyntaxError, match=r"\[E003\]") as info:
        parse_formula(text)
    assert info.value.line == 1 and info.value.column >= 1
    with pytest.raises(FormulaSyntaxError, match=r"\[E003\]"):
        _parse_with_lark(text)  # the runtime that reports positions agrees


def test_deep_terms_across_lines_report_the_line() -> None:
    text = "A(x) ∧\n" + "P(" + "f(\n" * 300 + "x" + ")" * 301
    with pytest.raises(FormulaSyntaxError, match=r"\[E003\].*line 102, column 1") as info:
        parse_formula(text)
    assert info.value.line == 102


def test_cli_parse_of_deep_terms_is_a_coded_error_without_traceback() -> None:
    text = "P(" + "f(" * 10_000 + "x" + ")" * 10_001
    result = subprocess.run(
        [str(BIN / "fortekit"), "parse", text], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "[E003]" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr


def test_cli_parse_error_goes_to_stderr() -> None:
    text = "P(" + "f(" * 10_000 + "x" + ")" * 10_001
    result = subprocess.run(
        [str(BIN / "fortekit"), "parse", text], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1 and "[E003]" in result.stderr
