"""G(φ): a conjunctive formula back to one English sentence, through the templates.

The formula is read as entities (one per variable, with their nouns, properties,
events and denied predicates), relations between them, and temporal expressions
(:mod:`fortekit.verbalise.reading`). Each entity that is not the object of a
relation becomes a clause, written with the most complex template of
``templates.toml`` whose features it has; clauses are joined by their temporal
relations ("while", "followed by") or "and".

Example:
    >>> from fortekit.fol import parse_formula
    >>> verbalise(parse_formula("∃x ∃t [Bird(x) ∧ Chirping(x) ∧ Morning(t)]"))
    'a bird chirping during the morning'
    >>> verbalise(parse_formula("Quiet(x) ∧ Person(x) ∧ Speaking(x)"))
    'a person speaking quietly'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from itertools import pairwise
from typing import Any, get_args

from fortekit.errors import Errors, FormulaTypeError
from fortekit.fol.ast import And, Atom, Formula, Quant, Quantifier, Var
from fortekit.verbalise.lexicon import Lexicon, Role, Word, indefinite, templates_data
from fortekit.verbalise.reading import (  # re-exported: search/formula/clauses.py uses _word
    _add_atom,
    _denied_phrase,
    _Entity,
    _entity,
    _literals,
    _phrase,
    _Reading,
    _word,
    read_formula,
)

__all__ = [
    "_Entity",
    "_Reading",
    "_add_atom",
    "_denied_phrase",
    "_entity",
    "_literals",
    "_phrase",
    "_word",
    "read_formula",
    "templates_used",
    "verbalise",
]


def _negations(entity: _Entity, denied_entities: list[_Entity]) -> str:
    connectives = templates_data()["connectives"]
    parts = []
    copula = templates_data()["negation"]["copula_adjectives"]
    for word in entity.denied:
        words = indefinite(word.surface) if word.role is Role.NOUN else word.surface
        copular = word.role is Role.ADJ and word.surface in copula
        key = "negated_with_copula" if copular else "negated_property"
        parts.append(connectives[key].format(words=words))
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

    def __init__(self, reading: _Reading, *, inner: bool = False) -> None:
        self.reading = reading
        self.visited: set[str] = set()
        self.templates: list[int] = []  # the template of each clause, for explanations
        # Inside a denied clause, relations follow each other without a comma, so that
        # the caption parser keeps them in the clause ("without a thing stopping wind from it").
        self.relation_join = " " if inner else ", "
        self.outgoing: dict[str, list[tuple[Word, str]]] = {}
        for word, source, target in reading.relations:
            self.outgoing.setdefault(source, []).append((word, target))

    def relations(self, entity: _Entity) -> str:
        """The entity's relations, each object with its own relations nested once."""
        parts = []
        prefixes = self.reading.relation_prefix
        for word, target in self.outgoing.get(entity.variable, []):
            prefix = prefixes.get((entity.variable, word.surface, target)) if prefixes else None
            said = f"{word.surface} {self.object_phrase(self.reading.entities[target])}"
            parts.append(f"{prefix} {said}" if prefix else said)
        return self.relation_join.join(parts)

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


def _ordered_next_to_each_other(
    clauses: list[tuple[str, str]], order: list[tuple[str, str, str]]
) -> list[tuple[str, str]]:
    """The clauses with each temporally related pair side by side, where the order allows.

    Only neighbours are joined by their temporal connective, so "a bird squawking and a
    crow cawing and wind blowing" would lose ``While(bird, wind)``; the wind's clause is
    moved up to follow the bird's ("a bird squawking while there is wind blowing and a
    crow cawing"). Clauses with no order keep their place.
    """
    if len(clauses) < 3 or not order:
        return clauses
    partners: dict[str, list[str]] = {}
    for _kind, a, b in order:
        partners.setdefault(a, []).append(b)
        partners.setdefault(b, []).append(a)
    index = {variable: k for k, (variable, _) in enumerate(clauses)}
    placed: list[int] = []
    done: set[int] = set()
    for k in range(len(clauses)):
        current = k
        while current not in done:
            placed.append(current)
            done.add(current)
            following = [index[p] for p in partners.get(clauses[current][0], ()) if p in index]
            current = next((f for f in following if f not in done), current)
    return [clauses[k] for k in placed]


def _join(clauses: list[tuple[str, str]], order: list[tuple[str, str, str]]) -> str:
    """Join clauses left to right by the temporal relation between neighbours, else "and"."""
    clauses = _ordered_next_to_each_other(clauses, order)
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


_FORMULA_TYPES = get_args(Formula)


def _check_formula(phi: object, function: str) -> None:
    if not isinstance(phi, _FORMULA_TYPES):
        hint = (f" Parse the text first: {function}(parse_formula(text))." if isinstance(phi, str)
                else " Pass the formula itself, e.g. a ParseResult's .formula.")
        raise FormulaTypeError(Errors.E009.format(function=function, type_name=type(phi).__name__,
                                                  hint=hint))


