"""Coreference on the Pass 1 graph: repeated nouns and pronouns reuse their antecedent's node.

Run before literals are made (:func:`fortekit.fol.caption.emit.candidates`), so that the
predicates of a noun and of its repetition collapse onto one variable. A repetition is
never coreferent with the entity its own phrase is said of, so no relation relates an
entity to itself (docs/annotation.md, "Reciprocals and reflexives").

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> str(parse_caption("a car passes and then the car honks").formula)
    '∃x ∃e1 ∃e2 [Car(x) ∧ Passing(e1, x) ∧ Before(e1, e2) ∧ Honking(e2, x)]'
    >>> str(parse_caption("metal scraping against metal").formula)
    '∃x ∃y [Metal(x) ∧ Scrape(x) ∧ Against(x, y) ∧ Metal(y)]'
"""

from __future__ import annotations

from fortekit.fol.caption.pass1 import Graph
from fortekit.fol.caption.tokens import Tok

__all__ = ["Heads", "corefer_repeated", "excluded_nodes", "resolve_pronouns"]

_SALIENT_DEPS = frozenset({"nsubj", "nsubjpass", "ROOT"})

#: The tokens that name an entity, with their lemma (``emit.entity_heads``).
Heads = list[tuple[Tok, str]]


def excluded_nodes(graph: Graph) -> set[int]:
    """Nodes of the entities a negation denies (each becomes a clause ``¬∃y [..]``)."""
    return {graph.find(i) for i in graph.excluded} if graph.excluded else set()


def corefer_repeated(graph: Graph, heads: Heads) -> None:
    """A repeated noun ('a car ... the car') reuses its antecedent unless marked new ('another duck').

    A repeated bare plural with its own event is a new group ('people laughing and people
    clapping'); a repeated object is the same ('walks to stairs and climbs stairs'), but
    never the entity its own verb or preposition is said of ('metal scraping against
    metal', 'wood knocking on wood': two entities).

    A denied entity ('a dog barks without other dogs') is never coreferent.
    """
    if len({lemma for _, lemma in heads}) == len(heads):
        return  # no head repeats its lemma, so no noun does: nothing to do (the common case)
    time_words = graph.words("time_nouns")
    denied = excluded_nodes(graph)
    nouns = [
        (tok, lemma)
        for tok, lemma in heads
        if tok.pos != "PRON" and lemma not in time_words and graph.find(tok.i) not in denied
    ]
    if len({lemma for _, lemma in nouns}) == len(nouns):
        return  # no noun repeats: nothing to do (the common case)
    new_words = graph.words("new_entity_words")
    plural_is_new = graph.rules.option("bare_plural_repeats_are_new", True)
    earlier: Heads = []
    for tok, lemma in nouns:
        modifiers = graph.view.children(tok.i, ("det", "amod", "nummod", "quantmod"))
        bare_plural = (
            tok.tag in ("NNS", "NNPS")
            and not graph.view.has_child(tok.i, ("det", "poss", "nummod"))
            and (tok.dep in ("nsubj", "nsubjpass") or graph.view.has_child(tok.i, ("acl",)))
        )
        if not any(m.lower in new_words for m in modifiers) and not (plural_is_new and bare_plural):
            # never the entity the noun's own phrase is said of: 'metal scraping against
            # metal' names two pieces of metal, not one against itself
            governor = graph.find(graph.anchor(graph.view[tok.head]) if tok.dep == "pobj" else tok.head)
            for other, other_lemma in reversed(earlier):
                if other_lemma == lemma and graph.find(other.i) not in (governor, graph.find(tok.i)):
                    graph.union(tok.i, other.i)
                    break
        earlier.append((tok, lemma))


def resolve_pronouns(graph: Graph, heads: Heads, timed: set[int]) -> None:
    """A pronoun reuses the latest salient entity before it, other than the one it is said of."""
    if not graph.pronouns:
        return
    events = {graph.find(t.i) for t in graph.view if t.pos == "VERB" and graph.emit[t.i]}
    denied = excluded_nodes(graph)
    for pronoun, anchor in graph.pronouns:
        excluded = graph.find(anchor) if anchor is not None else None
        fallback: int | None = None
        chosen: int | None = None
        for tok, _lemma in reversed(heads):
            node = graph.find(tok.i)
            if tok.i >= pronoun or node in timed or node == excluded or node == graph.find(pronoun):
                continue
            if node in denied:  # a denied entity is no antecedent
                continue
            if fallback is None:
                fallback = tok.i
            if tok.dep in _SALIENT_DEPS or node in events:
                chosen = tok.i
                break
        target = chosen if chosen is not None else fallback
        if target is not None:
            graph.union(pronoun, target)
