"""The scope pass: negation cues and their scopes, from the inventory of docs/negation.md.

Between the repairs and Pass 1, the caption's tokens are searched for the cues of
``grammars/negation.toml``; each cue's scope rules (:mod:`fortekit.fol.caption.negation_scopes`)
decide what it negates, inside its segment, and the pass then

* cuts the dependency arcs that join the scope to the rest of the caption (the small
  spaCy model often hangs "no music, just rain" on one head), so that Pass 1 makes the
  excluded sound an entity of its own;
* tells Pass 1 which entity is excluded (a clause ``¬∃y [..]``), which predicate is denied
  (``¬P(x)``) and which tokens say nothing (the cue words);
* records every cue as a :class:`ScopeNote`, with ``resolved=False`` and a reason where
  no construction decided its scope (``ParseResult.scopes``). An unresolved scope adds
  nothing to the formula, so formula scoring keeps the whole-query similarity for it.

Co-occurrence connectives ("accompanied by", "mixed with") are read by the same pass: the
phrase after them becomes an entity of its own, with no relation and no predicate for the
connective.

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> result = parse_caption("no music, just rain")
    >>> str(result.formula)
    '∃x [¬∃y Music(y) ∧ Rain(x)]'
    >>> [(n.cue, n.cue_class, n.effect, n.scope) for n in result.scopes]
    [('no', 'determiner', 'exclude', 'music')]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.negation_affixal import affixal_matches
from fortekit.fol.caption.negation_coherence import coherent
from fortekit.fol.caption.negation_context import NOUNS, Match, ScopeContext, Verdict
from fortekit.fol.caption.negation_lexical import negated_object
from fortekit.fol.caption.negation_reach import unplaced_sounds
from fortekit.fol.caption.negation_rules import Connective, Cue, NegationRules
from fortekit.fol.caption.negation_scopes import SCOPE_RULES
from fortekit.fol.caption.negation_search import search_clauses
from fortekit.fol.caption.negation_unplaced import unplaced_matches
from fortekit.fol.caption.separation import OrderLink, separate_segments
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok, TokenView, reattach

__all__ = ["ScopeNote", "ScopePlan", "find_matches", "resolve_scopes"]

_LEMMA_POS = frozenset({"VERB", "AUX", "NOUN", "ADJ"})
_VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})
#: Cue classes whose words are negative wherever they stand: with no scope found they are
#: recorded as unresolved. The others are negative only in their constructions ("a car
#: stops", "a free kick", "flies over" are no negations) and are otherwise left alone.
_ALWAYS_NEGATIVE = frozenset({"determiner", "pronoun", "particle", "preposition", "lacking_verb"})


@dataclass(frozen=True, slots=True)
class ScopeNote:
    """One negation cue (or co-occurrence connective) of a caption and what it took.

    Attributes:
        cue: the cue's words as written ("without", "no one", "accompanied by").
        cue_id: its entry in ``grammars/negation.toml``.
        cue_class: its class in docs/negation.md (``co-occurrence`` for a connective).
        construction: the construction that decided its scope ("pre-nominal", "copular", ...).
        effect: ``exclude``, ``deny``, ``assert`` (an exceptive), ``cancel`` (a double
            negation), ``join`` (a connective) or ``unresolved``.
        scope: the words it scopes over, in caption order ("" when none).
        span: the cue's character span in the caption.
        resolved: whether a construction decided the scope.
        reason: why not ("empty scope", "ambiguous cue", "no construction"), or a note on a
            resolved one ("double negation"); "" otherwise.

    Example:
        >>> ScopeNote("apart from", "ambiguous-exceptive", "preposition", "pre-nominal", "unresolved",
        ...           "thunder", (13, 23), False, "ambiguous cue").to_dict()["reason"]
        'ambiguous cue'
    """

    cue: str
    cue_id: str
    cue_class: str
    construction: str
    effect: str
    scope: str
    span: tuple[int, int]
    resolved: bool
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "cue": self.cue,
            "cue_id": self.cue_id,
            "class": self.cue_class,
            "construction": self.construction,
            "effect": self.effect,
            "scope": self.scope,
            "span": list(self.span),
            "resolved": self.resolved,
            "reason": self.reason,
        }


@dataclass(slots=True)
class ScopePlan:
    """What Pass 1 must do with the scopes found (see :meth:`fortekit.fol.caption.pass1.Graph.run`).

    Attributes:
        notes: one :class:`ScopeNote` per cue, in caption order.
        cue_tokens: tokens that say nothing (no predicate, no arc action).
        excluded: token -> the cue's rule id: the token's entity is excluded.
        denied: token -> the cue's rule id: the token's predicate is negated.
        suppressed: tokens of an unresolved scope: no predicate.
        order: ``Before`` links between sound phrases of two segments ("A, then B").
    """

    notes: list[ScopeNote] = field(default_factory=list)
    cue_tokens: set[int] = field(default_factory=set)
    excluded: dict[int, str] = field(default_factory=dict)
    denied: dict[int, str] = field(default_factory=dict)
    suppressed: set[int] = field(default_factory=set)
    order: list[OrderLink] = field(default_factory=list)


def find_matches(view: TokenView, rules: NegationRules) -> list[Match]:
    """The cues and connectives of a caption, in order; phrases before words, longest first.

    Args:
        view: the caption's tokens.
        rules: the negation rules.

    Returns:
        The matches (no token in two).
    """
    tokens = view.tokens
    lowers = [t.lower for t in tokens]
    lemmas = [t.lemma for t in tokens]
    found: list[Match] = []
    starts = rules.start_words
    k = 0
    while k < len(tokens):
        if lowers[k] not in starts and lemmas[k] not in starts:  # most words: no lookup finds one
            k += 1
            continue
        phrase = rules.longest_phrase(lowers, k)
        if phrase is not None:
            size, entry = phrase
            found.append(Match(entry, list(range(k, k + size))))
            k += size
            continue
        connective = _lemma_connective(rules, lemmas, tokens, k)
        if connective is not None:
            found.append(connective)
            k = connective.last + 1
            continue
        tok = tokens[k]
        cue = rules.cue_for_word(tok.lower)
        if cue is None and tok.pos in _LEMMA_POS:
            cue = rules.cue_for_word(tok.lemma)
        if cue is not None and (not cue.pos or tok.pos in cue.pos):
            found.append(Match(cue, [k]))
        k += 1
    return found


def _lemma_connective(rules: NegationRules, lemmas: list[str], tokens: list[Tok], k: int) -> Match | None:
    """A connective's participle ("accompanied by") or a cue's phrasal verb ("left out") at ``k``."""
    for phrase, entry in rules.lemma_phrases_from(lemmas[k]):
        end = k + len(phrase)
        tags = ("VBN", "VBD", "VBG") if isinstance(entry, Connective) else _VERB_TAGS
        if end <= len(tokens) and tuple(lemmas[k:end]) == phrase and tokens[k].tag in tags:
            return Match(entry, list(range(k, end)))
        if isinstance(entry, Cue) and len(phrase) == 2 and tokens[k].tag in tags:
            # particle shift: "leaves the birds out" is "leaves out the birds" (the particle
            # follows a short object noun phrase; Huddleston & Pullum 2002, ch. 4 §6.1)
            for j in range(k + 2, min(k + 6, len(tokens))):
                tok = tokens[j]
                if tok.lemma == phrase[1] and tok.dep == "prt" and tok.head == k:
                    return Match(entry, [k, j])
                if tok.pos in ("VERB", "AUX", "PUNCT", "ADP", "SCONJ", "CCONJ"):
                    break
    return None


_MODIFIER_DEPS = frozenset({"amod", "advmod", "npadvmod", "det", "nummod", "compound", "prt", "quantmod"})
_PREMODIFIER_DEPS = frozenset({"amod", "det", "nummod", "compound", "quantmod"})
# Arcs that relate two entities without merging them: kept inside one segment.
_KEPT_DEPS = frozenset({"dobj", "obj", "iobj", "pobj", "pcomp", "prep", "agent", "dative"})


def _modified_before(tokens: list[Tok], tok: Tok, inside: set[int]) -> int | None:
    """The content token outside the scope that a cut modifier describes: the noun after a
    pre-modifier ("a quiet/amod forest"), else the nearest content token before it."""
    if tok.dep in _PREMODIFIER_DEPS:
        for k in range(tok.i + 1, len(tokens)):
            other = tokens[k]
            if k in inside or other.pos == "PUNCT":
                break
            if other.pos in ("NOUN", "PROPN"):
                return k
    for k in range(tok.i - 1, -1, -1):
        other = tokens[k]
        if k in inside or other.pos == "PUNCT":
            return None
        if other.pos in ("NOUN", "PROPN", "VERB", "ADJ"):
            return k
    return None


def _subject_for_new_root(view: TokenView, root: Tok, inside: set[int]) -> None:
    """A participle that now heads the rest of the caption takes the noun right before it as
    its subject ("a baby/npadvmod crying sans ..." -> the baby cries)."""
    participle = root.pos == "VERB" or (root.pos == "ADJ" and root.lower.endswith("ing"))
    if not participle or any(c.dep in SUBJECT_DEPS for c in view.children(root.i)):
        return
    k = root.i - 1
    if k >= 0 and k not in inside and view[k].pos in NOUNS and view[k].head == root.i:
        view[k].dep = "nsubj"


def _detach(view: TokenView, inside: set[int], segment: list[int], cues: set[int]) -> None:
    """Cut the arcs between ``inside`` and the rest that would merge the two into one entity
    or that cross a segment boundary: the rest gets a root of its own and the scope hangs
    from it as ``parataxis`` (which Pass 1 keeps apart). An object or prepositional arc
    inside one segment stays ("detecting nothing" keeps ``Detect(x, y)`` inside the denied
    clause, docs/annotation.md, "Negation"), unless it spans the cue: a phrase the cue governs
    is no object of a verb before the cue ("laughing sans/dobj water/dobj")."""
    tokens = view.tokens
    outside = [t for t in tokens if t.i not in inside and t.pos != "PUNCT"]
    if not outside:
        return

    def cut(tok: Tok) -> bool:
        low, high = sorted((tok.i, tok.head))
        spans_cue = any(low < cue < high for cue in cues)
        return segment[tok.i] != segment[tok.head] or tok.dep not in _KEPT_DEPS or spans_cue

    crossing_out = [t for t in outside if t.head != t.i and t.head in inside and cut(t)]
    crossing_in = [t for t in tokens if t.i in inside and t.head != t.i and t.head not in inside and cut(t)]
    if not crossing_out and not crossing_in and any(t.head == t.i for t in outside):
        return
    roots = [t for t in outside if t.head == t.i]
    if roots:
        root = roots[0]
    elif crossing_out:
        # the outside token that heads most of the rest ("a horn/npadvmod honking/amod sans ...")
        ranked = sorted(
            crossing_out,
            key=lambda t: (
                -len([k for k in view.subtree(t.i) if k not in inside]),
                t.pos not in ("VERB", "NOUN", "PROPN"),
                t.i,
            ),
        )
        root = ranked[0]
        root.head, root.dep = root.i, "ROOT"
        _subject_for_new_root(view, root, inside)
    else:
        return
    for tok in crossing_out:
        if tok is root or tok.head == tok.i:
            continue
        before = _modified_before(tokens, tok, inside) if tok.dep in _MODIFIER_DEPS else None
        if before is not None and tok.i not in {
            a.i for a in view.ancestors(before)
        }:  # 'overhead' cut from a misread scope modifies the phrase before it
            tok.head = before
        else:
            tok.head, tok.dep = root.i, "parataxis"
    for tok in tokens:
        if tok.i in inside and tok.head == tok.i:
            tok.head, tok.dep = root.i, "parataxis"
    for tok in crossing_in:
        tok.head, tok.dep = root.i, "parataxis"


def _text(view: TokenView, indices: Iterable[int]) -> str:
    return " ".join(view[k].text for k in sorted(set(indices)))


class _Pass:
    """One caption's scope pass (internal: :func:`resolve_scopes` is the entry point)."""

    def __init__(self, view: TokenView, rules: NegationRules, lex: WordNetLemmas) -> None:
        self.view = view
        self.ctx = ScopeContext(view, rules, lex)
        self.plan = ScopePlan()
        self.changed = False

    def run(self, matches: list[Match]) -> ScopePlan:
        for match in matches:
            if match.first in self.plan.cue_tokens:
                continue  # the second cue of a double negation
            if isinstance(match.entry, Connective):
                self._connective(match, match.entry)
            else:
                self._cue(match, match.entry)
        if self.changed:
            self.view.rebuild()
        return self.plan

    def _note(self, match: Match, cls: str, verdict: Verdict, scope: Iterable[int]) -> None:
        view = self.view
        first, last = view[match.first], view[match.last]
        self.plan.notes.append(
            ScopeNote(
                _text(view, match.tokens),
                match.entry.id,
                cls,
                verdict.construction,
                verdict.effect,
                _text(view, scope),
                (first.start, last.end),
                verdict.effect != "unresolved",
                verdict.reason,
            )
        )

    def _cue(self, match: Match, cue: Cue) -> None:
        verdict: Verdict | None = None
        self.ctx.pending.clear()
        for name in cue.scopes:
            verdict = SCOPE_RULES[name](self.ctx, match)
            if verdict is not None:
                # a denied verb's object; what the rest of the caption asserts
                verdict = coherent(self.ctx, match, negated_object(self.ctx, match, verdict))
                break
        if verdict is not None and verdict.effect == "none":
            self.ctx.pending.clear()
            return  # not a negation here
        if verdict is None:
            if cue.cls not in _ALWAYS_NEGATIVE:
                return
            nothing_after = self.ctx.first_after(match.last) is None
            verdict = Verdict("unresolved", "", reason="empty scope" if nothing_after else "no construction")
        # the reach is read on the tree as parsed, before the scope's arcs are cut
        plan = self.plan
        taken = self.ctx.claimed | plan.cue_tokens | set(plan.excluded) | plan.suppressed | set(plan.denied)
        nouns, reason = unplaced_sounds(self.ctx, match, verdict, taken)
        self._apply(match, cue.cls, f"scope-{cue.id}", verdict)
        self._reach(match, cue, verdict, nouns, reason)

    def _reach(self, match: Match, cue: Cue, verdict: Verdict, nouns: list[int], reason: str) -> None:
        """The sounds the negation reaches but did not place are unsure (negation_reach)."""
        plan = self.plan
        for noun in nouns:
            if noun in self.ctx.claimed or noun in plan.suppressed:
                continue  # an earlier noun's phrase took it
            unsure = Verdict("unresolved", "reach", noun, cue_tokens=list(verdict.cue_tokens), reason=reason)
            self._apply(match, cue.cls, f"scope-{cue.id}", unsure)

    def _connective(self, match: Match, connective: Connective) -> None:
        self.ctx.pending.clear()
        after = self.ctx.first_after(match.last)
        if connective.kind != "co-occurrence" or after is None or not self.ctx.nominal(after, match.last):
            return
        first = self.view[match.first]
        if any(c.lower in self.ctx.words("order_words") for c in self.view.children(first.i)):
            return  # "and then is joined by others": an event in an order, kept as the verb
        target = self.ctx.phrase_head(after.i)
        verdict = Verdict("join", "co-occurrence", target)
        self._apply(match, "co-occurrence", f"scope-{connective.id}", verdict)

    def _apply(self, match: Match, cls: str, rule_id: str, verdict: Verdict) -> None:
        ctx, plan, view = self.ctx, self.plan, self.view
        targets = [t for t in (verdict.target, *verdict.extra_targets) if t is not None]
        ctx.commit(set(targets) if verdict.effect in ("exclude", "join", "assert") else set())
        for cue in set(match.tokens) | set(verdict.cue_tokens):  # a cue is nobody's subject
            if cue not in targets and view[cue].dep in SUBJECT_DEPS:
                view[cue].dep = "dep"
        cue_tokens = (set(match.tokens) | set(verdict.cue_tokens)) - set(targets)
        plan.cue_tokens |= cue_tokens
        ctx.claimed |= cue_tokens
        scope: set[int] = set()
        effect = verdict.effect
        if effect in ("exclude", "join", "unresolved") and targets:
            for target in targets:
                participle = ctx.owned_participle(target, match.first if target > match.last else -1)
                if participle is not None and participle.head != target:
                    reattach(view, participle.i, target, "acl")
                    self.changed = True
                phrase = ctx.phrase(target, cue_tokens)
                if target > match.last:  # a scope after its cue starts after it ("sans/dobj insects/ROOT")
                    phrase = {k for k in phrase if k > match.last}
                for child in view.children(target):  # 'vehicles/NOUN passing/xcomp': the noun's event
                    if (
                        child.i in phrase
                        and ctx.is_verbal(child)
                        and child.dep not in ("acl", "relcl")
                        and ctx.subject_in_segment(child.i) is None
                    ):
                        child.dep = "acl"
                scope |= phrase
            if effect == "exclude":
                for target in targets:
                    plan.excluded[target] = rule_id
            elif effect == "unresolved":
                plan.suppressed |= scope
            _detach(view, scope | cue_tokens, ctx.segment, cue_tokens)
            view.rebuild()
            self.changed = True
        elif effect == "deny" and verdict.target is not None:
            verb = view[verdict.target]
            scope = {verb.i}
            holder = verdict.holder
            if verdict.rehead and holder is not None and holder != verb.i and verb.head != holder:
                for child in view.children(verb.i):  # 'none/nsubj ... dominant': a cue is no subject
                    if child.i in cue_tokens and child.dep in SUBJECT_DEPS:
                        child.dep = "dep"
                holder_tok = view[holder]
                subject = next(
                    (c for c in view.children(verb.i) if c.dep in SUBJECT_DEPS and c.i not in cue_tokens),
                    None,
                )
                if subject is not None and subject.i in {a.i for a in view.ancestors(holder)}:
                    # the holder sits in the verb's subject ("the static of a station not
                    # working"): the subject takes the verb's place, so the tree stays a tree
                    if verb.head == verb.i:
                        subject.head, subject.dep = subject.i, "ROOT"
                        view.rebuild()
                    else:
                        reattach(view, subject.i, verb.head, verb.dep)
                    holder_tok = view[holder]
                reattach(
                    view,
                    verb.i,
                    holder,
                    "acl" if holder_tok.pos in NOUNS or holder_tok.pos == "PRON" else "conj",
                )
                self.changed = True
            plan.denied[verb.i] = rule_id
        elif effect == "cancel":  # both cues say nothing; what follows the second is asserted
            second = max(verdict.cue_tokens, default=match.last)
            scope = {k for k in ctx.segment_tokens(second) if k > second}
        elif effect == "assert" and verdict.target is not None:
            scope = (
                ctx.phrase(ctx.noun_head(verdict.target), cue_tokens)
                if ctx.is_noun(view[verdict.target])
                else {verdict.target}
            )
        self._rehang_cue_children(cue_tokens, scope, targets)
        ctx.claimed |= scope
        self._note(match, cls, verdict, scope)

    def _rehang_cue_children(self, cue_tokens: set[int], scope: set[int], targets: list[int]) -> None:
        """A cue says nothing: what hangs on it outside the scope belongs to what the cue hangs
        on ("fell accompanied by thunder in the background": the background is the rain's)."""
        view = self.view
        moved = False
        for cue in sorted(cue_tokens):
            head = view[cue].head
            while head in cue_tokens and view[head].head != head:
                head = view[head].head
            if head in cue_tokens or head == cue:
                continue
            above = {a.i for a in view.ancestors(head)} | {head}
            for child in view.children(cue):
                if child.i in cue_tokens or child.i in scope or child.pos == "PUNCT" or child.i in targets:
                    continue
                if child.dep in ("prep", "advmod", "npadvmod", "advcl") and child.i not in above:
                    child.head = head
                    moved = True
        if moved:
            view.rebuild()
            self.changed = True


