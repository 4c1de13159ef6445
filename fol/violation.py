"""Violation judged by meaning: does an item's caption hold a sound the query excludes?

One check, used everywhere a violation is shown or counted (the ``violated`` mark of a hit,
Stage 3's polarity score, formula scoring's caption evidence, ``fortekit eval``'s violation
breakdown). It works on the query's formula and the item caption's predicate symbols, both
grounded to V_audio, and asks WordNet's lexical relations in the right direction
(:mod:`fortekit.vocab.entailment`): a caption that names crows holds "birds"; one that names
birds does not hold "crows" (it is unsure).

An **excluded sound** is a negated clause of the formula: ``¬∃y [Person(y) ∧ Talking(y)]``
("no people talking"), ``¬∃y Crow(y)`` ("no crows"), or a denied property of an asserted
source (``Water(x) ∧ ¬Dripping(x)``: the sound "water dripping"). Its *core* is its sound
nouns (the source) and verbs (what the source does); adjectives, places and times qualify
it and are not needed as evidence. The item **holds** the sound when:

* every specific source noun of the sound is entailed by a caption symbol (crow ⊑ bird,
  man ⊑ person), and every verb is (speak ~ talk; the event noun "speech" entails "talking");
* an unspecific human source ("people", "someone", a crowd) is the default agent of its verb
  and needs no evidence of its own: "male speaking" and "speech" hold "people talking". (A
  verb entails another only by synonymy, never by WordNet's troponymy, so "a dog barks"
  does not: :mod:`fortekit.vocab.entailment`.)

A caption that holds the specific source but not what it does ("a dog whimpering" against
"no dogs barking") gives **source** evidence: the excluded source is there, doing
something else or something unsaid; when that source is the asked-for one or a part of it
("an engine running without the engine revving", "a truck without an engine idling"), the
source alone is no evidence at all. Evidence that only the asked-for sound explains is no
evidence: when the query's own asserted sound entails every part of the excluded one ("a
dog, no animals"), a caption symbol that entails both stands for the asked-for source. When
they share only a part ("water bubbling without water splashing"), the part they do not
share must be witnessed, and the shared one counts as it is.

Example:
    >>> from fortekit.fol import parse_formula, predicates
    >>> check = default_check()
    >>> query = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    >>> [str(j) for j in check.judge_formula(query, predicates(parse_formula("∃x [Man(x) ∧ Speaking(x)]")))]
    ['¬∃y [Person(y) ∧ Talking(y)]: holds (Speaking)']
    >>> check.holds(query, predicates(parse_formula("∃x Speech(x)")))
    True
    >>> birds = parse_formula("∃x [Bird(x) ∧ Singing(x) ∧ ¬∃y Crow(y)]")
    >>> check.holds(birds, predicates(parse_formula("∃x [Bird(x) ∧ Singing(x)]")))
    False
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING

from fortekit.fol.ast import And, Atom, Formula, Not, Or, Quant, Var

if TYPE_CHECKING:
    from fortekit.fol.predicates import PredicateSymbol
    from fortekit.vocab.entailment import EntailmentTable
    from fortekit.vocab.vocabulary import Vocabulary

__all__ = [
    "Evidence",
    "ExcludedSound",
    "Judgement",
    "SoundMatcher",
    "ViolationCheck",
    "asserted_sound_symbols",
    "default_check",
    "excluded_sounds",
    "positive_names",
]

#: Kinds (:meth:`~fortekit.vocab.entailment.EntailmentTable.kind`) of an unspecific source,
#: whose sound the verb names ("people talking", "a crowd cheering").
GENERIC_KINDS = frozenset({"person", "group"})
#: Indefinite pronoun symbols of the parser ("nobody" -> ¬Someone) and their kinds.
INDEFINITE_KINDS = {"Someone": "person", "Somebody": "person", "Anyone": "person", "Anybody": "person",
                    "Everyone": "person", "Everybody": "person"}
#: Indefinites that name no kind of source: a sound of "something" cannot be judged.
UNSPECIFIC = frozenset({"Something", "Anything", "Everything", "Thing", "Sound", "Sounds"})
#: The most symbols whose role a :class:`ViolationCheck` keeps (emptied when full): every unknown
#: word of a query is a symbol, about 0.1 kB an entry, so at most about 7 MB.
ROLE_CACHE_ENTRIES = 1 << 16
#: Words that name no sound of their own, as lemmas: the light (support) verbs of English, whose
#: meaning the phrase around them carries ("going on", "makes a noise"; Jespersen 1942, Butt
#: 2010), and the general nouns of things ("an item", "an object"; Halliday & Hasan 1976).
#: A symbol V_audio lacks is otherwise judged by its name.
NON_SOUND_LEMMAS = frozenset({"be", "have", "do", "go", "make", "get", "take", "give", "come", "keep",
                              "happen", "occur", "item", "object", "thing", "stuff"})


def _names_no_sound(symbol: str) -> bool:
    """True for a light verb or a general noun, in any of its -ing or plural spellings."""
    word = symbol.lower()
    if word in NON_SOUND_LEMMAS or word.rstrip("s") in NON_SOUND_LEMMAS:
        return True
    if word.endswith("ing"):
        stem = word[:-3]
        return bool({stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem}
                    & NON_SOUND_LEMMAS)
    return False


class Evidence(StrEnum):
    """What an item's caption says of an excluded sound."""

    HOLDS = "holds"  #: the caption names the excluded sound
    SOURCE = "source"  #: it names the excluded source, doing something else or unsaid
    NONE = "none"  #: it says nothing of it: unsure, never a violation


