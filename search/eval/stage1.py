"""Stage 1 for ``fortekit eval``: anchor sources per setting, and a JSONL cache of the results.

Stage 1 runs once per query set (test or training), anchor setting and search
configuration. Its results are appended to ``<out>/stage1/<set>-<anchors>-<key>.jsonl``
batch by batch (one JSON object per query, q* as base64 float32 bytes, exact), so an
interrupted run loses nothing and a re-run of the same command reads them back instead
of searching again. The key hashes everything the results depend on (backbone, search
configuration, anchor source, data, fortekit version); each line also names its query,
so a line that does not fit is searched again. A torn last line is ignored.

Example:
    >>> from fortekit.search.eval.stage1 import cache_key
    >>> len(cache_key({"anchors": "bank"}))
    12
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fortekit.errors import Errors, EvaluationError
from fortekit.fol.predicates import PredicateSymbol
from fortekit.search.stage1.anchors import ANCHOR_SOURCES, parse_symbol
from fortekit.textio import read_jsonl

if TYPE_CHECKING:
    import torch

    from fortekit.search.eval.data import EmbeddedCollection
    from fortekit.search.stage1.anchors import AnchorBank, AnchorSource
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import RefineConfig
    from fortekit.search.stage1.corpus import CaptionCorpus
    from fortekit.search.stage1.result import RefinementResult

__all__ = ["Stage1Cache", "Stage1Output", "anchor_source", "cache_key", "oracle_negatives", "parse_anchors"]


def cache_key(parts: Mapping[str, Any]) -> str:
    """A short hash of JSON-able settings (the name part of a cache file)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def parse_anchors(spec: str) -> list[str]:
    """The anchor settings of ``--anchors`` ("bank,none,..."), de-duplicated, in order.

    Raises:
        EvaluationError: an unknown source or an empty list (E522).

    Example:
        >>> parse_anchors("bank, none,bank")
        ['bank', 'none']
    """
    names = [name.strip().lower() for name in spec.split(",") if name.strip()]
    for name in names or [spec]:
        if name not in ANCHOR_SOURCES:
            raise EvaluationError(Errors.E522.format(name=name, options=", ".join(ANCHOR_SOURCES)))
    return list(dict.fromkeys(names))


def oracle_negatives(scores: torch.Tensor, targets: Sequence[int]) -> list[int]:
    """Per query, the highest-scoring item that is not its target (the oracle's e-).

    Example:
        >>> import torch
        >>> oracle_negatives(torch.tensor([[0.9, 0.8, 0.1], [0.2, 0.3, 0.7]]), [0, 2])
        [1, 1]
    """
    import torch

    masked = scores.clone().float()
    rows = torch.arange(masked.shape[0])
    masked[rows, torch.as_tensor(list(targets))] = -float("inf")
    return [int(i) for i in masked.argmax(dim=1)]


def anchor_source(
    name: str, part: EmbeddedCollection, bank: AnchorBank | None, corpus: CaptionCorpus | None = None
) -> AnchorSource:
    """The anchor source ``name`` for the queries of ``part``.

    Args:
        name: "none", "proxy" (the frozen first pass over the part's own items), "bank"
            (the training collection's anchor bank) or "oracle" (e+ the query's own item,
            e- the highest-scoring other item under the frozen baseline).
        part: the collection the queries search.
        bank: the anchor bank, required for "bank".
        corpus: the part's item captions, parsed (for "feedback"; default built from its index).

    Returns:
        An object with ``anchor_batch``.

    Raises:
        EvaluationError: an unknown name (E522).
    """
    from fortekit.search.stage1.anchor_sources import make_anchor_source

    if name not in ANCHOR_SOURCES:
        raise EvaluationError(Errors.E522.format(name=name, options=", ".join(ANCHOR_SOURCES)))
    oracle = None
    if name == "oracle":
        negatives = oracle_negatives(part.queries @ part.items.T, part.task.targets)
        # Keyed by text: a caption that is the query of two clips gets the later clip's anchors.
        oracle = {
            query: (part.items[target], part.items[negative])
            for query, target, negative in zip(part.task.queries, part.task.targets, negatives, strict=True)
        }
    return make_anchor_source(name, index=part.index, bank=bank, oracle=oracle, corpus=corpus)


