"""Scope rules for the verbs of removing: "A with the B removed", "A; cut out the B".

A verb of removing (the lexicon's ``removal_verb`` class: WordNet's remove.v.01,
get_rid_of.v.01, extinguish.v.04, delete.v.01, erase.v.03, filter.v.01, hush.v.02 and their
troponyms; the verbs of lacking and omitting whose cue entries in ``grammars/negation.toml``
name the rule too) names an event in the clip in the active ("someone removes a lid") and in
the simple passive ("a lid is removed from a jar"); only its resultative participle says that
its object is gone (Levin 1993, §10 "Verbs of removing"; Huddleston & Pullum 2002, ch. 14 §9
and ch. 3 §4: the absolute and the resultative perfect). ``removed_object`` reads:

* the absolute ("A with the B removed", "with B left out"): the with-phrase's noun is
  excluded, whatever subject the tagger gave the participle's past reading;
* the resultative perfect ("the B has been filtered out"): its subject is excluded;
* the post-nominal participle that closes its clause ("A, the B removed"), also where the
  tagger read it as a past ("A, the B filtered out": a verb of removing takes an object);
* a verb of eliminating with no subject of its own (the ``elimination_verbs`` list: the
  removal roots but the concrete remove.v.01), an imperative ("A; cut out the B") or a
  participle that opens its segment and modifies no noun ("A, eliminating B"): its object
  is excluded. A concrete removal ("removing a branch") is excluded only in the imperative,
  where its object names a sound class; with a subject every removal is an event.

:func:`directive_exclusion` (the object of a verb with no subject of its own) and
:func:`is_imperative` (Huddleston & Pullum 2002, ch. 10 §4: the imperative directs the
addressee) are shared with :mod:`fortekit.fol.caption.negation_imperative` and
:mod:`fortekit.fol.caption.negation_search`.

Example:
    >>> sorted(REMOVAL_RULES)
    ['removed_object']
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("a dog barking with the traffic noise removed").formula)
    '∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y TrafficNoise(y)]'
    >>> str(parse_caption("a man removes a lid from a jar").formula)
    '∃x ∃y ∃z [Man(x) ∧ Removing(x, y) ∧ Lid(y) ∧ From(x, z) ∧ Jar(z)]'
"""

from __future__ import annotations

from fortekit.fol.caption.negation_context import Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_lexical import (
    absolute_noun,
    closes_noun_phrase,
    exclusion,
    is_attributive,
    names_sound_class,
    not_a_cue,
)
from fortekit.fol.caption.negation_rules import Cue
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok, TokenView

__all__ = ["REMOVAL_RULES", "directive_exclusion", "is_imperative", "removed_object"]


