"""Does a rule's condition table hold for one arc (a token and its head)?

Example:
    >>> from fortekit.fol.caption.rules import Conditions
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> view = TokenView([Tok(0, "loud", "loud", "loud", "ADJ", "JJ", "amod", 1, 0),
    ...                   Tok(1, "music", "music", "music", "NOUN", "NN", "ROOT", 1, 5)], "loud music")
    >>> holds(Conditions(arc=frozenset({"amod"}), head_pos=frozenset({"NOUN"})), view, view[0])
    True
"""

from __future__ import annotations

from fortekit.fol.caption.rules import Conditions
from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = ["beyond_word", "holds"]


def holds(when: Conditions, view: TokenView, tok: Tok) -> bool:
    """Whether every condition of ``when`` holds for ``tok`` and its head.

    A root has no head: any head condition fails for it.

    Args:
        when: the conditions.
        view: the caption's tokens.
        tok: the dependent token.

    Returns:
        True if the rule applies: the token's label, POS and tag are among the rule's
        (where it names some), its lemma or lower-case text is among ``lemma`` and
        neither is among ``not_lemma``, and :func:`beyond_word` holds. The tests are
        made into one function per rule when the rule is read (``when.matches``, from
        :func:`~fortekit.fol.caption.checks.compile_holds`).
    """
    return when.matches(view, tok)


def beyond_word(when: Conditions, view: TokenView, tok: Tok) -> bool:
    """:func:`holds` for a token whose own tests (label, POS, tag, lemmas) are known to pass.

    :meth:`~fortekit.fol.caption.rules.RuleSet.rules_for_word` does those once per word,
    so Pass 1 asks only about the head, the children and the object: a root has no head
    (a head test fails), ``has_child``/``lacks_child``/``child_lemma`` look at the
    token's children, and the object tests at its pobj/pcomp child. The tests are made
    into one function per rule when the rule is read (``when.beyond``, from
    :func:`~fortekit.fol.caption.checks.compile_beyond_word`).

    Example:
        >>> from fortekit.fol.caption.rules import Conditions
        >>> view = TokenView([Tok(0, "in", "in", "in", "ADP", "IN", "ROOT", 0, 0)], "in")
        >>> beyond_word(Conditions(has_object=True), view, view[0])
        False
    """
    return when.beyond(view, tok)
