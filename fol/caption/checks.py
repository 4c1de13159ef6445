"""A rule's tests beyond the word itself, made once per rule into one small function.

:func:`~fortekit.fol.caption.conditions.beyond_word` reads every field of a rule's
conditions for every token it asks about; most rules set one of them ("its object is
a time word", "its head is a verb"). :func:`compile_beyond_word` reads the fields once,
when the rule is loaded, and returns a function that does only the tests the rule sets,
with the same answers (tests/fol/caption/test_caption_checks.py compares the two on real captions).

Example:
    >>> from fortekit.fol.caption.rules import Conditions
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> view = TokenView([Tok(0, "loud", "loud", "loud", "ADJ", "JJ", "amod", 1, 0),
    ...                   Tok(1, "music", "music", "music", "NOUN", "NN", "ROOT", 1, 5)], "loud music")
    >>> check = compile_beyond_word(Conditions(head_pos=frozenset({"NOUN"})))
    >>> check(view, view[0]), check(view, view[1])
    (True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = ["Check", "compile_beyond_word", "compile_holds"]

#: A compiled test of one token of a caption.
Check = Callable[["TokenView", "Tok"], bool]


def _always(view: TokenView, tok: Tok) -> bool:
    return True


def _head_field(name: str, words: frozenset[str]) -> Check:
    """The head's label, POS or tag is one of ``words`` (a root has no head)."""

    if name == "dep":

        def head_dep(view: TokenView, tok: Tok) -> bool:
            return tok.head != tok.i and view.tokens[tok.head].dep in words

        return head_dep
    if name == "pos":

        def head_pos(view: TokenView, tok: Tok) -> bool:
            return tok.head != tok.i and view.tokens[tok.head].pos in words

        return head_pos

    def head_tag(view: TokenView, tok: Tok) -> bool:
        return tok.head != tok.i and view.tokens[tok.head].tag in words

    return head_tag


def _head_lemma(words: frozenset[str]) -> Check:
    def head_lemma(view: TokenView, tok: Tok) -> bool:
        if tok.head == tok.i:
            return False
        head = view.tokens[tok.head]
        return head.lemma in words or head.lower in words

    return head_lemma


def _head_child_lemma(words: frozenset[str]) -> Check:
    def head_child_lemma(view: TokenView, tok: Tok) -> bool:
        if tok.head == tok.i:
            return False
        return any(
            c.lemma in words or c.lower in words for c in view.children(tok.head) if c.i != tok.i
        )

    return head_child_lemma


def _child(words: frozenset[str], present: bool) -> Check:
    if present:

        def has_child(view: TokenView, tok: Tok) -> bool:
            return view.has_child(tok.i, words)

        return has_child

    def lacks_child(view: TokenView, tok: Tok) -> bool:
        return not view.has_child(tok.i, words)

    return lacks_child


def _child_lemma(words: frozenset[str]) -> Check:
    def child_lemma(view: TokenView, tok: Tok) -> bool:
        return any(c.lemma in words or c.lower in words for c in view.children(tok.i))

    return child_lemma


def _has_object(present: bool) -> Check:
    def has_object(view: TokenView, tok: Tok) -> bool:
        return (view.prep_object(tok.i) is not None) == present

    return has_object


def _object_pos(words: frozenset[str]) -> Check:
    def object_pos(view: TokenView, tok: Tok) -> bool:
        obj = view.prep_object(tok.i)
        return obj is not None and obj.pos in words

    return object_pos


def _object_lemma(words: frozenset[str]) -> Check:
    def object_lemma(view: TokenView, tok: Tok) -> bool:
        obj = view.prep_object(tok.i)
        return obj is not None and (obj.lemma in words or obj.lower in words)

    return object_lemma


def compile_beyond_word(when: Any) -> Check:
    """The tests of ``when`` on a token's head, children and object, as one function.

    Args:
        when: a rule's :class:`~fortekit.fol.caption.rules.Conditions`.

    Returns:
        ``check(view, tok)``, which answers as
        :func:`~fortekit.fol.caption.conditions.beyond_word` does for ``when``.

    Example:
        >>> from fortekit.fol.caption.rules import Conditions
        >>> compile_beyond_word(Conditions(arc=frozenset({"amod"}))).__name__
        '_always'
    """
    checks: list[Check] = []
    # in beyond_word's order: the head, the children, the object
    for name, words in (("dep", when.head_arc), ("pos", when.head_pos), ("tag", when.head_tag)):
        if words is not None:
            checks.append(_head_field(name, words))
    if when.head_lemma is not None:
        checks.append(_head_lemma(when.head_lemma))
    if when.head_child_lemma is not None:
        checks.append(_head_child_lemma(when.head_child_lemma))
    if when.has_child is not None:
        checks.append(_child(when.has_child, True))
    if when.lacks_child is not None:
        checks.append(_child(when.lacks_child, False))
    if when.child_lemma is not None:
        checks.append(_child_lemma(when.child_lemma))
    if when.has_object is not None:
        checks.append(_has_object(bool(when.has_object)))
    if when.object_pos is not None:
        checks.append(_object_pos(when.object_pos))
    if when.object_lemma is not None:
        checks.append(_object_lemma(when.object_lemma))
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    first, *rest = checks

    def every(view: TokenView, tok: Tok) -> bool:
        if not first(view, tok):
            return False
        for check in rest:  # noqa: SIM110 - a loop, not all(): no generator per token
            if not check(view, tok):
                return False
        return True

    return every


def compile_holds(when: Any) -> Check:
    """All the tests of ``when``: the word's own (label, POS, tag, lemmas), then the rest.

    Args:
        when: a rule's :class:`~fortekit.fol.caption.rules.Conditions`.

    Returns:
        ``check(view, tok)``, which answers as :func:`~fortekit.fol.caption.conditions.holds`
        does for ``when``.

    Example:
        >>> from fortekit.fol.caption.rules import Conditions
        >>> from fortekit.fol.caption.tokens import Tok, TokenView
        >>> view = TokenView([Tok(0, "loud", "loud", "loud", "ADJ", "JJ", "amod", 1, 0),
        ...                   Tok(1, "music", "music", "music", "NOUN", "NN", "ROOT", 1, 5)], "loud music")
        >>> check = compile_holds(Conditions(arc=frozenset({"amod"}), head_pos=frozenset({"NOUN"})))
        >>> check(view, view[0]), check(view, view[1])
        (True, False)
    """
    beyond = compile_beyond_word(when)
    arc, pos, tag, lemma, not_lemma = when.arc, when.pos, when.tag, when.lemma, when.not_lemma

    def holds(view: TokenView, tok: Tok) -> bool:
        if arc is not None and tok.dep not in arc:
            return False
        if pos is not None and tok.pos not in pos:
            return False
        if tag is not None and tok.tag not in tag:
            return False
        if lemma is not None and tok.lemma not in lemma and tok.lower not in lemma:
            return False
        if not_lemma is not None and (tok.lemma in not_lemma or tok.lower in not_lemma):
            return False
        return beyond(view, tok)

    return holds
