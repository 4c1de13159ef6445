"""What the scope rules of the negation pass read: segments, cue matches, sound phrases.

A caption's tokens are cut into **segments** at punctuation and at conjunctions that
start a new clause (docs/negation.md, "What the parser has to produce"); a cue's scope
stays inside its segment. A **sound phrase** is a noun with its modifiers, the verb it is
the subject of and a participle right after it, inside one segment.

Example:
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> from fortekit.fol.caption.negation_rules import load_negation_rules
    >>> toks = [Tok(0, "rain", "rain", "rain", "NOUN", "NN", "ROOT", 0, 0),
    ...         Tok(1, ",", ",", ",", "PUNCT", ",", "punct", 0, 4),
    ...         Tok(2, "no", "no", "no", "DET", "DT", "det", 3, 6),
    ...         Tok(3, "wind", "wind", "wind", "NOUN", "NN", "appos", 0, 9)]
    >>> segments(TokenView(toks, "rain, no wind"), load_negation_rules())
    [0, -1, 1, 1]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from fortekit.fol.caption.lemmas import WordNetLemmas
from fortekit.fol.caption.negation_rules import Connective, Cue, NegationRules
from fortekit.fol.caption.tokens import SUBJECT_DEPS, Tok, TokenView

__all__ = ["Match", "ScopeContext", "Verdict", "segments"]

NOUNS = frozenset({"NOUN", "PROPN"})
VERBS = frozenset({"VERB", "AUX"})
_CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM"})
_GLUE_POS = frozenset({"DET", "ADP", "PART", "AUX", "CCONJ", "SCONJ", "PUNCT", "PRON", "ADV", "INTJ"})


def _infix(view: TokenView, i: int) -> bool:
    """Whether token ``i`` is written inside a word, with no space on either side ("traffic-free")."""
    tokens = view.tokens
    if i == 0 or i + 1 >= len(tokens):
        return False
    return tokens[i - 1].end == tokens[i].start and tokens[i].end == tokens[i + 1].start


def _clause_follows(view: TokenView, i: int, rules: NegationRules) -> bool:
    """Whether a verb or a cue comes after token ``i`` before the next punctuation."""
    for tok in view.tokens[i + 1 :]:
        if tok.lower in rules.punctuation and not _infix(view, tok.i):
            return False
        if tok.pos in VERBS or tok.tag == "VBG" or rules.cue_for_word(tok.lower) is not None:
            return True
    return False


def _degree_word(view: TokenView, tok: Tok) -> bool:
    """'so much as a hint of B', 'as loud as': "so" and "as" that modify the adjective or adverb
    after them, and the "as" that completes such a comparison, are words of degree inside a
    phrase, no clause conjunction (Huddleston & Pullum 2002, ch. 13 §4).

    Example:
        >>> from fortekit.fol.caption.tokens import Tok, TokenView
        >>> words = [("without", "ADP", "prep", 0), ("so", "ADV", "advmod", 2),
        ...          ("much", "ADJ", "pobj", 0), ("as", "ADP", "prep", 2), ("a", "DET", "det", 5),
        ...          ("hint", "NOUN", "pobj", 3)]
        >>> view = TokenView([Tok(i, w, w, w, p, "", d, h, 0) for i, (w, p, d, h) in enumerate(words)],
        ...                  "without so much as a hint")
        >>> _degree_word(view, view[1]), _degree_word(view, view[3])
        (True, True)
    """
    if tok.lower not in ("so", "as"):
        return False
    nxt = view[tok.i + 1] if tok.i + 1 < len(view) else None
    if tok.dep == "advmod" and nxt is not None and tok.head == nxt.i and nxt.pos in ("ADJ", "ADV"):
        return True  # "so much", "as loud"
    before = view[tok.i - 1] if tok.i > 0 else None
    return (
        tok.lower == "as"
        and before is not None
        and before.pos in ("ADJ", "ADV")
        and any(c.lower in ("so", "as") and c.i < before.i for c in view.children(before.i, ("advmod",)))
    )


def _inside_noun_phrase(view: TokenView, i: int) -> bool:
    """A comma between the adjectives of one noun phrase ("a lower, pitched roof")."""
    if view[i].lower != "," or i == 0:
        return False
    before = view[i - 1]
    return before.pos == "ADJ" and before.dep == "amod" and before.head > i and view[before.head].pos in NOUNS


def segments(view: TokenView, rules: NegationRules) -> list[int]:
    """The segment number of each token (-1 for the boundary tokens themselves).

    Args:
        view: the caption's tokens.
        rules: the negation rules (their ``[segments]`` table).

    Returns:
        One number per token, from 0.
    """
    found: list[int] = []
    current = 0
    started = False
    boundary_words = rules.boundary_words  # the union of the three sets below: most words are none
    for tok in view.tokens:
        low = tok.lower
        boundary = low in boundary_words and (
            (low in rules.punctuation and not _infix(view, tok.i) and not _inside_noun_phrase(view, tok.i))
            or low in rules.conjunctions
            or (
                low in rules.clause_conjunctions
                and tok.pos in ("CCONJ", "SCONJ", "ADP", "ADV")
                and not _degree_word(view, tok)
                and _clause_follows(view, tok.i, rules)
            )
        )
        if boundary:
            found.append(-1)
            if started:
                current += 1
                started = False
            continue
        found.append(current)
        started = True
    return found


@dataclass(slots=True)
class Match:
    """One cue or connective found in a caption.

    Attributes:
        entry: the :class:`Cue` or :class:`Connective`.
        tokens: its tokens (one, or a phrase's).
    """

    entry: Cue | Connective
    tokens: list[int]

    @property
    def first(self) -> int:
        return self.tokens[0]

    @property
    def last(self) -> int:
        return self.tokens[-1]


@dataclass(slots=True)
class Verdict:
    """What a scope rule found for a cue.

    Attributes:
        effect: ``exclude`` (the target's sound phrase is denied), ``deny`` (the verb or
            adjective ``target`` is negated for ``holder``), ``assert`` (an exceptive: the
            target stays asserted), ``cancel`` (a double negation), ``join`` (a
            co-occurrence connective), ``unresolved`` (nothing is negated).
        construction: the construction of docs/negation.md.
        target: the token at the centre of the scope (a noun, or a verb for ``deny``).
        holder: for ``deny``, the token whose entity keeps the denied predicate.
        cue_tokens: tokens that say nothing once the cue is read (the cue's own, its
            auxiliaries, a filler "sign of").
        reason: why a scope is unresolved ("" when it is resolved).
        extra_targets: further nouns excluded with the target (coordinated ones).
        rehead: for ``deny``, hang the target on the holder (an elliptical "not dripping"
            whose attachment the parse got wrong); a verbal negation keeps its tree.
    """

    effect: str
    construction: str
    target: int | None = None
    holder: int | None = None
    cue_tokens: list[int] = field(default_factory=list)
    reason: str = ""
    extra_targets: list[int] = field(default_factory=list)
    rehead: bool = False


class ScopeContext:
    """The caption as the scope rules see it: tokens, segments, the rules, WordNet.

    Args:
        view: the caption's tokens (the scope pass may re-head them).
        rules: the negation rules.
        lex: WordNet questions.
    """

    __slots__ = ("claimed", "lex", "pending", "rules", "segment", "view")

    def __init__(self, view: TokenView, rules: NegationRules, lex: WordNetLemmas) -> None:
        self.view = view
        self.rules = rules
        self.lex = lex
        self.segment = segments(view, rules)
        self.claimed: set[int] = set()  # tokens another cue's scope already took
        self.pending: dict[int, tuple[str, str, str]] = {}  # nouns read by nominal(), not yet retagged

    # -- questions about tokens ----------------------------------------------------------
    def words(self, name: str) -> frozenset[str]:
        return self.rules.words(name)

    def same_segment(self, a: int, b: int) -> bool:
        return self.segment[a] >= 0 and self.segment[a] == self.segment[b]

    def segment_tokens(self, i: int) -> list[int]:
        """The tokens of token ``i``'s segment, in order."""
        seg = self.segment[i]
        return [k for k, s in enumerate(self.segment) if s == seg and seg >= 0]

    def is_noun(self, tok: Tok) -> bool:
        return (
            tok.pos in NOUNS
            or tok.i in self.pending
            or (tok.pos == "PRON" and tok.lower in self.words("indefinite_pronouns"))
        )

    def nominal(self, tok: Tok, after: int = -1) -> bool:
        """Whether ``tok`` heads a noun phrase where a cue predicts one, and if so retag it.

        After a determiner, preposition or particle the grammar predicts a noun phrase;
        the small tagger (and the repairs that trust it) often read its noun as a verb or an
        adjective ("no siren/ADJ", "rather than wind/VBP", "not vehicles/VBZ passing"). A
        word with no subject of its own in its segment, no -ing or participle form, that
        WordNet knows as a noun (and, for an adjective, not as an adjective) is read as a noun.
        A subject at or before ``after`` (the cue) does not count: a word a preposition
        governs cannot have its subject before the preposition ("bells/nsubj ... rather than
        wind/VBP").
        """
        if self.is_noun(tok):
            return True
        if (
            tok.tag in ("VBG", "VBN", "MD")
            or tok.pos not in ("VERB", "ADJ", "ADV", "X")
            or self.lex.wordnet is None
            or tok.lemma in ("be", "have", "do", "get")
        ):
            return False
        subject = self.subject_in_segment(tok.i)
        if (subject is not None and subject.i > after) or tok.lower in self.rules.trigger_words:
            return False
        nouns = self.lex.morphy(tok.lower, "NOUN")
        if not nouns or (tok.pos in ("ADJ", "ADV") and self.lex.morphy(tok.lower, "ADJ")):
            return False
        # a rule may still decline the cue: the retag waits until its verdict is applied
        self.pending[tok.i] = ("NOUN", "NNS" if nouns[0] != tok.lower else "NN", nouns[0])
        return True

    def commit(self, indices: set[int]) -> None:
        """Retag the tokens among ``indices`` that :meth:`nominal` read as nouns; forget the rest."""
        for i, (pos, tag, lemma) in self.pending.items():
            if i in indices:
                tok = self.view[i]
                tok.pos, tok.tag, tok.lemma = pos, tag, lemma
                tok.repaired += ("negation-noun",)
                for child in self.view.children(i):  # "rain/NOUN falling/xcomp": the noun's participle
                    if (
                        self.is_verbal(child)
                        and child.i > i
                        and child.dep in ("xcomp", "ccomp", "dobj", "advcl")
                        and self.subject_in_segment(child.i) is None
                    ):
                        child.dep = "acl"
        self.pending.clear()

    def is_verbal(self, tok: Tok) -> bool:
        """A verb, or a gerund or participle tagged otherwise ("barking/NOUN" after a noun is no verb)."""
        return tok.pos in VERBS or (tok.tag in ("VBG", "VBN") and tok.pos != "ADJ")

    def noun_head(self, i: int) -> int:
        """The last noun of the compound chain token ``i`` starts ("ice cream truck" -> "truck")."""
        view = self.view
        j = i
        for _ in range(len(view)):
            tok = view[j]
            if (
                tok.dep == "compound"
                and tok.head > j
                and view[tok.head].pos in NOUNS
                and self.same_segment(j, tok.head)
                and self.rules.cue_for_word(view[tok.head].lower) is None
            ):
                j = tok.head
                continue
            break
        return j

    def phrase_head(self, i: int) -> int:
        """The head noun of the noun phrase token ``i`` is in: up through compound, adjective,
        determiner and noun-modifier arcs to a noun on its right in the segment
        ("some plastic/amod sound" -> sound)."""
        view = self.view
        j = i
        for _ in range(len(view)):
            tok = view[j]
            if (
                tok.dep in ("compound", "amod", "nmod", "det", "nummod", "poss")
                and tok.head > j
                and view[tok.head].pos in NOUNS
                and self.same_segment(j, tok.head)
            ):
                j = tok.head
                continue
            break
        return self.noun_head(j)

    def subject_in_segment(self, i: int) -> Tok | None:
        """The first subject child of ``i`` in ``i``'s segment (a subject across a boundary is
        an attachment error: "rain, the wind is not blowing")."""
        for child in self.view.children(i, SUBJECT_DEPS):
            if self.same_segment(child.i, i):
                return child
        return None

    def subject_of(self, i: int) -> Tok | None:
        """The subject of the verb or adjective ``i``, through copulas, coordination and relative pronouns."""
        view = self.view
        seen = 0
        j = i
        while seen < len(view):
            seen += 1
            subject = self.subject_in_segment(j)
            if subject is not None:
                if subject.lower in ("that", "which", "who") and view[j].dep in ("relcl", "acl"):
                    return view[view[j].head]
                if subject.dep in ("csubj", "csubjpass"):  # "birds chirping cannot be heard"
                    inner = self.subject_in_segment(subject.i)
                    return inner if inner is not None else subject
                return subject
            tok = view[j]
            if not self.same_segment(tok.head, j):
                return None
            if (
                tok.dep in ("conj", "xcomp", "acomp", "attr", "oprd", "ccomp")
                and tok.head != j
                and view[tok.head].pos in (*VERBS, "ADJ")
            ):
                j = tok.head
                continue
            if tok.dep in ("acl", "amod") and tok.head != j and view[tok.head].pos in NOUNS:
                return view[tok.head]
            return None
        return None

    def first_after(self, i: int, *, stop: Iterable[int] = ()) -> Tok | None:
        """The first content token after ``i`` in its segment, past openers and fillers."""
        view, openers = self.view, self.words("phrase_openers")
        stops = set(stop)
        for k in range(i + 1, len(view)):
            if not self.same_segment(k, i) or k in stops:
                return None
            tok = view[k]
            if tok.lower in openers or tok.pos == "PUNCT":
                continue
            if tok.pos in _GLUE_POS and not self.is_noun(tok) and tok.tag not in ("VBG", "VBN"):
                if self.rules.cue_for_word(tok.lower) is not None:
                    return tok
                continue
            return tok
        return None

    def noun_before(self, i: int) -> Tok | None:
        """The nearest noun before ``i`` in its segment with no verb between them."""
        view = self.view
        for k in range(i - 1, -1, -1):
            if not self.same_segment(k, i):
                return None
            tok = view[k]
            if self.is_noun(tok) or (k == i - 1 and self.nominal(tok)):
                return view[self.noun_head(k)] if self.noun_head(k) < i else tok
            if tok.pos in VERBS and tok.lemma not in ("be", "have") and tok.tag != "MD":
                return None
        return None

    def subject_before(self, i: int) -> Tok | None:
        """The head noun of the first noun phrase of ``i``'s segment before ``i`` (a clause's
        subject: "the sound of birds chirping has died down")."""
        view = self.view
        for k in self.segment_tokens(i):
            if k >= i:
                return None
            if self.is_noun(view[k]):
                return view[self.noun_head(k)]
        return None

    def filler_object(self, noun: Tok) -> tuple[Tok, list[int]] | None:
        """'sign of B', 'the sound of B': the noun after a filler noun and its "of", and the
        filler tokens; 'need for B': the same after a noun of wanting or needing and its "for"."""
        fillers = self.words("filler_nouns")
        wanting = noun.pos in NOUNS and noun.lemma in self.words("desire_nouns")
        if noun.lower not in fillers and not (noun.pos in NOUNS and noun.lemma in fillers) and not wanting:
            return None  # "no findings of B": a plural filler is read by its lemma
        view = self.view
        of = noun.i + 1
        preposition = "for" if wanting else "of"
        if of < len(view) and view[of].lower == preposition and self.same_segment(of, noun.i):
            after = self.first_after(of)
            if after is not None and self.is_noun(after):
                return view[self.noun_head(after.i)], [noun.i, of]
        return None

    def owned_participle(self, noun: int, floor: int = -1) -> Tok | None:
        """A verb right after the noun's phrase with no subject of its own: the phrase's event.

        A subject at or before ``floor`` (the cue that governs the noun) or among the cue's
        words ("a trace/nsubj of birds chirping") is an attachment error and does not count.
        """
        view = self.view
        end = max(k for k in view.subtree(noun) if self.same_segment(k, noun) or k == noun)
        k = end + 1
        if k < len(view) and self.same_segment(k, noun):
            tok = view[k]
            gerund = tok.lower.endswith("ing") and self.lex.verb_base(tok.lower) is not None  # "touching/NN"
            subject = self.subject_in_segment(tok.i)
            if (
                (self.is_verbal(tok) or gerund)
                and (subject is None or subject.i <= floor or subject.i in self.claimed)
                and tok.i not in self.claimed
                and self.rules.cue_for_word(tok.lower) is None
            ):
                return tok
        return None

    def phrase(self, target: int, cue_tokens: Iterable[int] = ()) -> set[int]:
        """The sound phrase of the noun ``target`` inside its segment (docs/negation.md)."""
        view = self.view
        cues = set(cue_tokens)
        seg = self.segment[target]
        inside = {k for k in view.subtree(target) if self.segment[k] == seg}
        tok = view[target]
        head = view[tok.head]
        if (
            tok.dep in SUBJECT_DEPS
            and head.i != target
            and self.segment[head.i] == seg
            and head.lemma not in self.words("perception")
        ):
            others = {c.i for c in view.children(head.i) if c.dep in SUBJECT_DEPS and c.i != target}
            extra = set() if head.i in cues else {head.i}
            for child in view.children(head.i):
                if child.i not in others and child.i not in cues and child.i > target:
                    extra |= {k for k in view.subtree(child.i) if self.segment[k] == seg}
            inside |= extra
        participle = self.owned_participle(target)
        if participle is not None:
            inside |= {k for k in view.subtree(participle.i) if self.segment[k] == seg}
        return inside - cues
