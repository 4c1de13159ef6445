"""Where Stage 1's anchors e+ and e- come from: none, proxy, anchor bank, oracle.

- ``none``: the pivot alone steers the search (u = beta <e, v>).
- ``proxy``: the frozen retriever's first pass over an index: e+ is the top-1
  item, e- the K-th (the paper's a_(1) and a_(K)). Circular when the first pass fails.
- ``bank``: predicate-stratified embeddings of a training collection: e+ is the
  mean of the training items whose captions share the most (idf-weighted)
  predicates with phi0, e- likewise for the negatives phi-. Independent of the
  collection searched; the paper's best.
- ``feedback``: the first pass's top k split by the formula (module
  :mod:`fortekit.search.stage1.feedback`): a realistic setting, no training data needed.
- ``oracle``: the ground truth, for analysis only.

Example:
    >>> import torch
    >>> from fortekit.fol import PredicateSymbol
    >>> bank = AnchorBank(torch.eye(3), [frozenset({PredicateSymbol("Dog", 1)}),
    ...     frozenset({PredicateSymbol("Rain", 1)}), frozenset({PredicateSymbol("Dog", 1)})])
    >>> bank.lookup({PredicateSymbol("Dog", 1)}).tolist()
    [0.7071067690849304, 0.0, 0.7071067690849304]
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fortekit._checks import check_int
from fortekit.errors import Errors, RefineError
from fortekit.fol import PredicateSymbol
from fortekit.fol.predicates import Polarity

if TYPE_CHECKING:
    import torch

    from fortekit.search.index.audio_index import AudioIndex

__all__ = [
    "ANCHOR_SOURCES",
    "AnchorBank",
    "AnchorRequest",
    "AnchorSource",
    "Anchors",
    "NoAnchors",
    "OracleAnchors",
    "ProxyAnchors",
]

ANCHOR_SOURCES = ("none", "proxy", "bank", "feedback", "oracle")


@dataclass(frozen=True, slots=True)
class AnchorRequest:
    """What an anchor source may use for one query.

    Attributes:
        query: the query text.
        query_embedding: f_T(q), the frozen retriever's query vector.
        predicates: Pred(phi0).
        negative_predicates: Pred(phi-) of each negative elaboration.
    """

    query: str
    query_embedding: torch.Tensor
    predicates: frozenset[PredicateSymbol]
    negative_predicates: tuple[frozenset[PredicateSymbol], ...] = ()


@dataclass(frozen=True, slots=True)
class Anchors:
    """e+ and e- for one query (None where the source has none).

    Attributes:
        positive: e+.
        negative: e-.
        weight: how far q* itself moves along e+ - e- (Rocchio); 0 for every source but
            ``feedback``, whose anchors are judged by the formula.
    """

    positive: torch.Tensor | None = None
    negative: torch.Tensor | None = None
    weight: float = 0.0


class AnchorSource(Protocol):
    """Gives e+ and e- for a batch of queries."""

    name: str

    def anchor_batch(self, requests: Sequence[AnchorRequest]) -> list[Anchors]:
        """One :class:`Anchors` per request, in order."""
        ...


class NoAnchors:
    """No anchors: the search follows the pivot only.

    Example:
        >>> NoAnchors().anchor_batch([])
        []
    """

    name = "none"

    def anchor_batch(self, requests: Sequence[AnchorRequest]) -> list[Anchors]:
        return [Anchors() for _ in requests]


class ProxyAnchors:
    """The frozen retriever's first pass over ``index``: top-1 as e+, the K-th as e-.

    Args:
        index: the collection being searched (:class:`fortekit.search.index.audio_index.AudioIndex`).
        k: the size K of the first pass's candidate set.
    """

    name = "proxy"

    def __init__(self, index: AudioIndex, k: int = 10) -> None:
        check_int(k, name="proxy k", error=RefineError, message=Errors.E400)
        self.index = index
        self.k = k

    def anchor_batch(self, requests: Sequence[AnchorRequest]) -> list[Anchors]:
        import torch

        if not requests:
            return []
        from fortekit.search.index.ann import first_pass_uses_ann

        queries = torch.stack([request.query_embedding for request in requests])
        # The Retriever's rule for its first pass: a large index with an ANN part is not scanned.
        ann = first_pass_uses_ann(self.index.faiss_kind, len(self.index), None)
        _, indices = self.index.search(queries, k=self.k, device=str(queries.device), use_faiss=ann)
        items = self.index.embedding_tensor(str(queries.device))
        last = indices.shape[1] - 1
        return [
            Anchors(positive=items[int(row[0])], negative=items[int(row[last])]) for row in indices
        ]


class OracleAnchors:
    """Ground-truth anchors for analysis: query text -> (e+, e- or None).

    Args:
        anchors: the positive (and optionally negative) embedding per query.

    Raises:
        RefineError: at lookup, a query without an entry.
    """

    name = "oracle"

    def __init__(self, anchors: Mapping[str, tuple[torch.Tensor, torch.Tensor | None]]) -> None:
        self.anchors = dict(anchors)

    def anchor_batch(self, requests: Sequence[AnchorRequest]) -> list[Anchors]:
        found: list[Anchors] = []
        for request in requests:
            entry = self.anchors.get(request.query)
            if entry is None:
                raise RefineError(Errors.E409.format(query=request.query))
            device = request.query_embedding.device
            negative = entry[1].to(device) if entry[1] is not None else None
            found.append(Anchors(positive=entry[0].to(device), negative=negative))
        return found


class AnchorBank:
    """Predicate-stratified training embeddings: the anchor bank B.

    Args:
        embeddings: (n, d) embeddings of a training collection (audio, or captions for
            caption-indexed collections).
        predicate_sets: Pred(Pi(caption)) of each item.
        per_lookup: how many best-matching items a lookup averages.
        normalised: the rows are already of unit norm (skip normalising them).

    Raises:
        RefineError: no item has a predicate, the shapes disagree, or a row holds NaN or an
            infinity (E408); ``per_lookup`` is not an int >= 1 (E400).
    """

    name = "bank"

    def __init__(
        self,
        embeddings: Any,
        predicate_sets: Sequence[frozenset[PredicateSymbol]],
        *,
        per_lookup: int = 32,
        normalised: bool = False,
    ) -> None:
        import torch

        from fortekit.search.stage1.rows import first_bad_row

        vectors = torch.as_tensor(embeddings, dtype=torch.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(predicate_sets):
            raise RefineError(Errors.E408.format(
                problem=f"{tuple(vectors.shape)} embeddings for {len(predicate_sets)} predicate sets"
            ))
        bad = first_bad_row(vectors)
        if bad is not None:  # a NaN row would make every anchor it enters NaN
            raise RefineError(Errors.E408.format(problem=f"row {bad} holds NaN or an infinity"))
        check_int(per_lookup, name="per_lookup", error=RefineError, message=Errors.E400,
                  expected="an int >= 1")
        # Normalising twice is not bit-exact: a saved bank is loaded as it was written.
        self.embeddings = vectors if normalised else torch.nn.functional.normalize(vectors, dim=-1)
        self.per_lookup = per_lookup
        self.predicate_sets = [frozenset(symbols) for symbols in predicate_sets]
        postings: dict[str, list[int]] = {}
        for row, symbols in enumerate(self.predicate_sets):
            for symbol in symbols:
                if not symbol.negated:
                    postings.setdefault(symbol.name, []).append(row)
        if not postings:
            raise RefineError(Errors.E408.format(problem="no item has an asserted predicate"))
        self._postings = {name: torch.tensor(rows) for name, rows in postings.items()}
        count = len(self.predicate_sets)
        self._idf = {name: math.log(1 + count / len(rows)) for name, rows in postings.items()}
        self.centre = torch.nn.functional.normalize(self.embeddings.mean(dim=0), dim=0)
        self._device_copies: dict[str, torch.Tensor] = {}

    def __len__(self) -> int:
        return int(self.embeddings.shape[0])

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    @classmethod
    def from_index(cls, index: AudioIndex, **options: Any) -> AnchorBank:
        """The bank of a training collection's index (its embeddings and parsed captions)."""
        import numpy as np

        # A private copy: the index's rows are a read-only memory map.
        return cls(np.array(index.embeddings, dtype=np.float32), index.predicate_sets, **options)

    def lookup(self, predicates: Iterable[PredicateSymbol]) -> torch.Tensor:
        """The mean embedding of the items sharing the most idf-weighted asserted predicates.

        Falls back to the bank's centre when no item shares any (an OOV query).
        """
        import torch

        names = sorted({symbol.name for symbol in predicates if not symbol.negated} & set(self._postings))
        if not names:
            return self.centre
        scores = torch.zeros(len(self), dtype=torch.float32)
        for name in names:
            scores.index_add_(
                0, self._postings[name], torch.full((len(self._postings[name]),), self._idf[name])
            )
        count = min(self.per_lookup, int((scores > 0).sum()))
        # Stable order: equal scores go to the earlier item, so lookups are reproducible.
        order = torch.argsort(-scores, stable=True)[:count]
        return torch.nn.functional.normalize(self.embeddings[order].mean(dim=0), dim=0)

    def anchor_batch(self, requests: Sequence[AnchorRequest]) -> list[Anchors]:
        """e+ (and e- from the negatives' predicates) of each request.

        Raises:
            RefineError: the queries' width is not the bank's (E407): a bank built with
                another backbone.
        """
        found: list[Anchors] = []
        for request in requests:
            if request.query_embedding.shape[-1] != self.dim:
                raise RefineError(Errors.E407.format(
                    what="The anchor bank", got=self.dim, expected=int(request.query_embedding.shape[-1]),
                ) + " Build the bank with this run's backbone.")
            device = request.query_embedding.device
            positive = self.lookup(request.predicates).to(device)
            negative = None
            if request.negative_predicates:
                import torch

                rows = [self.lookup(symbols) for symbols in request.negative_predicates]
                negative = torch.nn.functional.normalize(torch.stack(rows).mean(dim=0), dim=0).to(device)
            found.append(Anchors(positive=positive, negative=negative))
        return found

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write ``anchor_bank.safetensors`` and ``anchor_bank.json`` (no pickle)."""
        from safetensors.torch import save_file

        from fortekit.safe_write import atomic_write, atomic_write_text, create_output_directory

        target = create_output_directory(directory)
        rows = self.embeddings.contiguous()
        # Written beside and renamed (fortekit.safe_write): old or new, never half; no links followed.
        atomic_write(target / "anchor_bank.safetensors",
                     lambda path: save_file({"embeddings": rows}, str(path)))
        meta = {
            "format": 1,
            "per_lookup": self.per_lookup,
            "predicates": [sorted(str(symbol) for symbol in symbols) for symbols in self.predicate_sets],
        }
        atomic_write_text(target / "anchor_bank.json", json.dumps(meta))
        return target

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> AnchorBank:
        """Read a bank written by :meth:`save`, or build one from an index directory.

        Raises:
            RefineError: the files are missing or inconsistent.
        """
        source = Path(directory)
        if (source / "index.json").is_file() and not (source / "anchor_bank.json").is_file():
            from fortekit.search.index.audio_index import AudioIndex

            return cls.from_index(AudioIndex.load(source))
        from fortekit.search.stage1.rows import read_rows, unit_rows
        from fortekit.textio import BadLine, json_value

        try:
            embeddings = read_rows(source / "anchor_bank.safetensors")
            meta = json_value(1, (source / "anchor_bank.json").read_text(encoding="utf-8"))
            if isinstance(meta, BadLine):
                raise ValueError(f"anchor_bank.json is not JSON ({meta.reason})")
            if not isinstance(meta, dict) or not isinstance(meta.get("predicates"), list):
                raise ValueError("anchor_bank.json is not an object with a \"predicates\" list")
            if not all(isinstance(row, list) and all(isinstance(t, str) for t in row)
                       for row in meta["predicates"]):
                raise ValueError("\"predicates\" is not a list of lists of predicate symbols")
            sets = [frozenset(parse_symbol(text) for text in row) for row in meta["predicates"]]
            per_lookup = meta.get("per_lookup", 32)
            if isinstance(per_lookup, bool) or not isinstance(per_lookup, int) or per_lookup < 1:
                raise ValueError(f"per_lookup is {per_lookup!r}, not an int >= 1")
        # UnicodeDecodeError is a ValueError; read_rows turns safetensors' own errors into one.
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            raise RefineError(Errors.E408.format(problem=f"cannot read {source} ({exc})")) from exc
        return cls(embeddings, sets, per_lookup=per_lookup, normalised=unit_rows(embeddings))


def parse_symbol(text: str) -> PredicateSymbol:
    """A predicate symbol from its string form, e.g. ``"¬Rain/1"``.

    Example:
        >>> parse_symbol("¬Rain/1")
        PredicateSymbol(name='Rain', arity=1, polarity=<Polarity.NEGATIVE: '-'>)
    """
    negated = text.startswith("¬")
    name, _, arity = text.lstrip("¬").rpartition("/")
    if not name or not arity.isdigit():
        raise ValueError(f"not a predicate symbol: {text!r}")
    return PredicateSymbol(name, int(arity), Polarity.NEGATIVE if negated else Polarity.POSITIVE)
