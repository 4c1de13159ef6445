"""The imperative addressed to the search: "A; drop the B".

A query in the imperative mood asks the search to do something with a sound, and the only
things a search can do with one are to bring it or to leave it out. So a verb in the
imperative that has *any* sense of removing, omitting or eliminating (the lexicon's
``imperative_removal_verb`` class, derived from WordNet by
``scripts/build_negation_lexicon.py``: "drop", "ditch", "kill", "mute" ...) excludes its
object, though its most frequent sense is another ("drop" is first "let fall"): the
imperative selects the sense (Huddleston & Pullum 2002, ch. 10 §4: the imperative directs
the addressee; the addressee here cannot let anything fall). The class leaves out verbs with a
sense that a request could mean instead ("pick", "check out": select, examine) and light
verbs ("take"). Any other form of such a verb is an event in the clip, no cue ("a ball drops",
"a man dropping a pan").

An imperative here is what a clause about the search takes it to be
(:mod:`fortekit.fol.caption.negation_search`): a base form (or the tagger's present reading of
one) with no subject, auxiliary or negation, no conjunct, after a comma, semicolon, colon or
dash; a subject across a segment boundary ("A; drop the B", where the parser makes A the
subject) is the parser's, not the verb's. The object must name a sound class (an AudioSet class through
V_audio): what the search can leave out is a sound, and an imperative whose object is a thing
("Pull the string, mow the lawn") is an instruction heard in the clip, as Freesound captions
write them.

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("a dog barking; drop the traffic noise").formula)
    '∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y TrafficNoise(y)]'
    >>> str(parse_caption("a ball drops on the floor").formula)
    '∃x ∃y [Ball(x) ∧ Dropping(x) ∧ On(x, y) ∧ Floor(y)]'
"""

from __future__ import annotations

from fortekit.fol.caption.negation_context import Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_lexical import not_a_cue
from fortekit.fol.caption.negation_removal import directive_exclusion
from fortekit.fol.caption.negation_rules import Cue, NegationRules
from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = ["IMPERATIVE_REMOVAL", "IMPERATIVE_RULES", "imperative_object", "removal_verb_tokens"]

#: The cue entry the imperatives are recorded under (no words: it is found by construction, in
#: :func:`fortekit.fol.caption.negation_search.search_clauses`).
IMPERATIVE_REMOVAL = Cue(
    "imperative-removal", "removal_verb", frozenset(), (), frozenset({"VERB"}), ("imperative_object",),
    True, "any", (),
)


def removal_verb_tokens(view: TokenView, rules: NegationRules, verb: Tok) -> list[int] | None:
    """The tokens of a verb of the class, with its particle ("throw away"); None if it is none."""
    listed = rules.words("imperative_removal_verbs")
    # the tagger reads a particle after its verb as an adverb too ("throw away/RB the B")
    for particle in view.children(verb.i, ("prt", "advmod")):
        if f"{verb.lemma} {particle.lower}" in listed:
            return [verb.i, particle.i]
    return [verb.i] if verb.lemma in listed else None


def imperative_object(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'A; drop the B': the object of a verb of the class in the imperative is excluded where it
    names a sound class; otherwise the verb is no cue."""
    return directive_exclusion(ctx, match, "imperative", sound_class_only=True) or not_a_cue


IMPERATIVE_RULES = {"imperative_object": imperative_object}
