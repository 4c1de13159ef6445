"""Why a hit ranks where it does: score parts, what an exclusion pushed down, and confidence.

Three questions a user asks of a ranking (issue 46), answered from what the retriever already
computed, stage by stage (:meth:`~fortekit.search.retriever.Retriever.rank` hands back the
scores and rows after each stage):

* :func:`score_parts`: the first-pass similarity, then what each later stage added or took
  away; the parts sum to the final score.
* :func:`pushed_down`: for a query with a negated clause, the items of the first pass's top k
  that the later stages moved out of it, with where they went and the evidence.
* :class:`NullSimilarity` and :func:`confidence`: a query no item matches (no caption shares
  one of its predicates), or whose best match is no closer than random text's, is marked as
  such (W860, W861) rather than shown as a confident top k.

Example:
    >>> score_parts(7, [("similarity", {7: 0.5}), ("formula", {7: 0.25})])
    (('similarity', 0.5), ('formula', -0.25))
    >>> confidence(0.12, NullSimilarity(0.15, 0.02), matched_any=None)[0]
    True
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fortekit.errors import Errors

if TYPE_CHECKING:
    import torch

__all__ = ["NullSimilarity", "confidence", "null_similarity", "pushed_down", "random_texts", "score_parts"]

#: How many random texts calibrate the noise floor, and how far above their mean a real match
#: must be (in their standard deviations) to count as one.
NULL_TEXTS = 32
NULL_MARGIN_SD = 2.0
_CONSONANTS = "bcdfghjklmnprstvwxz"
_VOWELS = "aeiou"


def score_parts(
    row: int, by_stage: Sequence[tuple[str, Mapping[int, float]]]
) -> tuple[tuple[str, float], ...]:
    """An item's score as the first-pass similarity plus what each later stage added.

    Each stage's amount is its score minus the previous stage's, so the parts sum to the final
    score (up to float rounding); a stage that did not place the item adds nothing.

    Args:
        row: the item's row in the index.
        by_stage: per stage that ran, in order, its name and its scores by row.

    Returns:
        ``(stage, amount)`` pairs, the first the similarity itself.

    Example:
        >>> score_parts(7, [("similarity", {7: 0.6}), ("formula", {7: 0.5}), ("stage3", {7: 0.55})])
        (('similarity', 0.6), ('formula', -0.09999999999999998), ('stage3', 0.050000000000000044))
    """
    if not by_stage:
        return ()
    previous = by_stage[0][1].get(row, 0.0)
    parts = [(by_stage[0][0], previous)]
    for stage, scores in by_stage[1:]:
        current = scores.get(row, previous)
        parts.append((stage, current - previous))
        previous = current
    return tuple(parts)


def split_projection(
    parts: tuple[tuple[str, float], ...], unprojected: float
) -> tuple[tuple[str, float], ...]:
    """Split the first-pass similarity into the plain cosine and what Stage 2's head added.

    Example:
        >>> split_projection((("similarity", 0.5), ("formula", 0.1)), 0.375)
        (('similarity', 0.375), ('stage2', 0.125), ('formula', 0.1))
    """
    if not parts:
        return parts
    first = parts[0][1]
    return (("similarity", unprojected), ("stage2", first - unprojected), *parts[1:])


def pushed_down(
    first_rows: Sequence[int], final_rows: Sequence[int], k: int,
    evidence: Mapping[int, Sequence[str]],
) -> list[tuple[int, int, int | None, tuple[str, ...]]]:
    """The items of the first pass's top ``k`` that are no longer in the final top ``k``.

    Args:
        first_rows: the first pass's rows, best first (the candidate pool).
        final_rows: the rows after every stage, best first (the same pool, reordered).
        k: the hits shown.
        evidence: per row, the lines that say why it moved (its caption's violated
            predicates, the stages' amounts).

    Returns:
        Per item moved out, in first-pass order: (row, rank in the first pass, rank after every
        stage or None when it left the pool, evidence).

    Example:
        >>> pushed_down([4, 2, 9], [2, 9, 4], 2, {4: ["its caption says Crow/1"]})
        [(4, 1, 3, ('its caption says Crow/1',))]
    """
    shown = set(final_rows[:k])
    place = {row: rank for rank, row in enumerate(final_rows, 1)}
    out: list[tuple[int, int, int | None, tuple[str, ...]]] = []
    for was, row in enumerate(first_rows[:k], 1):
        if row in shown or row < 0:
            continue
        out.append((row, was, place.get(row), tuple(evidence.get(row, ()))))
    return out


def random_texts(count: int = NULL_TEXTS, seed: int = 0) -> list[str]:
    """Pronounceable nonsense of two or three words: texts that describe no sound.

    Example:
        >>> random_texts(2)
        ['ciwori zeweme xugifa', 'xaponu xotux dobun']
    """
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words = []
        for _ in range(rng.choice((2, 3))):
            syllables = rng.choice((2, 3))
            word = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables))
            words.append(word + (rng.choice(_CONSONANTS) if rng.random() < 0.5 else ""))
        texts.append(" ".join(words))
    return texts


@dataclass(frozen=True, slots=True)
class NullSimilarity:
    """The best first-pass similarity random texts reach on an index: its mean and spread.

    Attributes:
        mean: the mean over the random texts of each one's best similarity to the items.
        sd: their standard deviation.
    """

    mean: float
    sd: float

    @property
    def floor(self) -> float:
        """The similarity a query's best match must pass to be more than noise."""
        return self.mean + NULL_MARGIN_SD * self.sd


def null_similarity(vectors: torch.Tensor, items: torch.Tensor) -> NullSimilarity:
    """The noise floor of an index, from the vectors of :func:`random_texts`.

    Args:
        vectors: (texts, d) unit vectors of the random texts.
        items: (items, d) unit item rows, as the first pass compares.

    Example:
        >>> import torch
        >>> null = null_similarity(torch.eye(2), torch.tensor([[1.0, 0.0], [0.6, 0.8]]))
        >>> round(null.mean, 3), round(null.sd, 3)
        (0.9, 0.141)
    """
    best = (vectors.float() @ items.float().T).max(dim=1).values
    sd = float(best.std()) if len(best) > 1 else 0.0
    return NullSimilarity(float(best.mean()), sd)


def confidence(best: float | None, null: NullSimilarity | None, *, matched_any: bool | None,
               predicates: Sequence[str] = ()) -> tuple[bool, str, str]:
    """Whether a query's top hits are more than noise.

    Args:
        best: the query's best first-pass similarity (None: no hit).
        null: the index's noise floor (None: not measured).
        matched_any: whether any hit's caption matched one of the query's asserted predicates
            (None: the index has no captions, or the query no predicates).
        predicates: the query's asserted predicates, for the message.

    Returns:
        ``(low, reason, code)``: the reason and its code ("W860", "W861") when low, else "".

    Example:
        >>> confidence(0.6, NullSimilarity(0.2, 0.05), matched_any=False, predicates=["Rain/1"])[2]
        'W860'
        >>> confidence(0.6, NullSimilarity(0.2, 0.05), matched_any=True)
        (False, '', '')
    """
    if best is not None and null is not None and best <= null.floor:
        reason = Errors.W861.format(best=best, mean=null.mean, sd=null.sd, margin=NULL_MARGIN_SD)
        return True, reason, "W861"
    if matched_any is False:
        shown = ", ".join(predicates[:6]) + (", …" if len(predicates) > 6 else "")
        return True, Errors.W860.format(predicates=shown), "W860"
    return False, "", ""
