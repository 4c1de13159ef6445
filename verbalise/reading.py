"""Reading a formula as entities: what it says of each variable, and their noun phrases.

A conjunctive formula is read as entities (one per variable, with their nouns,
properties, events and denied predicates), relations between them, temporal
orderings and denied clauses ``¬∃y [..]``; :mod:`fortekit.verbalise.realise`
writes the sentence from that reading.

Example:
    >>> from fortekit.fol import parse_formula
    >>> reading = read_formula(parse_formula("Bird(x) ∧ Chirping(x) ∧ On(x, y) ∧ Roof(y)"))
    >>> [(e.variable, e.nouns, e.events) for e in reading.entities.values()]
    [('x', ['bird'], ['chirping']), ('y', ['roof'], [])]
    >>> _phrase(reading.entities["x"])
    'a bird chirping'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fortekit.fol.ast import And, Atom, Formula, Not, Quant, Quantifier, Var
from fortekit.fol.events import EVENT_VARIABLE, is_event_predicate
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
    # Event terms (fortekit.fol.events): each event's entity and word, and the orders
    # between events, resolved into entity orders by resolve_events().
    event_of: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    event_orders: list[tuple[str, str, str]] = field(default_factory=list)
    # A relation that is the later of two ordered events: (source, word, target) -> "and then"
    relation_prefix: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def resolve_events(self) -> None:
        """Say an order between two events of one entity as the order of its events
        ("a machine pumping and then slowing"), and one between events of two entities as
        an order between the entities."""
        for kind, first, second in self.event_orders:
            a, word_a, target_a = self.event_of.get(first, (first, "", None))
            b, word_b, target_b = self.event_of.get(second, (second, "", None))
            if a != b:
                _entity(self, a)
                _entity(self, b)
                self.order.append((kind, a, b))
                continue
            entity = _entity(self, a)
            if kind == "after":
                word_a, word_b, target_a, target_b = word_b, word_a, target_b, target_a
            if target_b is not None:  # "dripping from a gutter and then hitting metal"
                self.relation_prefix.setdefault((a, word_b, target_b), _EVENT_JOIN[kind].strip())
                continue
            entity.self_order = kind
            events = entity.events
            if word_a in events and word_b in events and events.index(word_a) > events.index(word_b):
                events.remove(word_a)
                events.insert(events.index(word_b), word_a)
        self.event_orders.clear()

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
    if len(args) >= 2 and type(args[0]) is Var and EVENT_VARIABLE.match(args[0].name):
        if is_event_predicate(atom):  # Pumping(e1, x): the event Pumping of x
            said = Atom(atom.predicate, args[1:])
            _add_atom(said, reading, lexicon, negated=negated)
            participant = args[1]
            name = participant.name if isinstance(participant, Var) else f"_{_slug(str(participant))}"
            surface = _word(atom.predicate, len(args) - 1, lexicon).surface
            obj = args[2] if len(args) == 3 else None
            target_name = None if obj is None else (
                obj.name if isinstance(obj, Var) else f"_{_slug(str(obj))}")
            reading.event_of.setdefault(args[0].name, (name, surface, target_name))
            return
        kind = _ORDER_RELATIONS.get(atom.predicate.lower()) if len(args) == 2 else None
        if kind is not None and not negated and type(args[1]) is Var:  # Before(e1, e2)
            reading.event_orders.append((kind, args[0].name, args[1].name))
            return
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


def read_formula(phi: Formula, lexicon: Lexicon | None = None) -> _Reading:
    """The entities, relations, orderings and denied clauses a formula says.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> reading = read_formula(parse_formula("Wind(x) ∧ ¬∃y [Rain(y) ∧ Falling(y)]"))
        >>> list(reading.entities), len(reading.excluded)
        (['x'], 1)
    """
    reading = _Reading({}, [], [])
    _literals(phi, reading, lexicon)
    reading.resolve_events()
    return reading
