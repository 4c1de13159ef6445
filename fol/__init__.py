"""The logic core: predicate AST, formula parser and printers, Pred(φ) and the operator algebra.

Example:
    >>> from fortekit.fol import parse_formula, format_formula, predicates
    >>> phi = parse_formula("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]")
    >>> format_formula(phi, "ascii")
    'exists x.exists t.(Bird(x) & Chirping(x) & Morning(t))'
    >>> sorted(p.name for p in predicates(phi))
    ['Bird', 'Chirping', 'Morning']
"""

from fortekit.errors import FormulaStyleError, FormulaSyntaxError, FreeVariableWarning, OperatorError
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
    conjoin,
    disjoin,
)
from fortekit.fol.canonical import canonical
from fortekit.fol.events import (
    event_participants,
    is_event_predicate,
    is_event_variable,
    participant_arity,
    participant_names,
)
from fortekit.fol.operators import (
    DEPTH_SCHEDULE,
    CandidatePools,
    Successor,
    entity_variables,
    o_attr,
    o_neg,
    o_rel,
    successors,
)
from fortekit.fol.parser import MAX_DEPTH, parse_formula
from fortekit.fol.predicates import (
    Polarity,
    PredicateSymbol,
    invariant_predicates,
    predicates,
    preserves,
)
from fortekit.fol.printers import STYLES, format_formula
from fortekit.fol.terms import free_variables, fresh_variable, substitute

__all__ = [
    "DEPTH_SCHEDULE",
    "MAX_DEPTH",
    "STYLES",
    "And",
    "Atom",
    "CandidatePools",
    "Const",
    "Eq",
    "Formula",
    "FormulaStyleError",
    "FormulaSyntaxError",
    "FreeVariableWarning",
    "Func",
    "Iff",
    "Implies",
    "Not",
    "OperatorError",
    "Or",
    "Polarity",
    "PredicateSymbol",
    "Quant",
    "Quantifier",
    "Successor",
    "Term",
    "Var",
    "Xor",
    "canonical",
    "conjoin",
    "disjoin",
    "entity_variables",
    "event_participants",
    "format_formula",
    "free_variables",
    "fresh_variable",
    "invariant_predicates",
    "is_event_predicate",
    "is_event_variable",
    "o_attr",
    "o_neg",
    "o_rel",
    "parse_formula",
    "participant_arity",
    "participant_names",
    "predicates",
    "preserves",
    "substitute",
    "successors",
]