@dataclass(frozen=True, slots=True)
class ExcludedSound:
    """A negated clause of a query formula, as the check reads it.

    Attributes:
        formula: the negated sub-formula as written (``¬∃y [Person(y) ∧ Talking(y)]``).
        nouns: its source nouns (V_audio symbols, or unknown names).
        verbs: its verbs.
        qualities: its restrictive acoustic qualities ("no *heavy* rain", "no *loud* music"): a
            caption must name them too to hold the sound; without them it names its source only.
    """

    formula: Formula
    nouns: tuple[str, ...]
    verbs: tuple[str, ...]
    qualities: tuple[str, ...] = ()

    def __str__(self) -> str:
        return str(self.formula)

    @property
    def symbols(self) -> tuple[str, ...]:
        """The negated predicate symbols of the sound's core, as ``Hit.violated`` lists them."""
        return tuple(f"¬{name}/1" for name in (*self.nouns, *self.verbs))


@dataclass(frozen=True, slots=True)
class Judgement:
    """The check's answer for one excluded sound and one item: the evidence and its witnesses."""

    sound: ExcludedSound
    evidence: Evidence
    witnesses: tuple[str, ...] = ()

    def __str__(self) -> str:
        seen = f" ({', '.join(self.witnesses)})" if self.witnesses else ""
        return f"{self.sound}: {self.evidence.value}{seen}"


def _unary(phi: Formula) -> Iterator[Atom]:
    if isinstance(phi, Atom):
        if len(phi.args) == 1 and isinstance(phi.args[0], Var):
            yield phi
    elif isinstance(phi, And):
        for operand in phi.operands:
            yield from _unary(operand)
    elif isinstance(phi, Quant):
        yield from _unary(phi.body)


def _walk(phi: Formula, negated: bool, found: list[tuple[Formula, bool]]) -> None:
    """Collect (sub-formula, is-negated) of the conjunctive spine: asserted atoms and ¬ clauses."""
    if isinstance(phi, Not):
        if negated:
            return  # a double negation the parser left: asserted, but not a clause to judge
        found.append((phi, True))
    elif isinstance(phi, (And, Or)):
        for operand in phi.operands:
            _walk(operand, negated, found)
    elif isinstance(phi, Quant):
        _walk(phi.body, negated, found)
    elif isinstance(phi, Atom):
        found.append((phi, False))


