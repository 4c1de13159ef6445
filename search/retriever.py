"""``Retriever``: an index, a backbone and the stages a user switches on, behind one ``search()``.

The pipeline, in order, each part optional:

1. Stage 1 (a :class:`~fortekit.search.stage1.config.RefineConfig`): each query is refined to
   q* and phi*; without it the query is encoded as it is and parsed to phi0 = Π(q).
2. Stage 2 (a trained projection file): the items are projected once, h(e_a).
3. The first pass: the exact top ``candidates`` items by cosine (the index's rows at unit
   length, :meth:`~fortekit.search.index.audio_index.AudioIndex.embedding_tensor`, also for an
   index saved with ``normalise=False``: every path ranks as ``fortekit index query`` does).
4. Formula scoring (:mod:`fortekit.search.formula.scoring`, on by default): the
   candidates are re-scored by the query's formula.
5. Stage 3 (:class:`~fortekit.search.rerank.Reranker`, its default on): the top 50 are
   re-ranked with the items' caption predicates, where the index holds captions.

The defaults depend on the kind of index (:mod:`fortekit.search.defaults`, a table chosen on
development data: docs/defaults.md): on human captions embedded as text, Stage 1 (corpus
elaborator, feedback anchors), the Stage 2 head shipped for the backbone, formula scoring and
Stage 3; on audio, formula scoring, Stage 3 and the order check where the items have captions.
Every stage can be switched by name; :attr:`Retriever.pipeline` says what runs and why.

Example:
    >>> retriever = Retriever("clips.index")  # doctest: +SKIP
    >>> result = retriever.search("a dog barking without people talking", explain=True)[0]  # doctest: +SKIP
    >>> [(hit.rank, hit.item_id, round(hit.score, 3)) for hit in result.hits]  # doctest: +SKIP
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, EvaluationError
from fortekit.fol.predicates import PredicateSymbol
from fortekit.search.defaults import Pipeline
from fortekit.search.hits import Hit, SearchResult, explain_predicates
from fortekit.search.query_side import RefinementLookup, prepare_queries
from fortekit.search.stages import DEFAULT, choose_stages

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.formula.config import QueryPlan
    from fortekit.search.formula.evidence import LabelEvidence
    from fortekit.search.formula.order_check import OrderCheck
    from fortekit.search.formula.scoring import FormulaScorer, FormulaScoringConfig
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.rerank import Reranker
    from fortekit.search.stage1.anchors import AnchorSource
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import RefineConfig
    from fortekit.search.stage1.encoder import CachedTextEncoder
    from fortekit.search.stage1.result import RefinementResult

__all__ = ["Hit", "RefinementLookup", "Retriever", "SearchResult", "build_retriever", "explain_predicates"]

class _Sentinel:
    """A default that ``help()`` shows by its meaning, not as ``<object object at 0x...>``."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def __repr__(self) -> str:
        return f"<{self._text}>"


# Typed Any, so that a parameter keeps its real type in help(); `is` tells the sentinel apart.
# "The default of the index's kind" (search/defaults.toml), as distinct from None ("off").
_DEFAULT: Any = DEFAULT
_KEEP: Any = _Sentinel("as this retriever has it")  # with_stages


