"""Exclusion by evidence: an item goes down for ¬B only on evidence that it holds B.

Formula scoring once enforced ¬B by pushing down whatever *resembled* B's clause. When B is
related to the asked-for sound A ("birds singing but no crows", "rain without thunder"), A's
items resemble B too, and the exclusion removed what was asked for. Here the degree to which
an item holds B is **evidence, not resemblance** (docs/formula_scoring.md, "Exclusion by
evidence", has the design and its sources):

* **Captions** (a caption-indexed collection, stored captions, a captioner's): the item's
  caption symbols are judged by the grounded check of :mod:`fortekit.fol.violation`
  (hyponymy in the right direction): it *holds* B (degree 1), names B's source doing
  something else (degree ``source_weight``), or says nothing of B (degree 0: no demotion).
* **No captions**: a contrastive test. B's clause vector is made orthogonal to the asked-for
  clauses' (Widdows 2003, "Orthogonal negation in vector spaces"): what an item shares with
  B only because it resembles A is removed, and what is left is calibrated over the
  collection; an item is evidence of B only ``contrast_margin`` standard deviations above the
  collection's mean on that direction. Where the backbone cannot tell A from B (their clause
  vectors' cosine at least ``max_clause_cosine``), the negated clause is **unsure** and does
  nothing.

The **floor** (:func:`floor_order`) makes the guarantee structural: after formula scoring, an
item with no evidence of any excluded sound is never ranked below its first-pass place; the
places that evidence frees are filled by the formula's best remaining items.

Example:
    >>> import torch
    >>> floor_order(torch.tensor([0.1, 0.2, 0.8, 0.7]), torch.tensor([True, False, False, False])).tolist()
    [2, 1, 3, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from fortekit.fol.violation import ExcludedSound, ViolationCheck

__all__ = ["caption_degrees", "floor_order", "monotone_scores", "orthogonal_clause"]


def caption_degrees(
    sound: ExcludedSound, asserted: tuple[str, ...], names: Sequence[frozenset[str]], rows: Sequence[int],
    check: ViolationCheck, source_weight: float,
) -> tuple[list[float], list[bool]]:
    """Per candidate row, the degree to which its caption holds ``sound``, and whether it is evidence.

    Args:
        sound: the excluded sound (:meth:`~fortekit.fol.violation.ViolationCheck.sound_of`).
        asserted: the query's asserted sound symbols (evidence they explain is none).
        names: per item row of the collection, its caption's asserted symbol names.
        rows: the candidates' item rows.
        check: the grounded check.
        source_weight: the degree of "source" evidence (the excluded source, doing something else).

    Returns:
        ``(degrees, evidenced)``, one entry per row: 1.0 / ``source_weight`` / 0.0, and degree > 0.

    Example:
        >>> from fortekit.fol import parse_formula
        >>> from fortekit.fol.violation import default_check
        >>> check = default_check()
        >>> crow = check.sound_of(parse_formula("∃y Crow(y)"))
        >>> caption_degrees(crow, ("Bird",), [frozenset({"Bird"}), frozenset({"Crow"})], [0, 1], check, 0.5)
        ([0.0, 1.0], [False, True])
    """
    from fortekit.fol.violation import Evidence

    value = {Evidence.HOLDS: 1.0, Evidence.SOURCE: float(source_weight), Evidence.NONE: 0.0}
    cache: dict[frozenset[str], float] = {}
    degrees: list[float] = []
    for row in rows:
        item = names[row] if 0 <= row < len(names) else frozenset()
        degree = cache.get(item)
        if degree is None:
            degree = cache[item] = value[check.judge_names(sound, item, asserted).evidence]
        degrees.append(degree)
    return degrees, [degree > 0.0 for degree in degrees]


def orthogonal_clause(negated: torch.Tensor, asserted: torch.Tensor) -> tuple[torch.Tensor, float]:
    """B's clause vector with the asked-for direction removed, and the cosine it had with it.

    Args:
        negated: (d,) the negated clause's unit vector b.
        asserted: (m, d) the asserted clauses' unit vectors; their normalised sum is the direction a.

    Returns:
        ``(b_perp, cosine)``: ``normalise(b - <b, a> a)`` and ``<b, a>``.

    Example:
        >>> import torch
        >>> b_perp, cosine = orthogonal_clause(torch.tensor([0.6, 0.8]), torch.tensor([[1.0, 0.0]]))
        >>> b_perp.tolist(), round(cosine, 2)
        ([0.0, 1.0], 0.6)
    """
    import torch

    direction = torch.nn.functional.normalize(asserted.sum(dim=0), dim=0)
    cosine = float(negated @ direction)
    rest = negated - cosine * direction
    return torch.nn.functional.normalize(rest, dim=0), cosine


def floor_order(scores: torch.Tensor, evidenced: torch.Tensor) -> torch.Tensor:
    """Candidates sorted by ``scores``, with no unevidenced one below its first-pass place.

    The candidates come in first-pass order (place 0 first). At each place, the candidate whose
    first-pass place it is goes there if it has no evidence against it and is not placed yet;
    otherwise the best-scored remaining candidate does. So an unevidenced candidate ends at or
    above its first-pass place, and the places that evidenced ones vacate go to the best.

    Args:
        scores: (k,) formula-scored values of the candidates, in first-pass order.
        evidenced: (k,) bool, whether each candidate has evidence of an excluded sound.

    Returns:
        (k,) long: the candidates' positions in the new order.

    Example:
        >>> import torch
        >>> floor_order(torch.tensor([0.1, 0.9, 0.5]), torch.tensor([False, False, False])).tolist()
        [0, 1, 2]
    """
    import torch

    values = scores.tolist()
    flags = evidenced.tolist()
    by_score = sorted(range(len(values)), key=lambda j: (-values[j], j))
    placed = [False] * len(values)
    order: list[int] = []
    cursor = 0
    for place in range(len(values)):
        if not flags[place] and not placed[place]:
            choice = place
        else:
            while placed[by_score[cursor]]:
                cursor += 1
            choice = by_score[cursor]
        placed[choice] = True
        order.append(choice)
    return torch.tensor(order, dtype=torch.long, device=scores.device)


def monotone_scores(values: torch.Tensor) -> torch.Tensor:
    """``values`` raised where needed so that they never increase down the list.

    A candidate the floor keeps at its first-pass place shows the score of the best one below
    it, so that scores and ranks agree for every later stage.

    Example:
        >>> import torch
        >>> monotone_scores(torch.tensor([0.9, 0.3, 0.5, 0.1])).tolist()
        [0.8999999761581421, 0.5, 0.5, 0.10000000149011612]
    """
    import torch

    return torch.flip(torch.cummax(torch.flip(values, dims=(0,)), dim=0).values, dims=(0,))
