"""Scope rules for the cue classes from lexical semantics (docs/negation.md).

The classes come from ``grammars/negation_lexicon.toml`` (WordNet relations and published cue
lexicons, :mod:`fortekit.fol.caption.negation_lexicon`); the constructions that give them a
scope are here:

* ``by_object``: a negatively prefixed participle of co-occurrence ("uninterrupted by B",
  "unaccompanied by B") excludes its by/with object; with none it is no cue;
* :func:`negated_object`: a denied verb whose object is a sound phrase. A class decides what
  the object is: excluded after a verb of wanting, needing, perceiving or containing, or
  after a co-occurrence connective ("not accompanied by B"); asserted after a verb of hiding
  ("does not drown out the horn"), an aspectual verb or an implicative; for a verb of no
  class the scope is unresolved and the object is not asserted (never read as an assertion);
* :func:`locative_position`: "off" modified by a place or direction phrase or an adverb of
  distance ("off in the distance", "far off") is a word of position, no absence.

The helpers the other rule modules share are here too (:func:`exclusion`, the absolute
construction, :func:`names_sound_class`); the verbs of removing ("with B removed") have their
own module, :mod:`fortekit.fol.caption.negation_removal`.

Example:
    >>> sorted(LEXICAL_RULES)
    ['by_object', 'double_object']
"""

from __future__ import annotations

from collections.abc import Iterable

from fortekit.fol.caption.negation_context import NOUNS, Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_rules import Connective
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok

__all__ = [
    "LEXICAL_RULES",
    "absolute_noun",
    "absolute_particle",
    "absolute_preposition",
    "closes_noun_phrase",
    "exclusion",
    "grounds_in_audioset",
    "is_absence_word",
    "is_attributive",
    "locative_position",
    "names_sound_class",
    "negated_object",
    "not_a_cue",
    "phrasal_object",
    "sound_object",
]

#: A verdict that says the word is no negation here ("a silent film", "a car stops").
not_a_cue = Verdict("none", "")

_OBJECT_DEPS = ("dobj", "obj")
_CLAUSE_DEPS = ("ccomp", "xcomp")
_DECIDED = frozenset({"implicative", "partitive", "exceptive"})
#: WordNet noun files of properties and measures: "never changing noise level", "not gaining
#: full power" name a property of the subject's own sound, no other sound.
_PROPERTY_LEXNAMES = frozenset(
    {"noun.attribute", "noun.quantity", "noun.time", "noun.relation", "noun.shape"}
)


def exclusion(
    ctx: ScopeContext, match: Match, noun: Tok, construction: str, extra_cue: list[int] | None = None
) -> Verdict:
    """Exclude ``noun``'s phrase (through a filler "sign of", with its coordinated nouns)."""
    cue_tokens = list(extra_cue or [])
    target = ctx.view[ctx.noun_head(noun.i)] if noun.pos in NOUNS else noun
    for _ in range(3):  # "not a trace of the sound of B"
        found = ctx.filler_object(target)
        if found is None:
            break
        target, filler = found
        cue_tokens += filler
    extra = [
        c.i
        for c in ctx.view.conjuncts(target.i)
        if ctx.is_noun(c) and ctx.same_segment(c.i, target.i) and ctx.subject_in_segment(c.i) is None
    ]
    return Verdict("exclude", construction, target.i, cue_tokens=cue_tokens, extra_targets=extra)


def absolute_preposition(ctx: ScopeContext, noun: Tok) -> int | None:
    """'with the engine off': the preposition of an absolute construction around ``noun``."""
    view = ctx.view
    head = view[noun.head]
    if noun.dep == "pobj" and head.lower in ctx.words("absolute_prepositions"):
        return head.i
    k = noun.i - 1
    while k >= 0 and view[k].pos in ("DET", "ADJ", "NUM", "NOUN", "PROPN") and ctx.same_segment(k, noun.i):
        k -= 1
    if k >= 0 and view[k].lower in ctx.words("absolute_prepositions") and ctx.same_segment(k, noun.i):
        return k
    return None


def is_attributive(ctx: ScopeContext, tok: Tok) -> bool:
    """An adjective or participle before the noun it describes ("a silent film", "a stopped car")."""
    view = ctx.view
    if tok.dep == "amod" and tok.head > tok.i:
        return True
    nxt = tok.i + 1
    return (
        nxt < len(view)
        and view[nxt].pos in NOUNS
        and ctx.same_segment(nxt, tok.i)
        and tok.dep not in ("acomp", "ROOT", "conj")
    )


