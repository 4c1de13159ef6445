"""G(φ): a conjunctive formula back to one English sentence, through the templates.

The formula is read as entities (one per variable, with their nouns, properties,
events and denied predicates), relations between them, and temporal expressions.
Each entity that is not the object of a relation becomes a clause, written with
the most complex template of ``templates.toml`` whose features it has; clauses are
joined by their temporal relations ("while", "followed by") or "and".

Example:
    >>> from fortekit.fol import parse_formula
    >>> verbalise(parse_formula("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]"))
    'a bird chirping during the morning'
    >>> verbalise(parse_formula("Quiet(x) ∧ Person(x) ∧ Speaking(x)"))
    'a person speaking quietly'
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from typing import Any

from fortekit.fol.ast import And, Atom, Formula, Not, Quant, Quantifier, Var
from fortekit.verbalise.lexicon import (
    Lexicon,
    Role,
    Word,
    adverb,
    guess_word,
    indefinite,
    plural,
    templates_data,
)

# Binary predicates that order events in time; they join clauses instead of nesting.
_ORDER_RELATIONS = {"while": "while", "before": "before", "after": "after"}


@dataclass(slots=True)
class _Entity:
    """What the formula says about one variable."""

    variable: str
    nouns: list[str] = field(default_factory=list)
    adjectives: list[str] = field(default_factory=list)
    manners: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    adverbs: list[str] = field(default_factory=list)
    times: list[str] = field(default_factory=list)
    denied: list[Word] = field(default_factory=list)
    members: list[str] = field(default_factory=list)  # ∀x∈X: what X is a group of
    self_order: str | None = None  # While(x, x) / Before(x, x): how its events relate
    plural: bool = False
    is_object: bool = False

    @property
    def properties(self) -> int:
        return len(self.adjectives) + len(self.manners) + len(self.events) + len(self.adverbs)

    @property
    def only_denied(self) -> bool:
        return bool(self.denied) and not (self.nouns or self.properties or self.times)


@dataclass(slots=True)
class _Reading:
    entities: dict[str, _Entity]
    relations: list[tuple[Word, str, str]]
    order: list[tuple[str, str, str]]
    member_of: dict[str, str] = field(default_factory=dict)  # ∀x∈X: x -> X
    excluded: list[Quant] = field(default_factory=list)  # denied clauses ¬∃y [..]

    def merge_members(self) -> None:
        """Say what the members of ∀x∈X do as what the group X does ("a flock of birds chirping")."""
        for member, group in self.member_of.items():
            source = self.entities.pop(member, None)
            if source is None:
                continue
            target = self.entities.setdefault(group, _Entity(group))
            target.members.extend(source.nouns)
            for name in ("adjectives", "manners", "events", "adverbs", "denied"):
                getattr(target, name).extend(getattr(source, name))
            self.relations = [
                (word, group if a == member else a, group if b == member else b)
                for word, a, b in self.relations
            ]
            self.order = [
                (kind, group if a == member else a, group if b == member else b)
                for kind, a, b in self.order
            ]


def _literals(phi: Formula, reading: _Reading, lexicon: Lexicon | None) -> None:
    if isinstance(phi, Quant):
        if phi.domain is not None and isinstance(phi.domain, Var):
            reading.member_of[phi.variable.name] = phi.domain.name
            _literals(phi.body, reading, lexicon)
        else:
            _literals(phi.body, reading, lexicon)
    elif isinstance(phi, And):
        for operand in phi.operands:
            _literals(operand, reading, lexicon)
    elif isinstance(phi, Not) and isinstance(phi.body, Atom):
        _add_atom(phi.body, reading, lexicon, negated=True)
    elif isinstance(phi, Not) and isinstance(phi.body, Quant) and phi.body.quantifier is Quantifier.EXISTS:
        reading.excluded.append(phi.body)  # a denied entity: "without a person talking"
    elif isinstance(phi, Atom):
        _add_atom(phi, reading, lexicon, negated=False)
    else:  # ∨, →, ↔, ⊕, nested ¬: operators never build them; say their atoms
        from fortekit.fol.ast import children

        for child in children(phi):
            _literals(child, reading, lexicon)


def _entity(reading: _Reading, variable: str) -> _Entity:
    entity = reading.entities.get(variable)
    if entity is None:
        entity = reading.entities[variable] = _Entity(variable)
    return entity


def _word(symbol: str, arity: int, lexicon: Lexicon | None) -> Word:
    word = lexicon.word(symbol, arity) if lexicon is not None else None
    return guess_word(symbol, arity) if word is None else word


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text) or "_"


_EVENT_JOIN = {"while": " while ", "before": " and then ", "after": " after "}

_SLOT_OF_ROLE = {
    Role.NOUN: "nouns",
    Role.VERB: "events",
    Role.ADV: "adverbs",
    Role.TIME: "times",
    Role.PREP: "adverbs",
}


def _add_atom(
    atom: Atom, reading: _Reading, lexicon: Lexicon | None, *, negated: bool
) -> None:
    args = atom.args
    if len(args) == 1 and type(args[0]) is Var and not negated:  # the common case, kept short
        word = _word(atom.predicate, 1, lexicon)
        entity = reading.entities.get(args[0].name) or _entity(reading, args[0].name)
        if word.role is Role.ADJ:
            slot = "manners" if word.acoustic else "adjectives"
        else:
            slot = _SLOT_OF_ROLE[word.role]
        getattr(entity, slot).append(word.surface)
        return
    # Constants and function terms are entities too ("Student(rina)"); a proposition
    # is an entity of its own.
    # Variables by name: hashing a str is much cheaper than hashing a Var node.
    variables = [arg.name for arg in atom.args if isinstance(arg, Var)] or [
        f"_{_slug(str(arg))}" for arg in atom.args
    ] or [f"_{_slug(atom.predicate)}"]
    arity = len(atom.args)
    order = _ORDER_RELATIONS.get(atom.predicate.lower()) if arity == 2 else None
    word = _word(atom.predicate, arity, lexicon)
    if len(variables) >= 2:
        source, target = variables[0], variables[1]
        _entity(reading, source)
        if order is not None and not negated:
            if source == target:  # two events of one entity: "squawking, then whistling"
                _entity(reading, source).self_order = order
                return
            _entity(reading, target)
            reading.order.append((order, source, target))
            return
        _entity(reading, target).is_object = True
        if negated:
            _entity(reading, source).denied.append(
                Word(f"{word.surface} {_phrase(_entity(reading, target))}", Role.ADV)
            )
        else:
            reading.relations.append((word, source, target))
        return
    entity = _entity(reading, variables[0])
    if negated:
        entity.denied.append(word)
        return
    if word.role is Role.ADJ:  # acoustic adjectives become manner adverbs after an event
        slot = "manners" if word.acoustic else "adjectives"
    else:
        slot = _SLOT_OF_ROLE[word.role]
    getattr(entity, slot).append(word.surface)


def _phrase(entity: _Entity, *, bare: bool = False, deny: bool = False) -> str:
    """The entity's noun phrase: determiner, adjectives, head, then events and manners.

    With ``deny``, an entity whose noun is denied is written "no <noun>" (its other
    words stay positive), as the caption parser reads it back.
    """
    connectives = templates_data()["connectives"]
    if deny and entity.denied:
        return _denied_phrase(entity)
    head = " ".join(entity.nouns or entity.times) or connectives["generic_head"]
    if entity.plural:
        head = plural(head)
    if entity.members and not entity.nouns:
        head = plural(" and ".join(dict.fromkeys(entity.members)))
    elif entity.members:
        head = connectives["member_of"].format(
            collective=head, members=plural(" and ".join(dict.fromkeys(entity.members)))
        )
    if bare:
        return head if entity.plural else indefinite(head)
    manners_first = entity.manners if not entity.events else []
    modifiers = " ".join([*manners_first, *entity.adjectives])
    noun_phrase = f"{modifiers} {head}".strip()
    noun_phrase = noun_phrase if entity.plural else indefinite(noun_phrase)
    after = []
    if entity.events:
        join = _EVENT_JOIN.get(entity.self_order or "", " and ") if len(entity.events) > 1 else " and "
        after.append(join.join(entity.events))
        after.extend(adverb(manner) for manner in entity.manners)
    after.extend(entity.adverbs)
    if entity.nouns and entity.times:  # a time said of an entity: "... during the end"
        after.append(connectives["time"].format(words=" and ".join(entity.times)))
    return " ".join([noun_phrase, *after])


def _denied_phrase(entity: _Entity) -> str:
    """An object with denied words: "no discernible pattern", "a clip but not loud"."""
    nouns = [w.surface for w in entity.denied if w.role in (Role.NOUN, Role.TIME)]
    others = [w.surface for w in entity.denied if w.role not in (Role.NOUN, Role.TIME)]
    if nouns and not entity.nouns:
        modifiers = " ".join([*entity.manners, *entity.adjectives])
        after = [" and ".join(entity.events), *entity.adverbs] if entity.events else list(entity.adverbs)
        text = " ".join(part for part in ["no", modifiers, " and ".join(nouns), *after] if part)
    else:
        text = _phrase(_Entity(entity.variable, entity.nouns, entity.adjectives, entity.manners,
                               entity.events, entity.adverbs, entity.times))
        text += "".join(f", but no {noun}" for noun in nouns)
    return text + "".join(f", but not {word}" for word in others)


def _negations(entity: _Entity, denied_entities: list[_Entity]) -> str:
    connectives = templates_data()["connectives"]
    parts = []
    for word in entity.denied:
        words = indefinite(word.surface) if word.role is Role.NOUN else word.surface
        parts.append(connectives["negated_property"].format(words=words))
    for other in denied_entities:
        for word in other.denied:
            if word.role is Role.VERB:  # an event that does not happen: "but not splashing"
                parts.append(connectives["negated_property"].format(words=word.surface))
                continue
            phrase = indefinite(word.surface) if word.role is Role.NOUN else word.surface
            parts.append(connectives["negated_entity"].format(phrase=phrase))
    return ", ".join(parts)


@cache
def _templates() -> tuple[dict[str, Any], ...]:
    return tuple(templates_data()["template"])


def _features(entity: _Entity, relations: int, negations: bool, time: bool) -> set[str]:
    features = set()
    if time:
        features.add("time")
    if entity.properties >= 1:
        features.add("property")
    if entity.properties >= 2:
        features.add("properties")
    if negations:
        features.add("negation")
    if relations:
        features.add("relation")
    return features


class _Renderer:
    """Writes clauses; every entity's relations are written once, cycles end in a bare phrase."""

    def __init__(self, reading: _Reading) -> None:
        self.reading = reading
        self.visited: set[str] = set()
        self.templates: list[int] = []  # the template of each clause, for explanations
        self.outgoing: dict[str, list[tuple[Word, str]]] = {}
        for word, source, target in reading.relations:
            self.outgoing.setdefault(source, []).append((word, target))

    def relations(self, entity: _Entity) -> str:
        """The entity's relations, each object with its own relations nested once."""
        parts = []
        for word, target in self.outgoing.get(entity.variable, []):
            parts.append(f"{word.surface} {self.object_phrase(self.reading.entities[target])}")
        return ", ".join(parts)

    def object_phrase(self, entity: _Entity) -> str:
        if entity.variable in self.visited:
            return _phrase(entity, bare=True)
        self.visited.add(entity.variable)
        nested = self.relations(entity)
        return f"{_phrase(entity, deny=True)} {nested}".strip()

    def clause(
        self, entity: _Entity, denied: list[_Entity], time: str | None, excluded: tuple[str, ...] = ()
    ) -> tuple[str, bool]:
        """One clause by the first template whose features the entity has; and whether it used time."""
        self.visited.add(entity.variable)
        relations = self.relations(entity)
        negations = ", ".join(part for part in (_negations(entity, denied), *excluded) if part)
        features = _features(entity, bool(relations), bool(negations), time is not None)
        template = next(t for t in _templates() if set(t["requires"]) <= features)
        self.templates.append(int(template["id"]))
        pattern = template["text"]
        # A template never loses what the formula says: slots it has no place for
        # are appended in the paper's order (relations, then negations).
        if relations and "{relations}" not in pattern:
            pattern += " {relations}"
        if negations and "{negations}" not in pattern:
            pattern += ", {negations}"
        text = pattern.format(
            entity=_phrase(entity),
            bare=_phrase(entity, bare=True),
            relations=relations,
            negations=negations,
            time=time or "",
        )
        return text.replace(" ,", ",").strip(" ,"), "{time}" in pattern


