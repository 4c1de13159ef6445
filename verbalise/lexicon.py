"""Words for predicate symbols: surface forms, roles, articles, plurals and adverbs.

The verbaliser asks a :class:`Lexicon` how to write each predicate symbol. The
default one reads V_audio (canonical surface form, part of speech, category); a
symbol V_audio does not know is spelt from its CamelCase parts.

Example:
    >>> from fortekit.verbalise.lexicon import Role, guess_word, indefinite, adverb
    >>> guess_word("DistressCall", arity=1)
    Word(surface='distress call', role=<Role.NOUN: 'noun'>, acoustic=False)
    >>> indefinite("empty corridor"), indefinite("hour"), adverb("rhythmic")
    ('an empty corridor', 'an hour', 'rhythmically')
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Protocol


class Role(StrEnum):
    """How a predicate is written in a sentence."""

    NOUN = "noun"  # the head of a noun phrase: "bird", "metal roof"
    VERB = "verb"  # an event, written as a participle: "chirping"
    ADJ = "adj"  # a property before the noun: "quiet"
    ADV = "adv"  # a property after the event: "nearby"
    PREP = "prep"  # a binary relation written as a preposition: "in"
    TIME = "time"  # a temporal expression: "morning"


@dataclass(frozen=True, slots=True)
class Word:
    """How to write one predicate symbol."""

    surface: str
    role: Role
    acoustic: bool = False  # an acoustic property: written as a manner adverb after an event


class Lexicon(Protocol):
    """Anything that can say how a predicate symbol is written."""

    def word(self, symbol: str, arity: int) -> Word | None:
        """The word for ``symbol``, or None when the lexicon does not know it."""


@cache
def templates_data() -> dict[str, Any]:
    """The parsed ``templates.toml`` (templates, connectives, articles, plurals)."""
    text = resources.files("fortekit.verbalise").joinpath("templates.toml").read_text("utf-8")
    return tomllib.loads(text)


@cache
def _mass_nouns() -> frozenset[str]:
    return frozenset(templates_data()["articles"]["mass_nouns"])


_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9’']+|[0-9]+")
PREPOSITIONS = frozenset(
    " ".join(
        (
            "about above across after against along among around at before behind below beneath",
            "beside between beyond by down during for from in inside into near nearby next of off",
            "on onto opposite out outside over past through throughout to toward towards under",
            "underneath until up upon with within without like",
        )
    ).split()
)


def split_symbol(symbol: str) -> list[str]:
    """The lower-case words of a CamelCase symbol (``MetalRoof`` -> ``['metal', 'roof']``)."""
    words = _CAMEL.findall(symbol.replace("-", " ").replace("_", " "))
    return [word.lower() for word in words] or [symbol.lower()]


@lru_cache(maxsize=1 << 14)
def guess_word(symbol: str, arity: int) -> Word:
    """Spell an unknown symbol: participles are events, prepositions relations, else nouns."""
    words = split_symbol(symbol)
    surface = " ".join(words)
    if arity >= 2:
        if words[0] in PREPOSITIONS:
            return Word(surface, Role.PREP)
        return Word(surface if words[-1].endswith("ing") else _participle(surface), Role.VERB)
    if len(words) == 1 and words[0] in templates_data()["verbs"]["bare_lemmas"]:
        return Word(_participle(surface), Role.VERB)  # Keep(x): "keeping"
    if words[-1].endswith("ing") and len(words[-1]) > 4 and not words[-1].endswith("thing"):
        return Word(surface, Role.VERB)  # "something", "nothing" are nouns
    if words[-1].endswith("ly") and len(words[-1]) > 4:
        return Word(surface, Role.ADV)
    return Word(surface, Role.NOUN)


_VOWEL_DOUBLING = re.compile(r"[^aeiou][aeiou][bdgmnprt]\Z")


def _participle(verb_phrase: str) -> str:
    """``open`` -> ``opening``, ``hum`` -> ``humming``, ``make`` -> ``making``."""
    head, _, rest = verb_phrase.partition(" ")
    if head.endswith("ie"):
        head = head[:-2] + "ying"
    elif head.endswith("e") and not head.endswith(("ee", "ye", "oe")) and len(head) > 2:
        head = head[:-1] + "ing"
    elif _VOWEL_DOUBLING.search(head) and len(re.findall(r"[aeiou]+", head)) == 1:
        head = head + head[-1] + "ing"
    elif not head.endswith("ing"):
        head = head + "ing"
    return f"{head} {rest}".strip()


def participle(verb_phrase: str) -> str:
    """The -ing form of a verb (public for lexicons built on lemmas).

    Example:
        >>> participle("hum"), participle("make"), participle("chirp")
        ('humming', 'making', 'chirping')
    """
    return _participle(verb_phrase)


@lru_cache(maxsize=1 << 12)
def adverb(adjective: str) -> str:
    """The manner adverb of an adjective: quiet -> quietly, noisy -> noisily, rhythmic -> rhythmically."""
    if adjective.endswith("ly") or " " in adjective:
        return adjective
    if adjective.endswith("ic"):
        return adjective + "ally"
    if adjective.endswith("le") and len(adjective) > 3:
        return adjective[:-1] + "y"
    if adjective.endswith("y") and len(adjective) > 2:
        return adjective[:-1] + "ily"
    if adjective.endswith("ll"):
        return adjective + "y"
    if adjective.endswith("ue"):
        return adjective[:-1] + "ly"
    return adjective + "ly"


@lru_cache(maxsize=1 << 14)
def indefinite(phrase: str) -> str:
    """``phrase`` with "a" or "an", or bare for mass nouns and plurals listed in templates.toml."""
    articles = templates_data()["articles"]
    lower = phrase.lower()
    if lower in _mass_nouns() or lower.rsplit(" ", 1)[-1] in _mass_nouns():
        return phrase
    if lower.startswith(tuple(articles["an_before"])):
        return f"an {phrase}"
    if lower.startswith(tuple(articles["a_before"])):
        return f"a {phrase}"
    return f"{'an' if lower[:1] in 'aeiou' else 'a'} {phrase}"


@lru_cache(maxsize=1 << 12)
def plural(noun_phrase: str) -> str:
    """The plural of a noun phrase's last word (bird -> birds, person -> people)."""
    *rest, last = noun_phrase.split(" ")
    irregular: dict[str, str] = templates_data()["plurals"]
    if last in irregular:
        last = irregular[last]
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        last = last if last.endswith("s") and not last.endswith("ss") else last + "es"
    elif last.endswith("y") and last[-2:-1] not in tuple("aeiou"):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return " ".join([*rest, last])