def removed_object(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'with B removed', 'B has been filtered out', 'B removed' (post-nominal, nothing after it).

    A verb of removing names an event in the clip in the active ("someone removes a lid")
    and in the simple passive ("a lid is removed from a jar"); only its resultative
    participle says that the object is gone. Verbs of omitting take the absolute too ("with
    B left out"); a past form there is the tagger's reading of the participle.
    """
    view = ctx.view
    tok = view[match.first]
    cue = match.entry
    # a subject across a segment boundary is the parser's ("A; cut out the B"), not the verb's
    subjectless = not any(
        (c.dep in SUBJECT_DEPS or c.dep == "expl") and ctx.same_segment(c.i, tok.i)
        for c in view.children(tok.i)
    )
    if subjectless and (tok.tag in ("VB", "VBG") or (tok.tag == "VBD" and _opens_segment(ctx, tok.i))):
        return _directive_object(ctx, match)  # "cut/VBD out the B": a past needs a subject
    if isinstance(cue, Cue) and not cue.attributive and is_attributive(ctx, tok):
        return not_a_cue
    if tok.tag not in ("VBN", "VBD"):
        return None
    auxiliaries = [c.i for c in view.children(tok.i) if c.dep in ("aux", "auxpass")]
    if not auxiliaries and not subjectless:
        # "A with the B removed": the participle that closes an absolute construction is its
        # predicate, whatever subject the tagger gave its past reading; only the absolute's own
        # noun phrase is removed, the noun the with-phrase modifies is asserted
        absolute = absolute_noun(ctx, match)
        if absolute is not None:
            return exclusion(ctx, match, absolute[0], "absolute", [absolute[1]])
        misread = _misread_participle(ctx, match)
        if misread is not None:
            return misread
    perfect = any(view[k].lower in ctx.words("perfect_auxiliaries") for k in auxiliaries)
    noun, construction = (ctx.subject_of(tok.i), "copular") if perfect and tok.tag == "VBN" else (None, "")
    if noun is None and not auxiliaries:
        absolute = absolute_noun(ctx, match)
        before = ctx.noun_before(match.first)
        dependents = [c for c in view.children(tok.i) if c.i > match.last and c.dep not in ("prt", "advmod")]
        if absolute is not None:
            noun, construction = absolute[0], "absolute"
            auxiliaries.append(absolute[1])
        elif (
            tok.tag == "VBN" and before is not None and not dependents and ctx.first_after(match.last) is None
        ):
            noun, construction = before, "post-nominal"
    if noun is None or not ctx.is_noun(noun) or not ctx.same_segment(noun.i, tok.i):
        return None
    return exclusion(ctx, match, noun, construction, auxiliaries)


#: Words that cannot stand between a verb and the noun phrase of its object.
_NOT_PREMODIFIERS = frozenset({"ADP", "ADV", "VERB", "AUX", "SCONJ", "CCONJ", "PUNCT", "PART"})


def _opens_segment(ctx: ScopeContext, i: int) -> bool:
    """Whether ``i`` is the first word of its segment but for conjunctions and adverbs."""
    view = ctx.view
    return all(
        view[k].pos in ("CCONJ", "ADV", "INTJ", "PART", "PUNCT") or view[k].lower == "please"
        for k in ctx.segment_tokens(i)
        if k < i
    )


def _directive_object(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'A; cut out the B', 'A, eliminating B': a verb of removing with no subject of its own.

    An imperative, or a participle that opens its segment and is no noun's modifier, has no
    source in the clip for its subject: it says what the query wants done with B (the
    imperative is addressed to the search; the free participle describes the result), so B
    is removed. This holds for the verbs of eliminating (``elimination_verbs``: eliminate, cut
    out, filter out, get rid of), which say that B no longer exists; a concrete removal
    ("removing a branch", WordNet's remove.v.01 "remove something concrete, as by lifting,
    pushing, or taking off") is an action heard in the clip, whoever does it. With a subject
    ("a man removes a lid", "a man removing a lid") every removal is an event.
    """
    view = ctx.view
    tok = view[match.first]
    head = view[tok.head]
    if not _opens_segment(ctx, tok.i) or (
        tok.tag == "VBG" and tok.dep == "acl" and ctx.is_noun(head) and ctx.same_segment(head.i, tok.i)
    ):
        return None  # "a man removing a lid": a noun's participle is its event
    eliminating = ctx.words("elimination_verbs")
    if tok.lemma not in eliminating and " ".join(view[k].lemma for k in match.tokens) not in eliminating:
        # "someone walking by, removing a branch": a concrete removal is an action in the clip;
        # addressed to the search ("A; remove the B"), only the exclusion is possible
        if not is_imperative(view, tok):
            return None
        return directive_exclusion(ctx, match, "imperative", sound_class_only=True)
    return directive_exclusion(ctx, match, "imperative" if tok.tag == "VB" else "participial")


def is_imperative(view: TokenView, verb: Tok) -> bool:
    """Whether ``verb`` is an imperative after a clause ("A; drop the B", "A, and please drop
    the B"): a base form (or the tagger's present reading of one) with no subject after the
    clause's punctuation, no auxiliary, marker or negation, no conjunct of a finite verb (whose
    subject it shares: "people yell and throw stones"), after a comma, semicolon, colon or dash
    (and a coordinator, "please" or an interjection). A base form that opens the query is far
    more often a modifier the tagger misread ("slow footsteps") than an instruction."""
    k = verb.i - 1
    while k >= 0 and (view[k].pos in ("INTJ", "CCONJ") or view[k].lower == "please"):
        k -= 1
    if k < 0 or view[k].lower not in (",", ";", ":", "-", "--", "–", "—") or verb.tag not in ("VB", "VBP"):
        return False
    # a subject before the punctuation is the parser's ("an owl hooting, throw/VB ..."), not the verb's
    if any(c.dep in ("aux", "auxpass", "mark", "neg") or (c.dep in SUBJECT_DEPS and c.i > k)
           for c in view.children(verb.i)):
        return False
    return not (verb.dep == "conj" and view[verb.head].tag in ("VBP", "VBZ", "VBD", "MD"))


def directive_exclusion(
    ctx: ScopeContext, match: Match, construction: str, *, sound_class_only: bool = False
) -> Verdict | None:
    """The object of a verb with no subject of its own, excluded; None when it has none (or,
    with ``sound_class_only``, when its phrase names no sound class: see :func:`names_sound_class`)."""
    view = ctx.view
    tok = view[match.first]
    head = view[tok.head]
    if (
        tok.dep in ("conj", "xcomp")
        and head.tag == tok.tag
        and not any(view[k].pos == "PUNCT" for k in range(min(head.i, tok.i), max(head.i, tok.i)))
    ):
        return None  # "walking ... and removing branches": a conjunct of the same form shares its subject
    objects = [c for c in view.children(tok.i) if c.dep in ("dobj", "obj") and c.i > match.last]
    obj = objects[0] if objects else ctx.first_after(match.last)
    if obj is None or not ctx.nominal(obj, match.last):
        return None
    if any(view[k].pos in _NOT_PREMODIFIERS for k in range(match.last + 1, obj.i)):
        return None  # the object follows the verb: "removing of the cap" is a noun; "Silence then B"
    if sound_class_only and not names_sound_class(ctx, obj):
        return None  # "Pull the string, ...": an instruction heard in the clip, not to the search
    return exclusion(ctx, match, obj, construction)


def _misread_participle(ctx: ScopeContext, match: Match) -> Verdict | None:
    """'A, the B filtered out': a verb of removing takes an object; with none, after its
    noun and closing its segment, its past form is the tagger's reading of the participle."""
    tok = ctx.view[match.first]
    if ctx.first_after(match.last) is not None or not closes_noun_phrase(ctx, tok):
        return None
    subject = ctx.subject_of(tok.i)
    assert subject is not None
    return exclusion(ctx, match, subject, "post-nominal")


#: The scope rules of this module, by the names ``grammars/negation.toml`` uses.
REMOVAL_RULES = {"removed_object": removed_object}
