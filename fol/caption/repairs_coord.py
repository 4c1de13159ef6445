"""Repairs of coordinated and excluded clauses the small spaCy pipeline merges.

Telegraphic captions coordinate two "noun + participle" clauses ("bells ringing but
no birds chirping", "people talking and a horn honking"). The small model often
makes the first noun the subject of the *last* participle and hangs the first
participle on it, so the two entities collapse into one (and a "no" on the second
one denies both). These actions, named by ``[[repair]]`` rules in
``grammars/arc_rules.toml``, rebuild the two clauses as two noun phrases, each
with its own participle.

Example:
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> from fortekit.fol.caption.lemmas import WordNetLemmas
    >>> from fortekit.vocab import load_wordnet
    >>> toks = [Tok(0, "bells", "bells", "bell", "NOUN", "NNS", "nsubj", 5, 0),
    ...         Tok(1, "ringing", "ringing", "ring", "VERB", "VBG", "amod", 0, 6),
    ...         Tok(2, "but", "but", "but", "CCONJ", "CC", "cc", 0, 14),
    ...         Tok(3, "no", "no", "no", "DET", "DT", "det", 4, 18),
    ...         Tok(4, "birds", "birds", "bird", "NOUN", "NNS", "nsubj", 5, 21),
    ...         Tok(5, "chirping", "chirping", "chirp", "VERB", "VBG", "ROOT", 5, 27)]
    >>> view = TokenView(toks, "bells ringing but no birds chirping")
    >>> split_coordinated_subject(view, view[5], WordNetLemmas(load_wordnet()))
    True
    >>> [(t.text, t.dep, view[t.head].text) for t in view]  # doctest: +NORMALIZE_WHITESPACE
    [('bells', 'ROOT', 'bells'), ('ringing', 'amod', 'bells'), ('but', 'cc', 'bells'),
     ('no', 'det', 'birds'), ('birds', 'conj', 'bells'), ('chirping', 'acl', 'birds')]
"""

from __future__ import annotations

from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok, TokenView

__all__ = [
    "compound_to_subject",
    "gerund_object_to_verb",
    "split_coordinated_subject",
]

_NOUNS = frozenset({"NOUN", "PROPN"})
_PARTICIPLE_DEPS = frozenset({"acl", "amod", "relcl"})
_NOUN_MODIFIERS = frozenset({"det", "amod", "compound", "nummod", "poss", "predet", "intj"})


def _is_participle(tok: Tok) -> bool:
    return tok.lower.endswith("ing") and tok.pos in ("VERB", "NOUN", "ADJ")


def _make_event(view: TokenView, verb: Tok, noun: Tok, lex: WordNetLemmas, rule_id: str) -> None:
    """Make ``verb`` the participle of ``noun`` (an acl); its left modifiers go to the noun."""
    for child in view.children(verb.i):
        if child.i < noun.i and child.dep in _NOUN_MODIFIERS and child.i != noun.i:
            child.head = noun.i
    verb.head, verb.dep = noun.i, "acl"
    if verb.pos != "VERB":
        base = lex.verb_base(verb.lower)
        verb.pos, verb.tag = "VERB", "VBG"
        if base is not None:
            verb.lemma = base
    verb.repaired += (rule_id,)


def _as_noun(tok: Tok, lex: WordNetLemmas, rule_id: str) -> None:
    """A subject the model tagged VERB ('insects/VERB buzzing') is a noun."""
    if tok.pos in _NOUNS:
        return
    bases = lex.morphy(tok.lower, "NOUN")
    tok.pos = "NOUN"
    tok.tag = "NNS" if bases and bases[0] != tok.lower else "NN"
    tok.lemma = bases[0] if bases else tok.lower
    tok.repaired += (rule_id,)


def compound_to_subject(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "compound-before-verb"
) -> bool:
    """'and no a dog/compound barking/VERB': a noun compound of a verb with no subject is its subject."""
    verb = view[tok.head]
    if tok.head <= tok.i or view.subject(verb.i) is not None:
        return False
    if any(t.dep != "compound" or t.head != verb.i for t in view.tokens[tok.i + 1 : verb.i]) or (
        tok.dep == "npadvmod" and verb.i != tok.i + 1
    ):
        return False
    tok.dep = "nsubj"
    for child in view.children(verb.i):  # its determiners ('no', 'a') belong to the noun
        if child.i < tok.i and child.dep in ("det", "predet", "amod", "nummod", "poss"):
            child.head = tok.i
    tok.repaired += (rule_id,)
    view.rebuild()
    return True


def _first_clause(view: TokenView, verb: Tok, second: Tok) -> tuple[Tok, Tok] | None:
    """The first noun and its participle, for a verb that took the first noun as subject.

    The subject may be the participle itself, its noun hung on it ('thunder/npadvmod
    rumbling/nsubj'); the caller re-attaches them.
    """
    for subject in view.children(verb.i, SUBJECT_DEPS):
        if subject.i >= second.i:
            continue
        for participle in view.children(subject.i, _PARTICIPLE_DEPS):
            if subject.i < participle.i < second.i and _is_participle(participle):
                return subject, participle
        # 'thunder/npadvmod rumbling/nsubj and rain falling': the subject is the participle
        nouns = [c for c in view.children(subject.i, ("npadvmod", "compound", "nsubj")) if c.pos in _NOUNS]
        if _is_participle(subject) and nouns and nouns[-1].i == subject.i - 1:
            return nouns[-1], subject
    return None