class ViolationCheck:
    """Judge whether items hold the sounds a query excludes (see the module docstring).

    Args:
        table: the symbol entailment table (default: the shipped one).
        vocabulary: V_audio, for the part of speech and category of each symbol (default: shipped).

    Example:
        >>> check = ViolationCheck()
        >>> from fortekit.fol import parse_formula
        >>> [s.nouns for s in check.excluded(parse_formula("∃x [Rain(x) ∧ ¬∃y Thunder(y)]"))]
        [('Thunder',)]
    """

    def __init__(self, table: EntailmentTable | None = None, vocabulary: Vocabulary | None = None) -> None:
        if table is None:
            from fortekit.vocab.entailment import load_entailment

            table = load_entailment()
        if vocabulary is None:
            from fortekit.vocab.vocabulary import load_vocabulary

            vocabulary = load_vocabulary()
        self.table = table
        self.vocabulary = vocabulary
        self._roles: dict[str, str] = {}
        self._excluded: dict[Formula, tuple[ExcludedSound, ...]] = {}
        self._witnesses: dict[tuple[str, tuple[str, ...]], frozenset[str]] = {}
        self._matchers: dict[tuple[ExcludedSound, tuple[str, ...]], SoundMatcher] = {}

    def role(self, symbol: str) -> str:
        """``'noun'``, ``'verb'`` or ``''`` (a qualifier, a place, a time: not a sound)."""
        role = self._roles.get(symbol)
        if role is None:
            entry = self.vocabulary.get(symbol)
            if symbol in UNSPECIFIC:
                role = ""
            elif entry is None:
                # a word V_audio lacks is judged by its name, unless it names no sound at all
                role = "" if _names_no_sound(symbol) else "noun"
            elif not entry.category.is_event:
                role = ""
            else:
                role = {"NOUN": "noun", "PROPN": "noun", "VERB": "verb"}.get(entry.pos, "")
            if len(self._roles) >= ROLE_CACHE_ENTRIES:  # a stream of unknown symbols: start again
                self._roles.clear()
            self._roles[symbol] = role
        return role

    def quality(self, symbol: str) -> bool:
        """True for an acoustic quality or intensity of V_audio ("heavy", "loud", "muffled"): a
        restrictive modifier of the sound it qualifies, unlike a place or a time."""
        entry = self.vocabulary.get(symbol)
        return entry is not None and entry.category.value in ("acoustic_property", "intensity")

    def kind(self, symbol: str) -> str:
        return INDEFINITE_KINDS.get(symbol) or self.table.kind(symbol)

    def excluded(self, phi: Formula | None) -> tuple[ExcludedSound, ...]:
        """The excluded sounds of ``phi`` (memoised per formula)."""
        if phi is None:
            return ()
        cached = self._excluded.get(phi)
        if cached is None:
            cached = self._excluded[phi] = self._find_excluded(phi)
            if len(self._excluded) > 4096:
                self._excluded.clear()
        return cached

    def _find_excluded(self, phi: Formula) -> tuple[ExcludedSound, ...]:
        spine: list[tuple[Formula, bool]] = []
        _walk(phi, False, spine)
        nouns_of: dict[Var, list[str]] = {}
        asserted_vars = {part.args[0] for part, negated in spine
                         if not negated and isinstance(part, Atom) and len(part.args) == 1}
        for part, negated in spine:
            if (not negated and isinstance(part, Atom) and len(part.args) == 1
                    and isinstance(part.args[0], Var) and self.role(part.predicate) == "noun"):
                nouns_of.setdefault(part.args[0], []).append(part.predicate)
        sounds: list[ExcludedSound] = []
        for part, negated in spine:
            if not negated or not isinstance(part, Not):
                continue
            body = part.body
            atoms = list(_unary(body))
            if isinstance(body, Atom) and atoms and atoms[0].args[0] in asserted_vars:
                # a denied property of an asserted source: the source's nouns with the denied word.
                # A denied quality ("music, not loud") names no sound of its own, nor does a kind
                # denied of an unspecific thing ("an item that is not metal"): nothing to judge.
                subject = atoms[0].args[0]
                sources = nouns_of.get(subject, []) if isinstance(subject, Var) else []
                role = self.role(body.predicate)
                if not role or (role == "noun" and not sources):
                    continue
                atoms = [Atom(name, atoms[0].args) for name in sources] + atoms
            head = next((atom.args[0] for atom in atoms), None)
            core = [atom.predicate for atom in atoms if atom.args[0] == head]
            nouns = tuple(dict.fromkeys(n for n in core if self.role(n) == "noun"))
            verbs = tuple(dict.fromkeys(v for v in core if self.role(v) == "verb"))
            qualities = tuple(dict.fromkeys(a for a in core if self.quality(a)))
            if nouns or verbs:
                sounds.append(ExcludedSound(part, nouns, verbs, qualities))
        return tuple(sounds)

    def sound_of(self, clause: Formula) -> ExcludedSound | None:
        """The sound a clause names, read as if it were excluded (None: it names no sound).

        Example:
            >>> from fortekit.fol import parse_formula
            >>> default_check().sound_of(parse_formula("∃y [Person(y) ∧ Talking(y)]")).verbs
            ('Talking',)
        """
        found = self.excluded(Not(clause))
        return found[0] if found else None

    def witnesses(self, general: str, asserted: tuple[str, ...] = ()) -> frozenset[str]:
        """The symbols whose presence in a caption is evidence of ``general``, beyond ``asserted``.

        Every symbol that entails ``general``, less those that entail an asserted symbol which
        itself entails ``general`` (the asked-for sound explains them).
        """
        key = (general, asserted)
        found = self._witnesses.get(key)
        if found is None:
            explained: set[str] = set()
            for name in asserted:
                if self.table.entails(name, general):
                    explained |= self.table.below(name)
            found = self._witnesses[key] = self.table.below(general) - explained
            if len(self._witnesses) > 65536:
                self._witnesses.clear()
        return found

    def matcher(self, sound: ExcludedSound, asserted: tuple[str, ...] = ()) -> SoundMatcher:
        """A :class:`SoundMatcher` for ``sound``: its witness sets made once, for many items."""
        key = (sound, asserted)
        found = self._matchers.get(key)
        if found is None:
            found = self._matchers[key] = SoundMatcher(self, sound, asserted)
            if len(self._matchers) > 4096:
                self._matchers.clear()
        return found

    def judge(self, sound: ExcludedSound, item: Iterable[PredicateSymbol | str],
              asserted: Iterable[str] = ()) -> Judgement:
        """The evidence ``item`` (a caption's predicate symbols) gives of ``sound``.

        Args:
            sound: an excluded sound of the query.
            item: the caption's symbols; negated ones (the caption's own exclusions) are no evidence.
            asserted: the query's asserted source symbols (:func:`asserted_sound_symbols`).

        Returns:
            A :class:`Judgement`.
        """
        return self.judge_names(sound, positive_names(item), tuple(asserted))

    def judge_names(self, sound: ExcludedSound, names: frozenset[str],
                    asserted: tuple[str, ...] = ()) -> Judgement:
        """:meth:`judge` over the caption's asserted symbol names (:func:`positive_names`)."""
        return self.matcher(sound, tuple(asserted)).judge(names)

    def judge_formula(
        self, phi: Formula | None, item: Iterable[PredicateSymbol | str],
    ) -> tuple[Judgement, ...]:
        """Every excluded sound of ``phi`` judged against ``item``, in formula order."""
        sounds = self.excluded(phi)
        if not sounds:
            return ()
        assert phi is not None
        names = positive_names(item)
        asserted = asserted_sound_symbols(phi, self)
        return tuple(self.judge_names(sound, names, asserted) for sound in sounds)

    def holds(self, phi: Formula | None, item: Iterable[PredicateSymbol | str]) -> bool:
        """True when ``item`` holds some sound ``phi`` excludes: the item violates the query."""
        return any(j.evidence is Evidence.HOLDS for j in self.judge_formula(phi, item))

    def violation_counter(self, phi: Formula | None) -> Callable[[Iterable[PredicateSymbol | str]], int]:
        """``len(self.violated(phi, item))`` as a function of the item, with the query's excluded
        sounds, asserted symbols and matchers found once (Stage 3 asks it of 50 items a query).

        Example:
            >>> from fortekit.fol import parse_formula
            >>> count = default_check().violation_counter(parse_formula("∃x [Dog(x) ∧ ¬∃y Music(y)]"))
            >>> count(frozenset({"Dog", "Music"})), count(frozenset({"Dog"}))
            (1, 0)
        """
        sounds = self.excluded(phi)
        if not sounds:
            return _no_violation
        assert phi is not None
        asserted = asserted_sound_symbols(phi, self)
        matchers = [self.matcher(sound, asserted) for sound in sounds]

        def count(item: Iterable[PredicateSymbol | str]) -> int:
            names = positive_names(item)
            held: set[str] = set()
            for matcher in matchers:
                if matcher.evidence(names) is Evidence.HOLDS:
                    held.update(matcher.sound.symbols)
            return len(held)

        return count

    def violated(self, phi: Formula | None, item: Iterable[PredicateSymbol | str]) -> tuple[str, ...]:
        """The negated symbols of every excluded sound ``item`` holds (``Hit.violated``)."""
        out: dict[str, None] = {}
        for judgement in self.judge_formula(phi, item):
            if judgement.evidence is Evidence.HOLDS:
                out.update(dict.fromkeys(judgement.sound.symbols))
        return tuple(out)