def resolve_scopes(view: TokenView, rules: NegationRules, lex: WordNetLemmas) -> ScopePlan | None:
    """Find the negation cues and connectives of a caption and resolve their scopes.

    The view's heads may be changed (arcs across a scope are cut; a participle after an
    excluded noun is hung on it).

    Args:
        view: the caption's tokens, after the repairs.
        rules: the negation rules (``load_negation_rules()``).
        lex: WordNet questions.

    Returns:
        The :class:`ScopePlan` for Pass 1, or None when the caption has no cue and no
        connective (most captions: one set lookup per token).
    """
    lowers = [t.lower for t in view.tokens]
    trigger = rules.trigger_words
    lemmas = [t.lemma for t in view.tokens]
    cues = not trigger.isdisjoint(lowers) or not trigger.isdisjoint(lemmas) or rules.has_lemma_phrase(lemmas)
    prefixed = affixal_matches(view, rules, lex) if any(w.startswith(("un", "non")) for w in lowers) else []
    prefixed += search_clauses(view, rules)
    prefixed += unplaced_matches(view, rules)
    boundaries = not rules.boundary_words.isdisjoint(lowers)
    if not cues and not boundaries and not prefixed:
        return None
    matches = find_matches(view, rules) if cues else []
    if prefixed:
        taken = {k for m in matches for k in m.tokens}
        matches = sorted([*matches, *(m for m in prefixed if m.first not in taken)], key=lambda m: m.first)
    scope_pass = _Pass(view, rules, lex)
    order = separate_segments(scope_pass.ctx) if boundaries else []
    if not matches and not order:
        return None
    plan = scope_pass.run(matches)
    plan.order.extend(order)  # Pass 1 adds them where the temporal arc rules made no relation
    for link in order:  # "after that": the pronoun is the earlier sound, which the link names;
        # "and later/JJ children playing": an adverb of sequence, whatever the tagger said
        if any(view[k].lower in ("that", "this") or view[k].pos == "ADJ" for k in link.tokens):
            plan.cue_tokens.update(link.tokens)
    return plan