@dataclass
class Stage1Output:
    """Stage 1's results for one query set, in query order.

    Attributes:
        q_star: (n, d) float32 refined query vectors.
        phi_star_predicates: Pred(phi*) per query.
        negative_texts: G(phi-) of each query's first negative elaboration.
        refined_texts: G(phi*) per query.
        seconds: Stage 1 wall time per query, measured when it was searched.
        refined: share of queries whose phi* differs from phi0.
        from_cache: how many results were read from the cache.
        phi_star: phi* per query, as written by ``str(formula)`` (parse it back with
            :func:`fortekit.fol.parse_formula`).
    """

    q_star: torch.Tensor
    phi_star_predicates: list[frozenset[PredicateSymbol]]
    negative_texts: list[str]
    refined_texts: list[str]
    seconds: list[float]
    refined: float
    from_cache: int
    phi_star: list[str] = field(default_factory=list)

    @property
    def seconds_per_query(self) -> float:
        """The mean Stage 1 time of a query."""
        return float(np.mean(self.seconds)) if self.seconds else 0.0


def _ends_with_newline(path: Path) -> bool:
    """Whether a non-empty file's last byte is a newline (read alone: the cache can be large)."""
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _record(index: int, result: RefinementResult, seconds: float) -> dict[str, Any]:
    from fortekit.fol import predicates
    from fortekit.verbalise import verbalise

    vector = result.q_star.detach().to("cpu").float().numpy().astype("<f4")
    negative = verbalise(result.phi_minus[0] if result.phi_minus else result.phi_star)
    return {
        "i": index,
        "query": result.query,
        "refined_text": result.refined_text,
        "phi0": str(result.phi0),
        "phi_star": str(result.phi_star),
        "phi_star_predicates": sorted(str(symbol) for symbol in predicates(result.phi_star)),
        "negative_text": negative,
        "refined": result.phi_star != result.phi0,
        "seconds": round(seconds, 6),
        "q_star_f32": base64.b64encode(vector.tobytes()).decode("ascii"),
    }


#: Queries per batch of the feedback regime (depth 0), where a batch is one encoder call.
FEEDBACK_BATCH = 1024


