"""Clauses about the search: a verb of unknown polarity never asserts its object.

A query is a description of sounds, but it may also hold an instruction to the search or a
statement about the recording or the listener: an imperative ("A, skip the B"), a clause whose
subject is the speaker or the hearer ("you", "I", "we") or a medium noun of the inventory
(``medium_nouns``: "the clip", "the recording"), also as a relative clause on "where"/"that"
("A where you can make out B"). Such a clause describes no sound event, so its verb says how
the query relates to its object, with a polarity the parser may not know ("A, forget the B",
"the clip spares us B"). Where the verb has a class (a cue, or a verb of the inventory's
lists: perceiving, containing, eliminating, aspectual ...) that class decides; where it has
none and is no sound event of V_audio (``fortekit.vocab`` entries whose category is an event:
"you walk on gravel" is a sound), the object is left out of the formula and the clause is
recorded as unresolved (reason ``verb of unknown polarity in a clause about the search``), as
for a negated verb of no class (docs/negation.md, "Post-fix rules"). A sound clause ("a man
opens a door", "someone plays a guitar") has another subject and is not read here.

Example:
    >>> SEARCH_CLAUSE.id, SEARCH_CLAUSE.scopes
    ('search-clause', ('search_clause',))
"""

from __future__ import annotations

from functools import cache

from fortekit.fol.caption.negation_context import Match, ScopeContext, Verdict, segments
from fortekit.fol.caption.negation_imperative import IMPERATIVE_REMOVAL, removal_verb_tokens
from fortekit.fol.caption.negation_removal import is_imperative
from fortekit.fol.caption.negation_rules import Cue, NegationRules
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok, TokenView

__all__ = [
    "SEARCH_CLAUSE",
    "SEARCH_REASON",
    "has_class",
    "search_clause",
    "search_clauses",
    "sound_event_verbs",
]

SEARCH_REASON = "verb of unknown polarity in a clause about the search"
#: The speaker and the hearer of a query.
_INTERLOCUTORS = frozenset({"you", "i", "we"})
_BARE_VERB_TAGS = frozenset({"VB", "VBP"})  # "can hear", "we hear": a clause about the search
_NEGATION_DEPS = ("neg",)
#: The cue entry the clauses are recorded under (no words: it is found by construction).
SEARCH_CLAUSE = Cue(
    "search-clause", "search_clause", frozenset(), (), frozenset({"VERB"}), ("search_clause",), True, "any",
    (),
)
#: Lists of grammars/negation.toml whose verbs have a class.
_VERB_LISTS = (
    "perception",
    "obscuring_verbs",
    "elimination_verbs",
    "appearance_verbs",
    "giving_verbs",
    "cooccurrence_verbs",
    "aspectual_verbs",
    "positive_implicatives",
    "inchoatives",
    "catenatives",
    "transparent_heads",
)
_OBJECT_DEPS = ("dobj", "obj")


@cache
def sound_event_verbs() -> frozenset[str]:
    """The verbs of V_audio that name a sound event ("walk", "play", "open").

    Example:
        >>> {"walk", "open"} <= sound_event_verbs(), "erase" in sound_event_verbs()
        (True, False)
    """
    from fortekit.vocab import load_vocabulary

    return frozenset(e.lemma for e in load_vocabulary() if e.category.is_event and e.pos == "VERB")


def has_class(rules: NegationRules, verb: Tok) -> bool:
    """Whether a verb has a class of the negation inventory: a cue, a phrasal cue, or a verb list.

    Example:
        >>> from fortekit.fol.caption.negation_rules import load_negation_rules
        >>> from fortekit.fol.caption.tokens import Tok
        >>> rules = load_negation_rules()
        >>> def verb(lemma): return Tok(0, lemma, lemma, lemma, "VERB", "VB", "ROOT", 0, 0)
        >>> has_class(rules, verb("hear")), has_class(rules, verb("erase"))
        (True, False)
    """
    lemma = verb.lemma
    if rules.cue_for_word(lemma) is not None or rules.cue_for_word(verb.lower) is not None:
        return True
    if rules.lemma_phrases_from(lemma):
        return True
    return any(lemma in rules.words(name) for name in _VERB_LISTS)


