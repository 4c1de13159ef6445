"""The formula parser: notations, the paper's formulas, FOLIO, errors and scope."""

from __future__ import annotations

import warnings

import pytest
from fol_fixtures import FOLIO_MALFORMED, PAPER_FORMULAS

from fortekit.errors import FormulaSyntaxError, FreeVariableWarning
from fortekit.fol import (
    MAX_DEPTH,
    And,
    Atom,
    Const,
    Eq,
    Func,
    Iff,
    Implies,
    Not,
    Or,
    Quant,
    Quantifier,
    Var,
    Xor,
    parse_formula,
)
from fortekit.fol.parser import _parse_with_lark

x, y, t = Var("x"), Var("y"), Var("t")


def parse_quietly(text: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FreeVariableWarning)
        return parse_formula(text)


def test_unicode_notation_with_square_brackets() -> None:
    phi = parse_formula("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]")
    assert phi == Quant(
        Quantifier.EXISTS,
        x,
        Quant(
            Quantifier.EXISTS,
            t,
            And((Atom("Bird", (x,)), Atom("Chirping", (x,)), Atom("Morning", (t,)))),
        ),
    )


def test_square_brackets_and_parentheses_are_interchangeable() -> None:
    assert parse_formula("∃x [Bird(x) ∧ Loud(x)]") == parse_formula("∃x (Bird(x) ∧ Loud(x))")


def test_mismatched_brackets_are_rejected() -> None:
    with pytest.raises(FormulaSyntaxError):
        parse_formula("∃x [Bird(x) ∧ Loud(x))")


@pytest.mark.parametrize(
    ("ascii_text", "unicode_text"),
    [
        ("exists x. (Bird(x) & -Loud(x))", "∃x [Bird(x) ∧ ¬Loud(x)]"),
        ("all x.(A(x) -> B(x))", "∀x (A(x) → B(x))"),
        ("all x.(A(x) <-> B(x))", "∀x (A(x) ↔ B(x))"),
        ("A(a) | B(a)", "A(a) ∨ B(a)"),
        ("A(a) <~> B(a)", "A(a) ⊕ B(a)"),
        ("a != b", "a ≠ b"),
        ("a == b", "a = b"),
        ("A(a) => B(a)", "A(a) → B(a)"),
        ("A(a) <=> B(a)", "A(a) ↔ B(a)"),
        ("~A(a) && B(a)", "¬A(a) ∧ B(a)"),
        ("all x y.Near(x, y)", "∀x ∀y Near(x, y)"),
        ("forall x.Bird(x)", "∀x Bird(x)"),
    ],
)
def test_ascii_and_nltk_notation(ascii_text: str, unicode_text: str) -> None:
    assert parse_formula(ascii_text) == parse_formula(unicode_text)


def test_dotted_quantifier_scopes_as_far_right_as_possible() -> None:
    assert parse_formula("all x.A(x) -> B(x)") == Quant(
        Quantifier.FORALL, x, Implies(Atom("A", (x,)), Atom("B", (x,)))
    )


def test_bracketless_quantifier_scopes_narrowly_and_warns() -> None:
    with pytest.warns(FreeVariableWarning, match="W001"):
        phi = parse_formula("∀x Weddings(x) → GettingMarried(x)")
    assert phi == Implies(
        Quant(Quantifier.FORALL, x, Atom("Weddings", (x,))), Atom("GettingMarried", (x,))
    )


def test_no_warning_when_the_scope_is_bracketed() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_formula("∀x (Weddings(x) → GettingMarried(x))")
        parse_formula("∀x (A(x)) ∧ B(y)")  # y is free, but no quantifier binds y


def test_warning_can_be_switched_off() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_formula("∀x A(x) → B(x)", warn_free=False)


def test_folio_notation_features() -> None:
    assert parse_formula("∀x (TalentShows(x) → Engaged(x))") == Quant(
        Quantifier.FORALL, x, Implies(Atom("TalentShows", (x,)), Atom("Engaged", (x,)))
    )
    assert parse_formula("Student(rina) ⊕ Unaware(rina)") == Xor(
        Atom("Student", (Const("rina"),)), Atom("Unaware", (Const("rina"),))
    )
    assert parse_formula("Anti-abortion(mr.smith)") == Atom("Anti-abortion", (Const("mr.smith"),))
    assert parse_formula("Rich(y42.3billion)").args == (Const("y42.3billion"),)
    assert parse_formula("GrowthCompanies’Stocks(x)").predicate == "GrowthCompanies’Stocks"
    assert parse_formula("American(captain america)").args == (Const("captain america"),)
    assert parse_formula("WrittenIn(x, c++)").args[1] == Const("c++")
    assert parse_formula("Eel (seaEel)") == Atom("Eel", (Const("seaEel"),))


def test_trailing_full_stop_is_accepted() -> None:
    assert parse_formula("Giant(bert) → Giant(gpt-3).") == Implies(
        Atom("Giant", (Const("bert"),)), Atom("Giant", (Const("gpt-3"),))
    )


def test_function_terms_restricted_quantifiers_and_plural_variables() -> None:
    assert parse_formula("On(x, MetalRoof(y))") == Atom("On", (x, Func("MetalRoof", (y,))))
    phi = parse_quietly("∃X ∃t [Flock(X) ∧ ∀x∈X Bird(x) ∧ Chirping(x) ∧ Morning(t)]")
    big_x = Var("X")
    assert isinstance(phi, Quant) and phi.variable == big_x
    assert isinstance(phi.body, Quant)
    matrix = phi.body.body
    assert isinstance(matrix, And)
    assert matrix.operands[0] == Atom("Flock", (big_x,))  # X was read as the bound variable
    assert matrix.operands[1] == Quant(Quantifier.FORALL, x, Atom("Bird", (x,)), domain=big_x)
    assert parse_formula("all x in X.Bird(x)") == Quant(
        Quantifier.FORALL, x, Atom("Bird", (x,)), domain=Const("X")
    )


