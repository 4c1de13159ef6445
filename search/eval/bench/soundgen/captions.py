"""Captions and gold formulas of generated clips, from the templates of ``templates.toml``.

Every attribute of an event is said exactly once, by an adjective, an adverb or (distance) a
locative phrase, chosen at random; each caption of a clip draws its own template and wording.
The gold formula is built as an AST of :mod:`fortekit.fol` in the caption parser's
conventions (``∃x ∃y [Dog(x) ∧ Barking(x) ∧ Before(x, y) ∧ Bell(y) ∧ Ringing(y)]``, absences
``¬∃w Speech(w)``), so its printed form parses back with :func:`fortekit.fol.parse_formula`.

Example:
    >>> import numpy as np
    >>> from fortekit.search.eval.bench.soundgen.scene import Event, Scene
    >>> bark = Event("dog", "", ("loud",), 0.2, 1.0, seed=1)
    >>> bell = Event("bell", "", (), 2.5, 1.0, seed=2)
    >>> scene = Scene(0, "train", "then", (bark, bell), "speech", 3, 4, (("Before", 0, 1),))
    >>> print(scene_formula(scene))
    ∃x ∃y [Loud(x) ∧ Dog(x) ∧ Barking(x) ∧ Before(x, y) ∧ Bell(y) ∧ Ringing(y) ∧ ¬∃w Speech(w)]
    >>> phrase("dog", "", ("far",), "np", np.random.default_rng(1))
    'a dog barking far away'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from fortekit.fol.ast import Atom, Formula, Not, Quant, Quantifier, Var, conjoin
from fortekit.search.eval.bench.soundgen.classes import ATTRIBUTES, CLASSES
from fortekit.search.eval.bench.soundgen.scene import Scene
from fortekit.search.eval.bench.soundgen.templates import Templates, load_templates

__all__ = [
    "CAPTIONS_PER_CLIP", "absence", "event_atoms", "exists", "phrase", "scene_captions", "scene_formula",
]

#: Captions per clip (Clotho's five).
CAPTIONS_PER_CLIP = 5
_VARIABLES = ("x", "y", "z")
_ARTICLE = re.compile(r"\ba (?=[aeiou])")


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


def _realise(template: str, attributes: Sequence[str], rng: np.random.Generator,
             templates: Templates, cls: str = "") -> str | None:
    """Fill {det}, {adj}, {adv} of one phrase, or None when an attribute cannot be said in it."""
    adjectives: list[str] = []
    adverbs: list[str] = []
    locatives: list[str] = []
    for name in attributes:
        words = templates.attributes[name]
        ways = []
        if "{adj}" in template and cls not in words.adverb_only:
            ways.append("adj")
        if "{adv}" in template and words.adverbs:
            ways.append("adv")
        if words.locatives:
            ways.append("loc")
        if not ways:
            return None
        way = _pick(rng, ways)
        if way == "adj":
            adjectives.append(_pick(rng, words.adjectives))
        elif way == "adv":
            adverbs.append(_pick(rng, words.adverbs))
        else:
            locatives.append(_pick(rng, words.locatives))
    text = template.format(det="a ", adj="".join(f"{word} " for word in adjectives),
                           adv=(" " + " and ".join(adverbs)) if adverbs else "")
    text += "".join(f" {place}" for place in locatives)
    return _ARTICLE.sub("an ", re.sub(r"\s+", " ", text).strip())


def phrase(cls: str, variant: str, attributes: Sequence[str], kind: str, rng: np.random.Generator,
           templates: Templates | None = None) -> str:
    """An event's noun phrase (``kind="np"``: "a dog barking") or clause (``"clause"``: "a dog barks").

    Example:
        >>> import numpy as np
        >>> phrase("rain", "", ("quiet",), "clause", np.random.default_rng(0))
        'rain falls softly'
    """
    templates = templates or load_templates()
    forms = templates.forms[cls, variant]
    slot = 0 if kind == "np" else 1
    for index in rng.permutation(len(forms)):
        text = _realise(forms[int(index)][slot], attributes, rng, templates, cls)
        if text is not None:
            return text
    raise AssertionError(f"no form of {cls!r} can say {attributes}")  # the data file's check rules it out


def _event_slots(scene: Scene, rng: np.random.Generator, templates: Templates) -> dict[str, str]:
    slots = {}
    for event, (np_key, clause_key) in zip(scene.events, (("A", "a"), ("B", "b"), ("C", "c")), strict=False):
        slots[np_key] = phrase(event.cls, event.variant, event.attributes, "np", rng, templates)
        slots[clause_key] = phrase(event.cls, event.variant, event.attributes, "clause", rng, templates)
    return slots


def _caption(scene: Scene, rng: np.random.Generator, templates: Templates) -> str:
    slots = _event_slots(scene, rng, templates)
    text = _pick(rng, templates.structures[scene.structure]).format(**slots)
    if len(scene.events) == 3:
        text = _pick(rng, templates.structures["bed"]).format(S=text, C=slots["C"], c=slots["c"])
    if scene.absent is not None:
        text = _pick(rng, templates.structures["absence"]).format(
            S=text, N=_pick(rng, templates.absent[scene.absent]))
    return text[0].upper() + text[1:]


def scene_captions(scene: Scene, count: int = CAPTIONS_PER_CLIP,
                   templates: Templates | None = None) -> list[str]:
    """``count`` captions of a clip, distinct where the templates allow (from the clip's caption seed).

    Example:
        >>> from fortekit.search.eval.bench.soundgen.scene import Event, Scene
        >>> scene = Scene(0, "train", "single", (Event("wind", "", (), 0.1, 3.0, seed=1),), None, 2, 3)
        >>> captions = scene_captions(scene)
        >>> len(captions), all("ind" in c for c in captions)
        (5, True)
    """
    templates = templates or load_templates()
    rng = np.random.default_rng(scene.caption_seed)
    captions: list[str] = []
    for _ in range(count * 8):
        caption = _caption(scene, rng, templates)
        if caption not in captions:
            captions.append(caption)
        if len(captions) == count:
            break
    while len(captions) < count:  # a clip with few wordings repeats some
        captions.append(captions[len(captions) % max(len(captions), 1)])
    return captions


def event_atoms(cls: str, variant: str, attributes: Sequence[str], variable: str) -> list[Formula]:
    """The atoms of one event: its attributes, its variant's predicate, its class's predicates.

    Example:
        >>> [str(a) for a in event_atoms("speech", "female", ("fast",), "x")]
        ['Fast(x)', 'Woman(x)', 'Speaking(x)']
    """
    var = Var(variable)
    symbols = [ATTRIBUTES[a].symbol for a in attributes]
    if variant in CLASSES[cls].variants:
        symbols.append(CLASSES[cls].variants[variant])
    symbols += CLASSES[cls].symbols
    return [Atom(symbol, (var,)) for symbol in symbols]


def exists(variables: Sequence[str], body: Formula) -> Formula:
    """``∃v1 ∃v2 ... body``.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> str(exists("xy", parse_formula("P(x) ∧ Q(y)")))
        '∃x ∃y [P(x) ∧ Q(y)]'
    """
    for name in reversed(variables):
        body = Quant(Quantifier.EXISTS, Var(name), body)
    return body


def absence(symbol: str, variable: str = "w") -> Formula:
    """``¬∃w Symbol(w)``: no such sound in the clip.

    Example:
        >>> str(absence("Rain"))
        '¬∃w Rain(w)'
    """
    return Not(Quant(Quantifier.EXISTS, Var(variable), Atom(symbol, (Var(variable),))))


def scene_formula(scene: Scene) -> Formula:
    """The clip's gold formula: its events, their order or overlap, its declared absence."""
    parts: list[Formula] = []
    for index, event in enumerate(scene.events):
        for relation, first, second in scene.relations:
            if second == index and first < index:
                parts.append(Atom(relation, (Var(_VARIABLES[first]), Var(_VARIABLES[second]))))
        parts += event_atoms(event.cls, event.variant, event.attributes, _VARIABLES[index])
    if scene.absent is not None:
        parts.append(absence(CLASSES[scene.absent].absence_symbol))
    return exists(_VARIABLES[: len(scene.events)], conjoin(*parts))
