"""The warm search service behind ``fortekit serve``: one Retriever, its stage variants, items, audio.

Everything is loaded once (:meth:`SearchService.open`); a request's stage switches pick a
variant of the one :class:`~fortekit.search.retriever.Retriever` (made once, sharing the
index, the backbone and the text cache, by :meth:`Retriever.with_stages`), and concurrent
searches with the same switches run as one batch (:class:`MicroBatcher`). So what a request
gets is exactly what ``Retriever.search`` returns for its queries.

Example:
    >>> service = SearchService.open("clips.index", device="cpu")  # doctest: +SKIP
    >>> results, pipeline = service.search(["rain on a roof"], k=3)  # doctest: +SKIP
    >>> [hit.item_id for hit in results[0].hits]  # doctest: +SKIP
    ['clip3', 'clip0', 'clip7']
"""

from __future__ import annotations

import os
import platform
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, ServeError
from fortekit.search.serve.audio_files import AudioFiles
from fortekit.search.serve.batching import MicroBatcher
from fortekit.search.serve.limits import SWITCH_VALUES, ServeLimits, StageSwitches

if TYPE_CHECKING:
    from fortekit.search.defaults import Pipeline
    from fortekit.search.hits import SearchResult
    from fortekit.search.retriever import Retriever

__all__ = ["SearchService"]

_SearchKey = tuple[tuple[str, str, str], int, bool]
_SEARCH_FIELDS = "query, queries, k, stage1, formula_scoring, stage3, explain"