def is_absence_word(ctx: ScopeContext, tok: Tok) -> bool:
    """Whether a word is an adjective of absence of the inventory ("missing"), whatever cue
    entry matched it first (a verb of lacking shares "missing" with them)."""
    return any(cue.cls == "absence_adjective" and tok.lower in cue.words for cue in ctx.rules.cues)


def locative_position(ctx: ScopeContext, tok: Tok) -> bool:
    """Whether a word of position ("off") is locative here: it heads a place or direction
    phrase ("off in the distance", "off to the left") or an adverb of distance modifies it
    ("far off", "way off"). A device's "off" ("the radio is off") takes neither."""
    view = ctx.view
    places, distances = ctx.words("locative_prepositions"), ctx.words("distance_adverbs")
    for child in view.children(tok.i):
        if child.dep == "prep" and child.lower in places and child.i > tok.i:
            return True
        if child.dep in ("advmod", "npadvmod") and child.lower in distances:
            return True
    before = view[tok.i - 1] if tok.i > 0 else None
    after = view[tok.i + 1] if tok.i + 1 < len(view) else None
    return bool(
        (before is not None and before.lower in distances and ctx.same_segment(before.i, tok.i))
        or (
            after is not None
            and after.lower in places
            and ctx.same_segment(after.i, tok.i)
            and after.pos == "ADP"
        )
    )


def absolute_noun(ctx: ScopeContext, match: Match) -> tuple[Tok, int] | None:
    """'with the cat meowing removed': the noun of an absolute construction whose predicate
    is the cue, and its preposition. The predicate closes the construction: nothing but
    particles and adverbs follows it in its segment. "without B removed" negates twice and
    is left alone."""
    view = ctx.view
    if ctx.first_after(match.last) is not None:
        return None
    for k in range(match.first - 1, -1, -1):
        if not ctx.same_segment(k, match.first):
            return None
        if view[k].lower in ctx.words("absolute_prepositions"):
            noun = ctx.first_after(k)
            if view[k].lower != "with" or noun is None or noun.i >= match.first or not ctx.nominal(noun, k):
                return None
            return view[ctx.noun_head(noun.i)], k
    return None


#: WordNet noun files whose members make sounds of their own: people, animals, natural
#: phenomena (rain, thunder) and sounds themselves (noun.attribute holds "noise", "sound").
_SOUNDING_NOUN_FILES = frozenset(
    {"noun.person", "noun.group", "noun.animal", "noun.phenomenon", "noun.attribute"}
)


def names_sound_class(ctx: ScopeContext, noun: Tok) -> bool:
    """Whether a noun phrase names a sound class: a word of it grounds in V_audio to an entry
    with an AudioSet ontology class ("the crickets", "the traffic noise"), or its most frequent
    WordNet sense is a person, a group, an animal, a natural phenomenon or a sound ("the
    people"); not a thing ("the string", "a surface").

    What the search can leave out is a sound; an imperative whose object is a thing ("pull the
    string") is an instruction heard in the clip, as Freesound captions write them.
    """
    view = ctx.view
    head = ctx.noun_head(noun.i)
    words = [view[k] for k in view.subtree(head) if view[k].pos in NOUNS]
    return grounds_in_audioset(words) or ctx.lex.first_lexname(view[head].lemma, "n") in _SOUNDING_NOUN_FILES


def grounds_in_audioset(words: Iterable[Tok]) -> bool:
    """Whether a word grounds in V_audio to an entry with an AudioSet ontology class, by its
    lemma or as written ("sirens", "traffic")."""
    from fortekit.vocab import load_vocabulary

    vocabulary = load_vocabulary()
    return any(
        entry.audioset_ids
        for tok in words
        for key in (tok.lemma, tok.lower)
        for entry in vocabulary.lookup(key)
    )


def closes_noun_phrase(ctx: ScopeContext, tok: Tok) -> bool:
    """Whether a verb form is said of the noun before it as a participle: its subject comes
    first, in its segment, and it takes no object and nothing follows it ("the B silenced")."""
    view = ctx.view
    subject = ctx.subject_of(tok.i)
    return not (
        subject is None
        or subject.i > tok.i
        or not ctx.is_noun(subject)
        or not ctx.same_segment(subject.i, tok.i)
        or any(c.dep in ("dobj", "obj", "ccomp", "xcomp") and c.i > tok.i for c in view.children(tok.i))
        or ctx.first_after(tok.i) is not None
    )


