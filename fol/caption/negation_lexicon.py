"""The cue classes from lexical semantics, read from ``grammars/negation_lexicon.toml``.

``scripts/build_negation_lexicon.py`` derives that file from WordNet 3.0 (hyponym closures of
verbs of omitting, removing, wanting, needing, perceiving, containing and hiding; antonymy
of prefixed adjectives and participles) and from published cue lexicons (NegEx,
ConanDoyle-neg, the SFU Review corpus): docs/negation.md, "Cue classes from lexical
semantics". This module reads it (tomllib, once) and adds its words to the inventory of
``grammars/negation.toml`` before that file is parsed: each class names where its words go
(a ``[[cue]]``, a ``[lexicon]`` list or a ``[segments]`` list). The lexicon only adds words:
a word the inventory already has keeps its place. Nothing here touches WordNet at parse
time; an invalid file is an error naming the entry (E314).

Example:
    >>> lexicon = load_negation_lexicon()
    >>> lexicon.joins("omission_verb"), "omit" in lexicon.lemmas("omission_verb")
    ('cue:lacking-verb', True)
    >>> [(e.source, e.joins) for e in lexicon.provenance("avoid")]
    [('wordnet', 'cue:lacking-verb')]
    >>> [(e.source, e.joins) for e in lexicon.provenance("without")]
    [('negex', 'attests:cue:privative-preposition')]
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, NegationRulesError

__all__ = [
    "LexiconEntry",
    "NegationLexicon",
    "load_negation_lexicon",
    "merge_lexicon",
    "parse_negation_lexicon",
]

SHIPPED = "negation_lexicon.toml"
_ENTRY_KEYS = frozenset({"class", "lemma", "pos", "source", "provenance", "joins"})
_TARGET_KINDS = frozenset({"cue", "list", "segments"})


@dataclass(frozen=True, slots=True)
class LexiconEntry:
    """One word of the lexicon.

    Attributes:
        cls: its class (``omission_verb``, ``perception_verb``, ``published``, ...).
        lemma: the word (a phrasal verb's words joined by a space).
        pos: ``verb``, ``adj`` or ``word``.
        source: ``wordnet``, ``negex``, ``conandoyle-neg`` or ``sfu-review``.
        provenance: the synset, relation or published list it came from.
        joins: where it goes: ``cue:ID``, ``list:NAME`` or ``segments:NAME``; with the prefix
            ``attests:`` the rule file already lists it there and it adds nothing.
    """

    cls: str
    lemma: str
    pos: str
    source: str
    provenance: str
    joins: str


@dataclass(frozen=True)
class NegationLexicon:
    """The parsed lexicon file.

    Attributes:
        entries: every word, in file order.
        classes: class name -> where its words go.
        sources: source id -> its citation.
        source: where the file came from.
        denying: the classes whose words deny a sound by their own sense, un-negated
            (``denies = true``: "removed", "banned", "absent").
    """

    entries: tuple[LexiconEntry, ...]
    classes: Mapping[str, str]
    sources: Mapping[str, str]
    source: str
    denying: frozenset[str] = frozenset()

    def joins(self, cls: str) -> str:
        """Where a class's words go (``""`` for an unknown class)."""
        return self.classes.get(cls, "")

    def lemmas(self, cls: str) -> frozenset[str]:
        """The lemmas of one class."""
        return frozenset(e.lemma for e in self.entries if e.cls == cls)

    def denying_lemmas(self) -> frozenset[str]:
        """The lemmas of the denying classes (:attr:`denying`).

        Example:
            >>> {"remove", "forbid", "inaudible"} <= load_negation_lexicon().denying_lemmas()
            True
            >>> "hear" in load_negation_lexicon().denying_lemmas()
            False
        """
        return frozenset(e.lemma for e in self.entries if e.cls in self.denying)

    def provenance(self, lemma: str) -> list[LexiconEntry]:
        """Every entry of a lemma (a word may come from WordNet and a published lexicon)."""
        return [e for e in self.entries if e.lemma == lemma]


def _fail(source: str, where: str, problem: str) -> NegationRulesError:
    return NegationRulesError(Errors.E314.format(path=source, where=where, problem=problem))


def _text(raw: Mapping[str, Any], key: str, source: str, where: str, *, required: bool = True) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise _fail(source, where, f"'{key}' must be a non-empty string, not {value!r}")
    return value


def _target(joins: str, source: str, where: str) -> str:
    kind, _, name = joins.removeprefix("attests:").partition(":")
    if kind not in _TARGET_KINDS or not name:
        raise _fail(
            source, where, f"'joins' must be [attests:]cue:ID, list:NAME or segments:NAME, not {joins!r}"
        )
    return joins


def parse_negation_lexicon(text: str, source: str = "<string>") -> NegationLexicon:
    """Parse the text of a negation lexicon file.

    Args:
        text: TOML text in the format of ``grammars/negation_lexicon.toml``.
        source: a name for error messages.

    Returns:
        The lexicon.

    Raises:
        NegationRulesError: the file is not valid TOML or breaks the format (E314).

    Example:
        >>> parse_negation_lexicon('[words]\\nentries = [{ class = "x", lemma = "omit" }]')
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.NegationRulesError: [E314] ... at [words] entry 1 ('omit'): class 'x' ...
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _fail(source, "the file", f"not valid TOML ({exc})") from None
    raw_classes = data.get("classes", {})
    if not isinstance(raw_classes, dict):
        raise _fail(source, "[classes]", "expected a table")
    classes: dict[str, str] = {}
    denying: set[str] = set()
    for name, raw in raw_classes.items():
        where = f"[classes.{name}]"
        if not isinstance(raw, dict):
            raise _fail(source, where, "expected a table")
        joins = _text(raw, "joins", source, where, required=False)
        classes[name] = _target(joins, source, where) if joins else ""
        denies = raw.get("denies", False)
        if not isinstance(denies, bool):
            raise _fail(source, where, f"'denies' must be true or false, not {denies!r}")
        if denies:
            denying.add(name)
    entries: list[LexiconEntry] = []
    raw_entries = data.get("words", {}).get("entries", [])
    if not isinstance(raw_entries, list):
        raise _fail(source, "[words] entries", "expected an array of tables")
    for k, raw in enumerate(raw_entries):
        where = f"[words] entry {k + 1}"
        if not isinstance(raw, dict):
            raise _fail(source, where, "expected a table")
        lemma = _text(raw, "lemma", source, where).lower()
        where = f"{where} ({lemma!r})"
        unknown = set(raw) - _ENTRY_KEYS
        if unknown:
            raise _fail(source, where, f"unknown key(s) {', '.join(sorted(unknown))}")
        cls = _text(raw, "class", source, where)
        if cls not in classes:
            raise _fail(source, where, f"class {cls!r} is not declared under [classes]")
        joins = _text(raw, "joins", source, where, required=False) or classes[cls]
        if not joins:
            raise _fail(source, where, f"neither the entry nor its class {cls!r} says where it joins")
        entries.append(
            LexiconEntry(
                cls,
                lemma,
                _text(raw, "pos", source, where, required=False) or "word",
                _text(raw, "source", source, where),
                _text(raw, "provenance", source, where),
                _target(joins, source, where),
            )
        )
    sources = data.get("sources", {})
    return NegationLexicon(
        tuple(entries), classes, dict(sources) if isinstance(sources, dict) else {}, source,
        frozenset(denying),
    )


@cache
def _shipped() -> NegationLexicon:
    text = resources.files("fortekit.grammars").joinpath(SHIPPED).read_text(encoding="utf-8")
    return parse_negation_lexicon(text, f"fortekit/grammars/{SHIPPED}")


def load_negation_lexicon(path: str | Path | None = None) -> NegationLexicon:
    """Load the lexicon: the shipped ``grammars/negation_lexicon.toml`` (read once) or a file.

    Args:
        path: a lexicon file to read instead of the shipped one.

    Returns:
        The lexicon.

    Raises:
        NegationRulesError: the file is invalid (E314).
        FileNotFoundError: ``path`` does not exist.

    Example:
        >>> load_negation_lexicon() is load_negation_lexicon()
        True
    """
    if path is None:
        return _shipped()
    target = Path(path)
    return parse_negation_lexicon(target.read_text(encoding="utf-8"), str(target))


def merge_lexicon(data: Mapping[str, Any], lexicon: NegationLexicon) -> dict[str, Any]:
    """The raw data of a negation rule file with the lexicon's words added.

    A single word joins its cue's ``words`` unless some cue already has it (the inventory
    keeps its reading: "devoid" stays a privative adjective); a phrasal verb joins its cue's
    ``lemma_phrases``, another multi-word cue its cue's ``phrases`` where the cue has them;
    a list entry joins its ``[lexicon]`` or ``[segments]`` list; an
    ``attests:`` entry adds nothing (the rule file listed the word when the lexicon was built,
    and a copy of the file that takes it out is obeyed).

    Args:
        data: the parsed TOML of ``negation.toml`` (not changed).
        lexicon: the lexicon.

    Returns:
        A copy of ``data`` with the words added.

    Raises:
        NegationRulesError: an entry names a cue the rule file does not have (E314).
    """
    merged = copy.deepcopy(dict(data))
    cues = {raw.get("id"): raw for raw in merged.get("cue", []) if isinstance(raw, dict)}
    claimed = {word.lower() for raw in cues.values() for word in raw.get("words", [])}
    for entry in lexicon.entries:
        kind, _, name = entry.joins.partition(":")
        if kind == "attests":
            continue  # the rule file lists the word already; its own entry decides
        if kind == "cue":
            raw = cues.get(name)
            if raw is None:
                raise _fail(lexicon.source, f"entry {entry.lemma!r}", f"cue {name!r} is not in the rule file")
            # a phrasal verb is matched on its lemmas ("rules out"); another multi-word cue joins
            # the word phrases of a cue that has them ("negative for", a preposition)
            key = "words"
            if " " in entry.lemma:
                key = "phrases" if entry.pos != "verb" and "phrases" in raw else "lemma_phrases"
            if key == "words" and entry.lemma in claimed:
                continue
            words = raw.setdefault(key, [])
            if entry.lemma not in words:
                words.append(entry.lemma)
                claimed.add(entry.lemma)
        else:
            table = merged.setdefault("lexicon" if kind == "list" else "segments", {})
            words = table.setdefault(name, [])
            if entry.lemma not in words:
                words.append(entry.lemma)
    return merged
