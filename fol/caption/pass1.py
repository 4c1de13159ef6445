"""Pass 1: apply the arc rules to a parsed caption.

Every token is a node; the arc rules join nodes into entities (a union-find: an
event verb is predicated of its subject, an adjective of its noun), record objects,
relations and negations. :mod:`fortekit.fol.caption.emit` then turns the result
into literals. Each action is a small method named like the rule file's action.

Example:
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> from fortekit.fol.caption.rules import load_rules
    >>> from fortekit.fol.caption.lemmas import WordNetLemmas
    >>> view = TokenView([Tok(0, "dogs", "dogs", "dog", "NOUN", "NNS", "nsubj", 1, 0),
    ...                   Tok(1, "bark", "bark", "bark", "VERB", "VBP", "ROOT", 1, 5)], "dogs bark")
    >>> graph = Graph(view, load_rules(), WordNetLemmas(None)).run()
    >>> graph.find(0) == graph.find(1), graph.rule_of[0].id
    (True, 'nsubj')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fortekit.fol.caption.conditions import holds
from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.rules import ARC_ACTIONS, ArcRule, Conditions, RuleSet
from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = ["ACTIONS", "Graph", "Relation"]

_NOUN_POS = frozenset({"NOUN", "PROPN"})
_CLAUSE_DEPS = frozenset({"ccomp", "advcl", "conj", "parataxis", "dep", "csubj", "xcomp"})
_AFTER_DEPS = frozenset(
    {"appos", "conj", "npadvmod", "dep", "dobj", "attr", "advcl", "ccomp", "parataxis", "xcomp"}
)
_FALLBACK_RULE = ArcRule("default", "separate", Conditions())
_EMPTY: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Relation:
    """A binary predicate between the nodes of two tokens.

    Attributes:
        lemma: the relation's lemma (``in``, ``in front of``, ``before``).
        first: token whose entity is the first argument.
        second: token whose entity is the second argument.
        rule: the arc rule's id.
        tokens: the tokens that express the relation.
        pos: the part of speech used to ground it.
    """

    lemma: str
    first: int
    second: int
    rule: str
    tokens: tuple[int, ...]
    pos: str = "ADP"


class Graph:
    """The state of Pass 1 over one caption.

    Args:
        view: the (repaired) tokens.
        rules: the rule set.
        lex: WordNet questions.
    """

    __slots__ = (
        "consumed",
        "emit",
        "lex",
        "lexicon",
        "negated",
        "objects",
        "parent",
        "pronouns",
        "relations",
        "rule_of",
        "rules",
        "subject_of",
        "suppressed",
        "view",
    )

    def __init__(self, view: TokenView, rules: RuleSet, lex: WordNetLemmas) -> None:
        n = len(view)
        self.view = view
        self.rules = rules
        self.lexicon = rules.lexicon
        self.lex = lex
        self.parent = list(range(n))
        self.rule_of: list[ArcRule] = [_FALLBACK_RULE] * n
        self.emit = [True] * n
        self.negated: list[str | None] = [None] * n  # the id of the rule that negated the token
        self.suppressed = [False] * n
        self.consumed: set[int] = set()
        self.objects: dict[int, list[int]] = {}
        self.subject_of: dict[int, int] = {}
        self.relations: list[Relation] = []
        self.pronouns: list[tuple[int, int | None]] = []

    # -- union-find -------------------------------------------------------------------
    def find(self, i: int) -> int:
        """The representative node of token ``i``'s entity."""
        parent = self.parent
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:  # path compression
            parent[i], i = root, parent[i]
        return root

    def union(self, a: int, b: int) -> None:
        """Make tokens ``a`` and ``b`` one entity (the earlier token's node wins)."""
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            low, high = (ra, rb) if ra < rb else (rb, ra)
            self.parent[high] = low

    # -- helpers ----------------------------------------------------------------------
    def words(self, name: str) -> frozenset[str]:
        """A lexicon list (empty for an unknown name)."""
        return self.lexicon.lists.get(name, _EMPTY)

    def is_pronoun(self, tok: Tok) -> bool:
        return tok.pos == "PRON" and tok.lower in self.words("coref_pronouns") and tok.dep != "poss"

    def anchor(self, tok: Tok) -> int:
        """The token a phrase attached to ``tok`` describes: climb over prepositions."""
        current = tok
        for _ in range(len(self.view)):
            if current.pos != "ADP" or current.head == current.i:
                break
            current = self.view[current.head]
        return current.i

    def multiword_preposition(self, tok: Tok) -> tuple[str, int, list[int]] | None:
        """If ``tok`` ends a multi-word preposition ('in front of'), its lemma, first token and tokens."""
        table = self.lexicon.multiword_prepositions
        for size in (3, 2):
            start = tok.i - size + 1
            if start < 0:
                continue
            phrase = " ".join(self.view[j].lower for j in range(start, tok.i + 1))
            if phrase in table:
                return table[phrase], start, list(range(start, tok.i + 1))
        return None

    def starts_multiword(self, tok: Tok) -> bool:
        """Whether ``tok`` is the first word of a multi-word preposition (it then says nothing itself)."""
        for size in (2, 3):
            end = tok.i + size - 1
            if end < len(self.view):
                phrase = " ".join(self.view[j].lower for j in range(tok.i, end + 1))
                if phrase in self.lexicon.multiword_prepositions:
                    return True
        return False

    def conj_nouns(self, i: int) -> list[int]:
        """Token ``i`` and the nouns coordinated with it."""
        found = [i]
        if self.rules.option("distribute_over_noun_conjuncts", True):
            found += [c.i for c in self.view.conjuncts(i) if c.pos in _NOUN_POS or c.pos == "PRON"]
        return found

    def relate(
        self, lemma: str, first: int, second: int, rule: ArcRule, tokens: list[int], pos: str = "ADP"
    ) -> None:
        if rule.reverse:
            first, second = second, first
        self.relations.append(Relation(lemma, first, second, rule.id, tuple(tokens), pos))

    # -- driving ----------------------------------------------------------------------
    def classify(self) -> None:
        """Give every token the first arc rule that holds for it."""
        for tok in self.view:
            for rule in self.rules.rules_for(tok.dep):
                when = rule.when
                if (when.pos is not None and tok.pos not in when.pos) or (
                    when.lemma is not None and tok.lemma not in when.lemma and tok.lower not in when.lemma
                ):
                    continue  # the cheap tests inline: most rules fail them
                if holds(when, self.view, tok):
                    self.rule_of[tok.i] = rule
                    self.emit[tok.i] = rule.emit
                    break

    def run(self) -> Graph:
        """Classify every token and apply the actions in token order."""
        self.classify()
        negative = self.words("negative_pronouns")
        for tok in self.view:
            if tok.lower in negative:  # "nothing": its entity is denied, whatever its arc
                self.negated[tok.i] = "negative-pronoun"
        for tok in self.view:
            if tok.i in self.consumed:
                continue
            rule = self.rule_of[tok.i]
            ACTIONS[rule.action](self, tok, rule)
        return self

    # -- actions ----------------------------------------------------------------------
    def act_attach(self, tok: Tok, rule: ArcRule) -> None:
        if tok.head != tok.i:
            self.union(tok.i, tok.head)

    def act_separate(self, tok: Tok, rule: ArcRule) -> None:
        return None

    def act_subject(self, tok: Tok, rule: ArcRule) -> None:
        self.subject_of[tok.head] = tok.i
        self.union(tok.i, tok.head)
        if self.is_pronoun(tok):
            self.emit[tok.i] = False
            self.pronouns.append((tok.i, None))

    def act_object(self, tok: Tok, rule: ArcRule) -> None:
        self.objects.setdefault(tok.head, []).append(tok.i)
        if self.is_pronoun(tok):
            self.emit[tok.i] = False
            self.pronouns.append((tok.i, tok.head))

    def act_compound(self, tok: Tok, rule: ArcRule) -> None:
        self.union(tok.i, tok.head)

    def act_relation(self, tok: Tok, rule: ArcRule) -> None:
        if self.starts_multiword(tok):
            return
        obj = self.view.prep_object(tok.i)
        if obj is None:
            return
        lemma, first, tokens = tok.lemma, tok.i, [tok.i]
        multi = self.multiword_preposition(tok)
        if multi is not None:
            lemma, first, tokens = multi
            for j in tokens[:-1]:  # 'front' of 'in front of' is no entity
                self.emit[j] = False
                self.consumed.add(j)
        head = self.anchor(self.view[self.view[first].head]) if self.view[first].head != first else first
        for second in self.conj_nouns(obj.i):
            if self.is_pronoun(self.view[second]):
                self.emit[second] = False
                self.pronouns.append((second, head))
            self.relate(lemma, head, second, rule, tokens)

    def act_time(self, tok: Tok, rule: ArcRule) -> None:
        return None  # the object keeps its own node; emit() gives time nouns a variable t

    def act_property(self, tok: Tok, rule: ArcRule) -> None:
        head = self.anchor(tok)
        obj = self.view.prep_object(tok.i)
        targets = [obj] if obj is not None else self.view.children(tok.i, ("amod", "acomp", "advmod"))
        for target in targets:
            self.union(target.i, head)

    def act_member(self, tok: Tok, rule: ArcRule) -> None:
        obj = self.view.prep_object(tok.i)
        if obj is not None:
            for member in self.conj_nouns(obj.i):
                self.union(member, tok.head)

    def act_transparent(self, tok: Tok, rule: ArcRule) -> None:
        obj = self.view.prep_object(tok.i)
        if obj is None:
            return
        head = self.view[tok.head]
        self.union(head.i, obj.i)
        self.emit[head.i] = False
        self.suppressed[head.i] = True
        if head.lemma in self.words("measure_nouns"):  # 'a great number of': 'great' goes too
            for child in self.view.children(head.i, ("amod", "advmod", "nummod", "compound")):
                self.emit[child.i] = False

    def act_reciprocal(self, tok: Tok, rule: ArcRule) -> None:
        obj = self.view.prep_object(tok.i)
        head = self.anchor(tok)
        if (
            obj is not None
            and obj.lower == "one"
            and not any(c.lower in ("another", "other") for c in self.view.children(obj.i))
        ):
            self.act_relation(tok, rule)  # 'to one' is no reciprocal
            return
        if obj is not None:
            for child in self.view.children(obj.i):
                self.emit[child.i] = False
            self.emit[obj.i] = False
            self.relate(tok.lemma, head, head, rule, [tok.i, obj.i])

    def act_verb_with_object(self, tok: Tok, rule: ArcRule) -> None:
        self.union(tok.i, self.anchor(self.view[tok.head]))
        obj = self.view.prep_object(tok.i)
        if obj is not None:
            self.objects.setdefault(tok.i, []).append(obj.i)

    def act_possessor(self, tok: Tok, rule: ArcRule) -> None:
        self.relate(rule.relation or "of", tok.head, tok.i, rule, [tok.i])

    def act_negate(self, tok: Tok, rule: ArcRule) -> None:
        if tok.head != tok.i:
            self.negated[tok.head] = rule.id

    def act_negate_head(self, tok: Tok, rule: ArcRule) -> None:
        if tok.head != tok.i:
            self.negated[tok.head] = rule.id

    def act_negated_object(self, tok: Tok, rule: ArcRule) -> None:
        obj = self.view.prep_object(tok.i)
        if obj is not None:
            for member in self.conj_nouns(obj.i):
                self.negated[member] = rule.id

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

    def act_skip_phrase(self, tok: Tok, rule: ArcRule) -> None:
        # Its quantity words ('several', 'two more') are no predicates by their own rules.
        self.emit[tok.i] = False
        self.suppressed[tok.i] = True


Action = Callable[[Graph, Tok, ArcRule], None]
#: The arc actions the rule file may name.
ACTIONS: dict[str, Action] = {name: getattr(Graph, f"act_{name}") for name in sorted(ARC_ACTIONS)}
