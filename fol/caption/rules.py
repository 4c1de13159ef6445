"""The declarative rule file of Pass 1: lexicon, repairs and arc rules, read with tomllib.

``grammars/arc_rules.toml`` holds every rule of the caption parser in one place; this
module reads it into frozen records and checks it (unknown keys, actions or lexicon
names are an error with the rule's id, not a silent no-op).

Example:
    >>> rules = load_rules()
    >>> [r.id for r in rules.rules][:3]
    ['repetition', 'at-all', 'at-all-head']
    >>> "morning" in rules.lexicon.words("time_nouns")
    True
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from fortekit.errors import ArcRulesError, Errors
from fortekit.fol.caption.checks import Check, compile_beyond_word, compile_holds
from fortekit.fol.caption.rule_index import MAX_WORDS, index_by_arc, index_by_pos, word_rules

__all__ = [
    "ARC_ACTIONS",
    "REPAIR_ACTIONS",
    "ArcRule",
    "Conditions",
    "Lexicon",
    "RuleSet",
    "load_rules",
]

#: Actions an arc rule may name (implemented in fortekit.fol.caption.pass1).
ARC_ACTIONS: frozenset[str] = frozenset(
    {
        "attach",
        "separate",
        "subject",
        "object",
        "compound",
        "relation",
        "time",
        "property",
        "member",
        "transparent",
        "reciprocal",
        "verb_with_object",
        "possessor",
        "temporal_clause",
        "temporal_preposition",
        "temporal_then",
        "temporal_followed",
        "skip_phrase",
    }
)
#: Actions a repair may name (implemented in fortekit.fol.caption.repairs).
REPAIR_ACTIONS: frozenset[str] = frozenset(
    {
        "compound_to_subject",
        "gerund_object_to_verb",
        "split_coordinated_subject",
        "propn_to_noun",
        "noun_chain_to_verb",
        "to_verb",
        "ing_adjective",
        "adjective_to_noun",
        "particle_to_preposition",
        "preposition_to_mark",
        "attach_to_verb",
        "release_marked_clause",
        "gerund_to_previous_noun",
        "gerund_noun_to_verb",
    }
)
_LIST_KEYS = (
    "arc",
    "pos",
    "tag",
    "lemma",
    "not_lemma",
    "head_arc",
    "head_pos",
    "head_tag",
    "head_lemma",
    "head_child_lemma",
    "has_child",
    "lacks_child",
    "child_lemma",
    "object_pos",
    "object_lemma",
)
_SCALAR_KEYS = {"id": str, "doc": str, "action": str, "emit": bool, "relation": str, "reverse": bool}
_BOOL_CONDITIONS = {"has_object": bool}
_SHIPPED = "arc_rules.toml"


@dataclass(frozen=True, slots=True)
class Lexicon:
    """The word lists and small tables of ``[lexicon]``.

    Attributes:
        lists: list name -> lower-case words.
        lemma_overrides: word -> lemma the parser uses instead of spaCy's.
        multiword_prepositions: phrase -> relation lemma (``"in front of"``).
        multiword_adjectives: phrase -> predicate lemma (``"high pitched"``).
        multiword_adjective_starts: the first words of those phrases (``high``), so
            the parser looks for a phrase only where one may start.
        multiword_preposition_starts: the first words of the multi-word prepositions
            (``in``), and ``multiword_preposition_ends`` their last words (``of``).

    Example:
        >>> lexicon = Lexicon({}, {}, {"in front of": "in front of"}, {})
        >>> sorted(lexicon.multiword_preposition_starts), sorted(lexicon.multiword_preposition_ends)
        (['in'], ['of'])
    """

    lists: Mapping[str, frozenset[str]]
    lemma_overrides: Mapping[str, str]
    multiword_prepositions: Mapping[str, str]
    multiword_adjectives: Mapping[str, str]
    multiword_adjective_starts: frozenset[str] = frozenset()
    multiword_preposition_starts: frozenset[str] = field(init=False, repr=False, compare=False)
    multiword_preposition_ends: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        phrases = self.multiword_prepositions
        starts = frozenset(phrase.split(" ", 1)[0] for phrase in phrases)
        ends = frozenset(phrase.rsplit(" ", 1)[-1] for phrase in phrases)
        object.__setattr__(self, "multiword_preposition_starts", starts)
        object.__setattr__(self, "multiword_preposition_ends", ends)

    def words(self, name: str) -> frozenset[str]:
        """The words of one list (an empty set for an unknown name)."""
        return self.lists.get(name, frozenset())


@dataclass(frozen=True, slots=True)
class Conditions:
    """What must hold of an arc for a rule to apply; None means "any"."""

    arc: frozenset[str] | None = None
    pos: frozenset[str] | None = None
    tag: frozenset[str] | None = None
    lemma: frozenset[str] | None = None
    not_lemma: frozenset[str] | None = None
    head_arc: frozenset[str] | None = None
    head_pos: frozenset[str] | None = None
    head_tag: frozenset[str] | None = None
    head_lemma: frozenset[str] | None = None
    head_child_lemma: frozenset[str] | None = None
    has_child: frozenset[str] | None = None
    lacks_child: frozenset[str] | None = None
    child_lemma: frozenset[str] | None = None
    object_pos: frozenset[str] | None = None
    object_lemma: frozenset[str] | None = None
    has_object: bool | None = None
    # Which of the tests beyond the word itself are set, read once when the rule is
    # made: Pass 1 then skips each group it lacks on one test, not on five.
    tests_head: bool = field(init=False, repr=False, compare=False)
    tests_children: bool = field(init=False, repr=False, compare=False)
    tests_object: bool = field(init=False, repr=False, compare=False)
    # Those tests as one function of (view, token), made once (fol/caption/checks.py).
    beyond: Check = field(init=False, repr=False, compare=False)
    # All the tests, the word's own first, as one function (conditions.holds).
    matches: Check = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        head = (self.head_arc, self.head_pos, self.head_tag, self.head_lemma, self.head_child_lemma)
        children = (self.has_child, self.lacks_child, self.child_lemma)
        obj = (self.has_object, self.object_pos, self.object_lemma)
        object.__setattr__(self, "tests_head", any(test is not None for test in head))
        object.__setattr__(self, "tests_children", any(test is not None for test in children))
        object.__setattr__(self, "tests_object", any(test is not None for test in obj))
        object.__setattr__(self, "beyond", compile_beyond_word(self))
        object.__setattr__(self, "matches", compile_holds(self))

    def __reduce__(self) -> tuple[Any, ...]:
        # The compiled tests are functions made here, which pickle cannot carry: a copy
        # is made again from the conditions themselves (and compiles its own).
        return (Conditions, tuple(getattr(self, item.name) for item in fields(self) if item.init))


@dataclass(frozen=True, slots=True)
class ArcRule:
    """One ``[[rule]]`` or ``[[repair]]`` entry.

    Attributes:
        id: the rule's name, recorded as the provenance of what it produces.
        action: the action's name (see :data:`ARC_ACTIONS`, :data:`REPAIR_ACTIONS`).
        when: the conditions.
        emit: whether the dependent keeps its own predicate.
        relation: the lemma of the binary predicate the action makes, if any.
        reverse: swap that predicate's arguments.
        doc: why the rule exists.
        label_only: whether ``when`` tests nothing but the arc, the POS and the lemma
            (read once, when the rule is made), so a caller that tested those needs
            no :func:`~fortekit.fol.caption.conditions.holds`.
    """

    id: str
    action: str
    when: Conditions
    emit: bool = True
    relation: str | None = None
    reverse: bool = False
    doc: str = ""
    label_only: bool = False


# rules_for_word's arguments (label, POS, tag, lemma, lower) and answer.
_WordKey = tuple[str, str, str, str, str]
_WordRules = tuple[tuple[ArcRule, ...], ArcRule | None]


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The whole rule file.

    Attributes:
        lexicon: the word lists.
        repairs: repairs, in file order.
        rules: arc rules, in file order (first match wins).
        options: the ``[options]`` table.
        source: where the rules were read from.
        by_arc: dependency label -> the rules that may apply to it, in file order
            (key ``""``: the rules for any label), so a token is tested against a few
            rules rather than all of them.
        by_arc_pos: dependency label -> POS -> the rules of ``by_arc`` whose POS test
            that POS passes (key ``""``: a POS no rule names), so the parser tests
            neither the label nor the POS again.
        temporal_rules: ids of the rules that order clauses in time (an action
            ``temporal_*``: While, Before), read once from ``rules``.
    """

    lexicon: Lexicon
    repairs: tuple[ArcRule, ...]
    rules: tuple[ArcRule, ...]
    options: Mapping[str, Any]
    source: str
    by_arc: Mapping[str, tuple[ArcRule, ...]]
    by_arc_pos: Mapping[str, Mapping[str, tuple[ArcRule, ...]]]
    temporal_rules: frozenset[str] = field(init=False)
    _by_word: dict[tuple[str, str, str, str, str], tuple[tuple[ArcRule, ...], ArcRule | None]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        temporal = frozenset(r.id for r in self.rules if r.action.startswith("temporal_"))
        object.__setattr__(self, "temporal_rules", temporal)
        object.__setattr__(self, "_by_word", {})

    def rules_for_word(
        self, dep: str, pos: str, tag: str, lemma: str, lower: str
    ) -> tuple[tuple[ArcRule, ...], ArcRule | None]:
        """The arc rules left to test for a word, and the rule that holds if none of them does.

        The tests of the word itself (label, POS, tag, lemma, excluded lemma) are done
        here, once per word, and the answer kept: the first result lists, in file order,
        the rules whose own tests pass and that test the word's head, children or
        object too (:func:`~fortekit.fol.caption.conditions.holds` decides them); the
        second is the first rule after them that tests nothing else (it then applies),
        or None.

        Example:
            >>> rules = load_rules()
            >>> tests, sure = rules.rules_for_word("nsubj", "NOUN", "NNS", "dog", "dogs")
            >>> sure.id
            'nsubj'
        """
        key = (dep, pos, tag, lemma, lower)
        found = self._by_word.get(key)
        if found is None:
            if len(self._by_word) >= MAX_WORDS:  # a long stream of new words: start again
                self._by_word.clear()
            found = self._by_word[key] = word_rules(self.by_arc_pos, dep, pos, tag, lemma, lower)
        return found

    @property
    def words_seen(self) -> Mapping[_WordKey, _WordRules]:
        """The answers of :meth:`rules_for_word` kept so far, by its arguments (read-only use)."""
        return self._by_word

    def option(self, name: str, default: Any) -> Any:
        """An ``[options]`` value, or ``default``."""
        return self.options.get(name, default)

    def rules_for(self, dep: str) -> tuple[ArcRule, ...]:
        """The rules that may apply to an arc with label ``dep``, in file order."""
        found = self.by_arc.get(dep)
        return found if found is not None else self.by_arc[""]


def _fail(source: str, where: str, problem: str) -> ArcRulesError:
    return ArcRulesError(Errors.E304.format(path=source, where=where, problem=problem))


def _words(value: Any, lists: Mapping[str, frozenset[str]], source: str, where: str) -> frozenset[str]:
    if isinstance(value, str):
        if value.startswith("@"):
            name = value[1:]
            if name not in lists:
                raise _fail(source, where, f"unknown lexicon list {value!r}")
            return lists[name]
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _fail(source, where, f"expected a list of strings or '@list', not {value!r}")
    return frozenset(item if item.isupper() or item == "ROOT" else item.lower() for item in value)


def _rule(
    raw: Any, kind: str, index: int, actions: frozenset[str], lists: Mapping[str, frozenset[str]], source: str
) -> ArcRule:
    where = f"[[{kind}]] #{index + 1}"
    if not isinstance(raw, dict):
        raise _fail(source, where, "expected a table")
    rule_id = raw.get("id")
    if not isinstance(rule_id, str) or not rule_id:
        raise _fail(source, where, "every rule needs an id")
    where = f"[[{kind}]] {rule_id!r}"
    unknown = set(raw) - set(_LIST_KEYS) - set(_SCALAR_KEYS) - set(_BOOL_CONDITIONS)
    if unknown:
        raise _fail(source, where, f"unknown key(s) {', '.join(sorted(unknown))}")
    for key, expected in {**_SCALAR_KEYS, **_BOOL_CONDITIONS}.items():
        if key in raw and not isinstance(raw[key], expected):
            raise _fail(source, where, f"{key} must be a {expected.__name__}")
    action = raw.get("action")
    if action not in actions:
        raise _fail(source, where, f"unknown action {action!r}; valid: {', '.join(sorted(actions))}")
    conditions: dict[str, Any] = {
        key: _words(raw[key], lists, source, where) for key in _LIST_KEYS if key in raw
    }
    if conditions.get("arc") == frozenset({"*"}):
        conditions["arc"] = None
    if "has_object" in raw:
        conditions["has_object"] = raw["has_object"]
    return ArcRule(
        id=rule_id,
        action=str(action),
        when=Conditions(**conditions),
        label_only=not (set(conditions) - {"arc", "pos", "lemma"}),
        emit=bool(raw.get("emit", True)),
        relation=raw.get("relation"),
        reverse=bool(raw.get("reverse", False)),
        doc=str(raw.get("doc", "")).strip(),
    )


def _table(raw: Any, source: str, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise _fail(source, where, "expected a table of strings")
    return {str(k).lower(): v.lower() for k, v in raw.items()}


def parse_rules(text: str, source: str = "<string>") -> RuleSet:
    """Read a rule file from its TOML text.

    Args:
        text: the TOML.
        source: a name for messages.

    Returns:
        The rules.

    Raises:
        ArcRulesError: for invalid TOML, an unknown action, key or lexicon list (E304).

    Example:
        >>> rs = parse_rules('[lexicon]\\nx = ["a"]\\n[[rule]]\\nid = "r"\\narc = ["*"]\\naction = "attach"')
        >>> rs.rules[0].when.arc is None, rs.lexicon.words("x")
        (True, frozenset({'a'}))
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _fail(source, "the file", str(exc)) from None
    if data.get("version", 1) != 1:
        problem = f"this fortekit reads version 1 rule files, not {data.get('version')!r}"
        raise _fail(source, "version", problem)
    raw_lexicon = data.get("lexicon", {})
    if not isinstance(raw_lexicon, dict):
        raise _fail(source, "[lexicon]", "expected a table")
    lists: dict[str, frozenset[str]] = {}
    tables = {"lemma_overrides", "multiword_prepositions", "multiword_adjectives"}
    for name, value in raw_lexicon.items():
        if name in tables:
            continue
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise _fail(source, f"[lexicon] {name}", "expected a list of strings")
        lists[name] = frozenset(item.lower() for item in value)
    adjectives = _table(raw_lexicon.get("multiword_adjectives"), source, "[lexicon.multiword_adjectives]")
    lexicon = Lexicon(
        lists=lists,
        lemma_overrides=_table(raw_lexicon.get("lemma_overrides"), source, "[lexicon.lemma_overrides]"),
        multiword_prepositions=_table(
            raw_lexicon.get("multiword_prepositions"), source, "[lexicon.multiword_prepositions]"
        ),
        multiword_adjectives=adjectives,
        multiword_adjective_starts=frozenset(phrase.split(" ", 1)[0] for phrase in adjectives),
    )
    repairs = tuple(
        _rule(raw, "repair", i, REPAIR_ACTIONS, lists, source) for i, raw in enumerate(data.get("repair", []))
    )
    rules = tuple(
        _rule(raw, "rule", i, ARC_ACTIONS, lists, source) for i, raw in enumerate(data.get("rule", []))
    )
    if not rules:
        raise _fail(source, "the file", "no [[rule]] entries")
    seen: set[str] = set()
    for rule in (*repairs, *rules):
        if rule.id in seen:
            raise _fail(source, f"rule {rule.id!r}", "the id is used twice")
        seen.add(rule.id)
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise _fail(source, "[options]", "expected a table")
    by_arc = index_by_arc(rules)
    return RuleSet(lexicon, repairs, rules, options, source, by_arc, index_by_pos(by_arc))


@cache
def _shipped() -> RuleSet:
    text = resources.files("fortekit.grammars").joinpath(_SHIPPED).read_text(encoding="utf-8")
    return parse_rules(text, f"fortekit/grammars/{_SHIPPED}")


def load_rules(path: str | Path | None = None) -> RuleSet:
    """Load the arc rules: the shipped ``grammars/arc_rules.toml`` (read once) or a file.

    Args:
        path: a rule file to read instead of the shipped one.

    Returns:
        The rules.

    Raises:
        ArcRulesError: if the file is invalid (E304).
        FileNotFoundError: if ``path`` does not exist.

    Example:
        >>> load_rules() is load_rules()
        True
    """
    if path is None:
        return _shipped()
    target = Path(path)
    return parse_rules(target.read_text(encoding="utf-8"), str(target))
