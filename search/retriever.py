"""``Retriever``: an index, a backbone and a :class:`PipelineSpec`, behind one ``search()``.

The pipeline, in order, each part optional (the spec says which; :mod:`fortekit.search.pipeline`):

1. Stage 1 ("refine"): each query is refined to q* and phi*; without it the query is encoded as
   it is and parsed to phi0 = Π(q).
2. Stage 2 (a projection head): the items are projected once, h(e_a).
3. The first pass: the exact top ``candidates`` items by cosine (the index's rows at unit
   length, :meth:`~fortekit.search.index.audio_index.AudioIndex.embedding_tensor`), or the
   index's saved ANN index.
4. Formula scoring (:mod:`fortekit.search.formula.scoring`): the candidates are re-scored by
   the query's formula.
5. Stage 3 ("rerank", :class:`~fortekit.search.rerank.Reranker`): the top 50 are re-ranked with
   the items' caption predicates, where the index holds captions; then the order check.

The defaults depend on the kind of index (:mod:`fortekit.search.pipeline.defaults`, a table
chosen on development data: docs/defaults.md). :attr:`Retriever.pipeline` says what runs and why.

Example:
    >>> retriever = Retriever("clips.index")  # doctest: +SKIP
    >>> result = retriever.search("a dog barking without people talking", explain=True)  # doctest: +SKIP
    >>> [(hit.rank, hit.item_id, round(hit.score, 3)) for hit in result.hits]  # doctest: +SKIP
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from fortekit.errors import Errors, RetrieverError
from fortekit.fol.predicates import PredicateSymbol
from fortekit.search.hits import Confidence, Hit, PushedDown, SearchResult, explain_predicates
from fortekit.search.pipeline import Pipeline, PipelineSpec, Stages, assemble
from fortekit.search.pipeline.assemble import caption_names
from fortekit.search.pipeline.explain import (
    NullSimilarity,
    confidence,
    null_similarity,
    pushed_down,
    random_texts,
    score_parts,
    split_projection,
)
from fortekit.search.query_side import RefinementLookup, prepare_queries

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.formula.config import QueryPlan
    from fortekit.search.formula.evidence import LabelEvidence
    from fortekit.search.formula.order_check import OrderCheck
    from fortekit.search.formula.scoring import FormulaScorer
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.rerank import Reranker
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.encoder import CachedTextEncoder
    from fortekit.search.stage1.result import RefinementResult

__all__ = ["Hit", "PipelineSpec", "RefinementLookup", "Retriever", "SearchResult", "explain_predicates"]

class Retriever:
    """Rank an index for text queries through the stages of a :class:`PipelineSpec`.

    The Retriever only ranks: which stages run is the spec's business (each stage "auto", off
    or a configuration; :meth:`PipelineSpec.from_switches` reads switches), and
    :func:`~fortekit.search.pipeline.assemble.assemble` builds them for this index.

    Args:
        index: an :class:`~fortekit.search.index.audio_index.AudioIndex`, or its directory.
        spec: the stages to run; None: every stage as the index's kind has it
            (:mod:`fortekit.search.pipeline.defaults`).
        backbone: the text encoder: an instance, a registered name, a
            :class:`~fortekit.search.stage1.encoder.CachedTextEncoder` whose text cache is shared,
            or None for the one the index was built with (its recorded options, except a recorded
            ``device``: ``device`` decides). A Stage 1 refiner in the spec brings its own.
        device: "auto", "cpu", "cuda", ...
        cache_dir: a directory for the on-disk text-embedding cache, or None.
        threads: torch's CPU threads for this process (:mod:`fortekit._threads`): an int; "auto"
            for the policy's count (the physical cores this process may use); None (default):
            the count the process already chose (a command's ``--threads``), else the policy's.
        first_pass: "exact", "ann" or "auto", the spec's ``first_pass`` (``--first-pass`` of the
            commands); None keeps the spec's. :attr:`first_pass` says which runs and why.

    Raises:
        AudioIndexError: an index that cannot be read (E42x) or another backbone (E609).
        PipelineError: a spec that does not fit the index (E423).
        ThreadsError: a bad ``threads`` (E830).
        FortekitError: from the backbone, Stage 1 or the projection file, with their codes.

    Example:
        >>> retriever = Retriever("clips.index", PipelineSpec(stage1=None))  # doctest: +SKIP
        >>> retriever.search(["rain on a roof", "a dog without people talking"], k=3)  # doctest: +SKIP
    """

    def __init__(
        self,
        index: AudioIndex | str | os.PathLike[str],
        spec: PipelineSpec | None = None,
        *,
        backbone: Backbone | CachedTextEncoder | str | None = None,
        device: str = "auto",
        cache_dir: str | os.PathLike[str] | None = None,
        threads: int | str | None = None,
        first_pass: Literal["auto", "exact", "ann"] | None = None,
    ) -> None:
        from fortekit._threads import ensure_threads
        from fortekit.plugins import get_backbone
        from fortekit.search.index.audio_index import AudioIndex
        from fortekit.search.stage1.beam import Refiner
        from fortekit.search.stage1.encoder import CachedTextEncoder

        if spec is None:
            spec = PipelineSpec()
        if not isinstance(spec, PipelineSpec):
            raise RetrieverError(Errors.E424.format(name="spec", expected="a PipelineSpec or None",
                                                    value=type(spec).__name__))
        if first_pass is not None:  # the spec's field, as the commands' --first-pass gives it
            spec = replace(spec, first_pass=first_pass)
        self.threads = ensure_threads(threads)
        self.index = index if isinstance(index, AudioIndex) else AudioIndex.load(index)
        shared: CachedTextEncoder | None = None
        if isinstance(backbone, CachedTextEncoder):
            shared, backbone = backbone, backbone.backbone
        if backbone is None and isinstance(spec.stage1, Refiner):
            backbone = spec.stage1.backbone
        if backbone is None or isinstance(backbone, str):
            # A recorded "device" (the Python API records what it was given) is where the index was
            # built; `device` says where to run now.
            options = {key: value for key, value in self.index.meta.backbone_options.items()
                       if key != "device"} if backbone is None else {}
            options.setdefault("device", device)
            backbone = get_backbone(backbone or self.index.backbone_name, **options)
        self.index.check_backbone(backbone)
        self.backbone: Backbone = backbone
        self.device = device
        self._cache_dir = cache_dir
        self._adopt(assemble(spec, self.index, backbone, encoder=shared, device=device, cache_dir=cache_dir))

    def _adopt(self, stages: Stages) -> None:
        """Take the assembled stages as this retriever's."""
        self.stages = stages
        self.spec: PipelineSpec = stages.spec
        self.pipeline: Pipeline = stages.pipeline
        self.encoder: CachedTextEncoder = stages.encoder
        self.refiner: Refiner | None = stages.refiner
        self.lookup: RefinementLookup | None = stages.lookup
        self.projection: str | os.PathLike[str] | None = stages.projection
        self.formula_scorer: FormulaScorer | None = stages.formula_scorer
        self.reranker: Reranker | None = stages.reranker
        self.order_check: OrderCheck | None = stages.order_check
        self.use_faiss = stages.use_ann
        self.projected = stages.projected
        self.candidates = stages.candidates
        self.evidence: LabelEvidence | None = stages.evidence
        self._caption_names: list[frozenset[str]] | None = stages.captions
        self._captions_given = stages.captions is not None
        self._items: torch.Tensor | None = None
        self._null: NullSimilarity | None = None

    def companion_texts(self, formula: Formula) -> list[str]:
        """The clause texts formula scoring will encode for a query's formula (none without it).

        Encoded in the query's own call, they are in the text cache when formula scoring asks:
        a query costs one encoder call. An excluded sound that the items' captions judge needs no
        similarity and is left out.

        Example:
            >>> retriever.companion_texts(parse_formula("∃x Dog(x) ∧ ∃y Rain(y)"))  # doctest: +SKIP
            ['a dog', 'rain']
        """
        if self.formula_scorer is None:
            return []
        judged = self.evidence is None and self.caption_names is not None
        return self.formula_scorer.companion_texts(formula, captions_judge=judged)

    def __repr__(self) -> str:
        stages = [
            "lookup" if self.lookup is not None else None,
            "stage1" if self.refiner is not None else None,
            "projection" if self.projection is not None else None,
            "formula" if self.formula_scorer is not None else None,
            "rerank" if self.reranker is not None else None,
            "order_check" if self.order_check is not None else None,
        ]
        return (f"Retriever({len(self.index)} items, backbone={self.backbone.name!r}, "
                f"kind={self.pipeline.kind!r}, stages=[{', '.join(s for s in stages if s)}])")

    def replace(self, **changes: Any) -> Retriever:
        """A retriever over the same index, backbone and text cache, with some spec fields changed.

        Nothing is loaded again: the index, the encoder (and its cache) are shared, and so are
        Stage 1 and the item vectors when they do not change. The benchmark builds each system it
        reports this way, and ``fortekit serve`` switches stages per request.

        Args:
            changes: fields of :class:`PipelineSpec` (``formula=None``, ``rerank=Reranker()``,
                ``stage1=refiner``, ``projection=path``, ``candidates=...``, ``evidence=...``,
                ``captions=...``).

        Returns:
            The new :class:`Retriever`.

        Raises:
            PipelineError: a change that makes no valid spec (E423).

        Example:
            >>> plain = retriever.replace(formula=None, rerank=None)  # doctest: +SKIP
        """
        spec = self.spec.replace(**changes)
        other = object.__new__(Retriever)
        other.__dict__.update(self.__dict__)
        other._adopt(assemble(spec, self.index, self.backbone, device=self.device, cache_dir=self._cache_dir,
                              previous=self.stages))
        if other.projection == self.projection:
            other._items = self._items
        if spec.captions is None and self._captions_given and "captions" not in changes:
            other._caption_names, other._captions_given = self._caption_names, True
        return other

    @property
    def caption_names(self) -> list[frozenset[str]] | None:
        """Per item, the asserted symbol names of its captions (None: the index holds no parse).

        What formula scoring judges an excluded sound by, and what a hit's ``violated`` mark reads
        (:mod:`fortekit.fol.violation`): the index's caption predicates, or those the spec gives
        (``PipelineSpec(captions=...)``).
        """
        if self._caption_names is None and not self._captions_given:
            sets = self.index.predicate_sets
            if sets and any(sets):
                self._caption_names = caption_names(sets, len(self.index))
            self._captions_given = True
        return self._caption_names

    @property
    def first_pass(self) -> str:
        """Where the candidate pool comes from: "exact", or the ANN kind and its measured recall.

        Example:
            >>> retriever.first_pass  # doctest: +SKIP
            'exact (the index has no ANN part; fortekit index build --ann hnsw adds one)'
        """
        from fortekit.search.pipeline.assemble import first_pass_reason

        reason = first_pass_reason(self.spec, self.index)
        if not self.use_faiss:
            return reason if reason.startswith("exact") else "exact"
        part = self.index.projected_ann
        recall = part.recall if self.projected and part is not None else self.index.meta.ann_recall
        measured = "" if recall is None else f"; recall@10 against exact {recall:.3f}, measured at build"
        return reason if measured == "" else f"{reason[:-1]}{measured})"

    @property
    def items(self) -> torch.Tensor:
        """The item vectors the queries are scored against: unit rows (projected once with Stage 2).

        With the head whose projected rows the index holds (:attr:`projected`), those rows, as stored.
        """
        if self._items is None:
            import torch

            vectors = self.index.embedding_tensor("cpu")
            stored = self.index.projected_rows if self.projected else None
            if stored is not None:
                import numpy as np

                vectors = torch.from_numpy(stored if stored.flags.writeable else np.array(stored))
            elif self.projection is not None:
                from fortekit.search.projection.files import load_projection
                from fortekit.search.projection.head import project_embeddings

                head = load_projection(Path(self.projection))
                vectors = torch.nn.functional.normalize(
                    torch.from_numpy(project_embeddings(head, vectors)).float(), dim=1,
                )
            self._items = vectors
        return self._items

    @overload
    def search(  # type: ignore[overload-overlap]  # a str is a Sequence[str]: the first overload wins
        self, queries: str, k: int = 10, *, explain: bool = False,
        refinements: Mapping[str, RefinementResult] | None = None,
    ) -> SearchResult: ...

    @overload
    def search(
        self, queries: Sequence[str] | Iterable[str], k: int = 10, *, explain: bool = False,
        refinements: Mapping[str, RefinementResult] | None = None,
    ) -> list[SearchResult]: ...

    def search(
        self, queries: str | Sequence[str] | Iterable[str], k: int = 10, *, explain: bool = False,
        refinements: Mapping[str, RefinementResult] | None = None,
    ) -> SearchResult | list[SearchResult]:
        """Rank the index for each query: one encoder call per batch (and per Stage 1 depth).

        One query (a str) gives one :class:`SearchResult`; a list of queries gives a list, as
        sentence-transformers' ``encode`` gives one vector for a str and a matrix for a list.

        Every command that ranks (``fortekit search``, ``fol-refine --index``, ``fortekit serve``)
        and the benchmark's loop (:meth:`rank`) go through here, so one query gets
        one ranking and one score, whichever of them asked.

        Args:
            queries: one query (a str) or several (a list, a tuple, a NumPy array of strings;
                NumPy strings are read as the str they hold).
            k: hits per query.
            explain: fill each hit's clause similarities and each result's ``unsure`` lines (the
                matched, missed and violated predicates are always filled).
            refinements: Stage 1 results already made for some of the queries, by query text
                (fol-refine ranks the batch it has just refined): they are used as they are,
                not searched again.

        Returns:
            For a str (or a NumPy string scalar), its :class:`SearchResult`; for a list (a tuple,
            an array), one :class:`SearchResult` per query, in order.

        Raises:
            EmptyCaptionError, CaptionTooLongError, CaptionTypeError: a query that is empty,
                too long or not a str (E300-E302).
            RetrieverError: ``k`` < 1 (E424).

        Example:
            >>> [hit.item_id for hit in retriever.search("rain on a roof", k=2).hits]  # doctest: +SKIP
            ['clip3', 'clip0']
            >>> [len(result.hits) for result in retriever.search(["rain", "a dog"], k=2)]  # doctest: +SKIP
            [2, 2]
        """
        from fortekit.fol.caption.pipeline import check_text

        # bytes are one (undecoded) query, not a sequence of ints: check_text says how to decode it
        # A NumPy array or another iterable of strings is a list of queries; a str is one query.
        single = isinstance(queries, (str, bytes, bytearray)) or not isinstance(queries, Iterable)
        given: list[object] = [queries] if single else list(queries)
        _check_count(k, "k")
        texts = [check_text(text, function="Retriever.search") for text in given]
        if not texts:
            return []
        results = self._search(texts, k, explain=explain, refinements=refinements)
        return results[0] if single else results

    def _search(
        self, texts: list[str], k: int, *, explain: bool,
        refinements: Mapping[str, RefinementResult] | None,
    ) -> list[SearchResult]:
        """:meth:`search` of checked query texts: one result per query, in order."""
        from fortekit.fol.predicates import predicates

        side = prepare_queries(texts, self.encoder, refiner=self.refiner, lookup=self.lookup,
                               refined=refinements, companions=self._with_null_texts())
        formulas = side.formulas
        # Formula scoring judges the query's own formula (side.logic); Stage 3 and the hits'
        # explanations read phi*. Planned once: the ranking and the result's clauses agree.
        plans = self.formula_scorer.plan(side.logic) if self.formula_scorer is not None else None
        query_sets = [frozenset() if phi is None else predicates(phi) for phi in formulas]
        stages: list[tuple[str, torch.Tensor, torch.Tensor]] = []
        scores, rows = self.rank(side.vectors, side.logic, k, plans=plans, query_predicates=query_sets,
                                 stages=stages)
        unsure = unresolved_scopes(texts) if explain else [()] * len(texts)
        if explain and plans is not None:
            # negated clauses formula scoring could not judge by evidence (issue 42, item 2)
            unsure = [(*lines, *(f"not '{plan.texts[j]}': {reason}; left to the whole-query similarity"
                                 for j, reason in sorted(plan.unsure.items())),
                       *(f"'{text}': the query holds words the parser does not understand "
                         f"({', '.join(plan.doubted_words)}); left to the whole-query similarity"
                         for text in plan.doubted))
                      for lines, plan in zip(unsure, plans, strict=True)]
        out: list[SearchResult] = []
        for q, text in enumerate(texts):
            plan = plans[q] if plans is not None else None
            clauses = (
                tuple(zip(plan.texts, plan.negated, strict=True)) if plan is not None and plan.scored else ()
            )
            clause_vectors = (
                self.formula_scorer.encode_clauses([plan])
                if explain and clauses and plan is not None and self.formula_scorer is not None
                else {}
            )
            hits = []
            found = [(score, row) for score, row in zip(scores[q].tolist(), rows[q].tolist(), strict=True)
                     if row >= 0]  # a FAISS IVF search may find fewer than k
            # each stage's rows and scores of this query, read once for the parts, the moves and
            # the confidence; the plain cosines of the candidate pool in the encoder's own space
            stage_rows = [r[q].tolist() for _, _, r in stages]
            by_stage = [(name, dict(zip(rows_q, s[q].tolist(), strict=True)))
                        for (name, s, _), rows_q in zip(stages, stage_rows, strict=True)]
            plain = self._plain_cosines(stage_rows[0] if stage_rows else [], side.vectors[q])
            for rank, (score, row) in enumerate(found, 1):
                hit = self._hit(rank, row, score, query_sets[q], clause_vectors, clauses, explain,
                                side.logic[q])
                parts = score_parts(row, by_stage)
                if self.projection is not None:  # Stage 2's share: the head's cosine minus the plain one
                    parts = split_projection(parts, plain[row])
                hits.append(replace(hit, score_parts=parts))
            moved = (self._pushed_down(stage_rows, by_stage, k, plan, side.logic[q])
                     if plan is not None else ())
            sure = self._confidence(max(plain.values(), default=None), hits, query_sets[q])
            out.append(SearchResult(
                text, tuple(hits), side.phi0[q], None if formulas[q] is None else str(formulas[q]),
                side.refined[q], clauses, plan.reason if plan is not None else "off", side.sources[q],
                unsure=unsure[q], pushed_down=moved, confidence=sure,
            ))
        return out

    def rank(
        self, vectors: torch.Tensor, formulas: Sequence[Formula | None], k: int = 10, *,
        plans: Sequence[QueryPlan] | None = None,
        query_predicates: Sequence[frozenset[PredicateSymbol]] | None = None,
        timings: MutableMapping[str, float] | None = None,
        stages: list[tuple[str, torch.Tensor, torch.Tensor]] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rank the items for query vectors and their formulas: the stages after the query side.

        The first pass over the top ``candidates``, formula scoring, Stage 3; for callers
        that make q* and phi* themselves (fol-refine with a lookup table, the benchmark).

        Args:
            vectors: (queries, d) query vectors (q* or f_T(q)).
            formulas: per query, its formula (phi* or phi0; None: similarity alone).
            k: hits per query.
            plans: formula scoring's plans of ``formulas``, when the caller already made them.
            query_predicates: per query, the predicate set Stage 3 compares with the items'
                (default: Pred of ``formulas``); the benchmark's audio-to-text direction passes
                the item captions' sets.
            timings: when given, the seconds of ``first_pass``, ``formula``, ``rerank`` and
                ``order_check`` are added to it.
            stages: when given, ``(stage, scores, rows)`` after each stage that ran is appended
                to it (``similarity``, ``formula``, ``stage3``, ``order``): the hits' score parts.

        Returns:
            ``(scores, rows)``, (queries, min(k, items)), best first.

        Example:
            >>> scores, rows = retriever.rank(q_star, [phi_star], k=10)  # doctest: +SKIP
        """
        from fortekit.fol.predicates import predicates
        from fortekit.search.index.search import exact_top_k

        clock = timings if timings is not None else {}
        items = self.items
        tick = time.perf_counter()
        pool = min(max(k, self.candidates), len(self.index))
        if self.use_faiss and self.projected:  # the ANN part over the rows the head projects
            scores, rows = self.index.search_projected(vectors.detach().float().cpu(), pool)
        elif self.use_faiss:
            scores, rows = self.index.search(vectors.detach().float().cpu(), pool, use_faiss=True)
        else:
            scores, rows = exact_top_k(items, vectors.detach().float().cpu(), pool)
        tick = _lap(clock, "first_pass", tick)
        if stages is not None:
            stages.append(("similarity", scores, rows))
        if self.formula_scorer is not None:
            # the places read after formula scoring: the hits, and Stage 3's and the order check's heads
            depth = max(k, self.reranker.top_n if self.reranker is not None else 0,
                        self.order_check.top_n if self.order_check is not None else 0)
            scores, rows = self.formula_scorer.rescore(formulas, scores, rows, items, plans=plans,
                                                       evidence=self.evidence, captions=self.caption_names,
                                                       depth=depth)
            tick = _lap(clock, "formula", tick)
            if stages is not None:
                stages.append(("formula", scores, rows))
        item_sets = self.index.predicate_sets
        if self.reranker is not None and any(item_sets):
            query_sets = list(query_predicates) if query_predicates is not None else [
                frozenset() if phi is None else predicates(phi) for phi in formulas
            ]
            scores, rows = self.reranker.rerank((scores, rows), query_sets, item_sets, formulas=formulas,
                                                item_names=self.caption_names)
            tick = _lap(clock, "rerank", tick)
            if stages is not None:
                stages.append(("stage3", scores, rows))
        if self.order_check is not None:
            scores, rows = self.order_check.apply(formulas, scores, rows)
            _lap(clock, "order_check", tick)
            if stages is not None:
                stages.append(("order", scores, rows))
        return scores[:, :k], rows[:, :k]

    def _plain_cosines(self, pool: Sequence[int], vector: torch.Tensor) -> dict[int, float]:
        """The query's cosine to each candidate in the encoder's own space (unprojected rows)."""
        rows = [row for row in pool if row >= 0]
        if not rows:
            return {}
        cosines = self.index.embedding_tensor("cpu")[rows] @ vector.detach().float().cpu()
        return dict(zip(rows, cosines.tolist(), strict=True))

    def _pushed_down(
        self, stage_rows: Sequence[list[int]], by_stage: Sequence[tuple[str, Mapping[int, float]]], k: int,
        plan: QueryPlan, formula: Formula | None,
    ) -> tuple[PushedDown, ...]:
        """For a query with a negated clause, the first pass's top-k items the stages moved out."""
        if len(stage_rows) < 2 or not plan.scored or not any(plan.negated):
            return ()
        first_rows = [row for row in stage_rows[0] if row >= 0]
        final_rows = [row for row in stage_rows[-1] if row >= 0]
        shown = set(final_rows[:k])
        evidence: dict[int, list[str]] = {}
        for row in first_rows[:k]:
            if row in shown:
                continue
            lines = []
            if self.caption_names is not None and formula is not None:
                from fortekit.fol.violation import default_check

                violated = default_check().violated(formula, self.caption_names[row])
                if violated:
                    lines.append("its caption says " + ", ".join(violated))
            lines += [f"{stage} {amount:+.3f}" for stage, amount in score_parts(row, by_stage)[1:]
                      if abs(amount) > 5e-7]
            evidence[row] = lines
        return tuple(PushedDown(self.index.ids[row], self.index.captions[row], was, now, why)
                     for row, was, now, why in pushed_down(first_rows, final_rows, k, evidence))

    def _confidence(
        self, best: float | None, hits: Sequence[Hit], query_set: frozenset[PredicateSymbol],
    ) -> Confidence:
        """W860 when no hit's caption shares an asserted predicate of the query; W861 when the
        best plain cosine of the candidates (the encoder's own space: Stage 2's head compresses
        the cosines it ranks by) is within random text's reach on this index."""
        if best is None:
            return Confidence(False)
        asserted = sorted(str(symbol) for symbol in query_set if not str(symbol).startswith("¬"))
        matched_any = None
        if self.index.predicate_sets and asserted and hits:
            matched_any = any(any(not name.startswith("¬") for name in hit.matched) for hit in hits)
        return Confidence(*confidence(best, self.null_similarity(), matched_any=matched_any,
                                      predicates=asserted))

    def null_similarity(self) -> NullSimilarity:
        """The index's noise floor for this backbone: the best similarity random texts reach (cached).

        Example:
            >>> retriever.null_similarity().floor  # doctest: +SKIP
            0.21
        """
        if self._null is None:
            vectors = self.encoder.encode(random_texts())
            self._null = null_similarity(vectors.detach().float().cpu(), self.index.embedding_tensor("cpu"))
        return self._null

    def _with_null_texts(self) -> Callable[[Formula], Sequence[str]]:
        """The companion texts of a query's formula, and, until the noise floor is known, the
        random texts that measure it: in the query's own encoder call, not a call of their own."""
        pending = self._null is None

        def companions(formula: Formula) -> list[str]:
            nonlocal pending
            texts = self.companion_texts(formula)
            if pending:
                pending = False
                texts = [*texts, *random_texts()]
            return texts

        return companions

    def _hit(
        self, rank: int, row: int, score: float, query_set: frozenset[PredicateSymbol],
        clause_vectors: dict[str, torch.Tensor], clauses: tuple[tuple[str, bool], ...], explain: bool,
        formula: Formula | None = None,
    ) -> Hit:
        index = self.index
        matched: tuple[str, ...] = ()
        missed: tuple[str, ...] = ()
        violated: tuple[str, ...] = ()
        sims: tuple[float, ...] = ()
        item_set = index.predicate_sets[row] if index.predicate_sets else frozenset()
        if item_set:
            matched, missed, violated = explain_predicates(query_set, item_set)
        names = self.caption_names
        if names is not None and formula is not None:
            # judged by meaning (fortekit.fol.violation), the one check of every violation mark;
            # a qualifier's literal opposite ("not loud" against "loud") still counts
            from fortekit.fol.violation import default_check

            grounded = default_check().violated(formula, names[row])
            violated = tuple(dict.fromkeys((*grounded, *violated)))
        if explain and clause_vectors:
            item = self.items[row]
            sims = tuple(float(clause_vectors[text] @ item) for text, _ in clauses)
        return Hit(rank, index.ids[row], float(score), index.captions[row], index.paths[row],
                   matched, missed, violated, sims)


def unresolved_scopes(texts: Sequence[str]) -> list[tuple[str, ...]]:
    """Per query, its negations and connectives whose scope the parser left unresolved, as lines.

    Example:
        >>> unresolved_scopes(["rain apart from thunder", "rain without thunder"])
        [("'apart from' (preposition): ambiguous cue; left to the whole-query similarity",), ()]
    """
    from fortekit.fol.caption.parser import default_parser

    out: list[tuple[str, ...]] = []
    for result in default_parser().parse_many(texts):
        out.append(tuple(
            f"'{note.cue}' ({note.cue_class}): {note.reason}; left to the whole-query similarity"
            for note in result.unresolved
        ))
    return out


def _check_count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RetrieverError(Errors.E424.format(name=name, expected="an int >= 1 (k=10 is the default)",
                                                value=value))
    return value


def _lap(timings: MutableMapping[str, float], step: str, since: float) -> float:
    now = time.perf_counter()
    timings[step] = timings.get(step, 0.0) + now - since
    return now
