"""A negation never leaves a sound it reaches asserted: the sounds a cue touches but does not place.

Each blind set of query wordings finds negations the scope rules resolve onto something that
is no sound ("A, and by no means a B" excludes *means*; "A, a B not allowed" denies *Allow*;
"A - not interested in B" denies *Interest*), or cannot resolve at all ("A, exclude: B"). Read
token by token, the sound those negations are about is asserted, and formula scoring then
promotes what the query leaves out. Issue 42's rule is that a negation the parser cannot place
on a sound makes the sound it reaches *unsure* (neither asserted nor denied, so formula scoring
keeps the whole-query similarity for it), never asserted. This is the structural complement of
the cue inventory: whatever the inventory calls the cue, a negation that denies nothing audible
says nothing of whether the sound near it is heard, so it may not be read as its presence.

A scope *denies something audible* when its word grounds in V_audio (a sound event, a property
of sound: "not barking", "not loud") or names a sound class ("no birds"). Otherwise (docs/
negation.md, "A negation's reach"):

* **a denied predicate that names nothing audible** (Huddleston & Pullum 2002, ch. 9 §1: the
  negation of a clause's predicate): an AudioSet sound class inside the predicate's
  complements is unsure ("not interested in B"), and so is the noun a negated participle
  follows ("a B not allowed"), unless the caption hears it through a predicate of its own
  ("a dog barking" keeps the dog);
* **an elliptical negative pronoun**, whose segment holds no other noun or verb ("B: none"):
  the nearest sound of the segment before it, which the pronoun stands for;
* **a cue whose scope is unresolved** ("A, exclude: B"): the first sound after it in its
  sentence is unsure; a cue with nothing after it, alone in its segment ("A, sure; B, not so
  much"), is an elliptical answer about the phrase before it (Huddleston & Pullum 2002, ch. 9
  §6 and ch. 17 on the elliptical "not"), and the nearest sound before it in its sentence is
  unsure.

Development captions bound the rule: "no struggle in the engine", "static with no discernible
signal", "a steady tone and no emotion", "none of their voices dominant" deny something that is
not a sound *of* a sound that is there, so an exclusion of a noun, a person or phenomenon known
only by its WordNet file, and the holder of a quantified denial are left alone. The caption's
first sound is never made unsure: a negation later in a caption is not about the sound the
caption opens with.

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("a dog barking, a car horn not allowed").formula)
    '∃x [Dog(x) ∧ Barking(x)]'
    >>> [n.reason for n in parse_caption("a dog barking, a car horn not allowed").unresolved]
    ['sound in the reach of a negation that denies nothing audible']
    >>> str(parse_caption("a man speaks with no emotion as a dog barks").formula)
    '∃x ∃y [Man(x) ∧ Speaking(x) ∧ ¬∃z Emotion(z) ∧ While(x, y) ∧ Dog(y) ∧ Barking(y)]'
"""

from __future__ import annotations

from fortekit.fol.caption.negation_context import NOUNS, Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_lexical import grounds_in_audioset, names_sound_class
from fortekit.fol.caption.negation_rules import Cue
from fortekit.fol.caption.negation_search import sound_event_verbs
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok

__all__ = ["ELLIPTICAL_REASON", "REACH_REASON", "UNPLACED_CUE_REASON", "unplaced_sounds"]

REACH_REASON = "sound in the reach of a negation that denies nothing audible"
UNPLACED_CUE_REASON = "sound after a cue whose scope is unresolved"
ELLIPTICAL_REASON = "sound before a negation that stands alone after it"
_SENTENCE_ENDS = frozenset({".", "!", "?", ";"})
#: the marks that set a phrase apart after a clause (a comma, a dash)
_APART = frozenset({",", "-", "--", "\u2013", "\u2014"})
_PREDICATE_POS = frozenset({"VERB", "ADJ"})
#: An elliptical negative pronoun ("none") or interjection stands for a noun phrase the context gave
#: before it (Huddleston & Pullum 2002, ch. 5 §9.3, the fused determiner-head; ch. 17 on ellipsis).
_PRO_FORMS = frozenset({"PRON", "INTJ"})


def _grounded(tok: Tok) -> bool:
    """Whether a word grounds in V_audio: a sound event, a property of sound, a sound class."""
    from fortekit.vocab import get_grounder

    if tok.pos in ("VERB", "AUX") and tok.lemma in sound_event_verbs():
        return True
    return get_grounder().ground(tok.lemma, tok.pos).entry is not None


def _audible(ctx: ScopeContext, tok: Tok) -> bool:
    return _grounded(tok) or (tok.pos in NOUNS and names_sound_class(ctx, tok))


def _sound_nouns(
    ctx: ScopeContext, indices: list[int], taken: set[int], after: int | None = None
) -> list[int]:
    """The heads of the sound-class noun phrases among ``indices``, in order; with ``after``, a
    word the tagger made a verb but that starts a noun phrase after it ("omit: trumpets/VERB")."""
    view = ctx.view
    heads: list[int] = []
    for k in indices:
        tok = view[k]
        if k in taken or (tok.pos not in NOUNS and (after is None or not ctx.nominal(tok, after))):
            continue
        head = ctx.noun_head(k)
        if head in heads or head in taken or not names_sound_class(ctx, view[head]):
            continue
        heads.append(head)
    return heads


def _audioset_class(ctx: ScopeContext, head: int) -> bool:
    """Whether a noun phrase's head or its compounds ground in an AudioSet class ("the sirens"),
    the strict test: a person or a phenomenon by its WordNet file ("voices", "power") is not
    enough here, where a negation of something else is the only evidence."""
    view = ctx.view
    return grounds_in_audioset([view[head], *view.children(head, ("compound",))])


