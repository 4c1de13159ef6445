"""An exclusion must not deny what the same caption asserts (docs/negation.md, "Coherence").

A formula has no time: "thunder roaring, then no thunder, then more thunder" cannot exclude
thunder, and "a saw saws through wood, not a large saw" does not say there is no saw. The
verbal rule already reads "a dog barks but does not growl" as a denial, since the dog is
heard through another predicate; the same holds for every construction:

* an exclusion whose noun the caption asserts in another segment (same lemma, no cue in
  that segment) is a pause when the caption orders the two in time (a ``sequence_words``
  word in either segment: "then no thunder, then more thunder", "until there is no more
  water"): the formula cannot hold it, and the scope is unresolved. Otherwise it negates
  only what it adds: one modifier or verb added is denied of the asserted mention ("not a
  large saw" -> ``¬Large(x)``, contrastive negation, Horn 1989); with nothing or several
  things added it is another entity of the kind ("a car with no cars around", implicit
  alterity, as "no *other* dogs" says outright) and the exclusion stands;
* a ceasing verb whose subject goes on to do something else ("the kettle has finished
  boiling and is making a whistle noise") tells a sequence in the clip: the subject stays
  asserted, and the ended event, which may be heard before it ends, is neither asserted nor
  excluded (an unresolved scope).

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("a tea kettle has finished boiling and is making a whistle noise").formula)
    '∃x ∃y [Tea(x) ∧ Kettle(x) ∧ Make(x, y) ∧ Whistling(y) ∧ Noise(y)]'
"""

from __future__ import annotations

from fortekit.fol.caption.negation_context import NOUNS, Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_rules import Cue
from fortekit.fol.caption.tokens import Tok

__all__ = ["coherent"]

_EXTRA_POS = frozenset({"ADJ", "VERB"})
_EXTRA_DEPS = frozenset({"amod", "acl", "relcl", "compound", "nmod"})


def _bases(ctx: ScopeContext, tok: Tok) -> set[str]:
    """The lemma of a token and its WordNet base forms ("geese" tagged NNP is "goose")."""
    return {tok.lemma, *ctx.lex.morphy(tok.lower, "NOUN"), *ctx.lex.morphy(tok.lower, "VERB")}


def _other_mention(ctx: ScopeContext, target: Tok, scope: set[int]) -> Tok | None:
    """An asserted mention of the target's lemma in another segment with no cue of its own."""
    view = ctx.view
    lemmas = _bases(ctx, target)
    for tok in view.tokens:
        if (
            tok.i in scope
            or tok.i in ctx.claimed
            or not lemmas & _bases(ctx, tok)
            or ctx.segment[tok.i] < 0
            or ctx.same_segment(tok.i, target.i)
            or (tok.pos not in NOUNS and not ctx.is_verbal(tok))
        ):
            continue
        segment = ctx.segment_tokens(tok.i)
        if any(ctx.rules.cue_for_word(view[k].lower) is not None for k in segment):
            continue
        return tok
    return None


def _ordered(ctx: ScopeContext, tokens: tuple[int, ...]) -> bool:
    """Whether a word of sequence (``sequence_words``) stands in the segments of ``tokens`` or
    in the boundary that opens one ("..., then no thunder, then more thunder")."""
    sequence, segment = ctx.words("sequence_words"), ctx.segment
    for i in tokens:
        k = i
        while k >= 0 and (segment[k] == segment[i] or segment[k] < 0):
            if ctx.view[k].lower in sequence:
                return True
            k -= 1
        k = i + 1
        while k < len(segment) and segment[k] == segment[i]:
            if ctx.view[k].lower in sequence:
                return True
            k += 1
    return False


def _holder(ctx: ScopeContext, mention: Tok) -> Tok:
    """The entity a mention stands for: the noun itself, or a verb's subject ("a saw saws")."""
    if mention.pos in NOUNS:
        return mention
    subject = ctx.subject_of(mention.i)
    return subject if subject is not None else mention


