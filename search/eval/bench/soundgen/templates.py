"""The generator's data file ``templates.toml``: how classes, attributes and structures are worded.

:func:`load_templates` reads and checks it once (a bad file is E555, naming what is wrong);
:mod:`fortekit.search.eval.bench.soundgen.captions` turns its templates into captions and queries.

Example:
    >>> templates = load_templates()
    >>> templates.forms["dog", ""][0]
    ('{det}{adj}dog barking{adv}', '{det}{adj}dog barks{adv}')
    >>> sorted(templates.structures)
    ['absence', 'bed', 'single', 'then', 'while']
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, SoundGenError
from fortekit.search.eval.bench.soundgen.classes import ATTRIBUTES, CLASSES

__all__ = ["DATA_FILE", "AttributeWords", "Templates", "load_templates"]

#: The data file shipped with fortekit.
DATA_FILE = Path(__file__).with_name("templates.toml")
STRUCTURE_SLOTS = {"single": "Aa", "while": "ABab", "then": "ABab", "bed": "SCc", "absence": "SN"}
QUERY_SLOTS = {"plain": "Aa", "attribute": "Aa", "and": "ABab", "without": "AaN", "order": "ABab"}


@dataclass(frozen=True)
class AttributeWords:
    """How an attribute value can be said: adjectives, adverbs and (distance) locative phrases.

    ``adverb_only`` names the classes that take the value as an adverb only ("a woman talking
    quickly", never "a fast woman talking").
    """

    adjectives: tuple[str, ...]
    adverbs: tuple[str, ...] = ()
    locatives: tuple[str, ...] = ()
    adverb_only: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Templates:
    """The checked contents of the data file.

    Attributes:
        attributes: attribute value -> its words.
        forms: (class, variant) -> its (noun phrase, clause) forms; speech has the variants
            "male", "female" and "any" (for queries), the other classes "".
        absent: class -> the names an absence is said with ("no {name}").
        structures: structure -> caption templates (single, while, then, bed, absence).
        queries: query kind -> query templates (plain, attribute, and, without, order).
        sentences: what the speech class says.
    """

    attributes: dict[str, AttributeWords]
    forms: dict[tuple[str, str], tuple[tuple[str, str], ...]]
    absent: dict[str, tuple[str, ...]]
    structures: dict[str, tuple[str, ...]]
    queries: dict[str, tuple[str, ...]]
    sentences: tuple[str, ...]


def _strings(value: Any, where: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        problem = f"{where} must be a list of non-empty strings"
        raise SoundGenError(Errors.E555.format(path=path, problem=problem))
    return tuple(value)


def _check_slots(templates: tuple[str, ...], allowed: str, where: str, path: Path) -> None:
    fields = {key: "x" for key in allowed}
    for template in templates:
        try:
            template.format(**fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise SoundGenError(Errors.E555.format(
                path=path, problem=f"{where}: the template {template!r} uses a slot other than "
                f"{', '.join('{' + k + '}' for k in allowed)} ({exc!r})",
            )) from None


def _forms(value: Any, where: str, path: Path) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not value or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) for s in pair) for pair in value
    ):
        raise SoundGenError(Errors.E555.format(path=path, problem=f"{where} must be a list of [noun phrase, "
                                                                  "clause] pairs"))
    pairs = tuple((pair[0], pair[1]) for pair in value)
    _check_slots(tuple(s for pair in pairs for s in pair), ("det", "adj", "adv"), where, path)  # type: ignore[arg-type]
    if not any("{adj}" in np and "{adj}" in clause for np, clause in pairs):
        problem = f"{where} needs a form with {{adj}} in both phrases, to say any attribute"
        raise SoundGenError(Errors.E555.format(path=path, problem=problem))
    return pairs


def _parse(data: dict[str, Any], path: Path) -> Templates:
    def section(key: str) -> dict[str, Any]:
        value = data.get(key)
        if not isinstance(value, dict):
            raise SoundGenError(Errors.E555.format(path=path, problem=f"the table [{key}] is missing"))
        return value

    attributes = {}
    for name in ATTRIBUTES:
        entry = section("attributes").get(name)
        if not isinstance(entry, dict):
            raise SoundGenError(Errors.E555.format(path=path, problem=f"[attributes.{name}] is missing"))
        only = entry.get("adverb_only", [])
        only = _strings(only, f"attributes.{name}.adverb_only", path) if only else ()
        unknown = sorted(set(only) - set(CLASSES))
        if unknown or (only and not entry.get("adverbs")):
            problem = (f"attributes.{name}.adverb_only names unknown classes {unknown}" if unknown else
                       f"attributes.{name}.adverb_only needs adverbs")
            raise SoundGenError(Errors.E555.format(path=path, problem=problem))
        attributes[name] = AttributeWords(
            _strings(entry.get("adjectives"), f"attributes.{name}.adjectives", path),
            tuple(entry.get("adverbs", ())), tuple(entry.get("locatives", ())), frozenset(only),
        )
    forms: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
    absent: dict[str, tuple[str, ...]] = {}
    for cls, spec in CLASSES.items():
        entry = section("classes").get(cls)
        if not isinstance(entry, dict):
            raise SoundGenError(Errors.E555.format(path=path, problem=f"[classes.{cls}] is missing"))
        absent[cls] = _strings(entry.get("absent"), f"classes.{cls}.absent", path)
        variants = [*spec.variants, "any"] if spec.variants else [""]
        for variant in variants:
            block = entry.get(variant) if variant else entry
            where = f"classes.{cls}{'.' + variant if variant else ''}.forms"
            forms[cls, variant] = _forms((block or {}).get("forms"), where, path)
    structures = {key: _strings(section("structures").get(key), f"structures.{key}", path)
                  for key in STRUCTURE_SLOTS}
    queries = {key: _strings(section("queries").get(key), f"queries.{key}", path) for key in QUERY_SLOTS}
    for key, slots in STRUCTURE_SLOTS.items():
        _check_slots(structures[key], slots, f"structures.{key}", path)
    for key, slots in QUERY_SLOTS.items():
        _check_slots(queries[key], slots, f"queries.{key}", path)
    sentences = _strings(section("speech").get("sentences"), "speech.sentences", path)
    return Templates(attributes, forms, absent, structures, queries, sentences)


@lru_cache(maxsize=4)
def load_templates(path: Path = DATA_FILE) -> Templates:
    """Read and check the generator's data file (the shipped one by default).

    Raises:
        SoundGenError: the file is unreadable, not TOML, or lacks or misuses an entry (E555).

    Example:
        >>> load_templates().attributes["far"].locatives
        ('in the distance', 'far away')
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SoundGenError(Errors.E555.format(path=path, problem=exc)) from None
    return _parse(data, Path(path))
