"""Pass 1's temporal actions: ``While(a, b)`` and ``Before(a, b)`` between two clauses.

A mixin of :class:`fortekit.fol.caption.pass1.Graph` (kept apart so that each file
stays short); the rule file names these actions ``temporal_clause``,
``temporal_preposition``, ``temporal_then`` and ``temporal_followed``.

Example:
    >>> from fortekit.fol.caption.pass1 import Graph
    >>> issubclass(Graph, TemporalActions)
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fortekit.fol.caption.rules import ArcRule
from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = ["TemporalActions"]

_CLAUSE_DEPS = frozenset({"ccomp", "advcl", "conj", "parataxis", "dep", "csubj", "xcomp"})
_AFTER_DEPS = frozenset(
    {"appos", "conj", "npadvmod", "dep", "dobj", "attr", "advcl", "ccomp", "parataxis", "xcomp"}
)


class TemporalActions:
    """The temporal arc actions; they need the graph's view, anchors and relations."""

    __slots__ = ()

    if TYPE_CHECKING:
        view: TokenView
        emit: list[bool]
        consumed: set[int]

        def anchor(self, tok: Tok) -> int: ...

        def conj_nouns(self, i: int) -> list[int]: ...

        def relate(
            self, lemma: str, first: int, second: int, rule: ArcRule, tokens: list[int], pos: str = "ADP"
        ) -> None: ...

    def _clause(self, tok: Tok) -> Tok:
        """The verb of the clause a connective marks (a marker on an auxiliary marks its verb)."""
        head = self.view[tok.head]
        if head.pos == "AUX" and head.dep in ("aux", "auxpass") and head.head != head.i:
            return self.view[head.head]
        return head

    def act_temporal_clause(self, tok: Tok, rule: ArcRule) -> None:
        clause = self._clause(tok)
        if clause.head == clause.i:
            return
        main = self.anchor(self.view[clause.head])
        self.relate(rule.relation or "while", main, clause.i, rule, [tok.i])

    def act_temporal_preposition(self, tok: Tok, rule: ArcRule) -> None:
        obj = self.view.prep_object(tok.i)
        if obj is None or tok.head == tok.i:
            return
        head = self.anchor(self.view[tok.head])
        clause = self.view[head]
        if obj.tag in ("WDT", "WP") and clause.dep == "relcl" and clause.head != clause.i:
            # 'A book thumps onto a surface, after which its pages are flipped': 'which'
            # is the clause before; the relative clause is the event after it.
            main = self.anchor(self.view[self.view[clause.head].head])
            self.emit[obj.i] = False
            self.relate(rule.relation or "before", clause.i, main, rule, [tok.i, obj.i])
            return
        for second in self.conj_nouns(obj.i):
            self.relate(rule.relation or "before", head, second, rule, [tok.i])

    def _previous_item(self, item: Tok, before: int) -> Tok | None:
        """The coordinated item or clause just before ``item`` (for 'A, B, and then C')."""
        if item.dep == "conj" and item.head != item.i:
            head = self.view[item.head]
            siblings = [c for c in self.view.children(head.i, ("conj",)) if c.i < item.i]
            return siblings[-1] if siblings else head
        clauses = [c for c in self.view.children(item.i) if c.dep in _CLAUSE_DEPS and c.i < before]
        if clauses:
            return clauses[-1]
        head = self.view[item.head]
        return head if head.i < before else None  # 'A stream runs then/advmod someone speaks/ccomp

    def act_temporal_then(self, tok: Tok, rule: ArcRule) -> None:
        if tok.head == tok.i:
            return
        head = self.view[tok.head]
        if head.i > tok.i:
            first: Tok | None = self._previous_item(head, tok.i)
            seconds = self.conj_nouns(head.i)
        else:
            first = head
            after = [c for c in self.view.children(head.i) if c.dep in _AFTER_DEPS and c.i > tok.i]
            seconds = self.conj_nouns(after[0].i) if after else []
        if first is None:
            return
        for second in seconds:
            self.relate(rule.relation or "before", self.anchor(first), second, rule, [tok.i])

    def act_temporal_followed(self, tok: Tok, rule: ArcRule) -> None:
        by = [c for c in self.view.children(tok.i) if c.lower == "by"]
        if not by:
            return
        if tok.head == tok.i:  # 'A is followed by B': the passive subject comes first
            subject = self.view.subject(tok.i)
            if subject is None:
                return
            self.emit[subject.i] = True
            first = subject.i
        else:
            first = self.anchor(self.view[tok.head])
        self.consumed.add(by[0].i)
        obj = self.view.prep_object(by[0].i)
        if obj is None:
            return
        for second in self.conj_nouns(obj.i):
            self.relate(rule.relation or "before", first, second, rule, [tok.i, by[0].i])
