"""Two sound phrases in two segments are two sounds; an order word between them orders them.

Telegraphic captions and queries set sound phrases side by side ("an aircraft flying
overhead, insects buzzing", "thunder rumbling and then rain falling", "first an engine
running, after that footsteps"). The small spaCy model often hangs the second phrase on
the first (a subject, an apposition, a ``dep``), and Pass 1 then merges the two sources into
one entity. This pass, part of the scope pass (:mod:`fortekit.fol.caption.negation`), cuts
an arc that joins two segments when **both** hold a complete sound phrase (a noun and a verb
of its own), and where the second segment opens with an order word ("then", "afterwards",
"after that", "later": ``order_connectives`` in ``grammars/negation.toml``) it records
``Before(first, second)`` between their heads (docs/negation.md, "Conjunction and order").

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("thunder rumbling and then rain falling").formula)
    '∃x ∃y [Thunder(x) ∧ Rumbling(x) ∧ Before(x, y) ∧ Rain(y) ∧ Falling(y)]'
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from fortekit.fol.caption.negation_context import VERBS, ScopeContext
from fortekit.fol.caption.tokens import Tok, TokenView, reattach

__all__ = ["OrderLink", "separate_segments"]

# Arcs that merge the entities of their two tokens (subject, apposition, modifier, clause);
# prepositions and objects relate two entities and are kept ("a dog barking, with birds
# chirping" keeps With).
_MERGING_DEPS = frozenset(
    {
        "nsubj",
        "nsubjpass",
        "csubj",
        "csubjpass",
        "appos",
        "compound",
        "dep",
        "npadvmod",
        "amod",
        "acl",
        "relcl",
        "advcl",
        "ccomp",
        "xcomp",
        "attr",
        "oprd",
        "conj",
        "parataxis",
        "nmod",
        "acomp",
    }
)
# arcs that make the dependent part of the head's entity whatever its part of speech
_ENTITY_DEPS = frozenset(
    {"nsubj", "nsubjpass", "csubj", "csubjpass", "appos", "compound", "amod", "npadvmod"}
)
_COPULAS = frozenset({"be", "have", "do", "get", "seem"})
_FINITE = frozenset({"VBZ", "VBD", "VBN", "VBG", "MD"})
_GLUE = frozenset({"DET", "ADV", "CCONJ", "SCONJ", "PART", "PUNCT", "ADP"})
# words a complete phrase may open with besides the rules' openers ("first an engine running")
_LEADING = frozenset({"first", "only", "just"})
_VERB_TAGS = frozenset({"VBG", "VBN", "VBZ", "VBD", "VBP"})
_PHRASE_GLUE = ("DET", "CCONJ", "PUNCT")


@dataclass(frozen=True, slots=True)
class OrderLink:
    """``Before(first, second)`` between the heads of two sound phrases.

    Attributes:
        first: the token of the earlier sound's head.
        second: the token of the later sound's head.
        tokens: the order word(s) ("then", "after that").
    """

    first: int
    second: int
    tokens: tuple[int, ...]


def _complete(ctx: ScopeContext, members: list[int]) -> int | None:
    """The head noun of a segment that opens with a noun phrase followed by a verb of its own
    ("insects buzzing", "then rain falling", "a car horn honks"), else None."""
    # asked of every segment of most captions: the tokens list read directly, not through
    # TokenView's methods, and the rules' word lists joined once (NegationRules.words_of)
    tokens = ctx.view.tokens
    skip = ctx.rules.words_of("phrase_openers", "order_connectives")
    first = None
    for k in members:
        tok = tokens[k]
        if tok.lower not in skip and tok.lower not in _LEADING and tok.pos not in _GLUE:
            first = k
            break
    if first is None:
        return None
    tok = tokens[first]
    if tok.lower in ctx.words("time_words"):
        return None
    # "then rain/VB falling", "a siren/JJ wailing": a noun the tagger read otherwise, known to
    # WordNet as a noun, before a participle; a finite tag the tagger gave ("begins/VBZ
    # climbing") is a verb, one a repair gave ("birds/VBZ chirping") is not
    misread = (
        _participle_at(ctx, first + 1)
        and (tok.tag not in _FINITE or bool(tok.repaired) or not _catenative(ctx, tok))
        and ctx.nominal(tok)
    )
    if not ctx.is_noun(tok) and not (tok.pos == "ADJ" and _noun_follows(ctx, first)) and not misread:
        return None
    noun = first
    while (
        noun + 1 < len(tokens)
        and ctx.same_segment(noun, noun + 1)
        and not _participle_at(ctx, noun + 1)
        and (ctx.is_noun(tokens[noun + 1]) or tokens[noun].pos == "ADJ")
    ):
        noun += 1  # "a car horn", "loud music": the last noun of the phrase
    if not ctx.is_noun(tokens[noun]):
        return None
    for k in members:  # a verb of its own after the noun
        if k <= noun:
            continue
        later = tokens[k]
        if (
            (later.pos in VERBS or later.tag in _VERB_TAGS or _participle_at(ctx, k))
            and later.lemma not in _COPULAS
            and later.tag != "MD"
        ):
            return noun
    return None


def _bare_noun_phrase(ctx: ScopeContext, members: list[int]) -> int | None:
    """The head noun of a segment that is a noun phrase and nothing else ("a crowd", "the
    sound of rain"), else None."""
    tokens = ctx.view.tokens
    skip = ctx.rules.words_of("phrase_openers", "order_connectives")
    words = [k for k in members if tokens[k].lower not in skip and tokens[k].pos not in _PHRASE_GLUE]
    if not words or any(
        not (ctx.is_noun(tok) or tok.pos in ("ADJ", "NUM") or tok.lower == "of")
        for tok in [tokens[k] for k in words]
    ):
        return None
    first = tokens[words[0]].lower
    if ctx.rules.cue_for_word(first) is not None or first in ctx.words("time_words"):
        return None
    last = tokens[words[-1]]
    return last.i if ctx.is_noun(last) and last.pos != "PRON" else None


def _catenative(ctx: ScopeContext, tok: Tok) -> bool:
    """Whether ``tok`` can be a verb that takes an -ing complement ("begins climbing", "keeps
    ringing"); only such a verb opens a sound phrase before a participle ("bells/VBZ ringing"
    is a noun the tagger misread)."""
    catenatives = ctx.rules.words_of("aspectual_verbs", "inchoatives", "catenatives")
    return tok.lemma in catenatives or any(
        lemma in catenatives for lemma in ctx.lex.morphy(tok.lower, "VERB")
    )


def _participle_at(ctx: ScopeContext, i: int) -> bool:
    """Whether token ``i`` is an -ing form of a verb, whatever its tag ("music playing/NN")."""
    tokens = ctx.view.tokens
    if i >= len(tokens):
        return False
    tok = tokens[i]
    return tok.tag == "VBG" or (
        tok.lower.endswith("ing")
        and tok.pos in ("NOUN", "ADJ", "VERB")
        and ctx.lex.verb_base(tok.lower) is not None
    )


def _noun_follows(ctx: ScopeContext, i: int) -> bool:
    tokens = ctx.view.tokens
    return i + 1 < len(tokens) and ctx.same_segment(i, i + 1) and ctx.is_noun(tokens[i + 1])


def _order_words(ctx: ScopeContext, start: int) -> list[int]:
    """The order connective before or at the opening of the segment starting at ``start``
    ("then", "and then", ", after that", "and afterwards")."""
    view = ctx.view
    k = start
    while k > 0 and ctx.segment[k - 1] < 0:  # the boundary tokens before the segment
        k -= 1
    found: list[int] = []
    for j in range(k, min(start + 2, len(view))):
        low = view[j].lower
        if low == "after":  # "after that": order; "after B" is a subordinator (temporal rules)
            if j + 1 < len(view) and view[j + 1].lower in ("that", "this"):
                found += [j, j + 1]
            break
        if low in ctx.words("order_connectives"):
            found.append(j)
        elif j >= start:
            break
    return found


def _subjectless_verb(ctx: ScopeContext, noun: int, members: list[int]) -> int | None:
    """The first finite or participle verb after ``noun`` in its segment with no subject of its own."""
    view = ctx.view
    for k in members:
        tok = view[k]
        if k > noun and tok.pos == "VERB" and tok.lemma not in _COPULAS and ctx.subject_in_segment(k) is None:
            return k
    return None


def _last_phrase(ctx: ScopeContext, members: list[int], head: int | None) -> int | None:
    """The last noun of a segment that a verb or participle is said of: the sound an order word
    after the segment follows ("water pours followed by a woman speaking and then ...": the
    woman)."""
    view = ctx.view
    for k in reversed(members):
        if head is not None and k <= head:
            break
        if ctx.is_noun(view[k]) and _participle_at(ctx, k + 1) and ctx.same_segment(k, k + 1):
            return k
    return head


def _event_of(ctx: ScopeContext, noun: int, members: list[int]) -> int:
    """The verb a segment says of its head noun (its event), else the noun."""
    view = ctx.view
    for k in members:
        tok = view[k]
        if k > noun and ctx.is_verbal(tok) and tok.lemma not in _COPULAS and tok.tag != "MD":
            return k
    return noun


def _subject_from_boundary(ctx: ScopeContext, noun: int | None, members: list[int]) -> bool:
    """ "..., as an adult male speaks": a segment's noun hung as the object of the subordinator
    that opens it is the subject of the segment's verb, which the subordinator marks."""
    view = ctx.view
    if noun is None:
        return False
    boundary = view[noun].head
    if view[noun].dep != "pobj" or ctx.segment[boundary] >= 0 or boundary > noun:
        return False
    verb = _subjectless_verb(ctx, noun, members)
    if (
        verb is None
        or noun in {a.i for a in view.ancestors(verb)}
        or boundary in {a.i for a in view.ancestors(verb)}
    ):
        return False
    view[noun].head, view[noun].dep = verb, "nsubj"
    mark = view[boundary]
    if mark.head != mark.i and mark.head not in members:
        previous = mark.head  # the clause the subordinator hung on: the segment's verb joins it
        mark.head, mark.dep = verb, "mark"
        view.rebuild()
        # where the segment's verb already heads the clause before (the tagger made it the
        # root), the two are joined: re-rooting would strand that clause's own subject
        if ctx.is_verbal(view[previous]) and verb not in {a.i for a in view.ancestors(previous)}:
            reattach(view, verb, previous, "advcl")
    return True


def separate_segments(ctx: ScopeContext) -> list[OrderLink]:
    """Cut the arcs that merge two complete sound phrases of two segments; find their order.

    Args:
        ctx: the caption's scope context (its segments are read, its view re-headed).

    Returns:
        The ``Before`` links between consecutive complete phrases whose second one opens
        with an order connective.
    """
    view: TokenView = ctx.view
    by_segment: dict[int, list[int]] = {}
    for k, seg in enumerate(ctx.segment):
        if seg >= 0:
            by_segment.setdefault(seg, []).append(k)
    if len(by_segment) < 2:
        return []
    heads = {seg: _complete(ctx, members) for seg, members in by_segment.items()}
    if any(head is not None for head in heads.values()):
        # a bare noun phrase names a sound of its own ("a crowd, and later children playing")
        for seg, members in by_segment.items():
            if heads[seg] is None:
                heads[seg] = _bare_noun_phrase(ctx, members)
    complete = {seg for seg, head in heads.items() if head is not None}
    if len(complete) < 2:
        return []
    for pending in list(ctx.pending):
        if not any(pending == head for head in heads.values()):
            del ctx.pending[pending]
    ctx.commit({head for head in heads.values() if head is not None})
    roots = [t.i for t in view.tokens if t.head == t.i]
    root = roots[0] if roots else 0
    changed = False
    for tok in view.tokens:
        seg, head_seg = ctx.segment[tok.i], ctx.segment[tok.head]
        if tok.head == tok.i or seg < 0 or head_seg < 0 or seg == head_seg:
            continue
        # an entity hung across, or any token hung across as a subject or modifier, merges two
        # sounds by mistake; a clause's own verb is kept apart by Pass 1 already, and its arc
        # may carry a temporal link ("while ... continues")
        if (
            seg in complete
            and head_seg in complete
            and tok.dep in _MERGING_DEPS
            and (ctx.is_noun(tok) or tok.pos == "PRON" or tok.dep in _ENTITY_DEPS)
        ):
            verb = _subjectless_verb(ctx, tok.i, by_segment[seg]) if heads[seg] == tok.i else None
            target = (
                root if ctx.segment[root] != seg else next((k for k in roots if ctx.segment[k] != seg), None)
            )
            noun = heads[seg]
            if verb is not None and tok.i not in {a.i for a in view.ancestors(verb)}:
                tok.head, tok.dep = verb, "nsubj"  # "a bike tire is spinning": the tire spins
            elif (
                ctx.is_verbal(tok)
                and noun is not None
                and noun != tok.i
                and noun < tok.i
                and tok.i not in {a.i for a in view.ancestors(noun)}
            ):
                tok.head, tok.dep = noun, "acl"  # "... as an adult male speaks": the male speaks
            elif target is None or tok.i in {a.i for a in view.ancestors(target)}:
                tok.head, tok.dep = tok.i, "ROOT"
            else:
                tok.head, tok.dep = target, "parataxis"
            changed = True
    if changed:
        view.rebuild()
    for seg in sorted(complete):
        changed |= _subject_from_boundary(ctx, heads[seg], by_segment[seg])
    if changed:
        view.rebuild()
    links: list[OrderLink] = []
    ordered = sorted(complete)
    for before, after in pairwise(ordered):
        words = _order_words(ctx, by_segment[after][0])
        first, second = _last_phrase(ctx, by_segment[before], heads[before]), heads[after]
        if words and first is not None and second is not None:
            # the events, where there are verbs: "a car passes and then the car honks" orders
            # two events of one car (Before(e1, e2)), two sources otherwise (Before(x, y))
            first = _event_of(ctx, first, by_segment[before])
            second = _event_of(ctx, second, by_segment[after])
            links.append(OrderLink(first, second, tuple(words)))
    return links