def _about_search(view: TokenView, verb: Tok, media: frozenset[str], segment: list[int]) -> bool:
    """Whether ``verb`` heads a clause about the search: its subject is the speaker, the
    hearer or a medium noun, or it is an imperative (a base form, or the present the tagger
    reads it as, with no subject and no auxiliary, that opens a clause after a comma, a
    semicolon or a dash). A subject across a segment boundary is the parser's ("A, skip/VB
    the B"), not the verb's."""
    children = view.children(verb.i)
    subjects = [c for c in children if c.dep in SUBJECT_DEPS and segment[c.i] == segment[verb.i]]
    if subjects:
        return any(s.lower in _INTERLOCUTORS or s.lemma in media for s in subjects)
    if verb.tag not in ("VB", "VBP") or any(c.dep in ("aux", "auxpass", "mark", "neg") for c in children):
        return False
    # a conjunct shares its head's subject ("a bike starts, revs its engine"), and an adverb
    # before the verb ("..., then set off fireworks") continues a narrative of the sound's
    # source: neither is an instruction
    if verb.dep == "conj":
        return False
    k = verb.i - 1
    while k >= 0 and (view[k].pos == "INTJ" or view[k].lower == "please"):
        k -= 1
    # a base form that opens the query is far more often a modifier the tagger misread
    # ("slow footsteps", "crackling fire") than an instruction: only one after a clause counts
    return k >= 0 and view[k].lower in (",", ";", ":", "-", "--", "–", "—")


def search_clauses(view: TokenView, rules: NegationRules) -> list[Match]:
    """The verbs of clauses about the search that have no class and take a noun object."""
    # asked of every caption, most of which have none of these words: set tests of their
    # columns rather than a generator over their tokens
    tokens = view.tokens
    media = rules.words("medium_nouns")
    if (
        _BARE_VERB_TAGS.isdisjoint([t.tag for t in tokens])
        and _INTERLOCUTORS.isdisjoint([t.lower for t in tokens])
        and media.isdisjoint([t.lemma for t in tokens])
    ):
        return []
    found: list[Match] = []
    segment: list[int] | None = None
    for verb in tokens:
        if verb.pos != "VERB" or view.has_child(verb.i, _NEGATION_DEPS):
            continue
        objects = [c for c in view.children(verb.i, _OBJECT_DEPS) if c.i > verb.i]
        if not objects:
            continue
        # "you can make out no B": a cue on the object decides its polarity, not the verb
        if any(rules.cue_for_word(d.lower) is not None for o in objects for d in (o, *view.children(o.i))):
            continue
        removal = removal_verb_tokens(view, rules, verb)
        if removal is None and (has_class(rules, verb) or verb.lemma in sound_event_verbs()):
            continue
        segment = segments(view, rules) if segment is None else segment
        if removal is not None and is_imperative(view, verb):
            # "A; drop the B": addressed to the search, a verb with a sense of removing has that sense
            found.append(Match(IMPERATIVE_REMOVAL, removal))
        elif _about_search(view, verb, media, segment):
            found.append(Match(SEARCH_CLAUSE, [verb.i]))
    return found


def search_clause(ctx: ScopeContext, match: Match) -> Verdict | None:
    """The object of a verb of no class in a clause about the search is not asserted."""
    view = ctx.view
    verb = view[match.first]
    obj = next((c for c in view.children(verb.i) if c.dep in _OBJECT_DEPS and c.i > verb.i), None)
    if obj is None or obj.i in ctx.claimed or not ctx.nominal(obj, verb.i):
        return Verdict("none", "")
    target = ctx.noun_head(obj.i) if ctx.is_noun(obj) else obj.i
    # a subject across a segment boundary is the parser's ("A barks, forget the B"): it stays
    subjects = [c.i for c in view.children(verb.i) if c.dep in SUBJECT_DEPS and ctx.same_segment(c.i, verb.i)]
    return Verdict("unresolved", "search-clause", target, cue_tokens=[*subjects], reason=SEARCH_REASON)
