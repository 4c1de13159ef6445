"""Item captions for Stage 3 and formula scoring: parsed once, or written by a captioner plug-in.

Example:
    >>> [sorted(map(str, s)) for s in item_predicates_from_captions(["rain falls", ""])]
    [['Falling/1', 'Rain/1'], []]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fortekit.errors import Errors, EvaluationError, FortekitError
from fortekit.fol.predicates import PredicateSymbol

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from fortekit.fol.ast import Formula
    from fortekit.fol.caption.parser import CaptionParser
    from fortekit.plugins.protocols import AudioInput, Captioner

__all__ = [
    "captions_from_captioner",
    "item_formulas_from_captions",
    "item_predicates_from_captions",
    "predicate_sets",
]


def item_formulas_from_captions(
    captions: Sequence[str | None],
    *,
    parser: CaptionParser | None = None,
    batch_size: int = 256,
) -> list[Formula | None]:
    """Parse captions (or queries) once into formulas, batched through spaCy.

    A caption that is None, empty, whitespace, not a str or longer than the parser's
    limit gets None (no formula: Stage 3 gives it the empty predicate set, formula
    scoring the whole-query similarity).

    Args:
        captions: one caption per item, or None where an item has none.
        parser: a :class:`~fortekit.fol.caption.CaptionParser`; default the shared one.
        batch_size: captions per spaCy batch.

    Returns:
        ``Π(caption).formula`` per item, in order.

    Example:
        >>> [str(f) for f in item_formulas_from_captions(["a dog barks", None])]
        ['∃x [Dog(x) ∧ Barking(x)]', 'None']
    """
    from fortekit.fol.caption.parser import default_parser, parse_captions
    from fortekit.fol.caption.pipeline import check_text

    result: list[Formula | None] = [None] * len(captions)
    valid: list[int] = []
    texts: list[str] = []
    limit: int | None = None
    for position, caption in enumerate(captions):
        if not isinstance(caption, str) or not caption.strip():
            continue
        if limit is None:
            limit = (parser or default_parser()).max_chars
        try:
            check_text(caption, function="item_formulas_from_captions", max_chars=limit)
        except (ValueError, TypeError):
            continue
        valid.append(position)
        texts.append(caption)
    parsed = parse_captions(texts, batch_size=batch_size, parser=parser)
    for position, parse in zip(valid, parsed, strict=True):
        result[position] = parse.formula
    return result


def item_predicates_from_captions(
    captions: Sequence[str | None],
    *,
    parser: CaptionParser | None = None,
    batch_size: int = 256,
) -> list[frozenset[PredicateSymbol]]:
    """Parse item captions once into predicate sets (batched through spaCy).

    A caption that is None, empty, whitespace, not a str or longer than the parser's
    limit gets the empty set, which scores 0 against any query (an item without a
    caption is neither helped nor hurt in paper mode).

    Args:
        captions: one caption per item, or None where an item has none.
        parser: a :class:`~fortekit.fol.caption.CaptionParser`; default the shared one.
        batch_size: captions per spaCy batch.

    Returns:
        ``Pred(Π(caption))`` per item, in order.

    Example:
        >>> sets = item_predicates_from_captions(["a dog barks", None, "  "])
        >>> [sorted(map(str, s)) for s in sets]
        [['Barking/1', 'Dog/1'], [], []]
    """
    return predicate_sets(item_formulas_from_captions(captions, parser=parser, batch_size=batch_size))


def predicate_sets(formulas: Sequence[Formula | None]) -> list[frozenset[PredicateSymbol]]:
    """``Pred(φ)`` of each formula, the empty set for None.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> [sorted(map(str, s)) for s in predicate_sets([parse_formula("Rain(x)"), None])]
        [['Rain/1'], []]
    """
    from fortekit.fol.predicates import predicates

    return [frozenset() if phi is None else predicates(phi) for phi in formulas]


def captions_from_captioner(captioner: Captioner | str, items: Sequence[AudioInput]) -> list[str]:
    """Captions for items from a Captioner plug-in (an instance, or a registered name).

    Args:
        captioner: a :class:`~fortekit.plugins.Captioner`, or its name for
            :func:`fortekit.plugins.get_captioner` (built with no options).
        items: the audio items (paths, :class:`~fortekit.plugins.AudioItem`, waveforms).

    Returns:
        One caption per item, in order ("" where the captioner had nothing).

    Raises:
        EvaluationError: the captioner raised an untyped error (E482), or returned
            something other than one str per item (E483). Its own fortekit errors (a
            missing caption, a missing model) pass through unchanged.

    Example:
        >>> from fortekit.plugins import AudioItem
        >>> captions_from_captioner("stored", [AudioItem(path="a.wav", text="rain on a roof")])
        ['rain on a roof']
    """
    if isinstance(captioner, str):
        from fortekit.plugins import get_captioner

        captioner = get_captioner(captioner)
    name = str(getattr(captioner, "name", type(captioner).__name__))
    batch = list(items)
    if not batch:
        return []
    try:
        captions = captioner.caption(batch)
    except FortekitError:
        raise
    except Exception as exc:
        raise EvaluationError(Errors.E482.format(
            name=name, count=len(batch), problem=f"{type(exc).__name__}: {exc}",
        )) from exc
    if not isinstance(captions, (list, tuple)):
        raise EvaluationError(Errors.E483.format(name=name, problem=f"a {type(captions).__name__}"))
    if len(captions) != len(batch):
        raise EvaluationError(Errors.E483.format(
            name=name, problem=f"{len(captions)} captions for {len(batch)} items",
        ))
    wrong = [position for position, caption in enumerate(captions) if not isinstance(caption, str)]
    if wrong:
        raise EvaluationError(Errors.E483.format(
            name=name, problem=f"non-str captions at positions {wrong[:5]} (e.g. {captions[wrong[0]]!r})",
        ))
    return list(captions)
