"""From the Pass 1 graph to candidate literals: lemmas, coreference, objects, negation.

Lemmas follow docs/annotation.md: nouns singular, gerunds and participles as their
verb (``more chirping`` -> ``chirp``, ``broken`` -> ``break``), adverbs as their
adjective (``quietly`` -> ``quiet``). Repeated nouns and pronouns reuse their
antecedent's node before literals are made, so their predicates collapse.

Example:
    >>> from fortekit.fol.caption.tokens import Tok, TokenView
    >>> from fortekit.fol.caption.rules import load_rules
    >>> from fortekit.fol.caption.lemmas import WordNetLemmas
    >>> from fortekit.fol.caption.pass1 import ORDER_RULES, Graph
    >>> view = TokenView([Tok(0, "dogs", "dogs", "dog", "NOUN", "NNS", "nsubj", 1, 0),
    ...                   Tok(1, "bark", "bark", "bark", "VERB", "VBP", "ROOT", 1, 5)], "dogs bark")
    >>> found, timed = candidates(Graph(view, load_rules(), WordNetLemmas(None)).run())
    >>> [(c.lemma, c.args) for c in found], timed
    ([('dog', (0,)), ('bark', (0,))], set())
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from fortekit.fol.caption.coref import Heads, corefer_repeated, excluded_nodes, resolve_pronouns
from fortekit.fol.caption.events import with_event_terms
from fortekit.fol.caption.lemmas import camel
from fortekit.fol.caption.pass1 import ORDER_RULES, Graph
from fortekit.fol.caption.tokens import Tok

__all__ = ["Candidate", "candidates", "entity_heads", "excluded_nodes", "predicate_lemma", "time_nodes"]

_NOUNS = frozenset({"NOUN", "PROPN"})
_PARTICIPLE_ENDINGS = ("ed", "en", "ing", "wn", "nt")
_HEAD_DEPS_EXCLUDED = frozenset({"compound", "amod", "poss", "nmod"})


class Candidate(NamedTuple):
    """A literal before grounding (internal to the passes; the public record is
    :class:`~fortekit.fol.caption.result.PredicateRecord`).

    A named tuple, not a frozen dataclass: some 4,500 are made per 600 captions, and a
    tuple is made in a third of the time (docs/parser.md, "Speed").

    Attributes:
        lemma: lower-case lemma words (``chirp``, ``in front of``, ``high pitched``).
        pos: part of speech for grounding (``NOUN``, ``VERB``, ``ADJ``, ``ADV``, ``ADP``).
        args: node ids of the arguments (see :meth:`Graph.find`).
        negated: whether the literal is negated.
        rule: the arc rule that produced it.
        tokens: the caption tokens it comes from.
        excluded: whether it belongs to a denied entity's clause ``¬∃y [..]`` (one of
            its arguments is an excluded entity).
    """

    lemma: str
    pos: str
    args: tuple[int, ...]
    negated: bool
    rule: str
    tokens: tuple[int, ...]
    excluded: bool = False


def predicate_lemma(graph: Graph, tok: Tok) -> tuple[str, str] | None:
    """The lemma and grounding POS of a content token, or None if it is no predicate.

    Args:
        graph: the Pass 1 graph (for the lexicon, WordNet and the tree).
        tok: the token.

    Returns:
        ``(lemma, pos)`` or None.
    """
    words, lex = graph.words, graph.lex
    low, lemma, pos = tok.lower, tok.lemma, tok.pos
    override = graph.lexicon.lemma_overrides.get(low)
    if override is not None and pos not in ("AUX", "PRON", "DET", "ADP", "PUNCT"):
        return override, "NOUN" if pos in _NOUNS else pos
    if pos == "AUX" or lemma in words("never_predicates") or low in words("never_predicates"):
        return None
    if pos == "PRON":
        if low not in words("indefinite_pronouns"):
            return None
        return graph.lexicon.lemma_overrides.get(low, low), "NOUN"
    if pos in _NOUNS or pos == "X":
        if lemma in words("quantity_words") and pos != "PROPN":
            return None
        if low.endswith("ing") and lemma not in words("time_nouns"):
            base = lex.verb_base(low)
            if base is not None and lex.is_event_noun(low):
                return base, "VERB"
        if lex.wordnet is not None and not lex.has(lemma, "NOUN"):
            bases = lex.morphy(low, "NOUN")
            if bases:
                return bases[0], "NOUN"
        return lemma, "NOUN"
    if pos == "VERB":
        if lemma in words("copular_verbs") and graph.view.has_child(tok.i, ("acomp", "attr", "oprd")):
            return None
        base = lex.verb_base(low)
        return (base if base is not None else lemma), "VERB"
    if pos == "ADJ":
        if lemma in words("quantity_words") or lemma in words("ordinals"):
            return None
        if low.endswith(_PARTICIPLE_ENDINGS) or tok.tag == "VBN":
            base = lex.verb_base(low)
            if base is not None:
                return base, "VERB"
        return lemma, "ADJ"
    if pos == "ADV":
        if low in words("place_adverbs"):
            return low, "ADV"
        if low in words("non_predicate_adverbs") or lemma in words("non_predicate_adverbs"):
            return None
        adjective = lex.adjective_of_adverb(low)
        return (adjective, "ADJ") if adjective is not None else (lemma, "ADV")
    return None


# predicate_lemma() depends on the token's own fields (and, for a copular verb, on its
# children), the lexicon and WordNet: across captions the same words come back, so its
# answers are kept in the parser's WordNetLemmas.memo (bounded by clearing).
_LEMMA_CACHE_SIZE = 1 << 16
_MISSING: tuple[str, str] = ("", "")  # a sentinel no lemma lookup returns
_new = tuple.__new__


def _lemma_of(graph: Graph, tok: Tok, cache: dict[int, tuple[str, str] | None]) -> tuple[str, str] | None:
    found = cache.get(tok.i, _MISSING)
    if found is not _MISSING:
        return found
    return _new_lemma(graph, tok, cache)


def _new_lemma(graph: Graph, tok: Tok, cache: dict[int, tuple[str, str] | None]) -> tuple[str, str] | None:
    """:func:`_lemma_of` for a token not in ``cache`` (the caller has looked, or knows)."""
    found: tuple[str, str] | None
    memo = graph.lex.memo
    shared = tok.pos != "VERB" or tok.lemma not in graph.words("copular_verbs")
    key = ("lemma", id(graph.lexicon), tok.lower, tok.lemma, tok.pos, tok.tag)
    if shared and (hit := memo.get(key, _MISSING)) is not _MISSING:
        found = hit  # type: ignore[assignment]
    else:
        found = predicate_lemma(graph, tok)
        if found is not None and not camel(found[0]):
            found = None
        if shared:
            if len(memo) >= _LEMMA_CACHE_SIZE:
                memo.clear()
            memo[key] = found
    cache[tok.i] = found
    return found


def entity_heads(graph: Graph, lemmas: dict[int, tuple[str, str] | None]) -> Heads:
    """The tokens that name an entity (head nouns, indefinite pronouns) with their lemma."""
    return _heads_and_starts(graph, lemmas, False)[0]


def _heads_and_starts(
    graph: Graph, lemmas: dict[int, tuple[str, str] | None], compounds: bool
) -> tuple[Heads, list[Tok]]:
    """:func:`entity_heads`, and the tokens that may start a multi-word predicate (an
    adjective or adverb that starts a phrase of the lexicon; with ``compounds``, a noun
    after a compound noun), in token order: one pass over the tokens for both."""
    indefinite = graph.words("indefinite_pronouns")
    first_words = graph.lexicon.multiword_adjective_starts
    prefixes = graph.lexicon.lists.get("bound_negative_prefixes", frozenset())
    heads: Heads = []
    starts: list[Tok] = []
    suppressed, emit, toks = graph.suppressed, graph.emit, graph.view.tokens
    for tok in toks:
        pos = tok.pos  # the part of speech first: most words are no noun
        if tok.lower in prefixes:  # "non-musical", whatever the tagger made of "non"
            starts.append(tok)
            continue
        if pos in _NOUNS:
            if compounds and tok.i > 0 and toks[tok.i - 1].dep == "compound" and tok.dep != "compound":
                starts.append(tok)  # a chain of one noun is no compound
        elif pos == "ADJ" or pos == "ADV":
            if tok.lower in first_words:
                starts.append(tok)
            continue
        elif pos != "PRON" or tok.lower not in indefinite:
            continue
        if tok.dep in _HEAD_DEPS_EXCLUDED or suppressed[tok.i] or not emit[tok.i]:
            continue
        found = _new_lemma(graph, tok, lemmas)  # a token is met once here: no need to look
        if found is not None:
            heads.append((tok, found[0]))
    return heads, starts


def time_nodes(graph: Graph, heads: Heads) -> set[int]:
    """Nodes whose entity is a time expression (a time noun and no other entity noun)."""
    time_words = graph.words("time_nouns")
    timed = {graph.find(tok.i) for tok, lemma in heads if lemma in time_words}
    if not timed:
        return timed
    return timed - {graph.find(tok.i) for tok, lemma in heads if lemma not in time_words}


def _objects(graph: Graph, tok: Tok, lemma: str, share: bool) -> list[int]:
    found = graph.objects.get(tok.i, [])
    if found or not share:  # share: the option 'share_objects_across_conjuncts'
        return found
    if graph.view.has_child(tok.i, ("auxpass", "nsubjpass")) or tok.tag == "VBN":
        return []  # a passive verb has no object to share ('opened ... and dripping a liquid')
    # 'holding and squeezing a toy': a transitive verb shares the next conjunct's object.
    for conj in graph.view.children(tok.i, ("conj",)):
        if conj.pos == "VERB" and graph.view.subject(conj.i) is None and graph.objects.get(conj.i):
            if any(obj in graph.excluded for obj in graph.objects[conj.i]):
                return []  # 'operating and detecting nothing': a denied object is not shared
            return graph.objects[conj.i] if graph.lex.is_transitive(lemma) else []
    return []


def _multiword_adjective(graph: Graph, tok: Tok) -> tuple[str, list[int]] | None:
    view, table = graph.view, graph.lexicon.multiword_adjectives
    if tok.lower in graph.lexicon.lists.get("bound_negative_prefixes", frozenset()):
        # "non-musical": the prefix and its word are one predicate, never the bare word
        k = tok.i + 1 + (tok.i + 1 < len(view) and view[tok.i + 1].lower == "-")
        if k < len(view) and view[k].lower.isalpha():
            return f"{tok.lower} {view[k].lower}", list(range(tok.i, k + 1))
    following = [j for j in range(tok.i + 1, min(tok.i + 3, len(view))) if view[j].lower != "-"][:1]
    if following:
        phrase = f"{tok.lower} {view[following[0]].lower}"
        if phrase in table:
            return table[phrase], [tok.i, *range(tok.i + 1, following[0] + 1)]
    return None


def _compound_phrase(
    graph: Graph, tok: Tok, lemmas: dict[int, tuple[str, str] | None], is_multiword: Callable[[str], bool]
) -> tuple[str, list[int]] | None:
    """Paper: a compound noun in V_audio is one predicate (``ice cream truck`` -> IceCreamTruck)."""
    chain: list[int] = [tok.i]
    j = tok.i - 1
    while j >= 0 and graph.view[j].dep == "compound" and graph.view[j].head in chain:
        chain.insert(0, j)
        j -= 1
    for start in range(len(chain) - 1):
        words = []
        for k in chain[start:]:
            found = _lemma_of(graph, graph.view[k], lemmas)
            words.append(found[0] if found else graph.view[k].lower)
        phrase = " ".join(words)
        if is_multiword(phrase):
            return phrase, chain[start:]
    return None


def _complements(graph: Graph, ordered: list[tuple[int, int]]) -> dict[int, list[int]]:
    """For each ordered clause's token, the words that carry its event when it names none itself.

    A copula's complement ('is loud then quiet'), a noun's participle ('food crackling as
    it fries'), the verb a denied event is coordinated with ('operating and detecting
    nothing and then registering activity').
    """
    deps = ("acomp", "attr", "oprd", "xcomp", "acl", "relcl")
    view = graph.view
    found: dict[int, list[int]] = {}
    for tok in (tok for pair in ordered for tok in pair):
        found[tok] = [c.i for c in view.children(tok, deps)]
        if view[tok].dep == "conj" and view[tok].head != tok:  # 'operating and detecting nothing'
            found[tok].append(view[tok].head)
    return found


def candidates(
    graph: Graph, is_multiword: Callable[[str], bool] | None = None
) -> tuple[list[Candidate], set[int]]:
    """The literals of a caption, before grounding, in the order of their first token.

    Args:
        graph: the Pass 1 graph after :meth:`Graph.run`.
        is_multiword: tells whether a multi-word lemma is one V_audio predicate (for
            the paper's compound rule); None to keep one predicate per noun.

    Returns:
        The candidates, duplicates (same lemma, arguments and polarity) removed, and
        the nodes that are time expressions (named t, t1, ...).
    """
    view = graph.view
    lemmas: dict[int, tuple[str, str] | None] = {}
    heads, starts = _heads_and_starts(graph, lemmas, is_multiword is not None)
    corefer_repeated(graph, heads)
    timed = time_nodes(graph, heads)
    resolve_pronouns(graph, heads, timed)
    negated = list(graph.negated)
    for tok in view.tokens if any(negated) else ():  # a negated copula passes its negation on
        if negated[tok.i] and (not graph.emit[tok.i] or _lemma_of(graph, tok, lemmas) is None):
            for child in view.children(tok.i, ("acomp", "attr", "xcomp", "oprd", "dobj")):
                negated[child.i] = negated[tok.i]
    out: list[Candidate] = []
    done: set[int] = set()
    emit = graph.emit
    for tok in starts:  # multi-word predicates first, so their words are not emitted alone
        i = tok.i
        if not emit[i] or i in done:
            continue
        if tok.pos in _NOUNS:
            assert is_multiword is not None  # a noun starts a phrase only with compounds on
            merged = _compound_phrase(graph, tok, lemmas, is_multiword)
            rule = "compound"
        else:
            merged = _multiword_adjective(graph, tok)
            rule = graph.rule_of[i].id
        if merged is not None:
            lemma, tokens = merged
            done.update(tokens)
            pos = "NOUN" if tok.pos in _NOUNS else "ADJ"
            negation = negated[tok.i]
            rule = graph.excluded.get(tok.i) or negation or rule
            out.append(Candidate(lemma, pos, (graph.find(tok.i),), negation is not None, rule, tuple(tokens)))
    find, excluded, subject_of = graph.find, graph.excluded, graph.subject_of
    # docs/annotation.md "Reciprocals and reflexives": no relation relates an entity to
    # itself; where an attachment error would write R(x, x), the relation goes and a
    # verb keeps its subject only (option 'reflexive_relations' in grammars/arc_rules.toml).
    options = graph.rules.options  # read once per caption, not once per verb
    reflexive = bool(options.get("reflexive_relations", False))
    share_objects = bool(options.get("share_objects_across_conjuncts", True))
    parent, rule_of = graph.parent, graph.rule_of
    binary = False  # whether a candidate has two arguments
    for tok in view.tokens:
        i = tok.i
        if not emit[i] or i in done:
            continue
        found = lemmas.get(i, _MISSING)  # _lemma_of's own cache, read inline
        if found is _MISSING:
            found = _new_lemma(graph, tok, lemmas)
        if found is None:
            continue
        lemma, pos = found
        node = parent[i]
        if parent[node] != node:  # find(i) without a call when i is its node or a child of it
            node = find(i)
        negation = negated[i]
        # A negated predicate's provenance is the rule that negated it ('neg'), a
        # denied entity's noun the rule that excluded it ('prep-without').
        source = (excluded.get(i) if excluded else None) or negation or rule_of[i].id
        tag = tok.pos
        objects = _objects(graph, tok, lemma, share_objects) if tag == "VERB" else None
        subject = subject_of.get(i)
        if not objects and (subject is None or tag not in ("VERB", "ADJ")):  # the common case
            # tuple.__new__ with all seven fields: the named tuple's own __new__ is a
            # Python call, and this is where most candidates are made
            out.append(_new(Candidate, (lemma, pos, (node,), negation is not None, source, (i,), False)))
            continue
        holders = [node]
        if subject is not None and tok.pos in ("VERB", "ADJ"):
            holders += [find(c) for c in graph.conj_nouns(subject)[1:] if find(c) != node]
        slots: list[int | None] = [*objects] if objects else [None]
        for holder in holders:
            for obj in slots:
                if obj is not None and find(obj) not in timed and (reflexive or find(obj) != holder):
                    args: tuple[int, ...] = (holder, find(obj))
                    binary = True
                else:
                    args = (holder,)
                out.append(_new(Candidate, (lemma, pos, args, negation is not None, source, (i,), False)))
    denied = excluded_nodes(graph)
    privative = graph.words("privative_prepositions")
    # the temporal arc rules, and the order the scope pass found between two sound phrases
    temporal = graph.rules.temporal_rules | ORDER_RULES
    orders: list[Candidate] = []  # an order between two events of one entity
    ordered: list[tuple[int, int]] = []
    for rel in graph.relations:
        first, second = graph.find(rel.first), graph.find(rel.second)
        if first in timed or second in timed:
            continue
        if first == second and rel.rule in temporal:
            orders.append(Candidate(rel.lemma, rel.pos, (first, second), False, rel.rule, rel.tokens,
                                    first in denied))
            ordered.append((rel.first, rel.second))
            continue
        if first == second and not reflexive:
            continue  # 'prying on hard wooden object' read as the object's own: an attachment error
        # 'with no music' says 'without music': no With; 'no people talk while a dog
        # barks' is no more than 'a dog barks without people talking': no While.
        if (
            denied
            and (first in denied) != (second in denied)
            and ((rel.lemma in privative and second in denied) or rel.rule in temporal)
        ):
            continue
        out.append(_new(Candidate, (rel.lemma, rel.pos, (first, second), False, rel.rule, rel.tokens, False)))
        binary = True
    # Both arguments of a binary predicate must be entities the caption names
    # (docs/annotation.md): a relation to a nameless node ('around a little bit') goes,
    # a verb whose object has no name becomes unary.
    if binary:  # (unary candidates only, the common case: nothing to check)
        named = {c.args[0] for c in out if c.pos != "ADP"}
        kept: list[Candidate] = []
        for cand in out:
            if len(cand.args) == 2 and cand.args[1] not in named and cand.args[1] != cand.args[0]:
                if cand.pos == "ADP":
                    continue
                cand = Candidate(cand.lemma, cand.pos, cand.args[:1], cand.negated, cand.rule, cand.tokens)
            kept.append(cand)
        out = kept
    if denied:
        out = [
            Candidate(c.lemma, c.pos, c.args, c.negated, c.rule, c.tokens, True)
            if any(arg in denied for arg in c.args)
            else c
            for c in out
        ]
    if orders:  # 'pumping and then slowing down': Before(e1, e2) between events of x
        gerunds = frozenset(i for pair in ordered for i in pair if view[i].lower.endswith("ing"))
        out = with_event_terms(out, orders, ordered, _complements(graph, ordered), gerunds)
    # Sorted by first token as out.sort(key=lambda c: min(c.tokens)) sorts (stable),
    # with a key read by a C method rather than a Python call per candidate.
    first_tokens = [min(c.tokens) for c in out]
    out = [out[k] for k in sorted(range(len(out)), key=first_tokens.__getitem__)]
    unique: dict[tuple[str, tuple[int, ...], bool], Candidate] = {}
    for cand in out:
        unique.setdefault((cand.lemma, cand.args, cand.negated), cand)
    return list(unique.values()), timed