class Stage1Cache:
    """Runs Stage 1 through one :class:`~fortekit.search.stage1.beam.Refiner`, caching results as JSONL.

    Args:
        refiner: the refiner (its text cache is shared by every setting run through it).
        directory: where the ``.jsonl`` files go.
        batch_size: queries searched together.
        log: called with progress lines.
    """

    def __init__(
        self, refiner: Refiner, directory: Path, *, batch_size: int = 64,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.refiner = refiner
        self.directory = directory
        self.batch_size = batch_size
        self.log = log or (lambda line: None)

    def run(
        self, label: str, queries: Sequence[str], anchors: AnchorSource, config: RefineConfig,
        key: Mapping[str, Any], elaborator: Any = None,
    ) -> Stage1Output:
        """Stage 1 of ``queries`` with ``anchors`` and ``config``, read from the cache where it can be.

        Args:
            label: names the cache file, e.g. "test-bank".
            queries: the query texts.
            anchors: the anchor source.
            config: the search configuration.
            key: what else the results depend on (data, backbone, version).
            elaborator: the elaborator for these queries, an instance or a registered name
                (default: the refiner's own).

        Returns:
            The :class:`Stage1Output`.

        Raises:
            EvaluationError: the cache cannot be read or written (E525, E524).
        """
        if isinstance(elaborator, str):
            from fortekit.plugins import get_elaborator

            elaborator = get_elaborator(elaborator)
        if elaborator is not None:
            self.refiner.elaborator = elaborator
        from fortekit.plugins import backbone_identity

        full_key = {
            **key, "config": config.to_dict(), "anchors": anchors.name, "queries": len(queries),
            # the model itself (weights path, size, mtime; options), not only its plug-in's name:
            # two models of one name never share cached Stage 1 results
            "backbone_identity": backbone_identity(self.refiner.backbone),
            "anchor_settings": getattr(anchors, "settings", None),
            "elaborator": getattr(self.refiner.elaborator, "settings", self.refiner.elaborator.name),
        }
        path = self.directory / f"{label}-{cache_key(full_key)}.jsonl"
        records = self._read(path, queries)
        missing = [i for i in range(len(queries)) if i not in records]
        if missing:
            self.refiner.anchors = anchors
            self.refiner.config = config
            self._search(path, queries, missing, records, full_key, label)
        ordered = [records[i] for i in range(len(queries))]
        import torch

        vectors = np.stack([
            np.frombuffer(base64.b64decode(record["q_star_f32"]), dtype="<f4") for record in ordered
        ])
        return Stage1Output(
            q_star=torch.from_numpy(vectors.astype(np.float32)),
            phi_star_predicates=[
                frozenset(parse_symbol(text) for text in record["phi_star_predicates"]) for record in ordered
            ],
            negative_texts=[str(record["negative_text"]) for record in ordered],
            refined_texts=[str(record["refined_text"]) for record in ordered],
            seconds=[float(record["seconds"]) for record in ordered],
            refined=float(np.mean([bool(record["refined"]) for record in ordered])),
            from_cache=len(queries) - len(missing),
            phi_star=[str(record["phi_star"]) for record in ordered],
        )

    def _read(self, path: Path, queries: Sequence[str]) -> dict[int, dict[str, Any]]:
        records: dict[int, dict[str, Any]] = {}
        if not path.exists():
            return records
        try:  # fortekit.textio: lines end at "\n" only (a query may hold U+2028), strict UTF-8
            lines = list(read_jsonl(path))
        except OSError as exc:
            raise EvaluationError(Errors.E525.format(path=path, problem=exc)) from None
        for _, record in lines:
            try:  # a bad line (BadLine) fails the subscript below: a TypeError
                index = int(record["i"])
                fits = 0 <= index < len(queries) and record["query"] == queries[index]
                if fits and len(base64.b64decode(record["q_star_f32"])) % 4 == 0:
                    records[index] = record
            except (ValueError, KeyError, TypeError):
                continue  # a torn or foreign line: that query is searched again
        return records

    def _search(
        self, path: Path, queries: Sequence[str], missing: list[int], records: dict[int, dict[str, Any]],
        key: Mapping[str, Any], label: str,
    ) -> None:
        from fortekit.safe_write import check_not_symlink, create_output_directory

        # Appended to (a resumable cache, read back line by line), so not replaced atomically;
        # but never through a planted link, and in a folder marked as fortekit's.
        create_output_directory(path.parent)
        check_not_symlink(path)
        try:
            handle = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise EvaluationError(Errors.E524.format(path=path, problem=exc)) from None
        started = time.perf_counter()
        with handle:
            if path.stat().st_size == 0:
                handle.write(json.dumps({"key": dict(key)}, default=str) + "\n")
            elif not _ends_with_newline(path):
                handle.write("\n")  # end a torn last line, so the next record starts on its own
            # depth 0 searches nothing: its batch is an encoder batch, and a larger one lets the
            # encoder sort more texts by length (less padding), as the first pass's one call does
            depth = self.refiner.config.max_depth
            size = self.batch_size if depth > 0 else max(self.batch_size, FEEDBACK_BATCH)
            for start in range(0, len(missing), size):
                chunk = missing[start:start + size]
                tick = time.perf_counter()
                results = self.refiner.refine_many([queries[i] for i in chunk], batch_size=size)
                share = (time.perf_counter() - tick) / len(chunk)
                for index, result in zip(chunk, results, strict=True):
                    record = _record(index, result, share)
                    records[index] = record
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                handle.flush()
                done = start + len(chunk)
                self.log(f"  stage 1 [{label}]: {done}/{len(missing)} queries "
                         f"({time.perf_counter() - started:.0f} s)")
