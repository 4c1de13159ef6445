"""Pass 1: apply the arc rules to a parsed caption.

Every token is a node; the arc rules join nodes into entities (a union-find: an
event verb is predicated of its subject, an adjective of its noun), record objects,
relations and the negations the scope pass found
(:mod:`fortekit.fol.caption.negation`). :mod:`fortekit.fol.caption.emit` then turns
the result into literals. Each action is a small method named like the rule file's action.

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
from typing import NamedTuple

from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.negation import ScopePlan
from fortekit.fol.caption.rules import ARC_ACTIONS, ArcRule, Conditions, RuleSet
from fortekit.fol.caption.temporal import TemporalActions
from fortekit.fol.caption.tokens import Tok, TokenView

__all__ = ["ACTIONS", "ORDER_RULES", "Graph", "Relation"]

_NOUN_POS = frozenset({"NOUN", "PROPN"})
_FALLBACK_RULE = ArcRule("default", "separate", Conditions())
# The order the scope pass found between two sound phrases ("A, then B"): Before(a, b).
_ORDER_RULE = ArcRule("order-connective", "separate", Conditions(), emit=False)
#: Rule ids of the relations the scope pass adds that order two events (read like the temporal rules).
ORDER_RULES: frozenset[str] = frozenset({_ORDER_RULE.id})
# A negation cue or connective the scope pass has read: no predicate, no arc action.
_CUE_RULE = ArcRule("negation-cue", "separate", Conditions(), emit=False)
_EMPTY: frozenset[str] = frozenset()
_new = tuple.__new__  # a named tuple made without its Python-level __new__


class Relation(NamedTuple):
    """A binary predicate between the nodes of two tokens.

    A named tuple, as :class:`~fortekit.fol.caption.emit.Candidate` is: some 530 are made
    per 600 captions, and a frozen dataclass's ``__init__`` took six times as long.

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


