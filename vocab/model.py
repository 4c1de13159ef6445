"""Records of the V_audio vocabulary: categories, entries and how symbols are spelt.

Everything here is plain data: frozen, slotted dataclasses and enums, so that
entries are hashable, cheap and safe to share between threads.

Example:
    >>> from fortekit.vocab.model import Category, camel_symbol
    >>> Category.parse("spatial").label
    'Spatial relations'
    >>> camel_symbol("high-pitched")
    'HighPitched'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from fortekit.errors import Errors, VocabularyError

__all__ = [
    "EVENT_POS",
    "POS_TAGS",
    "Category",
    "Origin",
    "VocabEntry",
    "camel_symbol",
    "pos_group",
]


class Category(StrEnum):
    """The six predicate categories of V_audio (the paper's vocabulary table)."""

    SOUND_EVENT = "sound_event"
    ACOUSTIC_PROPERTY = "acoustic_property"
    SPATIAL = "spatial"
    TEMPORAL = "temporal"
    INTENSITY = "intensity"
    NEGATION_TARGET = "negation_target"

    @property
    def label(self) -> str:
        """The row label of the paper's table, e.g. ``'Sound events'``."""
        return _TITLES[self]

    @property
    def is_event(self) -> bool:
        """True for categories whose predicates name sound sources or events.

        Negation targets are sound events curated as typical exclusions (static,
        hum, traffic, shouting, ...), so the parser treats them like sound events.
        """
        return self in (Category.SOUND_EVENT, Category.NEGATION_TARGET)

    @classmethod
    def parse(cls, name: str) -> Category:
        """Read a category from its value (``'spatial'``) or member name (``'SPATIAL'``).

        Args:
            name: the category's value or name, any case; hyphens and spaces count
                as underscores.

        Returns:
            The category.

        Raises:
            VocabularyError: for an unknown name (E111), listing the valid ones.

        Example:
            >>> Category.parse("Negation-Target") is Category.NEGATION_TARGET
            True
        """
        key = name.strip().lower().replace("-", "_").replace(" ", "_")
        for member in cls:
            if key == member.value:
                return member
        options = ", ".join(member.value for member in cls)
        raise VocabularyError(Errors.E111.format(name=name, options=options))


_TITLES = {
    Category.SOUND_EVENT: "Sound events",
    Category.ACOUSTIC_PROPERTY: "Acoustic properties",
    Category.SPATIAL: "Spatial relations",
    Category.TEMPORAL: "Temporal relations",
    Category.INTENSITY: "Intensity modifiers",
    Category.NEGATION_TARGET: "Negation targets",
}


class Origin(StrEnum):
    """Where an entry comes from."""

    CORPUS = "corpus"  # caption frequency >= the threshold
    AUDIOSET = "audioset"  # an AudioSet class below the threshold, added as the paper did
    CURATED = "curated"  # added by vocab/overrides.json


#: Universal POS tags an entry may carry.
POS_TAGS: frozenset[str] = frozenset({"NOUN", "VERB", "ADJ", "ADV", "ADP", "SCONJ"})
#: POS tags whose entries are sound events or negation targets.
EVENT_POS: frozenset[str] = frozenset({"NOUN", "VERB"})

_POS_GROUP = {
    "NOUN": "NOUN",
    "PROPN": "NOUN",
    "VERB": "VERB",
    "AUX": "VERB",
    "ADJ": "ADJ",
    "ADV": "ADV",
    "ADP": "ADP",
    "SCONJ": "ADP",
}


def pos_group(pos: str | None) -> str | None:
    """Map a Universal POS tag to the tag entries use (PROPN -> NOUN, SCONJ -> ADP, ...).

    Args:
        pos: a Universal Dependencies POS tag (any case) or None.

    Returns:
        ``'NOUN'``, ``'VERB'``, ``'ADJ'``, ``'ADV'`` or ``'ADP'``; None for None and
        for tags no entry can have (DET, PUNCT, ...).

    Example:
        >>> pos_group("propn"), pos_group("SCONJ"), pos_group("DET")
        ('NOUN', 'ADP', None)
    """
    if pos is None:
        return None
    return _POS_GROUP.get(pos.upper())


_WORD = re.compile(r"[A-Za-z0-9]+")


def camel_symbol(surface: str) -> str:
    """Spell a predicate symbol in CamelCase from a surface form.

    Args:
        surface: the canonical surface form, e.g. ``"distress call"``.

    Returns:
        The symbol: each alphanumeric run capitalised and joined.

    Raises:
        VocabularyError: if the surface form has no letter or digit.

    Example:
        >>> camel_symbol("distress call"), camel_symbol("in front of"), camel_symbol("x-ray")
        ('DistressCall', 'InFrontOf', 'XRay')
    """
    parts = _WORD.findall(surface)
    if not parts:
        raise VocabularyError(Errors.E103.format(problem=f"no symbol can be spelt from {surface!r}"))
    return "".join(part[:1].upper() + part[1:].lower() for part in parts)


@dataclass(frozen=True, slots=True)
class VocabEntry:
    """One predicate of V_audio.

    Attributes:
        symbol: the predicate symbol, CamelCase and unique (``Chirping``).
        category: one of the six categories.
        pos: its part of speech (``NOUN``, ``VERB``, ``ADJ``, ``ADV``, ``ADP``, ``SCONJ``).
        lemma: the dictionary form, lower case (``chirp``); may hold spaces.
        surface: what the verbaliser writes (``chirping``).
        freq_clotho: occurrences in the Clotho development captions.
        freq_audiocaps: occurrences in the AudioCaps train captions.
        origin: corpus, audioset or curated.
        audioset_ids: the AudioSet ontology classes the entry names (``/m/07pggtn``).
        aliases: further surface forms matched exactly (merged forms, synonyms).
        contrasts: symbols of its antonyms and acoustic opposites.

    Example:
        >>> e = VocabEntry("Loud", Category.INTENSITY, "ADJ", "loud", "loud", 3, 4,
        ...                contrasts=("Quiet",))
        >>> e.freq, e.keys
        (7, ('loud',))
    """

    symbol: str
    category: Category
    pos: str
    lemma: str
    surface: str
    freq_clotho: int = 0
    freq_audiocaps: int = 0
    origin: Origin = Origin.CORPUS
    audioset_ids: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    contrasts: tuple[str, ...] = field(default=())

    @property
    def freq(self) -> int:
        """Occurrences in both caption sources together."""
        return self.freq_clotho + self.freq_audiocaps

    @property
    def keys(self) -> tuple[str, ...]:
        """Every lower-case string that grounds to this entry at tier (i), without repeats."""
        seen: dict[str, None] = {}
        for text in (self.lemma, self.surface, *self.aliases):
            seen.setdefault(text.lower(), None)
        return tuple(seen)