def split_coordinated_subject(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "coordinated-subject"
) -> bool:
    """'bells/nsubj ringing/amod but no birds/nsubj chirping/ROOT': two clauses, two entities.

    The verb took the first noun as its subject, and the first noun holds its own
    participle; the noun right before the verb, after a coordinator ('and', 'but',
    'with'), is the verb's entity. The first noun takes the verb's place, the second
    noun becomes its conjunct (or the object of 'with'), the verb its participle.
    """
    if tok.i < 3:
        return False
    second = view[tok.i - 1]
    tagged_verb = second.dep in SUBJECT_DEPS and bool(lex.morphy(second.lower, "NOUN"))
    noun_like = second.pos in _NOUNS or tagged_verb
    if not noun_like or second.dep not in ("nsubj", "compound", "conj"):
        return False
    found = _first_clause(view, tok, second)
    if found is None:
        return False
    first, participle = found
    own = set(view.subtree(second.i))
    between = [t for t in view.tokens[participle.i + 1 : second.i] if t.i not in own]
    coordinators = [t for t in between if t.dep == "cc"]
    preps = [t for t in between if t.dep == "prep" and view.prep_object(t.i) is None]
    if not coordinators and not preps:
        return False
    split = max(t.i for t in coordinators + preps)
    _as_noun(second, lex, rule_id)
    if participle.head != first.i:  # 'thunder/npadvmod rumbling/nsubj': the noun is the subject
        first.head, first.dep = tok.i, participle.dep
        participle.head, participle.dep = first.i, "acl"
        view.rebuild()
    root = tok.head == tok.i
    first.head, first.dep = (first.i, "ROOT") if root else (tok.head, tok.dep)
    for child in view.children(tok.i):  # what the verb held before the second noun
        if child.i < second.i and child.i not in (first.i, second.i):
            child.head = second.i if child.i > split else first.i
    if coordinators:
        second.head, second.dep = first.i, "conj"
        for cc in coordinators:
            cc.head = first.i
    else:
        second.head, second.dep = preps[-1].i, "pobj"
    view.rebuild()
    _make_event(view, tok, second, lex, rule_id)
    first.repaired += (rule_id,)
    second.repaired += (rule_id,)
    view.rebuild()
    return True


def gerund_object_to_verb(
    view: TokenView, tok: Tok, lex: WordNetLemmas, rule_id: str = "coordinated-preposition-verb"
) -> bool:
    """'arrives and then without/conj stopping passes/dobj by': the gerund's bare object is the verb.

    A preposition coordinated with a verb is the sign: the verb of that conjunct is
    the bare plural-looking noun the small model gave the gerund as its object. It
    becomes the conjunct; the preposition, the words before it and the gerund's words
    after the noun are its dependents.

    Example:
        >>> from fortekit.vocab import load_wordnet
        >>> toks = [Tok(0, "trains", "trains", "train", "NOUN", "NNS", "nsubj", 1, 0),
        ...         Tok(1, "arrive", "arrive", "arrive", "VERB", "VBP", "ROOT", 1, 7),
        ...         Tok(2, "and", "and", "and", "CCONJ", "CC", "cc", 1, 14),
        ...         Tok(3, "without", "without", "without", "ADP", "IN", "conj", 1, 18),
        ...         Tok(4, "stopping", "stopping", "stop", "VERB", "VBG", "pcomp", 3, 26),
        ...         Tok(5, "passes", "passes", "pass", "NOUN", "NNS", "dobj", 4, 35),
        ...         Tok(6, "by", "by", "by", "ADP", "IN", "prep", 4, 42)]
        >>> view = TokenView(toks, "trains arrive and without stopping passes by")
        >>> gerund_object_to_verb(view, view[5], WordNetLemmas(load_wordnet()))
        True
        >>> [(t.text, t.dep, view[t.head].text) for t in view][3:]  # doctest: +NORMALIZE_WHITESPACE
        [('without', 'prep', 'passes'), ('stopping', 'pcomp', 'without'),
         ('passes', 'conj', 'arrive'), ('by', 'prt', 'passes')]
    """
    gerund = view[tok.head]
    if gerund.dep != "pcomp" or not gerund.lower.endswith("ing") or gerund.i > tok.i:
        return False
    prep = view[gerund.head]
    if prep.dep != "conj" or prep.pos != "ADP" or prep.head == prep.i:
        return False
    verb = view[prep.head]
    if verb.pos not in ("VERB", "AUX") or view.has_child(tok.i, _NOUN_MODIFIERS):
        return False
    base = lex.verb_base(tok.lower)
    if base is None:
        return False
    tok.pos, tok.tag, tok.lemma = "VERB", "VBZ" if tok.lower.endswith("s") else "VBP", base
    tok.head, tok.dep = verb.i, "conj"
    for child in view.children(prep.i):
        if child.i < prep.i:  # 'then'
            child.head = tok.i
    for child in view.children(gerund.i):
        if child.i > tok.i:
            child.head = tok.i
            if child.pos == "ADP" and view.prep_object(child.i) is None:
                child.dep = "prt"
    prep.head, prep.dep = tok.i, "prep"
    tok.repaired += (rule_id,)
    prep.repaired += (rule_id,)
    view.rebuild()
    return True