class Graph(TemporalActions):
    """The state of Pass 1 over one caption.

    Args:
        view: the (repaired) tokens.
        rules: the rule set.
        lex: WordNet questions.
    """

    __slots__ = (
        "consumed",
        "emit",
        "excluded",
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
        # Tokens whose entity is denied, a clause ¬∃y [..] of its own: token -> rule id.
        self.excluded: dict[int, str] = {}
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
        # The roots without find(): two calls per union were a tenth of Pass 1's calls,
        # and the root, which alone decides the answer, is the same uncompressed.
        parent = self.parent
        while parent[a] != a:
            a = parent[a]
        while parent[b] != b:
            b = parent[b]
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b

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
        lexicon, tokens = self.lexicon, self.view.tokens
        if tok.lower not in lexicon.multiword_preposition_ends and " " not in tok.lower:
            return None  # most prepositions end no phrase: no phrase to build
        table = lexicon.multiword_prepositions
        for size in (3, 2):
            start = tok.i - size + 1
            if start < 0:
                continue
            phrase = " ".join([tokens[j].lower for j in range(start, tok.i + 1)])
            if phrase in table:
                return table[phrase], start, list(range(start, tok.i + 1))
        return None

    def starts_multiword(self, tok: Tok) -> bool:
        """Whether ``tok`` is the first word of a multi-word preposition (it then says nothing itself)."""
        lexicon, tokens = self.lexicon, self.view.tokens
        if tok.lower not in lexicon.multiword_preposition_starts and " " not in tok.lower:
            return False  # most prepositions start no phrase: no phrase to build
        table = lexicon.multiword_prepositions
        for size in (2, 3):
            end = tok.i + size - 1
            if end < len(tokens):
                phrase = " ".join([tokens[j].lower for j in range(tok.i, end + 1)])
                if phrase in table:
                    return True
        return False

    def conj_nouns(self, i: int) -> list[int]:
        """Token ``i`` and the nouns coordinated with it."""
        found = [i]
        if self.rules.options.get("distribute_over_noun_conjuncts", True):
            found += [c.i for c in self.view.conjuncts(i) if c.pos in _NOUN_POS or c.pos == "PRON"]
        return found

    def relate(
        self, lemma: str, first: int, second: int, rule: ArcRule, tokens: list[int], pos: str = "ADP"
    ) -> None:
        if rule.reverse:
            first, second = second, first
        self.relations.append(_new(Relation, (lemma, first, second, rule.id, tuple(tokens), pos)))

    # -- driving ----------------------------------------------------------------------
    def classify(self) -> None:
        """Give every token the first arc rule that holds for it."""
        view, rule_of, emit = self.view, self.rule_of, self.emit
        for_word, known = self.rules.rules_for_word, self.rules.words_seen
        for tok in view.tokens:
            # the word's own tests are done once per word: the rules left test its head,
            # children or object; the second answer applies when none of them does
            key = (tok.dep, tok.pos, tok.tag, tok.lemma, tok.lower)
            found = known.get(key)  # rules_for_word's own table, read without a call
            tests, chosen = found if found is not None else for_word(*key)
            for rule in tests:  # their tests of the word pass: only the rest is asked
                if rule.when.beyond(view, tok):  # beyond_word, compiled for the rule
                    chosen = rule
                    break
            if chosen is not None:
                rule_of[tok.i] = chosen
                emit[tok.i] = chosen.emit

    def run(self, scopes: ScopePlan | None = None) -> Graph:
        """Classify every token and apply the actions in token order.

        Args:
            scopes: the scope pass's decisions (:func:`fortekit.fol.caption.negation.resolve_scopes`):
                its cue words say nothing, its excluded entities and denied predicates are
                marked before the arc actions run.
        """
        self.classify()
        if scopes is not None:
            self.use_scopes(scopes)
        self._run_actions(self.consumed, self.rule_of, self.union)
        if scopes is not None and scopes.order:
            self.add_order(scopes)
        return self

    def _run_actions(
        self, consumed: set[int], rule_of: list[ArcRule], union: Callable[[int, int], None]
    ) -> None:
        """The arc actions in token order."""
        for tok in self.view.tokens:
            if tok.i in consumed:
                continue
            rule = rule_of[tok.i]
            action = rule.action
            # the two most frequent actions (3 words in 4) without a call of their own
            if action == "attach":  # act_attach
                if tok.head != tok.i:
                    union(tok.i, tok.head)
            elif action != "separate":  # act_separate does nothing
                ACTIONS[action](self, tok, rule)

    def add_order(self, scopes: ScopePlan) -> None:
        """The scope pass's order links ("thunder rumbling and then rain falling"), where the
        temporal arc rules made no relation from the same order word."""
        done = {k for relation in self.relations for k in relation.tokens}
        for link in scopes.order:
            if not done & set(link.tokens):
                self.relate("before", link.first, link.second, _ORDER_RULE, list(link.tokens))

    def use_scopes(self, scopes: ScopePlan) -> None:
        """Mark what the scope pass decided (cue words, exclusions, denials, unresolved scopes)."""
        rule_of, emit, excluded, negated = self.rule_of, self.emit, self.excluded, self.negated
        for i in scopes.cue_tokens:
            rule_of[i] = _CUE_RULE
            emit[i] = False
            excluded.pop(i, None)
            self.consumed.add(i)
        for i in scopes.suppressed:
            emit[i] = False
            self.suppressed[i] = True
            excluded.pop(i, None)
        excluded.update(scopes.excluded)
        for i, rule_id in scopes.denied.items():
            negated[i] = rule_id

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
            if lemma in self.words("coordinating_prepositions"):
                return  # 'A together with B': coordination, two entities and no relation
        tokens_of = self.view.tokens
        head_of_first = tokens_of[first].head
        head = self.anchor(tokens_of[head_of_first]) if head_of_first != first else first
        for second in self.conj_nouns(obj.i):
            if self.is_pronoun(tokens_of[second]):
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
        """'talk to each other', 'clang against one another': a reciprocal says no relation.

        The members of one plural entity act on each other; ``To(x, x)`` would relate the
        entity to itself (docs/annotation.md, "Reciprocals and reflexives").
        """
        obj = self.view.prep_object(tok.i)
        if (
            obj is not None
            and obj.lower == "one"
            and not any(c.lower in ("another", "other") for c in self.view.children(obj.i))
        ):
            self.act_relation(tok, rule)  # 'to one' is no reciprocal
            return
        if obj is not None:  # 'talk to each other' -> Talk(x): no relation of x to itself
            for child in self.view.children(obj.i):
                self.emit[child.i] = False
            self.emit[obj.i] = False

    def act_verb_with_object(self, tok: Tok, rule: ArcRule) -> None:
        self.union(tok.i, self.anchor(self.view[tok.head]))
        obj = self.view.prep_object(tok.i)
        if obj is not None:
            self.objects.setdefault(tok.i, []).append(obj.i)

    def act_possessor(self, tok: Tok, rule: ArcRule) -> None:
        self.relate(rule.relation or "of", tok.head, tok.i, rule, [tok.i])

    def act_skip_phrase(self, tok: Tok, rule: ArcRule) -> None:
        # Its quantity words ('several', 'two more') are no predicates by their own rules.
        self.emit[tok.i] = False
        self.suppressed[tok.i] = True


Action = Callable[[Graph, Tok, ArcRule], None]
#: The arc actions the rule file may name.
ACTIONS: dict[str, Action] = {name: getattr(Graph, f"act_{name}") for name in sorted(ARC_ACTIONS)}