# -- scope rules ------------------------------------------------------------------------------------
def absolute_particle(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'with the heater off' where the tagger hung "off" on an earlier verb as its particle:
    a particle cannot follow a with-phrase its verb does not govern, so the word closes the
    absolute construction and is predicated of its noun."""
    tok = ctx.view[match.first]
    absolute = absolute_noun(ctx, match) if tok.dep == "prt" else None
    if absolute is None or tok.head > absolute[1]:
        return None
    return exclusion(ctx, match, absolute[0], "absolute", [absolute[1]])


def double_object(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'spare me the B': a verb of sparing in the double-object construction excludes its
    second object (the experience the recipient is spared); with one object no cue."""
    view = ctx.view
    tok = view[match.first]
    after = [c for c in view.children(tok.i) if c.i > tok.i]
    recipient = next((c for c in after if c.dep in ("dative", "iobj")), None)
    objects = [c for c in after if c.dep in ("dobj", "obj")]
    if recipient is None and objects and objects[0].pos == "PRON":
        recipient = objects[0]  # "spare me/dobj the B": a pronoun object before a noun phrase
    if recipient is None:
        return not_a_cue  # "spare the trees": refrain from harming
    objects = [c for c in objects if c.i > recipient.i]
    obj = objects[0] if objects else ctx.first_after(recipient.i)
    if obj is None or not ctx.nominal(obj, recipient.i):
        return not_a_cue
    return exclusion(ctx, match, obj, "double-object", [recipient.i])


def by_object(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'uninterrupted by B', 'unaccompanied by B', 'unmixed with B': the object is excluded."""
    view = ctx.view
    tok = view[match.last]
    preposition = next(
        (c for c in view.children(tok.i, ("prep", "agent")) if c.lower in ("by", "with") and c.i > tok.i),
        None,
    )
    if preposition is None and tok.i + 1 < len(view) and view[tok.i + 1].lower in ("by", "with"):
        preposition = view[tok.i + 1]
    if preposition is None or not ctx.same_segment(preposition.i, tok.i):
        return not_a_cue  # "an unaccompanied violin": no co-occurring sound is named
    obj = ctx.first_after(preposition.i)
    if obj is None or not ctx.nominal(obj, preposition.i):
        return not_a_cue
    return exclusion(ctx, match, obj, "participial", [preposition.i])


#: The scope rules of this module, by the names ``grammars/negation.toml`` uses.
LEXICAL_RULES = {"by_object": by_object, "double_object": double_object}


# -- a denied verb and its object ---------------------------------------------------------------------
def _sound_phrase(ctx: ScopeContext, noun: Tok) -> Tok | None:
    """The head of ``noun``'s phrase if it can name a sound: a noun (or indefinite pronoun)
    whose most frequent WordNet sense is no property or measure (``_PROPERTY_LEXNAMES``)."""
    if not ctx.is_noun(noun):
        return None
    head = ctx.view[ctx.noun_head(noun.i)]
    return None if ctx.lex.first_lexname(head.lemma, "NOUN") in _PROPERTY_LEXNAMES else head


def _sound_object(ctx: ScopeContext, verb: Tok) -> Tok | None:
    """The sound phrase a verb takes as its object, or the subject of its clausal object
    ("does not want dogs barking"); pronouns other than the indefinite ones are none."""
    view = ctx.view
    for child in view.children(verb.i):
        if child.i < verb.i or not ctx.same_segment(child.i, verb.i):
            continue
        if child.dep in _OBJECT_DEPS:
            return _sound_phrase(ctx, child)
        if child.dep in _CLAUSE_DEPS:
            inner = ctx.subject_in_segment(child.i)
            if inner is not None:
                return _sound_phrase(ctx, inner)
    return None


def sound_object(ctx: ScopeContext, verb: Tok) -> Tok | None:
    """The sound phrase a verb takes as its object (direct, of a clausal object, or of a
    prepositional verb of the perception list), or None."""
    phrasal = phrasal_object(ctx, verb)
    return phrasal[0] if phrasal is not None else _sound_object(ctx, verb)


def _before_exceptive(ctx: ScopeContext, obj: Tok) -> bool:
    """'can not do anything but make noise': a negated indefinite with an exceptive is the
    exceptive construction ("nothing but"), whose object is asserted (Moltmann 1995)."""
    view = ctx.view
    nxt = obj.i + 1
    return (
        obj.pos == "PRON"
        and nxt < len(view)
        and (view[nxt].lower in ctx.words("exceptives") or view[nxt].lower == "except")
    )


def _connective_object(ctx: ScopeContext, verb: Tok) -> tuple[Tok, list[int]] | None:
    """'(not) accompanied by B', '(not) associated with B': the object of a co-occurrence
    connective or verb that starts at ``verb``, with the connective's tokens."""
    view = ctx.view
    lemmas = [t.lemma for t in view.tokens]
    for phrase, entry in ctx.rules.lemma_phrases_from(verb.lemma):
        end = verb.i + len(phrase)
        if (
            isinstance(entry, Connective)
            and entry.kind == "co-occurrence"
            and tuple(lemmas[verb.i : end]) == phrase
        ):
            obj = ctx.first_after(end - 1)
            if obj is not None and ctx.nominal(obj, end - 1):
                return obj, list(range(verb.i, end))
    if verb.lemma in ctx.words("cooccurrence_verbs"):
        after = verb.i + 1
        if after < len(view) and view[after].lower in ("by", "with"):
            obj = ctx.first_after(after)
            if obj is not None and ctx.nominal(obj, after):
                return obj, [verb.i, after]
    return None


def phrasal_object(ctx: ScopeContext, verb: Tok) -> tuple[Tok, int] | None:
    """'look for B': the object of a prepositional verb the perception list holds as a phrase
    (the lexicon's seeking verbs), with the preposition."""
    perception = ctx.words("perception")
    view = ctx.view
    for prep in view.children(verb.i, ("prep",)):
        if prep.i > verb.i and f"{verb.lemma} {prep.lower}" in perception:
            obj = next((c for c in view.children(prep.i, ("pobj",))), None) or ctx.first_after(prep.i)
            if obj is not None and ctx.same_segment(obj.i, verb.i):
                found = _sound_phrase(ctx, obj)
                if found is not None:
                    return found, prep.i
    return None


def _speaker_recipient(ctx: ScopeContext, verb: Tok) -> int | None:
    """'give me B': the speaker as the recipient of a verb of giving (double object)."""
    if verb.lemma not in ctx.words("giving_verbs"):
        return None
    for child in ctx.view.children(verb.i, ("dative", "iobj")):
        if child.lower in ctx.words("speaker_pronouns"):
            return child.i
    return None


def negated_object(ctx: ScopeContext, match: Match, verdict: Verdict) -> Verdict:
    """What a denied verb's object is (docs/negation.md, "A negated verb and its object").

    A class decides: the object of a negated verb of wanting, needing, perceiving or
    containing (the ``perception`` list) or of a negated co-occurrence connective is
    excluded; the object of a verb of hiding (``obscuring_verbs``), an aspectual verb or an
    implicative stays asserted and the verb is denied. The object of a negated verb of no
    class is never asserted: the scope is unresolved (reason "negated verb of no class").

    Args:
        ctx: the caption's scope context.
        match: the cue.
        verdict: the verdict its scope rule gave.

    Returns:
        The verdict to apply (``verdict`` itself when no object decides anything).
    """
    if verdict.effect != "deny" or verdict.target is None or verdict.construction in _DECIDED:
        return verdict
    view = ctx.view
    verb = view[verdict.target]
    if not ctx.is_verbal(verb) and not verb.lower.endswith("ing"):
        return verdict
    if _sound_object(ctx, verb) is None:  # "do not like B barking": the negated head passed on
        verb = next(
            (view[k] for k in verdict.cue_tokens if ctx.is_verbal(view[k]) and _sound_object(ctx, view[k])),
            verb,
        )
    connective = _connective_object(ctx, verb)
    if connective is not None:  # "not accompanied by B": B is not heard
        joined, tokens = connective
        return exclusion(ctx, match, joined, verdict.construction, [*verdict.cue_tokens, *tokens])
    phrasal = phrasal_object(ctx, verb)
    obj = _sound_object(ctx, verb) if phrasal is None else phrasal[0]
    if obj is None or obj.i in ctx.claimed or _before_exceptive(ctx, obj):
        return verdict
    recipient = _speaker_recipient(ctx, verb)
    if recipient is not None:  # "don't give me B": a request not to be given B
        return exclusion(ctx, match, obj, "clausal", [*verdict.cue_tokens, verb.i, recipient])
    if phrasal is not None:  # "not looking for B"
        return exclusion(ctx, match, obj, "clausal", [*verdict.cue_tokens, verb.i, phrasal[1]])
    if verb.lemma in ctx.words("perception") or verb.lower in ctx.words("perception"):
        subject = ctx.subject_in_segment(verb.i)
        tokens = [*verdict.cue_tokens, verb.i]
        if subject is not None and subject.pos == "PRON" and subject.dep in SUBJECT_DEPS:
            tokens.append(subject.i)  # "I don't want B": the speaker is no sound
        return exclusion(ctx, match, obj, "clausal", tokens)
    if verb.lemma in ctx.words("obscuring_verbs") or verb.lemma in ctx.words("aspectual_verbs"):
        return verdict
    return Verdict(
        "unresolved",
        verdict.construction,
        obj.i,
        cue_tokens=[*verdict.cue_tokens, verb.i, verdict.target],
        reason="negated verb of no class",
    )
