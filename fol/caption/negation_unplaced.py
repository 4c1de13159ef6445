"""Two constructions that make a sound *unsure*: the resultative state of a verb of lessening or
ending, and the of-phrase of separation of a verb of no class.

Each held-out set of query wordings finds cue words outside the classes ("A, the B erased",
"A, purged of B"), and read word by word they assert B, so that formula scoring promotes the
very sound the query leaves out. Issue 42's rule is that a possible cue the parser cannot
resolve is unsure, never an assertion (docs/negation.md, "Lessening, ending and separation"):

* **the resultative state of a verb of lessening or ending** ("A, the B erased", "with the B
  suppressed", "the B has been cut short"): a caption describes sound events as they happen
  ("a door is slammed", "a lid is put back on"); a participle that closes an absolute
  construction, follows a perfect auxiliary or stands after its noun at the end of a clause
  describes the state an action left its noun in (Huddleston & Pullum 2002, ch. 14 §9 and
  ch. 3 §4: the absolute and the resultative perfect). Most such states presuppose the noun
  ("the sound has been distorted", "with his voice amplified"); a causative of lessening or
  ending (the lexicon's ``diminishing_verb`` class: WordNet's make smaller, weaken, hold in
  check, bring to an end, do away with, kill) leaves unknown how much of it is left, so B is
  unsure. A verb with a class of its own keeps it (a verb of removing excludes B, of hiding
  asserts it), and so does a sound event of V_audio ("with a window broken"). The
  constructions are those of the ``removed_object`` rule
  (:mod:`fortekit.fol.caption.negation_removal`).
* **the of-phrase of separation** ("A, purged of B", "shorn of B"): after a participle, "of"
  marks the material ("built of wood"), the topic ("accused of", "reminded of", "heard of")
  or what is taken away (Levin 1993, §10.6: "rob", "purge", "strip", "cleanse" ... "of" the
  thing removed; Quirk et al. 1985, §9.5). The verb's lexicographer file tells them apart:
  stative, creation, communication, cognition, perception and emotion verbs take material and
  topic of-phrases, and light verbs ("made of") take their object's meaning. For any other
  verb of no class, in a reduced participle with no auxiliary of its own (not the event "a
  tank is drained of water"), the of-object is unsure.

Only a noun phrase that names a sound class is made unsure, because what a query leaves out is
a sound. An unsure scope contributes no predicate, as for a negated verb of no class, and the
note records it (``ParseResult.unresolved``).

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("a dog barking, the birds erased").formula)
    '∃x [Dog(x) ∧ Barking(x)]'
    >>> [n.reason for n in parse_caption("a dog barking, the birds erased").unresolved]
    ['resultative state of a verb of lessening or ending']
    >>> str(parse_caption("a train whistles but the sound has been distorted").formula)
    '∃x ∃y [Train(x) ∧ Whistling(x) ∧ Sound(y) ∧ Distorted(y)]'
"""

from __future__ import annotations

from fortekit.fol.caption.negation_context import Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_lexical import exclusion, is_attributive, names_sound_class, not_a_cue
from fortekit.fol.caption.negation_removal import removed_object
from fortekit.fol.caption.negation_rules import Cue, NegationRules
from fortekit.fol.caption.negation_search import has_class, sound_event_verbs
from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = [
    "RESULT_REASON",
    "SEPARATION_REASON",
    "UNPLACED_RESULT",
    "UNPLACED_RULES",
    "UNPLACED_SEPARATION",
    "unplaced_matches",
    "unplaced_result",
    "unplaced_separation",
]

RESULT_REASON = "resultative state of a verb of lessening or ending"
SEPARATION_REASON = "of-phrase of separation after a verb of no class"
#: The cue entries the two constructions are recorded under (no words: found by construction).
UNPLACED_RESULT = Cue(
    "unplaced-result", "unplaced_verb", frozenset(), (), frozenset({"VERB"}), ("unplaced_result",), False,
    "resultative", (),
)
UNPLACED_SEPARATION = Cue(
    "unplaced-separation", "unplaced_verb", frozenset(), (), frozenset({"VERB"}), ("unplaced_separation",),
    False, "resultative", (),
)
#: Verb files whose participles take an of-phrase of material or topic, not of separation.
_MATERIAL_OR_TOPIC_FILES = frozenset(
    {"verb.stative", "verb.creation", "verb.communication", "verb.cognition", "verb.perception",
     "verb.emotion"}
)
#: The constructions of ``removed_object`` that describe a state, not an event or a request.
_STATE_CONSTRUCTIONS = frozenset({"absolute", "copular", "post-nominal"})
_PAST_TAGS = frozenset({"VBN", "VBD"})