def _first_sound(ctx: ScopeContext) -> int | None:
    view = ctx.view
    for tok in view.tokens:
        if tok.pos in NOUNS and names_sound_class(ctx, tok):
            return ctx.noun_head(tok.i)
    return None


def _sentence(ctx: ScopeContext, i: int) -> range:
    """The token range of token ``i``'s sentence (split at . ! ? and ;)."""
    view = ctx.view
    start = i
    while start > 0 and view[start - 1].lower not in _SENTENCE_ENDS:
        start -= 1
    end = i
    while end + 1 < len(view) and view[end].lower not in _SENTENCE_ENDS:
        end += 1
    return range(start, end + 1)


def _heard_otherwise(ctx: ScopeContext, holder: int, denied: int, cues: set[int]) -> bool:
    """Whether the caption hears the holder through a predicate of its own ("a dog barking")."""
    view = ctx.view
    for child in view.children(holder):
        if child.i != denied and child.i not in cues and child.pos in _PREDICATE_POS and _grounded(child):
            return True
    head = view[view[holder].head]
    return (
        view[holder].dep in SUBJECT_DEPS
        and head.i != denied
        and head.i not in cues
        and head.pos in _PREDICATE_POS
        and _grounded(head)
    )


def _elliptical(ctx: ScopeContext, segment: list[int], own: set[int]) -> bool:
    """A segment with no verb and no noun but the cue's own ("no thanks", "none")."""
    view = ctx.view
    return not any(
        view[k].pos in (*NOUNS, "VERB") and k not in own for k in segment if view[k].pos != "PUNCT"
    )


def _standing_alone(ctx: ScopeContext, sentence: range, cue: int, cues: set[int]) -> int | None:
    """Where a cue's own stretch starts when it stands apart at the end of its sentence: set off by
    a comma or a dash, and holding no noun, verb or word of sound but the cue's ("B, not so much");
    None otherwise ("B, not loudly" says something of B)."""
    view = ctx.view
    start = cue
    while start > sentence.start and view[start - 1].pos != "PUNCT":
        start -= 1
    if start == sentence.start or view[start - 1].lower not in _APART:
        return None
    stretch = [k for k in sentence if k >= start and k not in cues and view[k].pos != "PUNCT"]
    if any(view[k].pos in (*NOUNS, "VERB") or _grounded(view[k]) for k in stretch):
        return None
    return start


def _nearest(candidates: list[int], anchor: int) -> list[int]:
    return sorted(candidates, key=lambda k: abs(k - anchor))[:1]


def unplaced_sounds(
    ctx: ScopeContext, match: Match, verdict: Verdict, taken: set[int]
) -> tuple[list[int], str]:
    """The sound-class nouns a negation reaches but does not place, and the reason.

    Args:
        ctx: the caption's scope context, after the cue's verdict was applied.
        match: the cue.
        verdict: what its scope rule decided.
        taken: tokens already placed (excluded, suppressed, claimed, cue words).

    Returns:
        The noun heads to make unsure (often none) and the reason to record.
    """
    view = ctx.view
    cues = set(match.tokens) | set(verdict.cue_tokens)
    busy = taken | cues
    found: list[int] = []
    reason = REACH_REASON
    if verdict.effect == "deny" and verdict.target is not None:
        denied = view[verdict.target]
        if _grounded(denied):
            return [], reason
        complements = [
            k
            for child in view.children(denied.i)
            if child.i > denied.i and child.dep not in SUBJECT_DEPS
            for k in view.subtree(child.i)
        ]
        exceptive = next((k for k in complements if view[k].lower in ctx.words("exceptives")), None)
        if exceptive is not None:  # "can not do anything but make noises": what follows is asserted
            complements = [k for k in complements if k < exceptive]
        found = [k for k in _sound_nouns(ctx, complements, busy) if _audioset_class(ctx, k)]
        holder = verdict.holder
        if (
            isinstance(match.entry, Cue)
            and match.entry.cls == "particle"
            and holder is not None
            and holder != denied.i
            and holder not in busy
            and holder < denied.i
        ):
            head = ctx.noun_head(holder)
            heard = _heard_otherwise(ctx, head, denied.i, cues)
            if view[head].pos in NOUNS and _audioset_class(ctx, head) and not heard:
                found.append(head)
    elif verdict.effect == "exclude" and verdict.target is not None:
        target = view[verdict.target]
        if target.i not in cues and target.pos not in _PRO_FORMS:
            return [], reason  # most exclusions: a noun phrase of their own, placed
        segment = ctx.segment_tokens(match.first)
        if (
            not segment
            or not _elliptical(ctx, segment, cues | {target.i})
            or _audible(ctx, target)
            or any(_grounded(view[k]) for k in verdict.extra_targets)
        ):
            return [], reason
        before = [k for k in range(segment[0]) if ctx.segment[k] >= 0]
        if before:
            found = _nearest(_sound_nouns(ctx, ctx.segment_tokens(before[-1]), busy), match.first)
    elif verdict.effect == "unresolved" and verdict.target is None:
        reason = UNPLACED_CUE_REASON
        sentence = _sentence(ctx, match.last)
        after = [k for k in sentence if k > match.last]
        found = _sound_nouns(ctx, after, busy, match.last)[:1]
        if not found and verdict.reason == "empty scope":
            # a negation standing alone after a sound ("B, not so much", "B - not really") is the
            # elliptical answer to it: it stands for the phrase before it (H&P ch. 9 §6, ch. 17)
            stretch = _standing_alone(ctx, sentence, match.first, cues)
            if stretch is not None:
                reason = ELLIPTICAL_REASON
                found = _sound_nouns(ctx, [k for k in sentence if k < stretch], busy)[-1:]
    if not found:
        return [], reason
    first = _first_sound(ctx)
    return [k for k in found if k != first], reason
