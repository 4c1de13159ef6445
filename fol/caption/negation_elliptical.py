"""Cues whose construction is read from the punctuation and word order around them.

* ``comma_preposition``: "save" is a preposition only where it restricts what comes before
  it, set off by a comma or a dash, and is followed by the noun phrase it excepts ("A, save
  B": *SEM 2012's lexical cue); elsewhere it is the verb ("a man saves the cat"), no cue.
* ``post_negation``: a particle that closes its segment, with nothing after it but words of
  emphasis ("the B, not at all"), negates the verbless phrase before it: an elliptical
  constituent negation, "not B" written after its focus (NegEx's post-negation triggers).
* ``inverted_clause``: "nor" before a clause that inverts its auxiliary and subject ("nor is
  there B", "nor can you hear B") negates that clause (Huddleston & Pullum 2002, ch. 9 §3.3):
  an existential excludes its pivot, a verb of perceiving its object, another verb its subject.

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("a dog barking, save a cat meowing").formula)
    '∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Cat(y) ∧ Meowing(y)]]'
    >>> str(parse_caption("rain on a roof; thunder, not at all").formula)
    '∃x ∃y [Rain(x) ∧ On(x, y) ∧ Roof(y) ∧ ¬∃z Thunder(z)]'
"""

from __future__ import annotations

from fortekit.fol.caption.negation_context import VERBS, Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_lexical import exclusion, not_a_cue

__all__ = ["ELLIPTICAL_RULES", "comma_preposition", "post_negation"]

_SETTING_OFF = frozenset({",", "-", "--", "—", "–", ";", ":", "(", "?"})
#: Finite verb tags: a phrase with one of them is a clause, which a post-posed "not" does not negate.
_FINITE_TAGS = frozenset({"VBD", "VBP", "VBZ", "MD"})


def comma_preposition(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'A, save B': the noun phrase after the preposition is excluded; elsewhere no cue."""
    view = ctx.view
    k = match.first
    if k == 0 or view[k - 1].lower not in _SETTING_OFF or view[k].lower != view[k].lemma:
        return not_a_cue
    nxt = ctx.first_after(match.last)
    if nxt is None or not ctx.nominal(nxt, match.last):
        return not_a_cue
    return exclusion(ctx, match, nxt, "pre-nominal")


def _plural_head(ctx: ScopeContext, phrase: list[int]) -> int | None:
    """The plural noun the tagger read as a verb at the end of a verbless phrase ("car horns/VBZ:
    nope"), or None: it closes the phrase, has a noun sense and is no sound event ("the dog
    barks" is a clause)."""
    from fortekit.fol.caption.negation_search import sound_event_verbs

    view = ctx.view
    k = phrase[-1]
    found = (
        view[k].tag == "VBZ"
        and (len(phrase) == 1 or view[k - 1].pos in ("NOUN", "PROPN", "ADJ"))
        and bool(ctx.lex.morphy(view[k].lower, "NOUN"))
        and view[k].lemma not in sound_event_verbs()
    )
    return k if found else None


def post_negation(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'the B, not at all': a closing particle negates the verbless phrase before its comma."""
    view = ctx.view
    emphasis = ctx.words("emphasis_words")
    after = [
        k
        for k in ctx.segment_tokens(match.last)
        if k > match.last and view[k].pos != "PUNCT" and view[k].lower not in emphasis
    ]
    if after and [view[k].lower for k in after] != ["at", "all"]:
        return None
    comma = match.first - 1
    if comma < 1 or view[comma].lower not in _SETTING_OFF - {"("}:
        return None
    if any(k < match.first for k in ctx.segment_tokens(match.first)):
        return None  # the particle does not open its segment: "B, but not loudly" is read elsewhere
    before = [k for k in ctx.segment_tokens(comma - 1) if k < comma]
    plural = _plural_head(ctx, before) if before else None
    if not before or any(
        (view[k].tag in _FINITE_TAGS and k != plural) or view[k].pos == "AUX" for k in before
    ):
        return None
    noun = next((view[k] for k in before if ctx.is_noun(view[k]) or k == plural), None)
    if noun is None or any(
        view[k].pos in VERBS and view[k].tag not in ("VBG", "VBN") and k != plural for k in before
    ):
        return None
    tokens = [k for k in after if view[k].lower in ("at", "all")]
    return exclusion(ctx, match, noun, "elliptical", tokens)


def inverted_clause(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'nor is there B', 'nor can you hear B', 'nor does B bark': the inverted clause is negated."""
    view = ctx.view
    k = match.last + 1
    if k + 1 >= len(view) or view[k].pos == "PUNCT":  # "nor" opens the clause's segment, or ends one
        return None
    auxiliary = view[k]
    if auxiliary.pos != "AUX" and auxiliary.tag != "MD" and auxiliary.lemma not in ("be", "have", "do"):
        return None  # "nor the rain": no clause, the following phrase reads it
    if view[k + 1].lower == "there":  # "nor is there B"
        pivot = ctx.first_after(k + 1)
        if pivot is None or not ctx.nominal(pivot, k + 1):
            return None
        return exclusion(ctx, match, pivot, "clausal", [k, k + 1])
    subject = next((view[j] for j in range(k + 1, len(view))
                    if ctx.same_segment(j, k) and (ctx.is_noun(view[j]) or view[j].pos == "PRON")), None)
    if subject is None:
        return None
    verb = next((view[j] for j in range(subject.i + 1, len(view))
                 if ctx.same_segment(j, k) and view[j].pos in VERBS), None)
    perception = ctx.words("perception")
    if verb is not None and verb.lemma in perception:  # "nor can you hear B"
        obj = ctx.first_after(verb.i)
        if obj is None or not ctx.nominal(obj, verb.i):
            return None
        tokens = [k, verb.i] + ([subject.i] if subject.pos == "PRON" else [])
        return exclusion(ctx, match, obj, "clausal", tokens)
    if subject.pos == "PRON":
        return None
    return exclusion(ctx, match, subject, "clausal", [k])  # "nor does B bark"


#: The scope rules of this module, by the names ``grammars/negation.toml`` uses.
ELLIPTICAL_RULES = {
    "comma_preposition": comma_preposition,
    "post_negation": post_negation,
    "inverted_clause": inverted_clause,
}