def _render(phi: Formula, lexicon: Lexicon | None, function: str) -> tuple[str, list[int]]:
    _check_formula(phi, function)
    if lexicon is None:
        from fortekit.verbalise.vocab_lexicon import default_lexicon

        lexicon = default_lexicon()
    return _render_reading(read_formula(phi, lexicon), lexicon)


def _render_reading(reading: _Reading, lexicon: Lexicon, *, inner: bool = False) -> tuple[str, list[int]]:
    phrases = [_excluded_clause(clause, reading, lexicon) for clause in reading.excluded]
    phrases = [phrase for phrase in phrases if phrase]
    excluded: tuple[str, ...] = ()
    if phrases:  # "without wind or rain": one "without", read back as one clause each
        # "without any large sound sawing": a nameless denied entity is "any sound"; after
        # "a large sound", the parser reads its verb as a clause of its own
        anys = " or ".join(_any_sound(phrase) for phrase in phrases)
        said = templates_data()["connectives"]["negated_entity"].format(phrase=anys)
        if not any(e.nouns or e.properties for e in reading.entities.values()):
            said = "no " + " or no ".join(_bare(phrase) for phrase in phrases)  # "no bird chirping"
        excluded = (said,)
    reading.merge_members()
    renderer = _Renderer(reading, inner=inner)
    clauses = list(_sentences(reading, renderer, excluded))
    return " ".join(_join(clauses, reading.order).split()), renderer.templates


_ANY = r"^an? (?=(?:[\w-]+ )*?{head}\b)"  # 'a' before the generic head, its adjectives between


def _any_sound(phrase: str) -> str:
    """'a large sound sawing' -> 'any large sound sawing' (only the generic head takes 'any')."""
    head = templates_data()["connectives"]["generic_head"]
    return re.sub(_ANY.format(head=re.escape(head)), "any ", phrase, count=1)
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
    "not in any room", as the caption parser reads it back.
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
        said = " ".join([*entity.adjectives, *entity.manners])  # "onto no heavy rainfall"
        pronoun = _NEGATIVE_PRONOUNS.get(head)
        word = _word(atom.predicate, 2, lexicon)
        noun_phrase = f"{said} {head}" if said else head
        if pronoun is not None:  # "by nothing else alone": 'else' keeps the adjective on 'nothing'
            written = f"{word.surface} {pronoun} else {said}" if said else f"{word.surface} {pronoun}"
        elif word.role is Role.VERB:  # "detecting no signal": the verb's object is denied
            written = f"{word.surface} no {noun_phrase}"
        else:
            # "not in any room": the particle before the preposition denies the relation
            # with its object; "in no room" would deny the room alone, and Π reads it so
            written = f"not {word.surface} any {noun_phrase}"
        slot = "events" if word.role is Role.VERB else "adverbs"
        getattr(_entity(outer, outside), slot).append(written)
    reading.resolve_events()
    if not reading.entities:
        return ""
    for entity in reading.entities.values():
        if entity.times and not entity.nouns and not entity.properties:
            # "without a break": a temporal noun denied on its own is a thing, not a time
            entity.nouns.extend(entity.times)
            entity.times.clear()
    sources = {source for word, source, _ in reading.relations if word.role is Role.PREP}
    for entity in reading.entities.values():
        if not entity.events and (entity.adverbs or entity.variable in sources):
            # "without noise that is in the background", "without water that is in a
            # container": a bare "in ..." after the noun is read as said of the subject
            entity.events.append("that is")
    return _render_reading(reading, lexicon, inner=True)[0]


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

    Raises:
        FormulaTypeError: (a ``TypeError``) ``phi`` is not a formula, e.g. None or a str (E009).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> verbalise(parse_formula("Wind(x) ∧ Blowing(x) ∧ ¬Rain(y)"))
        'wind blowing, without rain'
        >>> verbalise(None)
        Traceback (most recent call last):
        ...
        fortekit.errors.FormulaTypeError: [E009] verbalise() takes a formula (an Atom, Not, And, Quant ... of fortekit.fol), not NoneType. Pass the formula itself, e.g. a ParseResult's .formula. (See docs/errors.md#e009.)
    """  # noqa: E501
    return _render(phi, lexicon, "verbalise")[0]


def templates_used(phi: Formula, lexicon: Lexicon | None = None) -> list[int]:
    """The template number (1-9, the paper's table) of each clause :func:`verbalise` writes.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> templates_used(parse_formula("Dog(x) ∧ Barking(x) ∧ ¬Loud(x)"))
        [4]
    """
    return _render(phi, lexicon, "templates_used")[1]
