"""The state of one ``fortekit eval`` run: data, Stage 1 outputs, Stage 2, and a Retriever per system.

Every system of the ablation is a :class:`~fortekit.search.retriever.Retriever` over the test
collection's index with its stages switched on or off (:meth:`CaptionBenchmark.retriever`), so
the benchmark ranks exactly as ``fortekit search`` does; only the query side (Stage 1 with
each anchor setting, cached on disk) and Stage 2's training are the benchmark's own.

Example:
    >>> bench = CaptionBenchmark(settings, log=print)  # doctest: +SKIP
    >>> bench.prepare(); bench.train_stage2()  # doctest: +SKIP
    >>> default = System("default", False, False, "polarity", "bank", formula=True, alpha=0.03)
    >>> run, timing = bench.rank(default, "t2a")  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit import __version__
from fortekit.errors import Errors, EvaluationError
from fortekit.search.eval.data import EmbeddedCollection, ItemText, load_split
from fortekit.search.eval.report import system_row, write_per_query_file
from fortekit.search.eval.stage1 import Stage1Cache, Stage1Output, anchor_source, cache_key
from fortekit.search.eval.systems import DEFAULT_ANCHORS, Direction, RankedRun, System, rank_through
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.stage1.config import RefineConfig

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.search.eval.evaluate import EvalSettings
    from fortekit.search.retriever import Retriever
    from fortekit.search.stage1.anchors import AnchorBank
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.corpus import CaptionCorpus

__all__ = ["CaptionBenchmark"]


class CaptionBenchmark:
    """One caption-indexed evaluation: its data, Stage 1 outputs, the Stage 2 head and its systems.

    Call :meth:`prepare`, then :meth:`stage1_for` per anchor setting and :meth:`train_stage2`,
    then :meth:`evaluate_direction` (or :meth:`rank` for one system).

    Args:
        settings: what to run (:class:`~fortekit.search.eval.evaluate.EvalSettings`).
        log: called with progress lines.
    """

    def __init__(self, settings: EvalSettings, log: Callable[[str], None]) -> None:
        self.settings = settings
        self.log = log
        self.out = settings.out
        self.files: list[Path] = []
        self.stage1: dict[str, Stage1Output] = {}
        self.summary: dict[str, Any] = {}
        self.test: EmbeddedCollection
        self.train: EmbeddedCollection
        self.bank: AnchorBank | None = None
        self.refiner: Refiner
        self.cache: Stage1Cache
        self.key: dict[str, Any] = {}
        self.project_seconds = 0.0
        self._plain: Retriever | None = None
        self._projected: Retriever | None = None
        self._shipped: Retriever | None = None
        self._weights: Path | None = None
        self._corpora: dict[str, CaptionCorpus] = {}

    @property
    def primary(self) -> str:
        """The anchor setting of the S1/S2/S3 combinations and of Stage 2's training queries."""
        return self.settings.anchors[0]

    # -- preparation ---------------------------------------------------------------------------
    def prepare(self) -> None:
        """Load and embed both parts, parse them, and set up Stage 1 and its cache."""
        from fortekit.plugins import get_backbone
        from fortekit.search.eval.data import embed_collection
        from fortekit.search.stage1.anchors import AnchorBank
        from fortekit.search.stage1.beam import Refiner

        s = self.settings
        split = load_split(s.test, s.train, n_train=s.n_train, limit_test=s.limit_test,
                           limit_train=s.limit_train)
        self.log(f"test clips {len(split.test)}, training clips {len(split.train)}; loading {s.backbone}")
        backbone = get_backbone(s.backbone, device=s.device)
        item_text: ItemText = "single" if s.item_text == "single" else "mean"  # checked in EvalSettings
        self.test = embed_collection(split.test, backbone, item_text=item_text, what="test")
        self.train = embed_collection(split.train, backbone, item_text=item_text, what="training")
        self.log(f"embedded {len(self.test)} test and {len(self.train)} training items "
                 f"({sum(self.test.seconds.values()) + sum(self.train.seconds.values()):.0f} s)")
        if "bank" in s.anchors:
            self.bank = AnchorBank.from_index(self.train.index)
        self.refiner = Refiner(backbone, "lexical", config=s.refine, device=s.device)
        self.cache = Stage1Cache(self.refiner, self.out / "stage1", batch_size=s.stage1_batch, log=self.log)
        self.key = {
            "version": __version__, "backbone": s.backbone,
            "data": cache_key({
                "test": self.summary["data"]["test"]["sha256"],
                "train": (self.summary["data"]["train"] or {}).get("sha256"), "n_train": s.n_train,
                "limit_test": s.limit_test, "limit_train": s.limit_train, "item_text": s.item_text,
            }),
        }

    def stage1_for(self, part: str, anchors: str, config: RefineConfig | None = None) -> Stage1Output:
        """Stage 1 of the test or training queries with one anchor setting (cached)."""
        collection = self.test if part == "test" else self.train
        config = config or self.settings.refine
        default = anchors == DEFAULT_ANCHORS  # the default pipeline's Stage 1: corpus and feedback
        by_corpus = default or self.settings.elaborator == "corpus"
        if default and self.settings.elaborator == "corpus" and f"{part}-feedback" in self.stage1 \
                and config == self.settings.refine:
            self.stage1[f"{part}-{anchors}"] = self.stage1[f"{part}-feedback"]  # the same run
            return self.stage1[f"{part}-{anchors}"]
        wants_corpus = anchors in ("feedback", DEFAULT_ANCHORS) or by_corpus
        corpus = self.corpus_for(part) if wants_corpus else None
        source = anchor_source("feedback" if default else anchors, collection, self.bank, corpus)
        elaborator: Any = "lexical"
        if by_corpus:
            from fortekit.search.stage1.corpus_elaborator import CorpusElaborator

            elaborator = CorpusElaborator(corpus)  # type: ignore[arg-type]
        else:
            from fortekit.plugins import get_elaborator

            elaborator = get_elaborator("lexical")
        output = self.cache.run(f"{part}-{anchors}", collection.task.queries, source, config, self.key,
                                elaborator=elaborator)
        if config == self.settings.refine:
            self.stage1[f"{part}-{anchors}"] = output
            self.log(f"stage 1 [{part}-{anchors}]: {len(output.seconds)} queries, "
                     f"{output.from_cache} from the cache, {output.refined:.0%} refined, "
                     f"{1000 * output.seconds_per_query:.0f} ms/query")
        return output

    def corpus_for(self, part: str) -> CaptionCorpus:
        """The part's item captions with the items' rows, parsed once (the corpus elaborator's
        neighbours and the feedback anchors' first pass)."""
        from fortekit.search.stage1.corpus import CaptionCorpus

        if part not in self._corpora:
            collection = self.test if part == "test" else self.train
            tick = time.perf_counter()
            self._corpora[part] = CaptionCorpus.from_index(collection.index)
            self.log(f"caption corpus [{part}]: {len(self._corpora[part])} item captions parsed "
                     f"({time.perf_counter() - tick:.1f} s)")
        return self._corpora[part]

    def train_stage2(self) -> None:
        """Train the projection head on the training part's q* and items; project the test items."""
        from fortekit.search.projection.head import ProjectionConfig, ProjectionData
        from fortekit.search.projection.training import train_projection

        s = self.settings
        s1 = self.stage1_for("train", self.primary)
        negatives = self.refiner.encode_texts(s1.negative_texts).detach().to("cpu").float()
        data = ProjectionData(query=s1.q_star, audio=self.train.items, negative=negatives)
        config = ProjectionConfig(dim=data.dim, epochs=s.epochs, batch_size=min(s.batch_size, data.size),
                                  seed=s.seed)
        tick = time.perf_counter()
        report = train_projection(data, config=config, out_dir=self.out / "projection", device=s.device,
                                  resume=False, progress=False)
        train_seconds = time.perf_counter() - tick
        self._weights = Path(report.weights_path)
        self._projected = None
        tick = time.perf_counter()
        _ = self.projected  # the test items through the head, once, timed
        self.project_seconds = time.perf_counter() - tick
        last = report.history[-1]
        self.summary["stage2"] = {
            "train_items": data.size, "epochs": s.epochs, "batch_size": config.batch_size,
            "final_loss": last.loss, "final_align": last.align, "final_logic": last.logic,
            "temperature": last.temperature, "train_seconds": train_seconds,
            "weights": str(report.weights_path),
        }
        self.log(f"stage 2: trained on {data.size} items, {s.epochs} epochs, loss {last.loss:.4f} "
                 f"({train_seconds:.0f} s)")

    # -- the systems as Retrievers -----------------------------------------------------------------
    def retriever(self, system: System, *, alpha: float | None = None) -> Retriever:
        """The Retriever of a system over the test items (text to audio).

        Args:
            system: which stages are on.
            alpha: Stage 3's weight for this ranking (default: the system's, else ``--alpha``).

        Returns:
            A :class:`~fortekit.search.retriever.Retriever` sharing the index, the text cache and
            the projected items with every other system.
        """
        base = self._plain_retriever()
        if system.s2:
            base = self._shipped_retriever() if system.head == "shipped" else self._projected_retriever()
        reranker = self._reranker(system, alpha)
        spec = PipelineSpec.from_switches(formula_scoring=system.formula,
                                          stage3=reranker if reranker is not None else "off")
        return base.replace(formula=spec.formula, rerank=spec.rerank)

    def _plain_retriever(self) -> Retriever:
        if self._plain is None:
            from fortekit.search.retriever import Retriever

            self._plain = Retriever(self.test.index, PipelineSpec.first_pass_only(len(self.test)),
                                    backbone=self.refiner.encoder,
                                    device=self.settings.device)
        return self._plain

    def _projected_retriever(self) -> Retriever:
        if self._projected is None:
            self._projected = self._plain_retriever().replace(projection=self._weights)
        return self._projected

    def _shipped_retriever(self) -> Retriever:
        """The test items through the head shipped for the backbone (the default pipeline's Stage 2)."""
        if self._shipped is None:
            from fortekit.search.projection.shipped import shipped_head

            head = shipped_head(self.settings.backbone, int(self.refiner.backbone.dim))
            if head is None:
                raise EvaluationError(Errors.E520.format(
                    problem=f"no Stage 2 head ships for the backbone {self.settings.backbone!r}",
                    fix="Leave the shipped head's rows out (they run only where a head ships).",
                ))
            self._shipped = self._plain_retriever().replace(projection=head)
        return self._shipped

    def items_for(self, system: System) -> torch.Tensor:
        """The test items as a system sees them: e_a, or h(e_a) through its Stage 2 head."""
        if not system.s2:
            return self.test.items
        return self._shipped_retriever().items if system.head == "shipped" else self.projected

    @property
    def projected(self) -> torch.Tensor:
        """h(e_a) of the test items (the items as they are before Stage 2 is trained)."""
        return self._projected_retriever().items

    def _reranker(self, system: System, alpha: float | None) -> Any:
        if system.s3 is None:
            return None
        from fortekit.search.rerank import Reranker

        chosen = alpha if alpha is not None else (
            system.alpha if system.alpha is not None else self.settings.alpha
        )
        return Reranker(alpha=chosen, top_n=self.settings.top_n, mode=system.s3)  # type: ignore[arg-type]

    def _caption_retriever(self, system: System, texts: torch.Tensor,
                           text_predicates: Sequence[Any]) -> Retriever:
        """Audio to text: a Retriever over an index of the query captions (q* with Stage 1)."""
        from fortekit.search.index.audio_index import AudioIndex
        from fortekit.search.retriever import Retriever

        captions = AudioIndex.from_captions(
            [str(row) for row in range(len(self.test))], list(self.test.task.queries),
            self.refiner.backbone.name, embeddings=texts.numpy(), parse_captions=False,
            predicate_sets=list(text_predicates),
        )
        spec = PipelineSpec.first_pass_only(len(self.test)).replace(rerank=self._reranker(system, None))
        return Retriever(captions, spec, backbone=self.refiner.encoder, device=self.settings.device)

    # -- ranking -----------------------------------------------------------------------------------
    def text_side(self, system: System, s1: Stage1Output | None = None) -> tuple[Any, Any, float]:
        """(text vectors, their predicate sets, seconds per text) of a system."""
        test = self.test
        n = len(test)
        if system.s1:
            output = s1 or self.stage1[f"test-{system.anchors}"]
            return output.q_star, output.phi_star_predicates, output.seconds_per_query
        seconds = test.seconds["encode_queries"] / n
        if system.s3:
            seconds += test.seconds["parse_queries"] / n
        return test.queries, test.query_predicates, seconds

    def item_seconds(self, system: System) -> float:
        """Seconds per item of a system's item side (encoding, parsing, projecting)."""
        n = len(self.test)
        seconds = self.test.seconds["encode_items"] / n
        if system.s3:
            seconds += self.test.seconds["parse_items"] / n
        if system.s2:
            seconds += self.project_seconds / n  # the trained head's timing; the shipped head has its shape
        return seconds

    def rank(
        self, system: System, direction: Direction, *, alpha: float | None = None,
        s1: Stage1Output | None = None,
    ) -> tuple[RankedRun, dict[str, float]]:
        """Rank the test part with one system in one direction, through its Retriever.

        Returns:
            ``(run, timing)``: the ranks and top items, and ms per query / s per 1,000 items.
        """
        texts, text_predicates, text_seconds = self.text_side(system, s1)
        item_seconds = self.item_seconds(system)
        targets = self.test.task.targets
        if direction == "t2a":
            retriever = self.retriever(system, alpha=alpha)
            run = rank_through(retriever, texts, targets, formulas=self.formulas(system, s1),
                               query_predicates=text_predicates)
            query_seconds, per_item = text_seconds, item_seconds
        else:
            items = self.items_for(system)
            retriever = self._caption_retriever(system, texts, text_predicates)
            if alpha is not None and system.s3 is not None:
                retriever = retriever.replace(rerank=self._reranker(system, alpha))
            run = rank_through(retriever, items, targets, query_predicates=self.test.item_predicates)
            query_seconds, per_item = item_seconds, text_seconds
        n = len(self.test)
        if system.formula and direction == "t2a" and not system.s1:
            query_seconds += self.test.seconds["parse_queries"] / n
        timing = {
            "ms_per_query": 1000 * (query_seconds + run.seconds / n),
            "s_per_1000_items": 1000 * per_item,
            "ms_per_query_ranking": 1000 * run.seconds / n,
            "ms_per_query_rerank": 1000 * run.rerank_seconds / n,
        }
        return run, timing

    def formulas(self, system: System, s1: Stage1Output | None = None) -> list[Formula | None]:
        """The formula formula scoring judges for each test query: Pi(q), with or without Stage 1.

        Stage 1 acts through q* (and Pred(phi*) in Stage 3); the literals its search adds are
        not demanded as clauses, which cost exclusion queries on development data
        (docs/refine.md, "Formula scoring judges phi0").
        """
        return list(self.test.query_formulas)

    def evaluate_direction(self, direction: Direction, systems: Sequence[System]) -> dict[str, Any]:
        """Rank with every system in one direction; write the per-query files; return the table rows."""
        test = self.test
        folder = self.out / ("per_query" if direction == "t2a" else "per_query_a2t")
        rows: dict[str, Any] = {}
        baseline: RankedRun | None = None
        for system in systems:
            if system.formula and direction != "t2a":
                continue  # formula scoring scores a text query's formula: text to audio only
            run, timing = self.rank(system, direction)
            baseline = baseline or run
            rows[system.name] = system_row(run.ranks, baseline.ranks, timing=timing, system=system.to_dict())
            extra = {}
            if system.s1:
                extra["refined"] = self.stage1[f"test-{system.anchors}"].refined_texts
            queries = test.task.queries if direction == "t2a" else test.task.clip_ids
            self.files.append(write_per_query_file(
                folder / f"{system.name}.jsonl", queries, run.ranks, test.task.targets, run.top,
                test.task.clip_ids, extra,
            ))
        return {"queries": len(test), "items": len(test), "systems": rows}