def _sentences(
    reading: _Reading, renderer: _Renderer, excluded: tuple[str, ...] = ()
) -> Iterator[tuple[str, str]]:
    entities = list(reading.entities.values())
    times = [e for e in entities if e.times and not e.nouns and not e.properties]
    time_text = None
    if times:
        words = " and ".join(" ".join(t.times) for t in times)
        time_text = templates_data()["connectives"]["time"].format(words=words).removeprefix("during ")
    objects = {target for _, source, target in reading.relations if source != target}
    denied = [e for e in entities if e.only_denied and e.variable not in objects]
    others = [e for e in entities if e not in times and e not in denied]
    mains = [e for e in others if e.variable not in objects] or others[:1]
    if not mains and (denied or excluded):  # only denials: "without rain" (template 8's second form)
        renderer.templates.append(8)
        first = denied[0].variable if denied else "_"
        text = ", ".join(part for part in (_negations(_Entity(first), denied), *excluded) if part)
        yield first, text
        return
    if not mains:  # only a time, or nothing at all: still say every predicate
        renderer.templates.append(9)
        sound = indefinite(templates_data()["connectives"]["generic_head"])
        yield "_", f"{sound} during {time_text}" if time_text else sound
        return
    for index, entity in enumerate(mains):
        text, used_time = renderer.clause(
            entity, denied if index == 0 else [], time_text, excluded if index == 0 else ()
        )
        if index == 0 and time_text and not used_time:
            text = f"{text} during {time_text}"
        yield entity.variable, text
    for entity in others:  # objects only reachable through a cycle
        if entity.variable not in renderer.visited:
            yield entity.variable, renderer.clause(entity, [], None)[0]


