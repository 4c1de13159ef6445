"""V_audio: the audio predicate vocabulary, its loader, three-tier grounding and WordNet.

``import fortekit.vocab`` loads neither spaCy nor NLTK: the vocabulary file is read
on first use, WordNet when a :class:`Grounder` is made, spaCy only by the builder
(:mod:`fortekit.vocab.builder`). See docs/vocab.md.

Example:
    >>> from fortekit.vocab import load_vocabulary, ground, Category
    >>> vocab = load_vocabulary()
    >>> vocab["Chirping"].surface, vocab["Chirping"].category is Category.SOUND_EVENT
    ('chirping', True)
    >>> r = ground("birds", "NOUN")
    >>> r.symbol, r.tier.value, r.confidence
    ('Bird', 'wordnet', 1.0)
"""

from __future__ import annotations

from fortekit.vocab.grounding import Grounder, GroundingResult, Tier, get_grounder, ground, soft_confidence
from fortekit.vocab.model import Category, Origin, VocabEntry, camel_symbol, pos_group
from fortekit.vocab.vocabulary import Vocabulary, load_vocabulary, read_tsv, write_tsv
from fortekit.vocab.wordnet import WordNet, WordNetLocation, export_nltk_data, find_wordnet, load_wordnet

__all__ = [
    "Category",
    "Grounder",
    "GroundingResult",
    "Origin",
    "Tier",
    "VocabEntry",
    "Vocabulary",
    "WordNet",
    "WordNetLocation",
    "camel_symbol",
    "export_nltk_data",
    "find_wordnet",
    "get_grounder",
    "ground",
    "load_vocabulary",
    "load_wordnet",
    "pos_group",
    "read_tsv",
    "soft_confidence",
    "write_tsv",
]
