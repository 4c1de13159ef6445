"""The negation inventory of the scope pass, read from ``grammars/negation.toml``.

The file declares the classes of negation cues (docs/negation.md), the scope rules each
class tries, the segment boundaries and the connectives that join two sound phrases. This
module reads it into frozen records and checks it: an unknown key, scope rule or class is
an error naming the entry (E313), never a silent no-op.

Example:
    >>> rules = load_negation_rules()
    >>> rules.cue_for_word("without").cls, rules.cue_for_word("without").scopes
    ('preposition', ('exceptive', 'following_phrase'))
    >>> rules.longest_phrase(["rather", "than", "rain"], 0)[1].id
    'privative-preposition'
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, NegationRulesError
from fortekit.fol.caption.negation_lexicon import SHIPPED as LEXICON
from fortekit.fol.caption.negation_lexicon import load_negation_lexicon, merge_lexicon

__all__ = [
    "CUE_CLASSES",
    "SCOPE_RULE_NAMES",
    "Connective",
    "Cue",
    "NegationRules",
    "load_negation_rules",
    "parse_negation_rules",
]

_SHIPPED = "negation.toml"

#: The cue classes of docs/negation.md.
CUE_CLASSES: frozenset[str] = frozenset(
    {
        "determiner",
        "pronoun",
        "particle",
        "preposition",
        "lacking_verb",
        "ceasing_verb",
        "implicative_verb",
        "absence_adjective",
        "privative_adjective",
        "absence_noun",
        "affix",
        "removal_verb",
        "privative_participle",
        "approximate_negator",
    }
)
#: The scope rules a cue may name (implemented in :mod:`fortekit.fol.caption.negation`).
SCOPE_RULE_NAMES: tuple[str, ...] = (
    "exceptive",
    "own_phrase",
    "following_phrase",
    "predicated_noun",
    "predicated_device",
    "double_negation",
    "negated_predicate",
    "verb_object",
    "ceased_subject",
    "implicative",
    "affix_stem",
    "of_object",
    "ambiguous",
    "removed_object",
    "by_object",
    "double_object",
    "negative_adverbial",
    "search_clause",
    "unsure_agent",
    "tough_complement",
    "comma_preposition",
    "post_negation",
    "inverted_clause",
    "imperative_object",
    "suffix_stem",
    "unplaced_result",
    "unplaced_separation",
    "approximate",
)
_CUE_KEYS = frozenset(
    {"id", "class", "words", "phrases", "lemma_phrases", "pos", "scopes", "attributive", "form"}
)
_CONNECTIVE_KEYS = frozenset({"id", "kind", "phrases", "lemma_phrases"})
_CONNECTIVE_KINDS = frozenset({"co-occurrence", "order"})
_FORMS = frozenset({"any", "resultative"})


@dataclass(frozen=True, slots=True)
class Cue:
    """One class of negation cue: its words and the scope rules it tries, in order.

    Attributes:
        id: the entry's id (recorded on each negation found).
        cls: its class in docs/negation.md (``determiner``, ``preposition``, ...).
        words: single-token cues, lower case (matched on the token or its lemma).
        phrases: multi-word cues, as tuples of lower-case words.
        pos: parts of speech the first token may have (empty: any).
        scopes: the scope rules, tried in order.
        attributive: whether a use before the noun it describes is a cue.
        form: ``any``, or ``resultative`` (a participle or perfect form only).
        lemma_phrases: phrasal verbs, as tuples of lemmas ("leave out": "left out", "leaving out").
    """

    id: str
    cls: str
    words: frozenset[str]
    phrases: tuple[tuple[str, ...], ...]
    pos: frozenset[str]
    scopes: tuple[str, ...]
    attributive: bool = True
    form: str = "any"
    lemma_phrases: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Connective:
    """Words that join two sound phrases: co-occurrence ("mixed with") or order.

    Attributes:
        id: the entry's id.
        kind: ``co-occurrence`` or ``order``.
        phrases: lower-case word sequences.
        lemma_phrases: lemma sequences (a participle stands for its forms).
    """

    id: str
    kind: str
    phrases: tuple[tuple[str, ...], ...]
    lemma_phrases: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class NegationRules:
    """The parsed ``negation.toml``.

    Attributes:
        cues: the cue entries in file order.
        connectives: the connective entries.
        punctuation: tokens that end a segment.
        conjunctions: conjunctions that always start a segment.
        clause_conjunctions: conjunctions that start one when a clause follows.
        lists: the ``[lexicon]`` word lists.
        source: where the rules came from.
    """

    cues: tuple[Cue, ...]
    connectives: tuple[Connective, ...]
    punctuation: frozenset[str]
    conjunctions: frozenset[str]
    clause_conjunctions: frozenset[str]
    lists: Mapping[str, frozenset[str]]
    source: str
    _by_word: dict[str, Cue] = field(default_factory=dict, repr=False)
    _phrases: dict[str, list[tuple[tuple[str, ...], Cue | Connective]]] = field(
        default_factory=dict, repr=False
    )
    _lemma_phrases: dict[str, list[tuple[tuple[str, ...], Cue | Connective]]] = field(
        default_factory=dict, repr=False
    )
    trigger_words: frozenset[str] = frozenset()
    boundary_words: frozenset[str] = frozenset()
    #: every word a cue or connective match may start with, as its lower-case form or its
    #: lemma (a word outside it starts none: find_matches passes it by)
    start_words: frozenset[str] = frozenset()
    # unions of [lexicon] lists, made on first use (the scope rules ask per segment)
    _unions: dict[tuple[str, ...], frozenset[str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        by_word: dict[str, Cue] = {}
        phrases: dict[str, list[tuple[tuple[str, ...], Cue | Connective]]] = {}
        for cue in self.cues:
            for word in cue.words:
                by_word.setdefault(word, cue)
            for phrase in cue.phrases:
                phrases.setdefault(phrase[0], []).append((phrase, cue))
        for connective in self.connectives:
            for phrase in connective.phrases:
                phrases.setdefault(phrase[0], []).append((phrase, connective))
        for entries in phrases.values():
            entries.sort(key=lambda entry: -len(entry[0]))  # longest first
        self._by_word.update(by_word)
        self._phrases.update(phrases)
        lemma_starts = {phrase[0] for c in self.connectives for phrase in c.lemma_phrases}
        phrasal: list[Cue | Connective] = [*self.connectives, *self.cues]
        for entry in phrasal:
            for phrase in entry.lemma_phrases:
                self._lemma_phrases.setdefault(phrase[0], []).append((phrase, entry))
        for entries in self._lemma_phrases.values():
            entries.sort(key=lambda entry: -len(entry[0]))  # longest first
        object.__setattr__(self, "trigger_words", frozenset(by_word) | frozenset(phrases) | lemma_starts)
        object.__setattr__(
            self, "boundary_words", self.punctuation | self.conjunctions | self.clause_conjunctions
        )
        object.__setattr__(
            self, "start_words", frozenset(self._by_word).union(self._phrases, self._lemma_phrases)
        )

    def words(self, name: str) -> frozenset[str]:
        """A ``[lexicon]`` list (empty for an unknown name)."""
        return self.lists.get(name, frozenset())

    def words_of(self, *names: str) -> frozenset[str]:
        """The union of several ``[lexicon]`` lists, made once per tuple of names.

        Example:
            >>> rules = load_negation_rules()
            >>> rules.words_of("order_connectives", "time_words") >= rules.words("order_connectives")
            True
        """
        found = self._unions.get(names)
        if found is None:
            found = self._unions[names] = frozenset().union(*(self.words(name) for name in names))
        return found

    def cue_for_word(self, word: str) -> Cue | None:
        """The cue entry of a single word (lower case or lemma), or None."""
        return self._by_word.get(word)

    def lemma_phrases_from(self, lemma: str) -> list[tuple[tuple[str, ...], Cue | Connective]]:
        """The lemma phrases of connectives and cues that start with ``lemma`` ("accompany by",
        "leave out"), longest first."""
        return self._lemma_phrases.get(lemma, [])

    def has_lemma_phrase(self, lemmas: Sequence[str]) -> bool:
        """Whether a cue's lemma phrase occurs in a caption's lemmas (a cheap pre-check)."""
        for k, lemma in enumerate(lemmas):
            for phrase, entry in self._lemma_phrases.get(lemma, ()):
                if isinstance(entry, Cue) and tuple(lemmas[k : k + len(phrase)]) == phrase:
                    return True
        return False

    def longest_phrase(self, lowers: Sequence[str], start: int) -> tuple[int, Cue | Connective] | None:
        """The longest cue or connective phrase starting at ``lowers[start]``: (length, entry)."""
        for phrase, entry in self._phrases.get(lowers[start], ()):
            end = start + len(phrase)
            if end <= len(lowers) and tuple(lowers[start:end]) == phrase:
                return len(phrase), entry
        return None


def _fail(source: str, where: str, problem: str) -> NegationRulesError:
    return NegationRulesError(
        Errors.E313.format(path=source, where=where, problem=problem, options=", ".join(SCOPE_RULE_NAMES))
    )


def _strings(value: Any, source: str, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise _fail(source, where, f"expected a list of non-empty strings, not {value!r}")
    return [item.lower() for item in value]


def _phrases(value: Any, source: str, where: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(item.split()) for item in _strings(value, source, where))


def _cue(raw: Any, index: int, source: str) -> Cue:
    where = f"[[cue]] #{index + 1}"
    if not isinstance(raw, dict):
        raise _fail(source, where, "expected a table")
    unknown = set(raw) - _CUE_KEYS
    if unknown:
        raise _fail(source, where, f"unknown key(s) {', '.join(sorted(unknown))}")
    cue_id = raw.get("id")
    if not isinstance(cue_id, str) or not cue_id:
        raise _fail(source, where, "every cue needs an 'id'")
    where = f"[[cue]] {cue_id!r}"
    cls = raw.get("class")
    if cls not in CUE_CLASSES:
        raise _fail(source, where, f"unknown class {cls!r} (classes: {', '.join(sorted(CUE_CLASSES))})")
    scopes = tuple(_strings(raw.get("scopes", []), source, where))
    if not scopes:
        raise _fail(source, where, "a cue needs at least one scope rule in 'scopes'")
    for name in scopes:
        if name not in SCOPE_RULE_NAMES:
            raise _fail(source, where, f"unknown scope rule {name!r}")
    words = frozenset(_strings(raw.get("words", []), source, where))
    phrases = _phrases(raw.get("phrases", []), source, where)
    if not words and not phrases and not raw.get("lemma_phrases"):
        raise _fail(source, where, "a cue needs 'words' or 'phrases'")
    form = raw.get("form", "any")
    if form not in _FORMS:
        raise _fail(source, where, f"unknown form {form!r} (forms: {', '.join(sorted(_FORMS))})")
    attributive = raw.get("attributive", True)
    if not isinstance(attributive, bool):
        raise _fail(source, where, f"'attributive' must be true or false, not {attributive!r}")
    pos = frozenset(item.upper() for item in _strings(raw.get("pos", []), source, where))
    lemma_phrases = _phrases(raw.get("lemma_phrases", []), source, where)
    return Cue(cue_id, cls, words, phrases, pos, scopes, attributive, form, lemma_phrases)


def _connective(raw: Any, index: int, source: str) -> Connective:
    where = f"[[connective]] #{index + 1}"
    if not isinstance(raw, dict):
        raise _fail(source, where, "expected a table")
    unknown = set(raw) - _CONNECTIVE_KEYS
    if unknown:
        raise _fail(source, where, f"unknown key(s) {', '.join(sorted(unknown))}")
    kind = raw.get("kind")
    if kind not in _CONNECTIVE_KINDS:
        raise _fail(source, where, f"unknown kind {kind!r} (kinds: {', '.join(sorted(_CONNECTIVE_KINDS))})")
    phrases = _phrases(raw.get("phrases", []), source, where)
    lemma_phrases = _phrases(raw.get("lemma_phrases", []), source, where)
    if not phrases and not lemma_phrases:
        raise _fail(source, where, "a connective needs 'phrases' or 'lemma_phrases'")
    return Connective(str(raw.get("id", f"connective-{index + 1}")), kind, phrases, lemma_phrases)


def _with_lexicon(data: dict[str, Any], source: str, base: Path | None) -> dict[str, Any]:
    """The rule data with the words of the lexicon file it names (``lexicon = "..."``) added."""
    name = data.get("cue_lexicon")
    if name is None:
        return data
    if not isinstance(name, str) or not name:
        raise _fail(source, "cue_lexicon", f"expected a file name, not {name!r}")
    beside = base / name if base is not None else None
    if beside is not None and beside.is_file():
        lexicon = load_negation_lexicon(beside)
    elif name == LEXICON:
        lexicon = load_negation_lexicon()
    else:
        raise _fail(source, "cue_lexicon", f"no lexicon file {name!r} beside the rule file")
    return merge_lexicon(data, lexicon)


def parse_negation_rules(text: str, source: str = "<string>", *, base: Path | None = None) -> NegationRules:
    """Parse the text of a negation rule file.

    Args:
        text: TOML text in the format of ``grammars/negation.toml``.
        source: a name for error messages.
        base: the directory of the file, where the lexicon it names is looked for first (the
            shipped ``negation_lexicon.toml`` otherwise).

    Returns:
        The rules.

    Raises:
        NegationRulesError: the file is not valid TOML or breaks the format (E313).

    Example:
        >>> text = '[[cue]]\\nid = "x"\\nclass = "nope"\\nwords = ["no"]\\nscopes = ["ambiguous"]'
        >>> parse_negation_rules(text)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        fortekit.errors.NegationRulesError: [E313] ... at [[cue]] 'x': unknown class 'nope' (classes: ...
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _fail(source, "the file", f"not valid TOML ({exc})") from None
    data = _with_lexicon(data, source, base)
    segments = data.get("segments", {})
    lexicon = data.get("lexicon", {})
    if not isinstance(segments, dict) or not isinstance(lexicon, dict):
        raise _fail(source, "[segments] or [lexicon]", "expected a table")
    lists = {name: frozenset(_strings(value, source, f"[lexicon] {name}")) for name, value in lexicon.items()}
    cues = tuple(_cue(raw, k, source) for k, raw in enumerate(data.get("cue", [])))
    connectives = tuple(_connective(raw, k, source) for k, raw in enumerate(data.get("connective", [])))
    seen: set[str] = set()
    for cue in cues:
        if cue.id in seen:
            raise _fail(source, f"[[cue]] {cue.id!r}", "the id is used twice")
        seen.add(cue.id)
    return NegationRules(
        cues=cues,
        connectives=connectives,
        punctuation=frozenset(_strings(segments.get("punctuation", []), source, "[segments] punctuation")),
        conjunctions=frozenset(_strings(segments.get("conjunctions", []), source, "[segments] conjunctions")),
        clause_conjunctions=frozenset(
            _strings(segments.get("clause_conjunctions", []), source, "[segments] clause_conjunctions")
        ),
        lists=lists,
        source=source,
    )


@cache
def _shipped() -> NegationRules:
    text = resources.files("fortekit.grammars").joinpath(_SHIPPED).read_text(encoding="utf-8")
    return parse_negation_rules(text, f"fortekit/grammars/{_SHIPPED}")


def load_negation_rules(path: str | Path | None = None) -> NegationRules:
    """Load the negation rules: the shipped ``grammars/negation.toml`` (read once) or a file.

    Args:
        path: a rule file to read instead of the shipped one.

    Returns:
        The rules.

    Raises:
        NegationRulesError: the file is invalid (E313).
        FileNotFoundError: ``path`` does not exist.

    Example:
        >>> load_negation_rules() is load_negation_rules()
        True
    """
    if path is None:
        return _shipped()
    target = Path(path)
    return parse_negation_rules(target.read_text(encoding="utf-8"), str(target), base=target.parent)
