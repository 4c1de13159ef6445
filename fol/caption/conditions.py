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


def _word_in(tok: Tok, words: frozenset[str]) -> bool:
    return tok.lemma in words or tok.lower in words


def holds(when: Conditions, view: TokenView, tok: Tok) -> bool:
    """Whether every condition of ``when`` holds for ``tok`` and its head.

    A root has no head: any head condition fails for it.

    Args:
        when: the conditions.
        view: the caption's tokens.
        tok: the dependent token.

    Returns:
        True if the rule applies.
    """
    if when.arc is not None and tok.dep not in when.arc:
        return False
    if when.pos is not None and tok.pos not in when.pos:
        return False
    if when.tag is not None and tok.tag not in when.tag:
        return False
    if when.lemma is not None and not _word_in(tok, when.lemma):
        return False
    if when.not_lemma is not None and _word_in(tok, when.not_lemma):
        return False
    return beyond_word(when, view, tok)


def beyond_word(when: Conditions, view: TokenView, tok: Tok) -> bool:
    """:func:`holds` for a token whose own tests (label, POS, tag, lemmas) are known to pass.

    :meth:`~fortekit.fol.caption.rules.RuleSet.rules_for_word` does those once per word,
    so Pass 1 asks only about the head, the children and the object.
    """
    if when.tests_head:
        if tok.head == tok.i:
            return False
        head = view.tokens[tok.head]
        if when.head_arc is not None and head.dep not in when.head_arc:
            return False
        if when.head_pos is not None and head.pos not in when.head_pos:
            return False
        if when.head_tag is not None and head.tag not in when.head_tag:
            return False
        if when.head_lemma is not None and not _word_in(head, when.head_lemma):
            return False
        if when.head_child_lemma is not None and not any(
            _word_in(c, when.head_child_lemma) for c in view.children(head.i) if c.i != tok.i
        ):
            return False
    if when.tests_children:
        if when.has_child is not None and not view.has_child(tok.i, when.has_child):
            return False
        if when.lacks_child is not None and view.has_child(tok.i, when.lacks_child):
            return False
        child_lemma = when.child_lemma
        if child_lemma is not None and not any(_word_in(c, child_lemma) for c in view.children(tok.i)):
            return False
    if when.tests_object:
        obj = view.prep_object(tok.i)
        if when.has_object is not None and (obj is not None) != when.has_object:
            return False
        if when.object_pos is not None and (obj is None or obj.pos not in when.object_pos):
            return False
        if when.object_lemma is not None and (obj is None or not _word_in(obj, when.object_lemma)):
            return False
    return True