class SoundMatcher:
    """One excluded sound's test, made once and applied to many items (formula scoring's candidates).

    Args:
        check: the :class:`ViolationCheck` whose table and vocabulary it reads.
        sound: the excluded sound.
        asserted: the query's asserted sound symbols.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> check = default_check()
        >>> matcher = check.matcher(check.sound_of(parse_formula("∃y Crow(y)")), ("Bird",))
        >>> matcher.evidence(frozenset({"Crow", "Cawing"})), matcher.evidence(frozenset({"Bird"}))
        (<Evidence.HOLDS: 'holds'>, <Evidence.NONE: 'none'>)
    """

    __slots__ = ("generic", "nouns", "own_source", "qualities", "sound", "verbs")

    def __init__(self, check: ViolationCheck, sound: ExcludedSound, asserted: tuple[str, ...] = ()) -> None:
        # Only when the asked-for sound entails every part of the excluded one ("a dog, no
        # animals") is a caption symbol explained by it; otherwise the part the two do not share
        # must be witnessed anyway ("water bubbling without water splashing": the splashing).
        core = (*sound.nouns, *sound.verbs)
        explained = asserted if all(any(check.table.entails(a, b) for a in asserted) for b in core) else ()
        self.sound = sound
        self.nouns = tuple((n, check.witnesses(n, explained)) for n in sound.nouns
                           if check.kind(n) not in GENERIC_KINDS)
        self.generic = tuple((n, check.witnesses(n, explained)) for n in sound.nouns
                             if check.kind(n) in GENERIC_KINDS)
        self.verbs = tuple((v, check.witnesses(v, explained)) for v in sound.verbs)
        self.qualities = tuple((a, check.table.below(a)) for a in sound.qualities)
        # The excluded source is the asked-for one, or a part of it ("an engine running without
        # the engine revving", "a truck without an engine idling"): what distinguishes the
        # excluded sound is its event, and the source alone is no evidence of it.
        self.own_source = bool(self.nouns) and all(
            any(check.table.entails(a, n) or check.table.part_of(n, a) for a in asserted)
            for n, _ in self.nouns)

    def evidence(self, names: frozenset[str]) -> Evidence:
        """The evidence ``names`` (a caption's asserted symbols) gives: the fast path of :meth:`judge`."""
        found = self._core(names)
        if found is Evidence.HOLDS and self.qualities and not all(
                not names.isdisjoint(witnesses) for _, witnesses in self.qualities):
            # "no heavy rain" against a caption of rain that says nothing of heaviness
            found = Evidence.SOURCE
        if found is Evidence.SOURCE and self.own_source:
            return Evidence.NONE
        return found

    def _core(self, names: frozenset[str]) -> Evidence:
        nouns_ok = all(not names.isdisjoint(witnesses) for _, witnesses in self.nouns)
        if self.verbs:
            if nouns_ok and all(not names.isdisjoint(witnesses) for _, witnesses in self.verbs):
                return Evidence.HOLDS
            return Evidence.SOURCE if self.nouns and nouns_ok else Evidence.NONE
        if not self.nouns:
            if self.generic and all(not names.isdisjoint(witnesses) for _, witnesses in self.generic):
                return Evidence.HOLDS
            return Evidence.NONE
        return Evidence.HOLDS if nouns_ok else Evidence.NONE

    def judge(self, names: frozenset[str]) -> Judgement:
        """The evidence with its witnesses (the caption symbols that gave it)."""
        evidence = self.evidence(names)
        if evidence is Evidence.NONE:
            return Judgement(self.sound, evidence)
        parts = self.nouns if evidence is Evidence.SOURCE else (
            (*self.nouns, *self.verbs) if (self.nouns or self.verbs) else self.generic)
        witnesses = tuple(dict.fromkeys(min(names & found) for _, found in parts if names & found))
        return Judgement(self.sound, evidence, witnesses)