def _repeated(ctx: ScopeContext, match: Match, verdict: Verdict) -> Verdict:
    view = ctx.view
    assert verdict.target is not None
    target = view[verdict.target]
    scope = ctx.phrase(target.i, verdict.cue_tokens) | set(match.tokens)
    alterity = ctx.words("alterity_words")
    if any(view[k].lower in alterity for k in range(match.first, max(scope | {target.i}) + 1)):
        return verdict  # "no other dogs": another entity
    mention = _other_mention(ctx, target, scope)
    if mention is None:
        return verdict
    extras = [
        view[k]
        for k in sorted(scope)
        if k != target.i
        and (view[k].pos in _EXTRA_POS or view[k].tag in ("VBG", "VBN"))
        and view[k].lower not in ctx.words("phrase_openers")
        and (view[k].dep in _EXTRA_DEPS or view[k].head == target.i or target.head == k)
    ]
    if _ordered(ctx, (target.i, mention.i)):
        # "then no thunder, then more thunder", "until there is no more water": a pause
        return Verdict(
            "unresolved",
            verdict.construction,
            target.i,
            cue_tokens=verdict.cue_tokens,
            reason="sound asserted elsewhere in the caption",
        )
    if len(extras) == 1:  # "not a large saw": the saw is there, it is not large
        holder = _holder(ctx, mention)
        cue_tokens = [*verdict.cue_tokens, *(k for k in scope if k != extras[0].i)]
        return Verdict("deny", "contrastive", extras[0].i, holder.i, cue_tokens=cue_tokens, rehead=True)
    return verdict  # "a car with no cars around": another car (implicit alterity)


def _goes_on(ctx: ScopeContext, verb: Tok, subject: Tok) -> bool:
    """Whether the subject of a ceasing verb is the subject of another positive verb (not the
    ceasing verb's own complement: "has finished boiling")."""
    view = ctx.view
    complements = {c.i for c in view.children(verb.i, ("xcomp", "ccomp"))}
    for tok in view.tokens:
        if tok.i == verb.i or tok.i in complements or tok.pos != "VERB":
            continue
        if tok.dep in ("acl", "relcl") and tok.head == subject.i:
            continue  # "the birds chirping having vanished": the phrase's own verb is what ceased
        own = ctx.subject_of(tok.i)
        shared = own is None and tok.dep == "conj" and tok.head == verb.i  # "has finished X and is making Y"
        if (
            (own is subject or shared)
            and not any(c.dep == "neg" for c in view.children(tok.i))
            and ctx.rules.cue_for_word(tok.lemma) is None
        ):
            return True
    return False


def _ceased(ctx: ScopeContext, match: Match, verdict: Verdict) -> Verdict:
    view = ctx.view
    assert verdict.target is not None
    verb = view[match.first]
    subject = view[verdict.target]
    if not _goes_on(ctx, verb, subject):
        return verdict
    # "has finished boiling and is making a whistle": a sequence in the clip; the subject is
    # heard, and the ended event may be heard before it ends: neither asserted nor excluded
    complement = [c.i for c in view.children(verb.i, ("xcomp",)) if ctx.is_verbal(c)]
    return Verdict(
        "unresolved",
        "aspectual",
        None,
        cue_tokens=[*verdict.cue_tokens, *complement],
        reason="ceased event of a subject that goes on",
    )


def coherent(ctx: ScopeContext, match: Match, verdict: Verdict) -> Verdict:
    """The verdict, made coherent with what the rest of the caption asserts (module docstring).

    Args:
        ctx: the caption's scope context.
        match: the cue.
        verdict: the verdict of its scope rule.

    Returns:
        ``verdict`` itself, or a denial or an unresolved scope in its place.
    """
    if verdict.effect != "exclude" or verdict.target is None or verdict.extra_targets:
        return verdict
    if isinstance(match.entry, Cue) and match.entry.cls == "ceasing_verb":
        return _ceased(ctx, match, verdict)
    return _repeated(ctx, match, verdict)