def _may_be_state(view: TokenView, tok: Tok, last: int, perfect: frozenset[str]) -> bool:
    """A cheap first look: a perfect auxiliary, an absolute "with" before it, or nothing but
    punctuation after it (or after its particle, ``last``); the rule itself decides."""
    if any(c.lower in perfect for c in view.children(tok.i, ("aux", "auxpass"))):
        return True
    nxt = last + 1
    if nxt >= len(view) or not view[nxt].text.isalnum():
        return True
    return any(view[k].lower == "with" for k in range(tok.i))


def unplaced_matches(view: TokenView, rules: NegationRules) -> list[Match]:
    """The past participles, in a shape one of the two constructions may take, of verbs of
    lessening or ending (a state) or of verbs of no class (before "of") that are no sound event
    of V_audio and have no class of the inventory.

    Args:
        view: the caption's tokens.
        rules: the negation rules.

    Returns:
        One match per such participle (most captions: none).
    """
    found: list[Match] = []
    if _PAST_TAGS.isdisjoint([tok.tag for tok in view.tokens]):  # most captions: no token is asked
        return found
    events: frozenset[str] | None = None
    diminishing, light = rules.words("diminishing_verbs"), rules.words("light_verbs")
    perfect = rules.words("perfect_auxiliaries")
    for tok in view.tokens:
        if tok.pos != "VERB" or tok.tag not in _PAST_TAGS or tok.lemma in light:
            continue
        separation = tok.i + 1 < len(view) and view[tok.i + 1].lower == "of"
        # a phrasal verb of the class with its particle ("the B cancelled out", "cut off")
        particle = next(
            (p for p in view.children(tok.i, ("prt",)) if f"{tok.lemma} {p.lower}" in diminishing), None
        )
        tokens = [tok.i] if particle is None else [tok.i, particle.i]
        if separation:
            if any(c.dep in ("aux", "auxpass") for c in view.children(tok.i)):
                continue  # "a tank is drained of water": the event
        elif (tok.lemma not in diminishing and particle is None) or not _may_be_state(
            view, tok, tokens[-1], perfect
        ):
            continue
        events = sound_event_verbs() if events is None else events
        if tok.lemma in events or has_class(rules, tok):
            continue
        found.append(Match(UNPLACED_SEPARATION if separation else UNPLACED_RESULT, tokens))
    return found


def _unsure(verdict: Verdict, reason: str) -> Verdict:
    return Verdict(
        "unresolved",
        verdict.construction,
        verdict.target,
        cue_tokens=verdict.cue_tokens,
        extra_targets=verdict.extra_targets,
        reason=reason,
    )


def unplaced_result(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'A, the B weakened', 'with the B dampened', 'the B has been quelled': B is unsure."""
    verdict = removed_object(ctx, match)
    if verdict is None or verdict.effect != "exclude" or verdict.construction not in _STATE_CONSTRUCTIONS:
        return not_a_cue
    if verdict.target is None or not names_sound_class(ctx, ctx.view[verdict.target]):
        return not_a_cue
    return _unsure(verdict, RESULT_REASON)


def unplaced_separation(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'A, purged of B', 'A, shorn of B': the of-object of a verb of separation is unsure."""
    view = ctx.view
    tok = view[match.first]
    of = match.last + 1
    if is_attributive(ctx, tok) or ctx.lex.first_lexname(tok.lemma, "VERB") in _MATERIAL_OR_TOPIC_FILES:
        return not_a_cue
    if not ctx.same_segment(of, tok.i):
        return not_a_cue
    obj = ctx.first_after(of)
    if obj is None or not ctx.nominal(obj, of) or not names_sound_class(ctx, obj):
        return not_a_cue
    return _unsure(exclusion(ctx, match, obj, "participial", [of]), SEPARATION_REASON)


#: The scope rules of this module, by the names the cue entries use.
UNPLACED_RULES = {"unplaced_result": unplaced_result, "unplaced_separation": unplaced_separation}