class SearchService:
    """One index, its backbone and parser, loaded once, answering searches from many threads.

    Args:
        retriever: the Retriever of the index's default pipeline (``build_retriever(index)``).
        limits: the bounds of one request.
        audio_roots: the folders audio files may be served from (default: the folders of the
            files the index registers); relative registered paths are read from the first one,
            else from the current directory.
        index_path: the index's folder, as the user named it (``/v1/info``).
    """

    def __init__(self, retriever: Retriever, *, limits: ServeLimits | None = None,
                 audio_roots: Sequence[str | os.PathLike[str]] | None = None,
                 index_path: str | os.PathLike[str] | None = None) -> None:
        self.retriever = retriever
        self.limits = limits or ServeLimits()
        self.index_path = "" if index_path is None else os.fspath(index_path)
        index = retriever.index
        self._rows = {item_id: row for row, item_id in enumerate(index.ids)}
        roots = None if audio_roots is None else [Path(root) for root in audio_roots]
        self.audio = AudioFiles(index.ids, index.paths, base=roots[0] if roots else None, roots=roots)
        self._variants: dict[tuple[str, str, str], Retriever] = {StageSwitches().key: retriever}
        self._online_refiner: Any = None
        # One model lock: the batcher holds it while it ranks; item formulas and Stage 1 trees
        # (spaCy, the encoder) take it too, since neither is safe to share between threads.
        self._model = threading.RLock()
        self._batcher: MicroBatcher[SearchResult] = MicroBatcher(
            self._run, max_batch=self.limits.max_batch, max_queue=self.limits.max_queue)
        self._formula = lru_cache(maxsize=4096)(self._parse_caption)

    @classmethod
    def open(cls, index: str | os.PathLike[str], *, device: str = "auto", backbone: str | None = None,
             limits: ServeLimits | None = None,
             audio_roots: Sequence[str | os.PathLike[str]] | None = None) -> SearchService:
        """Load an index with its default pipeline, and warm it (one search) so the first request is fast.

        Args:
            index: the index's folder.
            device: "auto", "cpu", "cuda", ...
            backbone: a registered backbone name (None: the index's own).
            limits: the bounds of one request.
            audio_roots: see :class:`SearchService`.

        Returns:
            The service.

        Raises:
            AudioIndexError: an index that cannot be read (E42x, E6xx).
            FortekitError: a backbone or stage that cannot be loaded, with its code.
        """
        from fortekit.search.retriever import build_retriever

        service = cls(build_retriever(index, backbone=backbone, device=device), limits=limits,
                      audio_roots=audio_roots, index_path=index)
        service.search(["warm up"], k=1)
        return service

    # -- searching ------------------------------------------------------------------------------
    def variant(self, switches: StageSwitches) -> Retriever:
        """The Retriever of these switches (made on first use, then kept).

        Example:
            >>> service.variant(StageSwitches(formula_scoring="off")).formula_scorer is None  # doctest: +SKIP
            True
        """
        found = self._variants.get(switches.key)  # no lock once made: a request never waits for a batch here
        if found is not None:
            return found
        with self._model:
            found = self._variants.get(switches.key)
            if found is None:
                found = self._variants[switches.key] = self._make_variant(switches)
            return found

    def _make_variant(self, switches: StageSwitches) -> Retriever:
        from fortekit.search.formula.scoring import FormulaScoringConfig
        from fortekit.search.rerank import Reranker

        base = self.retriever
        changes: dict[str, Any] = {}
        if switches.formula_scoring != "auto":
            changes["formula"] = FormulaScoringConfig() if switches.formula_scoring == "on" else None
        if switches.stage3 != "auto":
            changes["rerank"] = Reranker() if switches.stage3 == "on" else None
        if switches.stage1 == "off":
            changes["refiner"] = None
        elif switches.stage1 == "online":
            changes["refiner"] = self._refiner()
        if not changes:
            return base
        variant = base.with_stages(**changes)
        requested = (("formula", "formula_scoring", switches.formula_scoring),
                     ("stage3", "stage3", switches.stage3), ("stage1", "stage1", switches.stage1))
        for stage, switch, value in requested:
            if value != "auto":  # say who switched it, in the words of the request
                state = variant.pipeline.state(stage)
                variant.pipeline = variant.pipeline.replace(stage, state.on, f"switched by the request "
                                                            f"({switch}={value})", state.detail)
        return variant

    def _refiner(self) -> Any:
        """The default retriever's Stage 1, or an online one made once when the default has none."""
        if self.retriever.refiner is not None:
            return self.retriever.refiner
        if self._online_refiner is None:
            from fortekit.search.stage1.assembly import build_refiner
            from fortekit.search.stage1.config import RefineConfig

            base = self.retriever
            self._online_refiner = build_refiner(base.backbone, config=RefineConfig.online(),
                                                 index=base.index, device=base.device)
        return self._online_refiner

    def search(self, queries: Sequence[str], *, k: int = 10, switches: StageSwitches | None = None,
               explain: bool = False) -> tuple[list[SearchResult], Pipeline]:
        """Rank the index for each query, batched with other requests of the same switches.

        Args:
            queries: the queries (at most ``limits.max_batch``).
            k: hits per query (1 to ``limits.max_k``).
            switches: the stage switches (default: every stage as the index's kind has it).
            explain: fill each hit's predicates and clause similarities.

        Returns:
            ``Retriever.search``'s results, in order, and the pipeline that ran.

        Raises:
            ServeError: too many queries (E794), k out of range (E792), a full queue (E806).
            CaptionError, CaptionTypeError: an empty, too long or non-str query (E300-E302).
        """
        from fortekit.fol.caption.pipeline import check_text

        switches = switches or StageSwitches()
        if len(queries) > self.limits.max_batch:
            raise ServeError(Errors.E794.format(count=len(queries), limit=self.limits.max_batch), status=413)
        self.limits.check_k(k)
        texts = [check_text(text, function="POST /v1/search") for text in queries]  # before the queue
        for position, text in enumerate(texts):
            where = "query" if len(texts) == 1 else f"queries[{position}]"
            _refuse_surrogates(text, where, "POST /v1/search")
        retriever = self.variant(switches)
        if not texts:
            return [], retriever.pipeline
        key: _SearchKey = (switches.key, k, bool(explain))
        return self._batcher.submit(key, texts), retriever.pipeline

    def _run(self, key: _SearchKey, texts: list[str]) -> list[SearchResult]:
        switches, k, explain = key
        retriever = self.variant(StageSwitches(*switches))
        with self._model:
            return retriever.search(texts, k=k, explain=explain)

    @property
    def batches(self) -> tuple[int, int]:
        """(batches run, batches that served more than one request) since the start."""
        return self._batcher.batches, self._batcher.batched

    # -- items ----------------------------------------------------------------------------------
    def row(self, item_id: str) -> int:
        """The index row of an item id.

        Raises:
            ServeError: no such item (E795, status 404).
        """
        row = self._rows.get(item_id)
        if row is None:
            raise ServeError(Errors.E795.format(item_id=item_id, count=len(self._rows)), status=404)
        return row

    def item(self, item_id: str) -> dict[str, Any]:
        """An item's caption, the formula Π(caption), its stored predicates and where its audio is.

        Raises:
            ServeError: no such item (E795, status 404).
        """
        row = self.row(item_id)
        index = self.retriever.index
        caption = index.captions[row]
        sets = index.predicate_sets
        return {
            "id": item_id, "row": row, "caption": caption,
            "formula": None if not caption else self._formula(caption),
            "predicates": sorted(str(symbol) for symbol in sets[row]) if sets else [],
            "audio": self.audio_url(item_id) if self.audio.has_audio(item_id) else None,
        }

    @staticmethod
    def audio_url(item_id: str) -> str:
        """The API path of an item's audio (the id percent-encoded, '/' included).

        Example:
            >>> SearchService.audio_url("clips/rain 1.wav")
            '/v1/items/clips%2Frain%201.wav/audio'
        """
        from urllib.parse import quote

        return f"/v1/items/{quote(item_id, safe='')}/audio"

    def _parse_caption(self, caption: str) -> str | None:
        from fortekit.errors import FortekitError
        from fortekit.fol.caption.parser import parse_caption

        with self._model:
            try:
                return str(parse_caption(caption).formula)
            except FortekitError:
                return None

    def audio_file(self, item_id: str) -> Path:
        """The checked real path of an item's audio file (see :class:`AudioFiles`).

        Raises:
            ServeError: no such item (E795), no audio (E796), a file refused (E797).
        """
        self.row(item_id)
        return self.audio.resolve(item_id)

    def stage1_tree(self, query: str) -> str:
        """Stage 1's search tree for a query, as ``fol-refine --explain`` prints it.

        Raises:
            CaptionError, CaptionTypeError: an empty, too long or non-str query (E300-E302).
        """
        from fortekit.fol.caption.pipeline import check_text

        text = _refuse_surrogates(check_text(query, function="GET /v1/stage1/tree"), "query",
                                  "GET /v1/stage1/tree")
        with self._model:
            return str(self._refiner().refine(text).explain())

    # -- description ----------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """What ``/v1/info`` says: the index, the default pipeline, the switches, limits and versions."""
        index = self.retriever.index
        return {
            "index": {"path": self.index_path, "items": len(index), "kind": self.retriever.pipeline.kind,
                      "backbone": self.retriever.backbone.name, "dim": int(index.dim),
                      "captioner": index.meta.captioner, "audio": sum(map(self.audio.has_audio, index.ids))},
            "pipeline": self.retriever.pipeline.to_dict(), "first_pass": self.retriever.first_pass,
            "switches": {name: list(values) for name, values in SWITCH_VALUES.items()},
            "limits": self.limits.to_dict(),
        }


