"""The data of ``fortekit eval --beir``: a BEIR collection embedded and parsed once, each part on first use.

Every system of :mod:`fortekit.search.eval.beir_systems` ranks through a
:class:`~fortekit.search.retriever.Retriever` that :meth:`BeirData.retriever` builds over the
collection's items: the benchmark assembles no pipeline of its own. Everything is computed on
first use and kept: a run of ``baseline`` alone never parses a caption or searches Stage 1.

Example:
    >>> data = BeirData(load_beir("negation/audiocaps_val"), get_backbone("minilm"),
    ...                 refine=RefineConfig.online())  # doctest: +SKIP
    >>> data.retriever(formula=True, rerank=None)  # doctest: +SKIP
    Retriever(1000 items, backbone='minilm', stages=[formula])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.fol.predicates import PredicateSymbol
from fortekit.search.eval.beir import BeirCollection

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.plugins.protocols import Backbone, Captioner
    from fortekit.search.eval.stage1 import Stage1Output
    from fortekit.search.formula.evidence import LabelEvidence
    from fortekit.search.formula.scoring import FormulaScoringConfig
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.rerank import Reranker
    from fortekit.search.retriever import Retriever
    from fortekit.search.stage1.config import RefineConfig
    from fortekit.search.stage1.corpus import CaptionCorpus

__all__ = ["BeirData"]


def _check_texts(texts: Sequence[str]) -> list[str | None]:
    """Each text if the caption parser takes it, else None."""
    from fortekit.fol.caption.parser import default_parser
    from fortekit.fol.caption.pipeline import check_text

    limit = default_parser().max_chars
    kept: list[str | None] = []
    for text in texts:
        try:
            kept.append(check_text(text, function="fortekit eval --beir", max_chars=limit))
        except (ValueError, TypeError):
            kept.append(None)
    return kept


class BeirData:
    """A BEIR collection embedded through a backbone and parsed, each part on first use.

    Args:
        collection: the loaded collection.
        backbone: the encoder.
        refine: Stage 1's configuration.
        anchors: Stage 1's anchor setting ("none", "proxy" or "feedback").
        elaborator: Stage 1's elaborator ("lexical", or "corpus": the items' own captions).
        formula: the formula-scoring configuration.
        alpha: Stage 3's weight of s_pred.
        top_n: how many items Stage 3 re-ranks.
        projection: a trained Stage 2 head (directory or file) for ``full``, or None.
        stage1_dir: where Stage 1's cache goes (None: ``runs/stage1``, in the git-ignored ``runs/``).
        stage1_key: what Stage 1's results depend on besides its configuration.
        device: for Stage 1 and the projection.
        captioner: a captioner plug-in that captions the items' audio files: its captions are the
            item texts Stage 3 parses and Stage 1's corpus reads (None: the items' stored text).
            With audio items and a generated collection, the stored text is the generator's
            caption, so a fair audio benchmark passes one (e.g. ``tagger``).
        log: progress lines.
    """

    def __init__(
        self, collection: BeirCollection, backbone: Backbone, *, refine: RefineConfig, anchors: str = "none",
        elaborator: str = "lexical",
        formula: FormulaScoringConfig | None = None, alpha: float = 0.3, top_n: int = 50,
        projection: Path | None = None, stage1_dir: Path | None = None,
        stage1_key: dict[str, Any] | None = None, device: str = "auto",
        captioner: Captioner | None = None, log: Callable[[str], None] | None = None,
    ) -> None:
        self.collection = collection
        self.backbone = backbone
        self.refine = refine
        self.anchors = anchors
        self.elaborator = elaborator
        self.formula_config = formula
        self.alpha = alpha
        self.top_n = top_n
        self.projection = projection
        self.stage1_dir = stage1_dir
        self.stage1_key = stage1_key or {}
        self.device = device
        self.captioner = captioner
        self.item_text_source = ("stored text" if captioner is None
                                 else str(getattr(captioner, "name", "captioner")))
        self.log = log or (lambda line: None)
        self.seconds: dict[str, float] = {}
        self.item_sources: dict[str, int] = {}
        self.query_ids = [query.id for query in collection.queries]
        self.item_ids = [item.id for item in collection.items]

    def _timed(self, step: str, started: float) -> None:
        self.seconds[step] = self.seconds.get(step, 0.0) + time.perf_counter() - started

    @cached_property
    def encoder(self) -> Any:
        """f_T through an in-memory cache (clause texts repeat across queries and systems)."""
        from fortekit.search.stage1.encoder import CachedTextEncoder

        self.backbone.encode_text(["warm up"])  # load the weights before anything is timed
        return CachedTextEncoder(self.backbone)

    @cached_property
    def queries(self) -> torch.Tensor:
        """f_T(q), (queries, d) unit rows on the CPU."""
        import torch

        encoder = self.encoder
        tick = time.perf_counter()
        vectors = encoder.backbone.encode_text([q.text for q in self.collection.queries])
        self._timed("encode_queries", tick)
        return torch.nn.functional.normalize(vectors.detach().to("cpu", torch.float32), dim=1)

    @cached_property
    def items(self) -> torch.Tensor:
        """The item vectors, (items, d) unit rows on the CPU: audio, caption mean, or text."""
        import torch

        from fortekit.search.eval.data import item_embeddings

        _ = self.encoder
        items = self.collection.items
        use_audio = getattr(self.backbone, "sample_rate", None) is not None
        tick = time.perf_counter()
        vectors = torch.zeros((len(items), int(self.backbone.dim)), dtype=torch.float32)
        audio = [i for i, item in enumerate(items) if use_audio and item.audio is not None]
        texts = [i for i, item in enumerate(items) if not (use_audio and item.audio is not None)]
        if audio:
            encoded = self.backbone.encode_audio([items[i].audio for i in audio])  # type: ignore[misc]
            vectors[audio] = encoded.detach().to("cpu", torch.float32)
        if texts:
            groups = [items[i].captions or (items[i].text,) for i in texts]
            vectors[texts] = item_embeddings(self.backbone, groups)
        self._timed("encode_items", tick)
        captions = sum(1 for i in texts if items[i].captions)
        self.item_sources = {"audio": len(audio), "captions": captions, "text": len(texts) - captions}
        return torch.nn.functional.normalize(vectors, dim=1)

    @property
    def kind(self) -> str:
        """The kind of index ``fortekit index build`` would make of this collection
        (:func:`fortekit.search.pipeline.defaults.index_kind`): what its default pipeline is chosen by."""
        _ = self.items  # counts the item sources
        if not self.item_sources.get("audio"):
            return "captions"
        if self.captioner is not None:
            return "audio_captioner"
        return "audio_captions" if any(item.text for item in self.collection.items) else "audio"

    @cached_property
    def query_formulas(self) -> list[Formula | None]:
        """Π(q) per query (None where the parser refuses the text)."""
        from fortekit.fol.caption.parser import parse_captions

        tick = time.perf_counter()
        texts = _check_texts([q.text for q in self.collection.queries])
        valid = [text for text in texts if text is not None]
        parsed = iter([result.formula for result in parse_captions(valid)])
        formulas = [next(parsed) if text is not None else None for text in texts]
        self._timed("parse_queries", tick)
        return formulas

    @cached_property
    def query_predicates(self) -> list[frozenset[PredicateSymbol]]:
        """Pred(Π(q)) per query."""
        from fortekit.fol.predicates import predicates

        return [predicates(phi) if phi is not None else frozenset() for phi in self.query_formulas]

    @cached_property
    def item_predicates(self) -> list[frozenset[PredicateSymbol]]:
        """Pred(Π(text)) per item: its own caption, parsed once (:attr:`item_formulas`)."""
        from fortekit.search.index.item_captions import predicate_sets

        return predicate_sets(self.item_formulas)

    @cached_property
    def caption_sets(self) -> list[frozenset[PredicateSymbol]]:
        """Per item, Pred of everything its captions say: the union over a clip's captions (its
        stored text's alone where it has no caption list, the captioner's with ``captioner``).

        A caption-indexed item is the mean of its captions, so it holds what any of them names:
        formula scoring judges an excluded sound, and a hit's violation mark, by this set.
        """
        from fortekit.search.index.item_captions import item_formulas_from_captions, predicate_sets

        items = self.collection.items
        if self.captioner is not None or not any(item.captions for item in items):
            return list(self.item_predicates)
        texts = [list(item.captions) if item.captions else [item.text or ""] for item in items]
        distinct = list(dict.fromkeys(text for group in texts for text in group))
        tick = time.perf_counter()
        parsed = dict(zip(distinct, predicate_sets(item_formulas_from_captions(distinct)), strict=True))
        self._timed("parse_items", tick)
        return [frozenset().union(*(parsed[text] for text in group)) for group in texts]

    @cached_property
    def item_formulas(self) -> list[Formula | None]:
        """Π(text) per item (the captioner's caption with ``captioner``): Stage 3 and the order check."""
        from fortekit.search.index.item_captions import item_formulas_from_captions

        texts = self.item_texts
        tick = time.perf_counter()
        formulas = item_formulas_from_captions(texts)
        self._timed("parse_items", tick)
        return formulas

    @cached_property
    def item_texts(self) -> list[str]:
        """Each item's text: its stored text, or the captioner's caption of its audio file.

        Raises:
            EvaluationError: a captioner is given but an item has no audio file (E590).
        """
        items = self.collection.items
        if self.captioner is None:
            return [item.text or "" for item in items]
        from fortekit.errors import Errors, EvaluationError
        from fortekit.search.index.item_captions import captions_from_captioner

        missing = [item.id for item in items if item.audio is None]
        if missing:
            raise EvaluationError(Errors.E590.format(
                count=len(missing), total=len(items), example=missing[0], captioner=self.item_text_source,
            ))
        tick = time.perf_counter()
        texts = captions_from_captioner(self.captioner, [str(item.audio) for item in items])
        self._timed("caption_items", tick)
        self.log(f"captioned {len(texts)} items with {self.item_text_source}, e.g. {texts[0]!r}")
        return texts

    @cached_property
    def stage1(self) -> tuple[Stage1Output, list[Formula | None]]:
        """Stage 1 of the queries (cached in ``stage1_dir``) and phi* parsed back."""
        from fortekit.fol import parse_formula
        from fortekit.search.eval.stage1 import Stage1Cache
        from fortekit.search.stage1.anchor_sources import make_anchor_source, make_elaborator
        from fortekit.search.stage1.beam import Refiner

        refiner = Refiner(self.backbone, "lexical", config=self.refine, device=self.device)
        index = self._index(None) if self.anchors == "proxy" else None
        corpus = self.corpus if self.elaborator == "corpus" or self.anchors == "feedback" else None
        source = make_anchor_source(self.anchors, index=index, corpus=corpus)
        directory = self.stage1_dir or Path("runs", "stage1")
        cache = Stage1Cache(refiner, directory, log=self.log)
        output = cache.run(f"beir-{self.anchors}", [q.text for q in self.collection.queries], source,
                           self.refine, self.stage1_key,
                           elaborator=make_elaborator(self.elaborator, corpus=corpus))
        self.seconds["stage1"] = float(sum(output.seconds))
        self.log(f"stage 1 [{self.anchors}]: {len(output.seconds)} queries, {output.from_cache} from the "
                 f"cache, {output.refined:.0%} refined, {1000 * output.seconds_per_query:.0f} ms/query")
        return output, [parse_formula(text, warn_free=False) if text else None for text in output.phi_star]

    @cached_property
    def corpus(self) -> CaptionCorpus:
        """The items' own captions with the items' rows, parsed once (Stage 1's corpus and feedback)."""
        from fortekit.search.stage1.corpus import CaptionCorpus, parse_captions_once

        texts = self.item_texts
        tick = time.perf_counter()
        corpus = CaptionCorpus(self.items, texts, parse_captions_once(texts), normalised=True)
        self._timed("parse_items", tick)
        return corpus

    def retriever(self, *, formula: bool, rerank: Reranker | None, projected: bool = False,
                  evidence: bool = False, head: Path | None = None) -> Retriever:
        """A Retriever over every item with the given stages (sharing the items and the text cache).

        The items' predicate sets are parsed only for a system with Stage 3; the captioner's
        label evidence is computed only for a system that asks for it (``evidence``). ``head``:
        a Stage 2 head other than ``--projection``'s (the default pipeline's shipped head).
        """
        from fortekit.search.formula.scoring import FormulaScoringConfig

        base = self._parsed_retriever if rerank is not None else self._plain_retriever
        if projected and head is not None:
            base = self._parsed_retriever.replace(projection=head)
        elif projected and self.projection is not None:
            base = self._projected_retriever
        config = (self.formula_config or FormulaScoringConfig()) if formula else None
        captions = self.caption_sets if config is not None and config.exclusion == "evidence" else None
        return base.replace(formula=config, rerank=rerank, evidence=self.evidence if evidence else None,
                                captions=captions)

    @cached_property
    def evidence(self) -> LabelEvidence:
        """The captioner's label evidence for every item (a :class:`~fortekit.plugins.LabelTagger`).

        Raises:
            EvaluationError: no captioner, or one that gives no label evidence (E494); an
                item without an audio file (E590).
        """
        from fortekit.errors import Errors, EvaluationError
        from fortekit.plugins.protocols import LabelTagger
        from fortekit.search.formula.evidence import LabelEvidence

        if self.captioner is None or not isinstance(self.captioner, LabelTagger):
            raise EvaluationError(Errors.E494.format(
                problem=f"the captioner {self.item_text_source!r} gives none (the systems "
                "'formula+evidence' and 'formula+S3+evidence' need --captioner tagger, or another "
                "captioner with label_evidence())",
            ))
        _ = self.item_texts  # checks every item has audio; the tagger keeps its logits for these files
        tick = time.perf_counter()
        evidence = self.captioner.label_evidence([str(item.audio) for item in self.collection.items])
        if not isinstance(evidence, LabelEvidence):
            raise EvaluationError(Errors.E494.format(
                problem=f"label_evidence() of {self.item_text_source!r} returned {type(evidence).__name__}",
            ))
        self._timed("tag_items", tick)
        return evidence

    def _index(self, predicate_sets: list[frozenset[PredicateSymbol]] | None) -> AudioIndex:
        from fortekit.search.index.audio_index import AudioIndex

        texts = self.item_texts if predicate_sets is not None or self.captioner is not None else [
            item.text for item in self.collection.items]
        return AudioIndex.from_captions(self.item_ids, texts, self.backbone.name,
                                        embeddings=self.items.numpy(), parse_captions=False,
                                        predicate_sets=predicate_sets)

    @cached_property
    def _plain_retriever(self) -> Retriever:
        from fortekit.search.pipeline import PipelineSpec
        from fortekit.search.retriever import Retriever

        return Retriever(self._index(None), PipelineSpec.first_pass_only(len(self.item_ids)),
                         backbone=self.encoder,
                         device=self.device)

    @cached_property
    def _parsed_retriever(self) -> Retriever:
        from fortekit.search.pipeline import PipelineSpec
        from fortekit.search.retriever import Retriever

        return Retriever(self._index(self.item_predicates), PipelineSpec.first_pass_only(len(self.item_ids)),
                         backbone=self.encoder, device=self.device)

    @cached_property
    def _projected_retriever(self) -> Retriever:
        retriever = self._parsed_retriever.replace(projection=self.projection)
        tick = time.perf_counter()
        _ = retriever.items  # the items through the head, once, timed
        self._timed("project_items", tick)
        return retriever

