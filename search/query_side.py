"""The query side of the Retriever: stored refinements, Stage 1, or the query as it is.

Example:
    >>> class Table:
    ...     def get(self, query):
    ...         return {"refined_text": "steady rain", "phi_star": "∃x [Rain(x) ∧ Steady(x)]"}
    >>> isinstance(Table(), RefinementLookup)
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.encoder import CachedTextEncoder
    from fortekit.search.stage1.result import RefinementResult

__all__ = ["QuerySide", "RefinementLookup", "prepare_queries", "stored_formula"]


@runtime_checkable
class RefinementLookup(Protocol):
    """Stored Stage 1 results by query text, e.g. a :class:`fortekit.search.refine.lookup.LookupTable`.

    A record holds at least ``refined_text`` (G(phi*)) and, optionally, ``phi_star`` and
    ``phi0`` as formula text.
    """

    def get(self, query: str) -> Mapping[str, Any] | None:
        """The stored record of ``query``, or None when the table does not hold it."""


class QuerySide:
    """Per query: its vector, formula, phi0 text, refined text and where they came from.

    Attributes:
        vectors: (queries, d) unit query vectors on the CPU (q* or f_T(q)).
        formulas: phi* (or phi0) per query; None where there is none.
        logic: the formula formula scoring judges: the query's own phi0 (a stored phi0 for a
            looked-up query, else its phi*); Stage 1 acts through the vector and phi*.
        phi0: Π(q) as text, or None.
        refined: G(phi*) with Stage 1 or a lookup, else None.
        sources: "lookup", "refine" (Stage 1) or "query" (as it is).
    """

    def __init__(self, n: int) -> None:
        self.vectors: torch.Tensor
        self.formulas: list[Formula | None] = [None] * n
        self.logic: list[Formula | None] = [None] * n
        self.phi0: list[str | None] = [None] * n
        self.refined: list[str | None] = [None] * n
        self.sources: list[str] = ["query"] * n


def prepare_queries(
    texts: Sequence[str], encoder: CachedTextEncoder, *, refiner: Refiner | None = None,
    lookup: RefinementLookup | None = None, refined: Mapping[str, RefinementResult] | None = None,
    companions: Callable[[Formula], Sequence[str]] | None = None,
) -> QuerySide:
    """The query side of a search: each query's vector, formula and refinement, by where it comes from.

    A query ``refined`` holds keeps that Stage 1 result (fol-refine's batch, refined before it
    is ranked); a query the lookup table holds gets its stored refinement (q* = f_T of the stored refined
    text, phi* read back from its stored text); the others go through Stage 1 when there is a
    refiner, else they are encoded as they are (f_T(q), phi0 = Π(q)). The looked-up refined texts
    and the plain queries share one encoder call; Stage 1 makes its own (one per depth).

    Args:
        texts: the checked query texts.
        encoder: the cached text encoder.
        refiner: Stage 1, or None.
        lookup: stored Stage 1 results, or None.
        refined: Stage 1 results already made, by query text, or None.
        companions: the texts a later stage encodes for a query's formula (formula scoring's
            clauses): encoded in the queries' own call (Stage 1's, or the plain queries'), into
            the shared cache.

    Returns:
        The :class:`QuerySide`.

    Example:
        >>> side = prepare_queries(["rain on a roof"], encoder)  # doctest: +SKIP
        >>> side.sources, side.vectors.shape  # doctest: +SKIP
        (['query'], torch.Size([1, 384]))
    """
    import torch

    from fortekit.search.index.item_captions import item_formulas_from_captions

    n = len(texts)
    side = QuerySide(n)
    done = refined or {}
    stored = [lookup.get(text) if lookup is not None and text not in done else None for text in texts]
    given = [q for q in range(n) if texts[q] in done]
    known = [q for q in range(n) if stored[q] is not None]
    rest = [q for q in range(n) if stored[q] is None and texts[q] not in done]
    searched = rest if refiner is not None else []
    plain = rest if refiner is None else []
    vectors: list[torch.Tensor | None] = [None] * n
    plain_formulas = item_formulas_from_captions([texts[q] for q in plain]) if plain else []
    # the refined texts of looked-up queries, the plain queries and their clause texts: one call
    to_encode = [str((stored[q] or {}).get("refined_text") or texts[q]) for q in known] + \
        [texts[q] for q in plain]
    extra = [text for phi in plain_formulas if phi is not None and companions is not None
             for text in companions(phi)]
    if to_encode:
        order = list(dict.fromkeys(to_encode + extra))
        encoded = _rows_of(encoder.encode(order), to_encode, order)
        for row, q in enumerate(known + plain):
            vectors[q] = encoded[row]
    for q in known:
        record = stored[q] or {}
        side.formulas[q] = stored_formula(record.get("phi_star"))
        side.logic[q] = stored_formula(record.get("phi0")) or side.formulas[q]
        side.phi0[q] = None if record.get("phi0") is None else str(record["phi0"])
        side.refined[q] = None if record.get("refined_text") is None else str(record["refined_text"])
        side.sources[q] = "lookup"
    results = [done[texts[q]] for q in given]
    if searched and refiner is not None:
        results += refiner.refine_many([texts[q] for q in searched], batch_size=len(searched),
                                       companions=companions)
    for q, result in zip(given + searched, results, strict=True):
        vectors[q] = result.q_star.detach().float().cpu()
        side.formulas[q] = result.phi_star
        side.logic[q] = result.phi0
        side.phi0[q] = str(result.phi0)
        side.refined[q] = result.refined_text
        side.sources[q] = "refine"
    if plain:
        for q, phi in zip(plain, plain_formulas, strict=True):
            side.formulas[q] = side.logic[q] = phi
            side.phi0[q] = None if phi is None else str(phi)
    side.vectors = torch.stack([vector for vector in vectors if vector is not None])
    return side


def _rows_of(encoded: torch.Tensor, wanted: Sequence[str], order: Sequence[str]) -> torch.Tensor:
    """The unit rows of ``wanted`` from ``encoded``, whose rows follow the distinct texts ``order``."""
    import torch

    row_of = {text: row for row, text in enumerate(order)}
    rows = encoded[[row_of[text] for text in wanted]].detach().float().cpu()
    return torch.nn.functional.normalize(rows, dim=1)


def stored_formula(text: object) -> Formula | None:
    """A stored formula's text (phi*, phi0) read back; None (the whole-query similarity) where it
    is missing or malformed.

    Example:
        >>> str(stored_formula("∃x [Rain(x)]")), stored_formula("((("), stored_formula(None)
        ('∃x Rain(x)', None, None)
    """
    from fortekit.errors import FormulaSyntaxError
    from fortekit.fol import parse_formula

    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return parse_formula(text, warn_free=False)
    except FormulaSyntaxError:
        return None
