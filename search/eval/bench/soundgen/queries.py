"""Queries of a generated split and their relevance judgements, decided from the scenes' truth.

Five kinds, as ``metadata.kind``:

* ``plain``: one class ("a dog barking"); relevant: every clip where it sounds.
* ``attribute``: a class with one attribute ("a loud dog barking"); relevant: a clip with such an event.
* ``and``: two classes; relevant: both sound.
* ``without``: A without B; relevant: A sounds and B does not (declared absent or not).
* ``order``: A, then B; relevant: an A event ends before a B event starts (a ``then`` clip).

Pair queries put the held-out pairs first (``metadata.heldout``), then other pairs in a seeded
order, at most ``max_queries_per_kind`` a kind; a query needs at least one relevant clip.

Example:
    >>> from fortekit.search.eval.bench.soundgen.scene import Event, Scene
    >>> dog = Scene(0, "test", "single", (Event("dog", "", ("loud",), 0.1, 1.0, 1),), None, 2, 3)
    >>> queries = build_queries([dog], seed=0)
    >>> [(q.kind, q.relevant) for q in queries][:2]
    [('plain', ('clip000000',)), ('attribute', ('clip000000',))]
    >>> sum(q.kind == "without" for q in queries)  # "a dog without X", for each other class X
    14
    >>> queries[1].formula
    '∃x [Loud(x) ∧ Dog(x) ∧ Barking(x)]'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import permutations

import numpy as np

from fortekit.fol.ast import Atom, Formula, Var, conjoin
from fortekit.search.eval.bench.soundgen.captions import absence, event_atoms, exists
from fortekit.search.eval.bench.soundgen.classes import ATTRIBUTES, CLASSES
from fortekit.search.eval.bench.soundgen.scene import HELD_OUT_PAIRS, Scene
from fortekit.search.eval.bench.soundgen.templates import Templates, load_templates

__all__ = ["QUERY_KINDS", "Query", "build_queries"]

QUERY_KINDS = ("plain", "attribute", "and", "without", "order")


@dataclass(frozen=True)
class Query:
    """One query of a split.

    Attributes:
        text: the query.
        kind: one of :data:`QUERY_KINDS`.
        formula: its gold formula (Unicode notation).
        relevant: the ids of its relevant clips.
        metadata: ``a``, ``b`` (classes), ``attribute``, ``heldout`` as they apply.
    """

    text: str
    kind: str
    formula: str
    relevant: tuple[str, ...]
    metadata: dict[str, object] = field(default_factory=dict)


def _variant(cls: str) -> str:
    return "any" if CLASSES[cls].variants else ""


def _atoms(cls: str, variable: str, attributes: Sequence[str] = ()) -> list[Formula]:
    return event_atoms(cls, "", attributes, variable)


def _slots(rng: np.random.Generator, templates: Templates, a: str, b: str | None = None,
           attributes: Sequence[str] = ()) -> dict[str, str]:
    from fortekit.search.eval.bench.soundgen.captions import phrase

    slots = {"A": phrase(a, _variant(a), attributes, "np", rng, templates),
             "a": phrase(a, _variant(a), attributes, "clause", rng, templates)}
    if b is not None:
        slots["B"] = phrase(b, _variant(b), (), "np", rng, templates)
        slots["b"] = phrase(b, _variant(b), (), "clause", rng, templates)
        names = templates.absent[b]
        slots["N"] = names[int(rng.integers(len(names)))]
    return slots


def _text(rng: np.random.Generator, templates: Templates, kind: str, slots: dict[str, str]) -> str:
    options = templates.queries[kind]
    return options[int(rng.integers(len(options)))].format(**slots)


def _sounds(scene: Scene, a: str) -> bool:
    return a in scene.classes


def _sounds_as(scene: Scene, a: str, attribute: str) -> bool:
    return any(e.cls == a and attribute in e.attributes for e in scene.events)


def _both(scene: Scene, a: str, b: str) -> bool:
    return a in scene.classes and b in scene.classes


def _without(scene: Scene, a: str, b: str) -> bool:
    return a in scene.classes and b not in scene.classes


def _bind(test: Callable[[Scene, str, str], bool], a: str, b: str) -> Callable[[Scene], bool]:
    def bound(scene: Scene) -> bool:
        return test(scene, a, b)

    return bound


def _before(scene: Scene, a: str, b: str) -> bool:
    return any(rel == "Before" and scene.events[i].cls == a and scene.events[j].cls == b
               for rel, i, j in scene.relations)


def build_queries(scenes: Sequence[Scene], *, seed: int, max_queries_per_kind: int = 60,
                  classes: Sequence[str] | None = None, templates: Templates | None = None) -> list[Query]:
    """The queries of a split, in kind order, each with its relevant clips.

    Args:
        scenes: the split's scenes.
        seed: the seed of the wording and of the order of non-held-out pairs.
        max_queries_per_kind: the most "and", "without" and "order" queries.
        classes: the classes in use (default: all).
        templates: the wording (default: the shipped data file).
    """
    templates = templates or load_templates()
    classes = tuple(classes or CLASSES)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 7919]))
    held = {frozenset(pair) for pair in HELD_OUT_PAIRS}
    queries: list[Query] = []

    def add(kind: str, test: Callable[[Scene], bool], formula: Formula, slots: dict[str, str],
            metadata: dict[str, object]) -> bool:
        relevant = tuple(scene.clip_id for scene in scenes if test(scene))
        if not relevant:
            return False
        queries.append(Query(_text(rng, templates, kind, slots), kind, str(formula), relevant,
                             {"kind": kind, **metadata}))
        return True

    for a in classes:
        add("plain", partial(_sounds, a=a), exists("x", _conj(_atoms(a, "x"))),
            _slots(rng, templates, a), {"a": a})
    for a in classes:
        for name, spec in ATTRIBUTES.items():
            if spec.dimension not in CLASSES[a].dimensions:
                continue
            add("attribute",
                partial(_sounds_as, a=a, attribute=name),
                exists("x", _conj(_atoms(a, "x", (name,)))), _slots(rng, templates, a, attributes=(name,)),
                {"a": a, "attribute": name})
    ordered = list(permutations(classes, 2))
    order = [int(i) for i in rng.permutation(len(ordered))]
    ranked = sorted((ordered[i] for i in order), key=lambda pair: frozenset(pair) not in held)
    pair_kinds: dict[str, tuple[Callable[[Scene, str, str], bool], Callable[[str, str], Formula]]] = {
        "and": (_both,
                lambda a, b: exists("xy", _conj(_atoms(a, "x") + _atoms(b, "y")))),
        "without": (_without,
                    lambda a, b: exists("x", _conj([*_atoms(a, "x"), absence(CLASSES[b].absence_symbol)]))),
        "order": (_before, lambda a, b: exists("xy", _conj(
            [*_atoms(a, "x"), Atom("Before", (Var("x"), Var("y"))), *_atoms(b, "y")]))),
    }
    for kind, (test, formula) in pair_kinds.items():
        count = 0
        seen: set[frozenset[str]] = set()
        for a, b in ranked:
            if count >= max_queries_per_kind:
                break
            if kind == "and" and frozenset((a, b)) in seen:
                continue
            seen.add(frozenset((a, b)))
            metadata = {"a": a, "b": b, "heldout": frozenset((a, b)) in held}
            if add(kind, _bind(test, a, b), formula(a, b),
                   _slots(rng, templates, a, b), metadata):
                count += 1
    return queries


def _conj(parts: list[Formula]) -> Formula:
    return conjoin(*parts)