def _join(clauses: list[tuple[str, str]], order: list[tuple[str, str, str]]) -> str:
    """Join clauses left to right by the temporal relation between neighbours, else "and"."""
    connectives = templates_data()["connectives"]
    happens_first = {(a, b) for kind, a, b in order if kind == "before"}
    happens_first |= {(b, a) for kind, a, b in order if kind == "after"}
    together = {frozenset((a, b)) for kind, a, b in order if kind == "while"}
    text = clauses[0][1] if clauses else ""
    for (previous, _), (variable, clause) in pairwise(clauses):
        if (previous, variable) in happens_first:
            key = "before"
        elif (variable, previous) in happens_first:
            key = "after"
        elif frozenset((previous, variable)) in together:
            key = "while"
        else:
            key = "and"
        text = connectives[key].format(a=text, b=clause)
    return text


def _render(phi: Formula, lexicon: Lexicon | None) -> tuple[str, list[int]]:
    if lexicon is None:
        from fortekit.verbalise.vocab_lexicon import default_lexicon

        lexicon = default_lexicon()
    reading = _Reading({}, [], [])
    _literals(phi, reading, lexicon)
    return _render_reading(reading, lexicon)


def _render_reading(reading: _Reading, lexicon: Lexicon) -> tuple[str, list[int]]:
    phrases = [_excluded_clause(clause, reading, lexicon) for clause in reading.excluded]
    phrases = [phrase for phrase in phrases if phrase]
    excluded: tuple[str, ...] = ()
    if phrases:  # "without wind or rain": one "without", read back as one clause each
        said = templates_data()["connectives"]["negated_entity"].format(phrase=" or ".join(phrases))
        if not any(e.nouns or e.properties for e in reading.entities.values()):
            said = "no " + " or no ".join(_bare(phrase) for phrase in phrases)  # "no bird chirping"
        excluded = (said,)
    reading.merge_members()
    renderer = _Renderer(reading)
    clauses = list(_sentences(reading, renderer, excluded))
    return " ".join(_join(clauses, reading.order).split()), renderer.templates


