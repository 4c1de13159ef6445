"""Contrast sets: the antonyms and acoustic opposites of each predicate.

Three sources, joined and made symmetric (if A contrasts B then B contrasts A):

* the curated axes of ``vocab/contrasts.tsv`` (loud/quiet, near/far, high/low pitch,
  continuous/intermittent, calm/distressed, fast/slow, ...);
* WordNet's direct antonyms of adjectives and adverbs;
* for sound events, their AudioSet siblings (classes under the same parent: a dog's
  bark against its howl, growl and whimper), inside small families only.

They feed contrastive negatives (q-) and the o_neg operator.

Example:
    >>> from fortekit.vocab import load_vocabulary
    >>> vocab = load_vocabulary()
    >>> "Far" in vocab["Near"].contrasts and "Near" in vocab["Far"].contrasts
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from fortekit.vocab.corpus import OntologyClass
from fortekit.vocab.tables import Tables
from fortekit.vocab.terms import normalise_phrase
from fortekit.vocab.wordnet import WordNet

if TYPE_CHECKING:
    from fortekit.vocab.builder import Draft

__all__ = ["MAX_FAMILY", "attach_contrasts"]

#: Siblings are linked only inside small families: AudioSet parents with at most
#: this many children that have vocabulary entries (Dog: bark, yip, howl, growl, ...),
#: not broad bins such as "Domestic sounds, home sounds".
MAX_FAMILY = 8


def _link(table: dict[str, set[str]], left: Iterable[str], right: Iterable[str]) -> None:
    right = tuple(right)
    for a in left:
        for b in right:
            if a != b:
                table.setdefault(a, set()).add(b)
                table.setdefault(b, set()).add(a)


def attach_contrasts(
    drafts: Sequence[Draft], ontology: Sequence[OntologyClass], tables: Tables, wordnet: WordNet
) -> dict[str, set[str]]:
    """Compute the symmetric contrast sets of the drafts.

    Args:
        drafts: the predicates being built.
        ontology: the AudioSet classes (for siblings).
        tables: the curated tables (for ``contrasts.tsv``).
        wordnet: for antonyms.

    Returns:
        Symbol -> symbols it contrasts with.
    """
    properties: dict[str, list[Draft]] = {}
    for draft in drafts:
        if not draft.category.is_event:
            for key in draft.key_forms():
                properties.setdefault(key, []).append(draft)

    def symbols(words: Iterable[str]) -> set[str]:
        return {d.symbol for w in words for d in properties.get(normalise_phrase(w), ())}

    table: dict[str, set[str]] = {}
    for row in tables.contrasts:
        _link(table, sorted(symbols(row.pole_a)), sorted(symbols(row.pole_b)))
    for draft in sorted(drafts, key=lambda d: d.symbol):
        if draft.category.is_event:
            continue
        forms = [(draft.lemma, draft.pos)] + [(a, "ADV") for a in sorted(draft.aliases) if a.endswith("ly")]
        for form, pos in forms:
            if pos in ("ADJ", "ADV") and " " not in form:
                _link(table, [draft.symbol], sorted(symbols(wordnet.antonyms(form, pos))))
    by_class: dict[str, list[Draft]] = {}
    for draft in drafts:
        if draft.category.is_event:
            for class_id in draft.audioset_ids:
                by_class.setdefault(class_id, []).append(draft)
    for cls in ontology:
        family = sorted({d.symbol for child in cls.child_ids for d in by_class.get(child, ())})
        if 2 <= len(family) <= MAX_FAMILY:
            _link(table, family, family)
    return table
