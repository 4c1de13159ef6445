"""Repairs of attachments the small spaCy pipeline gets wrong: heads and labels, not tags.

A locative particle before the object (``pours over/prt rocks``), a temporal
preposition read as taking a clause for its object (``as/prep cars pass/pobj``), a
prepositional phrase stacked on another's object, a negator hung on the noun before
the one it denies, a gerund hung on a distant entity. These actions, named by
``[[repair]]`` rules in ``grammars/arc_rules.toml`` (run by
:func:`fortekit.fol.caption.repairs.apply_repairs`), move a token to its head and
record the repair's id (:attr:`Tok.repaired`).

Example:
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> from fortekit.fol.caption.lemmas import WordNetLemmas
    >>> toks = [Tok(0, "water", "water", "water", "NOUN", "NN", "nsubj", 1, 0),
    ...         Tok(1, "pours", "pours", "pour", "VERB", "VBZ", "ROOT", 1, 6),
    ...         Tok(2, "over", "over", "over", "ADP", "RP", "prt", 1, 12),
    ...         Tok(3, "rocks", "rocks", "rock", "NOUN", "NNS", "dobj", 1, 17)]
    >>> view = TokenView(toks, "water pours over rocks")
    >>> particle_to_preposition(view, view[2], WordNetLemmas(None))
    True
    >>> [(t.text, t.dep, view[t.head].text) for t in view]  # doctest: +NORMALIZE_WHITESPACE
    [('water', 'nsubj', 'pours'), ('pours', 'ROOT', 'pours'), ('over', 'prep', 'pours'),
     ('rocks', 'pobj', 'over')]
"""

from __future__ import annotations

from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = [
    "attach_to_verb",
    "gerund_to_previous_noun",
    "particle_to_preposition",
    "preposition_to_mark",
    "release_marked_clause",
]

_NOUNS = frozenset({"NOUN", "PROPN"})


def particle_to_preposition(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "locative-particle"
) -> bool:
    """'pours over/prt rocks/dobj' -> 'over' is a preposition with 'rocks' as its object."""
    objects = [c for c in view.children(tok.head, ("dobj",)) if c.i > tok.i]
    if not objects:
        return False
    obj = objects[0]
    if min(view.subtree(obj.i)) != tok.i + 1:  # the object's phrase must follow at once
        return False
    tok.dep, tok.pos, tok.tag = "prep", "ADP", "IN"
    obj.head, obj.dep = tok.i, "pobj"
    tok.repaired += (rule_id,)
    view.rebuild()
    return True


def preposition_to_mark(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "temporal-clause"
) -> bool:
    """'as/prep cars pass/pobj' -> 'as' marks the clause 'cars pass', an advcl of the head.

    With no object, 'as' marks the coordinated clause of its head that starts right
    after it ('Glasses are stacked as/prep a glass is pulled/conj').
    """
    if tok.head == tok.i:
        return False
    obj = view.prep_object(tok.i)
    if obj is None:
        following = [
            c
            for c in view.children(tok.head, ("conj", "advcl", "ccomp"))
            if c.i > tok.i and c.pos in ("VERB", "AUX") and min(view.subtree(c.i)) == tok.i + 1
        ]
        if not following:
            return False
        obj = following[0]
    obj.head, obj.dep = tok.head, "advcl"
    tok.head, tok.dep = obj.i, "mark"
    tok.repaired += (rule_id,)
    view.rebuild()
    return True


def attach_to_verb(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "stacked-preposition"
) -> bool:
    """A PP on the object of a verb's PP is re-attached to that verb."""
    noun = view[tok.head]
    outer = view[noun.head]
    if outer.dep not in ("prep", "agent") or outer.head == outer.i:
        return False
    verb = view[outer.head]
    if verb.pos not in ("VERB", "AUX"):
        return False
    tok.head = verb.i
    tok.repaired += (rule_id,)
    view.rebuild()
    return True


def release_marked_clause(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "marked-clause-under-preposition"
) -> bool:
    """'hisses by while someone is shuffling/pcomp' -> the clause is an advcl of the head, 'by' a particle."""
    obj = view.prep_object(tok.i)
    if obj is None or tok.head == tok.i or not view.has_child(obj.i, ("mark",)):
        return False
    obj.head, obj.dep = tok.head, "advcl"
    tok.dep = "prt"
    tok.repaired += (rule_id,)
    view.rebuild()
    return True


def gerund_to_previous_noun(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "gerund-after-noun"
) -> bool:
    """A gerund right after a noun it was not attached to describes that noun.

    'a car passing by without any horns honking/ROOT' (subject 'car'), 'music playing
    together with wind blowing/ROOT', 'a door opening and closing and water
    flowing/conj' (of 'opening'): the small model hangs the last gerund on the first
    entity; it belongs to the noun just before it. A distant subject of the gerund
    takes its place in the tree.
    """
    if tok.i == 0 or not tok.lower.endswith("ing"):
        return False
    noun = view[tok.i - 1]
    if noun.pos not in _NOUNS or noun.dep not in ("pobj", "conj") or tok.head == noun.i:
        return False
    subject = view.subject(tok.i)
    if subject is not None and (subject.i > noun.i or subject.dep not in ("nsubj", "nsubjpass")):
        return False
    if subject is None and (tok.dep != "conj" or noun.dep != "conj"):
        return False
    if subject is not None:
        root = tok.head == tok.i
        subject.head, subject.dep = (subject.i, "ROOT") if root else (tok.head, tok.dep)
        for child in view.children(tok.i):
            if child.i != subject.i and child.i < noun.i:
                child.head = subject.i
        subject.repaired += (rule_id,)
    tok.head, tok.dep = noun.i, "acl"
    tok.repaired += (rule_id,)
    view.rebuild()
    return True