def _refuse_surrogates(text: str, where: str, route: str) -> str:
    """``text`` itself when it is UTF-8 text; a lone surrogate (JSON's ``"\\ud800"``) is E792 (422).

    No tokenizer takes one, and no answer could echo it: refused here, before the queue.

    Example:
        >>> _refuse_surrogates("rain \\ud800", "query", "POST /v1/search")
        Traceback (most recent call last):
        ...
        fortekit.errors.ServeError: [E792] query: holds a lone surrogate (U+D800 at character 5), ...
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        fields = _SEARCH_FIELDS if route == "POST /v1/search" else "query"
        raise ServeError(Errors.E792.format(
            where=where, problem=f"holds a lone surrogate (U+{ord(text[error.start]):04X} at character "
            f"{error.start}), which is no character; send the text as UTF-8", route=route, fields=fields,
        ), status=422) from None
    return text


def versions() -> dict[str, str]:
    """The versions of Python and of the packages that answer a request.

    Example:
        >>> sorted(versions())[:2]
        ['fastapi', 'fortekit']
    """
    from importlib.metadata import PackageNotFoundError, version

    from fortekit import __version__

    found = {"fortekit": __version__, "python": platform.python_version()}
    for name in ("fastapi", "starlette", "uvicorn", "torch", "transformers", "spacy"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found