class Retriever:
    """Search an index with text queries through the stages a user switches on.

    Args:
        index: an :class:`~fortekit.search.index.audio_index.AudioIndex`, or its directory.
        backbone: the text encoder: an instance, a registered name, or None for the one
            the index was built with (its recorded options are reused, except a recorded
            ``device``: `device` decides).
        backbone_options: options of the backbone plug-in over the recorded ones, when ``backbone``
            is a name or None (a ``device`` among them decides where it runs, else ``device``).
        stage1: a :class:`~fortekit.search.stage1.config.RefineConfig` to refine each query first
            (Stage 1), None to search with the query as it is; left out: the default of the
            index's kind (online Stage 1 on caption-indexed collections).
        elaborator: Stage 1's elaborator: "auto" (default: "corpus" when the index holds item
            captions, else "lexical"), "corpus" (the nearest item captions of this index,
            parsed once: see docs/refine.md), a registered name or an instance.
        anchors: Stage 1's anchor source: "auto" (default: "feedback" when the index holds
            item captions, else none), a name ("feedback": the first pass over this index
            judged by the formula; "proxy"), an instance, or None (the pivot alone).
        lookup: stored Stage 1 results (a :class:`RefinementLookup`, e.g. ``LookupTable.load(path)``):
            a query it holds is searched with its stored refinement, without a search; the others
            go through Stage 1 when ``stage1`` is given, else as they are.
        projection: a trained Stage 2 head (a ``.safetensors`` file or its directory), or None
            for none; left out: the head shipped for the backbone where the index's kind uses one
            (:mod:`fortekit.search.projection.shipped`).
        formula: a :class:`~fortekit.search.formula.scoring.FormulaScoringConfig`; None switches
            formula scoring off; left out: the default config, where the kind uses it.
        rerank: a :class:`~fortekit.search.rerank.Reranker`; None switches Stage 3 off (it is
            also off when the index has no captions); left out: Stage 3's default, where the
            kind uses it.
        candidates: first-pass items re-scored per query.
        device: "auto", "cpu", "cuda", ...
        cache_dir: a directory for the on-disk text-embedding cache, or None.
        encoder: a :class:`~fortekit.search.stage1.encoder.CachedTextEncoder` to share (its text
            cache) with a caller's Stage 1 refiner; None to make one.
        order_check: sort each ranking's best 50 items by whether their caption states the
            query's event order ("a dog barks, then a bell rings"; :mod:`~.formula.order_check`),
            after Stage 3; left out: the kind's default (on for audio items with captions).
        evidence: a tagger's :class:`~fortekit.search.formula.evidence.LabelEvidence` for the index's
            items (one row per item): formula scoring judges the clauses it grounds by it too;
            None (default): the evidence the index stores, if any.
        refiner: a Stage 1 :class:`~fortekit.search.stage1.beam.Refiner` already built (fol-refine's,
            with its own elaborator and anchors), instead of ``stage1``: its backbone and text
            cache are shared; None (default) builds one from ``stage1`` when given.
        use_faiss: the first pass (the candidate pool) searches the index's saved FAISS index
            instead of exactly (``fortekit index query --faiss``; not with a projection); None
            (default): when the index has an approximate one (``--ann``) and at least
            :data:`~fortekit.search.index.ann.ANN_MIN_ITEMS` items, and no projection is given.

    Raises:
        AudioIndexError: an index that cannot be read (E42x) or another backbone (E609).
        EvaluationError: a bad option (E480).
        FortekitError: from the backbone, Stage 1 or the projection file, with their codes.

    Example:
        >>> retriever = Retriever("clips.index", stage1=RefineConfig.online())  # doctest: +SKIP
        >>> retriever.search(["rain on a roof", "a dog without people talking"], k=3)  # doctest: +SKIP
    """

    def __init__(
        self,
        index: AudioIndex | str | os.PathLike[str],
        backbone: Backbone | str | None = None,
        *,
        backbone_options: Mapping[str, Any] | None = None,
        stage1: RefineConfig | None = _DEFAULT,
        elaborator: Any = "auto",
        anchors: AnchorSource | str | None = "auto",
        lookup: RefinementLookup | None = None,
        projection: str | os.PathLike[str] | None = _DEFAULT,
        formula: FormulaScoringConfig | None = _DEFAULT,
        rerank: Reranker | None = _DEFAULT,
        candidates: int = 1000,
        device: str = "auto",
        cache_dir: str | os.PathLike[str] | None = None,
        encoder: CachedTextEncoder | None = None,
        evidence: LabelEvidence | None = None,
        order_check: bool = _DEFAULT,
        refiner: Refiner | None = None,
        use_faiss: bool | None = None,
    ) -> None:
        from fortekit.plugins import get_backbone
        from fortekit.search.formula.scoring import FormulaScorer
        from fortekit.search.index.audio_index import AudioIndex
        from fortekit.search.stage1.encoder import CachedTextEncoder, TextEmbeddingCache

        _check_count(candidates, "candidates")
        self.index = index if isinstance(index, AudioIndex) else AudioIndex.load(index)
        if refiner is not None and stage1 is not _DEFAULT and stage1 is not None:
            raise EvaluationError(Errors.E480.format(what="retriever", name="refiner",
                                                     expected="None when stage1 is given", value=refiner))
        if use_faiss and projection is not _DEFAULT and projection is not None:
            raise EvaluationError(Errors.E480.format(what="retriever", name="use_faiss",
                                                     expected="False with a projection", value=use_faiss))
        if use_faiss is None:
            from fortekit.search.index.ann import first_pass_uses_ann

            use_faiss = (projection is _DEFAULT or projection is None) and first_pass_uses_ann(
                self.index.faiss_kind, len(self.index), None)
        if backbone is None and refiner is not None:
            backbone = refiner.backbone
        if backbone is None or isinstance(backbone, str):
            # A recorded "device" (the Python API records what it was given) is where the index was
            # built; `device` says where to run now (two values for one keyword were a TypeError).
            options = {key: value for key, value in self.index.meta.backbone_options.items()
                       if key != "device"} if backbone is None else {}
            options.update(backbone_options or {})
            options.setdefault("device", device)
            backbone = get_backbone(backbone or self.index.backbone_name, **options)
        self.index.check_backbone(backbone)
        self.backbone: Backbone = backbone
        chosen = choose_stages(self.index, backbone, stage1=stage1, refiner=refiner, projection=projection,
                               formula=formula, rerank=rerank, order_check=order_check, use_faiss=use_faiss)
        self.pipeline: Pipeline = chosen.pipeline
        stage1, projection, formula, rerank, order_check = (
            chosen.stage1, chosen.projection, chosen.formula, chosen.rerank, chosen.order_check)
        self.device = device
        self.candidates = candidates
        self.lookup = lookup
        self.use_faiss = bool(use_faiss)
        self.refiner: Refiner | None = refiner
        if refiner is not None:
            self.encoder: CachedTextEncoder = refiner.encoder
        elif stage1 is not None:
            from fortekit.search.stage1.assembly import build_refiner

            self.refiner = build_refiner(backbone, config=stage1, elaborator=elaborator, anchors=anchors,
                                         index=self.index, device=device, cache_dir=cache_dir)
            self.encoder = self.refiner.encoder
        elif encoder is not None:
            self.encoder = encoder
        else:
            cache = TextEmbeddingCache(cache_dir, backbone=backbone.name, dim=int(backbone.dim)) \
                if cache_dir is not None else None
            self.encoder = CachedTextEncoder(backbone, cache)
        self.formula_scorer: FormulaScorer | None = (
            None if formula is None else FormulaScorer(self.encoder, formula)
        )
        self.reranker: Reranker | None = rerank
        self.projection: str | os.PathLike[str] | None = projection
        self._items: torch.Tensor | None = None
        self.order_check: OrderCheck | None = None
        if order_check:
            from fortekit.search.formula.order_check import OrderCheck

            self.order_check = OrderCheck(self.index.captions)
        self.evidence = _check_evidence(
            evidence if evidence is not None else getattr(self.index, "evidence", None), len(self.index))
        self._caption_names: list[frozenset[str]] | None = None
        self._captions_given = False

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

    def with_stages(
        self, *, formula: FormulaScoringConfig | None = _KEEP, rerank: Reranker | None = _KEEP,
        projection: str | os.PathLike[str] | None = _KEEP, candidates: int = _KEEP,
        evidence: LabelEvidence | None = _KEEP, refiner: Refiner | None = _KEEP,
        captions: Sequence[Iterable[PredicateSymbol | str]] | None = _KEEP,
    ) -> Retriever:
        """A retriever over the same index, backbone, text cache and query side, other ranking stages.

        Nothing is loaded again: the index, the encoder (and its cache), Stage 1 and the lookup
        table are shared, and so are the item vectors when the projection is the same. The
        benchmark builds each system it reports this way.

        Args:
            formula: a ``FormulaScoringConfig``, or None for off (left out: as here).
            rerank: a ``Reranker``, or None for off (left out: as here).
            projection: a Stage 2 head file, or None for none (left out: as here).
            candidates: first-pass items re-scored per query (left out: as here).
            evidence: a ``LabelEvidence`` for the index's items, or None for none (left out: as here).
            refiner: a Stage 1 :class:`~fortekit.search.stage1.beam.Refiner` over the same backbone,
                or None to switch Stage 1 off (left out: as here). ``fortekit serve`` switches
                Stage 1 per request this way.
            captions: per item, the predicate symbols of everything its captions say (e.g. the
                union over a clip's five captions), for formula scoring's evidence of excluded
                sounds and the violation marks; None: the index's own caption predicates (left
                out: as here).

        Returns:
            The new :class:`Retriever`.

        Example:
            >>> plain = retriever.with_stages(formula=None, rerank=None)  # doctest: +SKIP
        """
        from fortekit.search.formula.scoring import FormulaScorer

        other = object.__new__(Retriever)
        other.__dict__.update(self.__dict__)
        if evidence is not _KEEP:
            other.evidence = _check_evidence(evidence, len(self.index))
        if formula is not _KEEP:
            other.formula_scorer = None if formula is None else FormulaScorer(self.encoder, formula)
            other.pipeline = other.pipeline.replace("formula", formula is not None,
                                                    "with_stages(formula=...)")
        if rerank is not _KEEP:
            other.reranker = rerank
            other.pipeline = other.pipeline.replace("stage3", rerank is not None, "with_stages(rerank=...)")
        if refiner is not _KEEP:
            other.refiner = refiner
            other.pipeline = other.pipeline.replace("stage1", refiner is not None, "with_stages(refiner=...)")
        if candidates is not _KEEP:
            other.candidates = _check_count(candidates, "candidates")
        if captions is not _KEEP:
            other._captions_given = captions is not None
            other._caption_names = None if captions is None else _caption_names(captions, len(self.index))
        if projection is not _KEEP and projection != self.projection:
            other.projection = projection
            other._items = None
            other.use_faiss = self.use_faiss and projection is None  # the FAISS rows are unprojected
            other.pipeline = other.pipeline.replace("projection", projection is not None,
                                                    "with_stages(projection=...)", str(projection or ""))
        return other

    @property
    def caption_names(self) -> list[frozenset[str]] | None:
        """Per item, the asserted symbol names of its captions (None: the index holds no parse).

        What formula scoring judges an excluded sound by, and what a hit's ``violated`` mark reads
        (:mod:`fortekit.fol.violation`): the index's caption predicates, or those given to
        :meth:`with_stages`.
        """
        if self._caption_names is None and not self._captions_given:
            sets = self.index.predicate_sets
            if sets and any(sets):
                self._caption_names = _caption_names(sets, len(self.index))
            self._captions_given = True
        return self._caption_names

    @property
    def first_pass(self) -> str:
        """Where the candidate pool comes from: "exact", or the ANN kind and its measured recall.

        Example:
            >>> retriever.first_pass  # doctest: +SKIP
            'ann (hnsw; recall@10 against exact 0.998, measured at build)'
        """
        if not self.use_faiss:
            return "exact"
        recall = self.index.meta.ann_recall
        measured = "" if recall is None else f"; recall@10 against exact {recall:.3f}, measured at build"
        return f"ann ({self.index.faiss_kind}{measured})"

    @property
    def items(self) -> torch.Tensor:
        """The item vectors the queries are scored against: unit rows (projected once with Stage 2)."""
        if self._items is None:
            import torch

            vectors = self.index.embedding_tensor("cpu")
            if self.projection is not None:
                from fortekit.search.projection.files import load_projection
                from fortekit.search.projection.head import project_embeddings

                head = load_projection(Path(self.projection))
                vectors = torch.nn.functional.normalize(
                    torch.from_numpy(project_embeddings(head, vectors)).float(), dim=1,
                )
            self._items = vectors
        return self._items

    def search(
        self, queries: str | Sequence[str], k: int = 10, *, explain: bool = False,
        refinements: Mapping[str, RefinementResult] | None = None,
    ) -> list[SearchResult]:
        """Rank the index for each query: one encoder call per batch (and per Stage 1 depth).

        Every command that ranks (``fortekit search``, ``fortekit index query``, ``fol-refine
        --index``) and the benchmark's loop (:meth:`rank`) go through here, so one query gets
        one ranking and one score, whichever of them asked.

        Args:
            queries: one query (a str) or several (a list, a tuple, a NumPy array of strings;
                NumPy strings are read as the str they hold).
            k: hits per query.
            explain: fill each hit's matched/missed/violated predicates and clause similarities.
            refinements: Stage 1 results already made for some of the queries, by query text
                (fol-refine ranks the batch it has just refined): they are used as they are,
                not searched again.

        Returns:
            One :class:`SearchResult` per query, in order.

        Raises:
            EmptyCaptionError, CaptionTooLongError, CaptionTypeError: a query that is empty,
                too long or not a str (E300-E302).
            EvaluationError: ``k`` < 1 (E480).

        Example:
            >>> [hit.item_id for hit in retriever.search("rain on a roof", k=2)[0].hits]  # doctest: +SKIP
            ['clip3', 'clip0']
        """
        from fortekit.fol.caption.pipeline import check_text
        from fortekit.fol.predicates import predicates

        # bytes are one (undecoded) query, not a sequence of ints: check_text says how to decode it
        # A NumPy array or another iterable of strings is a list of queries; a str is one query.
        single = isinstance(queries, (str, bytes, bytearray)) or not isinstance(queries, Iterable)
        given: list[object] = [queries] if single else list(queries)
        _check_count(k, "k")
        texts = [check_text(text, function="Retriever.search") for text in given]
        if not texts:
            return []
        side = prepare_queries(texts, self.encoder, refiner=self.refiner, lookup=self.lookup,
                               refined=refinements)
        formulas = side.formulas
        # Formula scoring judges the query's own formula (side.logic); Stage 3 and the hits'
        # explanations read phi*. Planned once: the ranking and the result's clauses agree.
        plans = self.formula_scorer.plan(side.logic) if self.formula_scorer is not None else None
        query_sets = [frozenset() if phi is None else predicates(phi) for phi in formulas]
        scores, rows = self.rank(side.vectors, side.logic, k, plans=plans, query_predicates=query_sets)
        unsure = unresolved_scopes(texts) if explain else [()] * len(texts)
        if explain and plans is not None:
            # negated clauses formula scoring could not judge by evidence (issue 42, item 2)
            unsure = [(*lines, *(f"not '{plan.texts[j]}': {reason}; left to the whole-query similarity"
                                 for j, reason in sorted(plan.unsure.items())))
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
            for rank, (score, row) in enumerate(found, 1):
                hits.append(self._hit(rank, row, score, query_sets[q], clause_vectors, clauses, explain,
                                      side.logic[q]))
            out.append(SearchResult(
                text, tuple(hits), side.phi0[q], None if formulas[q] is None else str(formulas[q]),
                side.refined[q], clauses, plan.reason if plan is not None else "off", side.sources[q],
                unsure=unsure[q],
            ))
        return out

    def rank(
        self, vectors: torch.Tensor, formulas: Sequence[Formula | None], k: int = 10, *,
        plans: Sequence[QueryPlan] | None = None,
        query_predicates: Sequence[frozenset[PredicateSymbol]] | None = None,
        timings: MutableMapping[str, float] | None = None,
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
        if self.use_faiss:
            scores, rows = self.index.search(vectors.detach().float().cpu(), pool, use_faiss=True)
        else:
            scores, rows = exact_top_k(items, vectors.detach().float().cpu(), pool)
        tick = _lap(clock, "first_pass", tick)
        if self.formula_scorer is not None:
            # the places read after formula scoring: the hits, and Stage 3's and the order check's heads
            depth = max(k, self.reranker.top_n if self.reranker is not None else 0,
                        self.order_check.top_n if self.order_check is not None else 0)
            scores, rows = self.formula_scorer.rerank(formulas, scores, rows, items, plans=plans,
                                                      evidence=self.evidence, captions=self.caption_names,
                                                      depth=depth)
            tick = _lap(clock, "formula", tick)
        item_sets = self.index.predicate_sets
        if self.reranker is not None and any(item_sets):
            query_sets = list(query_predicates) if query_predicates is not None else [
                frozenset() if phi is None else predicates(phi) for phi in formulas
            ]
            scores, rows = self.reranker.rerank((scores, rows), query_sets, item_sets, formulas=formulas,
                                                item_names=self.caption_names)
            tick = _lap(clock, "rerank", tick)
        if self.order_check is not None:
            scores, rows = self.order_check.apply(formulas, scores, rows)
            _lap(clock, "order_check", tick)
        return scores[:, :k], rows[:, :k]

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
        if not explain:
            matched = missed = ()
        return Hit(rank, index.ids[row], float(score), index.captions[row], index.paths[row],
                   matched, missed, violated, sims)


def build_retriever(
    index: AudioIndex | str | os.PathLike[str],
    *,
    backbone: Backbone | str | None = None,
    backbone_options: Mapping[str, Any] | None = None,
    stage1: RefineConfig | str | None = "auto",
    refiner: Refiner | None = None,
    lookup: RefinementLookup | None = None,
    projection: str | os.PathLike[str] | None = _DEFAULT,
    formula_scoring: bool | None = None,
    gamma: float | None = None,
    stage3: bool | None = None,
    order_check: bool | None = None,
    use_faiss: bool | None = None,
    device: str = "auto",
) -> Retriever:
    """The one factory of the commands that rank: their settings in, the :class:`Retriever` out.

    ``fortekit search``, ``fortekit index query`` and ``fol-refine --index`` build their Retriever
    here, so the same settings give the same ranking and the same scores in each.

    Args:
        index: the index, or its directory.
        backbone: the text encoder (an instance or a registered name); None: the index's own
            (with its recorded options), or the refiner's when ``refiner`` is given.
        backbone_options: options of the backbone plug-in over the recorded ones (a ``device``
            among them decides where it runs; ``device`` otherwise).
        stage1: "auto" (the default of the index's kind), "off" (or None), "online", "offline",
            or a :class:`~fortekit.search.stage1.config.RefineConfig`.
        refiner: a Stage 1 refiner already built (fol-refine's), instead of ``stage1``.
        lookup: stored refinements; the queries it holds skip Stage 1.
        projection: a Stage 2 head file, or None for none; left out: the kind's default (the
            head shipped for the backbone on caption-indexed collections).
        formula_scoring: re-score the candidates by each query's formula (None: the kind's default).
        gamma: formula scoring's weight of the logic (None: the default).
        stage3: Stage 3's default re-ranking (None: the kind's default).
        order_check: sort each ranking's best 50 by the event order (None: the kind's default).
        use_faiss: the first pass through the index's saved FAISS index (None: the Retriever's
            default: an approximate one from ANN_MIN_ITEMS items on).
        device: "auto", "cpu", "cuda", ...

    Returns:
        The :class:`Retriever`.

    Raises:
        EvaluationError: an unknown ``stage1`` or a bad option (E480).
        FortekitError: an index, backbone, lookup table, gamma or projection that cannot be used.

    Example:
        >>> retriever = build_retriever("clips.index", stage3=False)  # doctest: +SKIP
        >>> retriever  # doctest: +SKIP
        Retriever(200 items, backbone='minilm', kind='captions', stages=[stage1, projection, formula])
    """
    from fortekit.search.formula.scoring import FormulaScoringConfig
    from fortekit.search.rerank import Reranker
    from fortekit.search.stage1.config import RefineConfig

    config: Any = stage1
    if isinstance(stage1, str) or stage1 is None:
        modes = {"auto": _DEFAULT, "off": None, "online": RefineConfig.online,
                 "offline": RefineConfig.offline}
        mode = "off" if stage1 is None else stage1
        if mode not in modes:
            raise EvaluationError(Errors.E480.format(
                what="retriever", name="stage1", expected="'auto', 'off', 'online' or 'offline'",
                value=stage1))
        make = modes[mode]
        config = make() if callable(make) and make is not _DEFAULT else make
    if refiner is not None and config is _DEFAULT:
        config = None
    formula: Any = _DEFAULT
    if formula_scoring is not None or gamma is not None:
        formula = None
        if formula_scoring is not False:
            formula = FormulaScoringConfig() if gamma is None else FormulaScoringConfig(gamma=gamma)
    return Retriever(
        index, backbone, backbone_options=backbone_options, stage1=config, refiner=refiner, lookup=lookup,
        projection=projection, formula=formula,
        rerank=_DEFAULT if stage3 is None else (Reranker() if stage3 else None), device=device,
        order_check=_DEFAULT if order_check is None else order_check, use_faiss=use_faiss,
    )


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
        raise EvaluationError(Errors.E480.format(what="retriever", name=name, expected="an int >= 1",
                                                 value=value))
    return value


def _check_evidence(evidence: object, items: int) -> LabelEvidence | None:
    from fortekit.search.formula.evidence import LabelEvidence

    if evidence is None:
        return None
    if not isinstance(evidence, LabelEvidence):
        raise EvaluationError(Errors.E494.format(problem=f"it is a {type(evidence).__name__}"))
    if len(evidence) != items:
        raise EvaluationError(Errors.E494.format(
            problem=f"it has {len(evidence)} rows for an index of {items} items",
        ))
    return evidence


def _caption_names(captions: Sequence[Iterable[PredicateSymbol | str]], items: int) -> list[frozenset[str]]:
    from fortekit.fol.violation import positive_names

    if len(captions) != items:
        raise EvaluationError(Errors.E480.format(what="retriever", name="captions",
                                                 expected=f"one symbol set per item ({items})",
                                                 value=f"{len(captions)} sets"))
    return [positive_names(symbols) for symbols in captions]


def _lap(timings: MutableMapping[str, float], step: str, since: float) -> float:
    now = time.perf_counter()
    timings[step] = timings.get(step, 0.0) + now - since
    return now