_NEGATIVE_PRONOUNS = {"something": "nothing", "thing": "nothing", "someone": "nobody", "somebody": "nobody"}


def _bare(phrase: str) -> str:
    """A noun phrase without its indefinite article ("a bird chirping" -> "bird chirping")."""
    for article in ("a ", "an "):
        if phrase.startswith(article):
            return phrase[len(article) :]
    return phrase


def _excluded_clause(clause: Quant, outer: _Reading, lexicon: Lexicon) -> str:
    """A denied clause ``¬∃y [Person(y) ∧ Talking(y)]`` as "without a person talking".

    A relation from an entity outside the clause ("detecting nothing": ``¬∃y
    [Detect(x, y) ∧ Something(y)]``) is said of that entity as "detecting nothing",
    "in no room", as the caption parser reads it back.
    """
    bound: list[str] = []
    body: Formula = clause
    while isinstance(body, Quant) and body.quantifier is Quantifier.EXISTS:
        bound.append(body.variable.name)
        body = body.body
    conjuncts = body.operands if isinstance(body, And) else (body,)
    inner: list[Formula] = []
    crossing: list[Atom] = []
    for conjunct in conjuncts:
        names = [a.name for a in conjunct.args if isinstance(a, Var)] if isinstance(conjunct, Atom) else []
        if isinstance(conjunct, Atom) and len(names) == 2 and (names[0] in bound) != (names[1] in bound):
            crossing.append(conjunct)
        else:
            inner.append(conjunct)
    reading = _Reading({}, [], [])
    for conjunct in inner:
        _literals(conjunct, reading, lexicon)
    for atom in crossing:
        source, target = (arg.name for arg in atom.args if isinstance(arg, Var))
        if source in bound:  # "nobody standing in it": the outside entity named again inside
            _literals(atom, reading, lexicon)
            known = outer.entities.get(target)
            _entity(reading, target).nouns[:] = known.nouns if known is not None else []
            continue
        outside, inside = source, target
        entity = reading.entities.pop(inside, _Entity(inside))
        head = " ".join(entity.nouns) or "thing"
        phrase = _NEGATIVE_PRONOUNS.get(head, f"no {head}")
        word = _word(atom.predicate, 2, lexicon)
        slot = "events" if word.role is Role.VERB else "adverbs"
        getattr(_entity(outer, outside), slot).append(f"{word.surface} {phrase}")
    if not reading.entities:
        return ""
    return _render_reading(reading, lexicon)[0]


def verbalise(phi: Formula, lexicon: Lexicon | None = None) -> str:
    """Write a formula as an English sentence (G(φ)).

    Args:
        phi: a formula, typically φ0 or a refinement built by the operators
            (an ∃-prefix over a conjunction of literals). Other connectives are
            written as the conjunction of their atoms.
        lexicon: how to write predicate symbols; by default V_audio's surface forms
            (:func:`fortekit.verbalise.default_lexicon`).

    Returns:
        One lower-case sentence without final punctuation.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> verbalise(parse_formula("Wind(x) ∧ Blowing(x) ∧ ¬Rain(y)"))
        'wind blowing, without rain'
    """
    return _render(phi, lexicon)[0]


def templates_used(phi: Formula, lexicon: Lexicon | None = None) -> list[int]:
    """The template number (1-9, the paper's table) of each clause :func:`verbalise` writes.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> templates_used(parse_formula("Dog(x) ∧ Barking(x) ∧ ¬Loud(x)"))
        [4]
    """
    return _render(phi, lexicon)[1]