def asserted_sound_symbols(phi: Formula, check: ViolationCheck | None = None) -> tuple[str, ...]:
    """The asserted source and verb symbols of ``phi`` (outside every negation).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> asserted_sound_symbols(parse_formula("∃x [Bird(x) ∧ Loud(x) ∧ Singing(x) ∧ ¬∃y Crow(y)]"))
        ('Bird', 'Singing')
    """
    check = check or default_check()
    spine: list[tuple[Formula, bool]] = []
    _walk(phi, False, spine)
    names = [part.predicate for part, negated in spine
             if not negated and isinstance(part, Atom) and check.role(part.predicate)]
    return tuple(dict.fromkeys(names))


def _no_violation(item: Iterable[PredicateSymbol | str]) -> int:
    return 0


def positive_names(item: Iterable[PredicateSymbol | str]) -> frozenset[str]:
    """The names of a caption's asserted symbols (strings count as asserted).

    Example:
        >>> from fortekit.fol import parse_formula, predicates
        >>> sorted(positive_names(predicates(parse_formula("∃x [Dog(x) ∧ ¬∃y Music(y)]"))))
        ['Dog']
    """
    if isinstance(item, frozenset) and all(isinstance(s, str) for s in item):
        return item
    return frozenset(s if isinstance(s, str) else s.name for s in item
                     if isinstance(s, str) or not s.negated)


def excluded_sounds(phi: Formula | None) -> tuple[ExcludedSound, ...]:
    """The excluded sounds of ``phi`` with the shipped vocabulary (:meth:`ViolationCheck.excluded`).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> [str(s) for s in excluded_sounds(parse_formula("∃x [Water(x) ∧ Flowing(x) ∧ ¬Dripping(x)]"))]
        ['¬Dripping(x)']
    """
    return default_check().excluded(phi)


@cache
def default_check() -> ViolationCheck:
    """The check with the shipped entailment table and vocabulary, made once."""
    return ViolationCheck()
