"""Parsing the captions of an indexed collection into predicate sets, once, at build time.

Stage 3 compares ``Pred(Pi(caption))`` of each retrieved item with ``Pred(phi*)`` of the
refined query; parsing every caption at query time would cost far more than the search.
The captions are parsed in spaCy batches (``fortekit.fol.caption.parse_captions``).
A caption that cannot be parsed (missing, empty, too long) gets an empty set and is
counted in the report; it does not stop the build.

Example:
    >>> from fortekit.search.index.parse import caption_predicate_sets
    >>> report = caption_predicate_sets(["a dog barks", "", None])  # doctest: +SKIP
    >>> [sorted(map(str, s)) for s in report.sets]  # doctest: +SKIP
    [['Barking/1', 'Dog/1'], [], []]
    >>> report.failed, report.missing  # doctest: +SKIP
    ((1,), (2,))
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fortekit.errors import FortekitError
from fortekit.fol.predicates import PredicateSymbol, predicates

__all__ = ["CaptionParseReport", "caption_predicate_sets"]


@dataclass(frozen=True, slots=True)
class CaptionParseReport:
    """The predicate sets of a collection's captions and which captions had none.

    Attributes:
        sets: one frozenset per caption, in order (empty when unparsed or missing).
        failed: positions of captions the parser rejected (empty, too long, ...).
        missing: positions of items without a caption (None).
    """

    sets: list[frozenset[PredicateSymbol]]
    failed: tuple[int, ...]
    missing: tuple[int, ...]

    @property
    def unparsed(self) -> int:
        """How many items have no predicate set from a caption (failed + missing)."""
        return len(self.failed) + len(self.missing)


def caption_predicate_sets(
    captions: Sequence[str | None], *, parser: Any = None, batch_size: int = 256, progress: bool = False,
) -> CaptionParseReport:
    """``Pred(Pi(caption))`` for every caption, parsed in batches.

    Args:
        captions: the captions, None for items without one.
        parser: a :class:`fortekit.fol.caption.CaptionParser`; None for the default one.
        batch_size: captions per spaCy batch.
        progress: show a tqdm progress bar on stderr.

    Returns:
        The :class:`CaptionParseReport`.

    Raises:
        PipelineMissingError, WordNetMissingError: the parser cannot be built.

    Example:
        >>> caption_predicate_sets([None]).missing
        (0,)
    """
    from fortekit.fol.caption import default_parser
    from fortekit.fol.caption.pipeline import check_text

    sets: list[frozenset[PredicateSymbol]] = [frozenset()] * len(captions)
    missing = tuple(position for position, caption in enumerate(captions) if caption is None)
    if len(missing) == len(captions):
        return CaptionParseReport(sets, (), missing)
    caption_parser = parser if parser is not None else default_parser()
    valid: list[int] = []
    failed: list[int] = []
    for position, caption in enumerate(captions):
        if caption is None:
            continue
        try:
            check_text(caption, function="parse_captions", max_chars=caption_parser.max_chars)
        except (FortekitError, ValueError, TypeError):
            failed.append(position)
            continue
        valid.append(position)
    texts = [captions[position] or "" for position in valid]
    for position, symbols in zip(valid, _parsed(caption_parser, texts, batch_size, progress), strict=True):
        if symbols is None:
            failed.append(position)
        else:
            sets[position] = symbols
    return CaptionParseReport(sets, tuple(sorted(failed)), missing)


def _parsed(
    parser: Any, texts: list[str], batch_size: int, progress: bool,
) -> Iterator[frozenset[PredicateSymbol] | None]:
    """Predicate sets of pre-checked texts; None for a text the parser still rejects."""
    from tqdm import tqdm

    with tqdm(total=len(texts), desc="parsing captions", unit="caption", file=sys.stderr,
              disable=not progress) as bar:
        done = 0
        try:
            for result in parser.parse_many(texts, batch_size=batch_size):
                done += 1
                bar.update(1)
                yield predicates(result.formula)
        except (FortekitError, ValueError):
            pass  # a batch that raised ends the stream: go on one by one from the caption that failed
        for text in texts[done:]:
            bar.update(1)
            try:
                yield predicates(parser.parse(text).formula)
            except (FortekitError, ValueError):
                yield None
