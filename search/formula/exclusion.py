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

__all__ = ["CaptionSymbols", "caption_degrees", "floor_order", "monotone_scores", "orthogonal_clause"]


class CaptionSymbols:
    """Every item's caption symbols as one padded id matrix, so that a sound's evidence over a
    thousand candidates is a table lookup, not a thousand set tests.

    Args:
        names: per item row, its caption's asserted symbol names.

    Example:
        >>> import torch
        >>> symbols = CaptionSymbols([frozenset({"Crow", "Cawing"}), frozenset({"Bird"}), frozenset()])
        >>> symbols.holding(frozenset({"Crow", "Raven"}), torch.tensor([0, 1, 2])).tolist()
        [True, False, False]
    """

    __slots__ = ("ids", "matrix", "names")

    def __init__(self, names: Sequence[frozenset[str]]) -> None:
        import numpy as np
        import torch

        self.names = names
        self.ids: dict[str, int] = {}
        ids = self.ids
        flat = [ids.setdefault(name, len(ids) + 1) for item in names for name in item]
        lengths = np.fromiter((len(item) for item in names), dtype=np.int64, count=len(names))
        width = int(lengths.max()) if len(names) and lengths.max() > 0 else 1
        matrix = np.zeros((len(names), width), dtype=np.int64)  # 0 pads: no symbol
        if flat:
            starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
            columns = np.arange(len(flat), dtype=np.int64) - starts
            matrix[np.repeat(np.arange(len(names)), lengths), columns] = np.asarray(flat, dtype=np.int64)
        self.matrix = torch.from_numpy(matrix)

    def __len__(self) -> int:
        return len(self.names)

    def holding(self, witnesses: frozenset[str], rows: torch.Tensor) -> torch.Tensor:
        """Per row of ``rows``, whether its caption holds one of ``witnesses`` (False past the items)."""
        import torch

        lookup = torch.zeros(len(self.ids) + 1, dtype=torch.bool)
        known = [self.ids[name] for name in witnesses if name in self.ids]
        if known:
            lookup[torch.tensor(known, dtype=torch.long)] = True
        inside = (rows >= 0) & (rows < len(self.names))
        picked = self.matrix[rows.clamp(0, max(len(self.names) - 1, 0))]
        return lookup[picked].any(dim=1) & inside


def caption_degrees(
    sound: ExcludedSound, asserted: tuple[str, ...], symbols: CaptionSymbols, rows: torch.Tensor,
    check: ViolationCheck, source_weight: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per candidate row, the degree to which its caption holds ``sound``, and whether it is evidence.

    Args:
        sound: the excluded sound (:meth:`~fortekit.fol.violation.ViolationCheck.sound_of`).
        asserted: the query's asserted sound symbols (evidence they explain is none).
        symbols: every item's caption symbols (:class:`CaptionSymbols`).
        rows: (k,) the candidates' item rows.
        check: the grounded check.
        source_weight: the degree of "source" evidence (the excluded source, doing something else).

    Returns:
        ``(degrees, evidenced)``, (k,) each: 1 / ``source_weight`` / 0, and degree > 0. The same
        answers as :meth:`~fortekit.fol.violation.SoundMatcher.evidence`, for every row at once.

    Example:
        >>> import torch
        >>> from fortekit.fol import parse_formula
        >>> from fortekit.fol.violation import default_check
        >>> check = default_check()
        >>> crow = check.sound_of(parse_formula("∃y Crow(y)"))
        >>> symbols = CaptionSymbols([frozenset({"Bird"}), frozenset({"Crow"})])
        >>> degrees, held = caption_degrees(crow, ("Bird",), symbols, torch.tensor([0, 1]), check, 0.5)
        >>> degrees.tolist(), held.tolist()
        ([0.0, 1.0], [False, True])
    """
    import torch

    matcher = check.matcher(sound, asserted)
    rows = rows.to("cpu", torch.long)

    def every(parts: tuple[tuple[str, frozenset[str]], ...]) -> torch.Tensor:
        result = torch.ones(rows.shape[0], dtype=torch.bool)
        for _, witnesses in parts:
            result &= symbols.holding(witnesses, rows)
        return result

    nouns = every(matcher.nouns)
    if matcher.verbs:
        holds = nouns & every(matcher.verbs)
        source = nouns & ~holds if matcher.nouns else torch.zeros_like(holds)
    elif matcher.nouns:
        holds, source = nouns, torch.zeros_like(nouns)
    elif matcher.generic:
        holds, source = every(matcher.generic), torch.zeros_like(nouns)
    else:
        holds = source = torch.zeros_like(nouns)
    if matcher.qualities:  # "no heavy rain": rain said without its heaviness names the source only
        qualified = every(matcher.qualities)
        source = source | (holds & ~qualified)
        holds = holds & qualified
    if matcher.own_source:  # the asked-for source (or a part of it) is no evidence of the excluded event
        source = torch.zeros_like(source)
    degrees = holds.float() + float(source_weight) * source.float()
    return degrees, degrees > 0.0


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


def floor_order(scores: torch.Tensor, evidenced: torch.Tensor, depth: int | None = None) -> torch.Tensor:
    """Candidates sorted by ``scores``, with no unevidenced one below its first-pass place.

    The candidates come in first-pass order (place 0 first). At each place, the candidate whose
    first-pass place it is goes there if it has no evidence against it and is not placed yet;
    otherwise the best-scored remaining candidate does. So an unevidenced candidate ends at or
    above its first-pass place, and the places that evidenced ones vacate go to the best.

    Args:
        scores: (k,) formula-scored values of the candidates, in first-pass order.
        evidenced: (k,) bool, whether each candidate has evidence of an excluded sound.
        depth: only the first ``depth`` places are needed (a search shows its top k): they are
            exactly the floor's, the places after them follow the scores. None: every place.

    Returns:
        (k,) long: the candidates' positions in the new order.

    Example:
        >>> import torch
        >>> floor_order(torch.tensor([0.1, 0.9, 0.5]), torch.tensor([False, False, False])).tolist()
        [0, 1, 2]
    """
    import torch

    plain = torch.sort(scores.detach().cpu(), descending=True, stable=True).indices
    place_of = torch.empty_like(plain)
    place_of[plain] = torch.arange(plain.shape[0])
    if not bool(((place_of > torch.arange(plain.shape[0])) & ~evidenced.cpu()).any()):
        return plain.to(scores.device)  # the plain sort already keeps every unevidenced place
    # Up to the first place an unevidenced candidate would lose, the plain sort is the answer.
    lost = int(torch.nonzero((place_of > torch.arange(plain.shape[0])) & ~evidenced.cpu())[0, 0])
    first = min(lost, int(place_of[lost]))
    flags = evidenced.tolist()
    by_score = plain.tolist()
    placed = bytearray(len(flags))
    order = by_score[:first]
    for choice in order:
        placed[choice] = 1
    append = order.append
    cursor = first
    last = len(flags) if depth is None else min(len(flags), max(depth, first))
    for place in range(first, last):
        if not flags[place] and not placed[place]:
            choice = place
        else:
            while placed[by_score[cursor]]:
                cursor += 1
            choice = by_score[cursor]
        placed[choice] = 1
        append(choice)
    if last < len(flags):
        order.extend(by_score[i] for i in range(cursor, len(by_score)) if not placed[by_score[i]])
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
