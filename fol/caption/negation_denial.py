"""A denying word that no negation rule placed: the sound it bears on is unsure (issue 42).

The lexicon of negation cues (``grammars/negation_lexicon.toml``) places each class of words in
the constructions its rules know: a verb of removing excludes its object in a resultative
participle ("with B removed"), a verb of omitting in the imperative ("A; omit the B"). A query
can use the same word in a construction no rule reads ("rain falling with thunder nixed",
attached by the tagger to the rain), and the word is then parsed as a predicate like any other
while the sound it denies stays asserted: formula scoring would promote what the query leaves
out. Issue 42 asks that "a token that these classes place as a negation cue, but whose scope the
parser cannot resolve, makes its clause unsure; it is never read as an assertion".

A word *denies* by its own sense when its class says so (``denies = true``: omitting, removing,
forbidding, eliminating, depriving, ceasing, lessening, the absence and privative adjectives,
the negative implicatives: :meth:`~fortekit.fol.caption.negation_lexicon.NegationLexicon.denying_lemmas`);
the classes that deny only under a negation (wanting, needing, hearing, containing) do not. Such
a word is *unplaced* when it is still a predicate of the parse: a rule that read it as a cue
would have consumed it. A word V_audio grounds is a sound or a property of one ("glass
breaking", "muffled voices") and an attributive modifier describes a sound that is there ("a
complete stop"): neither is read as a denial.

Only the state a past participle or an adjective names is a denial: a finite or -ing verb tells
an event that happens to the sound, which is there ("a zapper killing bugs", "the engine
abating", "a woman interjects"). The sound it bears on is the one it is said of by English word
order (Huddleston & Pullum 2002, ch. 7 on post-head modifiers, ch. 4 on predicatives): the noun
right before it, with nothing but function words between ("the birds nixed", "thunder is
banned"); a participle before its own noun is attributive ("a confined space"). That sound is
unsure: its clause and the denying word leave the formula, and ``ParseResult.unresolved`` says
why. The
caption's first sound is never made unsure (what a query opens with is what it asks for). On the
development captions the step changes nothing (docs/negation.md, "Unplaced denying words").

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> result = parse_caption("a dog barking; honking is banned")
    >>> str(result.formula)
    '∃x [Dog(x) ∧ Barking(x)]'
    >>> [(note.cue, note.scope, note.reason) for note in result.unresolved]
    [('banned', 'honking', 'sound a denying word bears on, which no negation rule placed')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache

from fortekit.fol.caption.negation import ScopeNote
from fortekit.fol.caption.result import PredicateRecord

__all__ = ["DENIAL_REASON", "later_sounds", "sound_entities", "unplaced_denials"]

DENIAL_REASON = "sound a denying word bears on, which no negation rule placed"
_WORD_POS = frozenset({"VERB", "ADJ"})
_NOUN_POS = frozenset({"NOUN", "PROPN"})
#: an attributive modifier describes the sound it modifies: "muffled voices" are voices
_ATTRIBUTIVE = frozenset({"amod", "compound", "nmod"})
_BOUNDARIES = re.compile(r"[,;:.!?()\[\]\u2013\u2014]|\s-\s")


@cache
def _denying() -> tuple[frozenset[str], dict[str, str]]:
    from fortekit.fol.caption.negation_lexicon import load_negation_lexicon

    lexicon = load_negation_lexicon()
    lemmas = lexicon.denying_lemmas()
    classes = {entry.lemma: entry.cls for entry in lexicon.entries if entry.lemma in lemmas}
    return lemmas, classes


def unplaced_denials(
    text: str, records: Sequence[PredicateRecord], tags: Callable[[int], str] | None = None
) -> tuple[frozenset[str], tuple[PredicateRecord, ...], tuple[ScopeNote, ...]]:
    """The variables of the sounds an unplaced denying word bears on, the words, and a note each.

    Args:
        text: the caption.
        records: the parse's records, in the formula's order.
        tags: a token's Penn Treebank tag by its index (None: every verb counts as a participle).

    Returns:
        ``(variables, words, notes)``: the unsure sounds' variables, the denying words' records
        (both leave the formula) and one unresolved :class:`~fortekit.fol.caption.negation.ScopeNote`
        per sound; three empty values for almost every caption.

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> unplaced_denials("a dog barks", parse_caption("a dog barks").predicates)
        (frozenset(), (), ())
    """
    lemmas, classes = _denying()
    words = [record for record in records
             if record.lemma in lemmas and record.pos in _WORD_POS and not record.grounded
             and record.rule not in _ATTRIBUTIVE and not record.excluded and not record.negated]
    if words and tags is not None:  # a finite or -ing verb tells an event ("killing bugs"), not a state
        words = [record for record in words
                 if record.pos != "VERB" or (record.tokens and tags(record.tokens[-1]) == "VBN")]
    if not words:
        return frozenset(), (), ()
    sounds = later_sounds(records)
    if sounds is None:
        return frozenset(), (), ()
    nouns, first = sounds
    found: dict[str, PredicateRecord] = {}
    for word in words:
        name = _borne_on(text, records, word, nouns)
        if name is not None and name != first:
            found.setdefault(name, word)
    if not found:
        return frozenset(), (), ()
    notes = tuple(
        ScopeNote(word.source, "denying-word", classes.get(word.lemma, ""), "unplaced", "unresolved",
                  nouns[name].source, word.span, False, DENIAL_REASON)
        for name, word in sorted(found.items(), key=lambda item: nouns[item[0]].span)
    )
    return frozenset(found), tuple(dict.fromkeys(found.values())), notes


def sound_entities(records: Sequence[PredicateRecord]) -> dict[str, PredicateRecord]:
    """Each asserted sound's variable and the record that names it: its noun, or a gerund that
    names it ("honking"), in the formula's order.

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> sorted(sound_entities(parse_caption("a dog barks as a car passes").predicates))
        ['x', 'y']
    """
    nouns: dict[str, PredicateRecord] = {}
    named = {record.participants[0] for record in records
             if record.pos in _NOUN_POS and len(record.participants) == 1}
    for record in records:
        if record.grounded and not record.excluded and len(record.participants) == 1 and (
                record.pos in _NOUN_POS or record.participants[0] not in named):
            nouns.setdefault(record.participants[0], record)
    return nouns


def later_sounds(records: Sequence[PredicateRecord]) -> tuple[dict[str, PredicateRecord], str] | None:
    """The caption's sounds (:func:`sound_entities`) and the variable of its first, which is never
    made unsure; None when it has fewer than two (nothing later to doubt).

    Example:
        >>> from fortekit.fol.caption import parse_caption
        >>> nouns, first = later_sounds(parse_caption("a dog barks as a car passes").predicates)
        >>> first, sorted(nouns)
        ('x', ['x', 'y'])
        >>> later_sounds(parse_caption("a dog barks").predicates) is None
        True
    """
    nouns = sound_entities(records)
    if len(nouns) < 2:
        return None
    return nouns, min(nouns, key=lambda name: nouns[name].span)


def _borne_on(text: str, records: Sequence[PredicateRecord], word: PredicateRecord,
              nouns: dict[str, PredicateRecord]) -> str | None:
    """The variable of the sound a post-head participle or a predicative adjective is said of: the
    noun right before it, with nothing but function words between ("the birds nixed", "thunder is
    banned"); None for a pre-head modifier ("a confined space") or none."""
    if any(name in nouns and nouns[name].span[0] >= word.span[1] for name in word.participants):
        return None  # it comes before its own noun: attributive
    before = [name for name in nouns if nouns[name].span[1] <= word.span[0]]
    if not before:
        return None
    name = max(before, key=lambda name: nouns[name].span)
    start, end = nouns[name].span[1], word.span[0]
    if _BOUNDARIES.search(text[start:end]) or any(
            record is not word and start <= record.span[0] and record.span[1] <= end for record in records):
        return None
    return name