def test_keywords_are_whole_words() -> None:
    assert parse_formula("allergy(x) ∧ existsIn(x) ∧ inside(x)") == And(
        (Atom("allergy", (x,)), Atom("existsIn", (x,)), Atom("inside", (x,)))
    )


def test_precedence() -> None:
    a, b, c = (Atom(name) for name in "ABC")
    assert parse_formula("A ∧ B ∨ C") == Or((And((a, b)), c))
    assert parse_formula("A ∨ B ⊕ C") == Xor(Or((a, b)), c)
    assert parse_formula("A ⊕ B → C") == Implies(Xor(a, b), c)
    assert parse_formula("A → B → C") == Implies(a, Implies(b, c))
    assert parse_formula("A → B ↔ C") == Iff(Implies(a, b), c)
    assert parse_formula("¬A ∧ B") == And((Not(a), b))
    assert parse_formula("a = b ∧ A") == And((Eq(Var("a"), Var("b")), a))


def test_variables_and_constants() -> None:
    phi = parse_formula("Likes(x1, rina) ∧ Likes(t', bob)")
    assert isinstance(phi, And)
    assert phi.operands[0] == Atom("Likes", (Var("x1"), Const("rina")))
    assert phi.operands[1] == Atom("Likes", (Var("t'"), Const("bob")))
    # a quantifier turns any name into a variable inside its scope
    assert parse_formula("∃dog Barks(dog)") == Quant(
        Quantifier.EXISTS, Var("dog"), Atom("Barks", (Var("dog"),))
    )


@pytest.mark.parametrize("text", PAPER_FORMULAS)
def test_every_formula_of_the_paper_parses(text: str) -> None:
    phi = parse_quietly(text)
    assert parse_quietly(str(phi)) == phi


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("Bird(x) ∧", 1, 10),
        ("Bird(x) ∧ ∧ Loud(x)", 1, 11),
        ("Bird(x\n  ∧ Loud(x)", 2, 3),
        ("∀ Bird(x)", 1, 3),
        ("Bird(x) # Loud(x)", 1, 9),
        ("(Bird(x)", 1, 9),
    ],
)
def test_syntax_errors_carry_line_column_and_expected(text: str, line: int, column: int) -> None:
    with pytest.raises(FormulaSyntaxError) as info:
        parse_formula(text)
    error = info.value
    assert (error.line, error.column) == (line, column)
    assert error.expected
    assert "[E001]" in str(error) and "Expected one of" in str(error)
    assert error.text == text


def test_empty_input_is_a_syntax_error() -> None:
    for text in ["", "   ", "\n\t"]:
        with pytest.raises(FormulaSyntaxError, match="E005"):
            parse_formula(text)


def test_non_string_input_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="E004"):
        parse_formula(b"Bird(x)")  # type: ignore[arg-type]


def test_too_deep_nesting_is_a_syntax_error_not_a_recursion_error() -> None:
    deep = "¬" * (MAX_DEPTH + 5) + "Bird(x)"
    with pytest.raises(FormulaSyntaxError, match="E003"):
        parse_formula(deep)
    shallow = "¬" * (MAX_DEPTH - 5) + "Bird(x)"
    assert isinstance(parse_formula(shallow), Not)
    long_chain = " ∧ ".join(f"P{i}(x)" for i in range(5000))
    phi = parse_formula(long_chain)
    assert isinstance(phi, And) and len(phi.operands) == 5000


def test_folio_every_wellformed_premise_parses(folio_premises: list[str]) -> None:
    failures = {}
    for text in folio_premises:
        try:
            parse_quietly(text)
        except FormulaSyntaxError as exc:
            failures[text.strip()] = exc
    assert set(failures) == set(FOLIO_MALFORMED)
    occurrences = sum(1 for text in folio_premises if text.strip() in FOLIO_MALFORMED)
    # 5,239 premise strings (1,649 distinct); 31 occurrences of 9 distinct malformed ones
    assert len(folio_premises) == 5239
    assert occurrences == 31


def test_fast_path_agrees_with_lark_on_folio(folio_premises: list[str]) -> None:
    for text in sorted(set(folio_premises)):
        if text.strip() in FOLIO_MALFORMED:
            continue
        assert _parse_with_lark(text) == parse_quietly(text), text


@pytest.mark.parametrize("arrow", ["↔", "⇔", "⟷", "⟺", "<->", "<=>"])
def test_every_common_biconditional_arrow(arrow: str) -> None:
    phi = parse_formula(f"∀x (Dog(x) {arrow} Barks(x))")
    assert str(phi) == "∀x [Dog(x) ↔ Barks(x)]"


@pytest.mark.parametrize("arrow", ["→", "⇒", "⟶", "⟹", "->", "=>"])
def test_every_common_implication_arrow(arrow: str) -> None:
    phi = parse_formula(f"∀x (Dog(x) {arrow} Barks(x) {arrow} Loud(x))")
    assert str(phi) == "∀x [Dog(x) → (Barks(x) → Loud(x))]"  # right-associative in every notation
