"""The warm search service behind ``fortekit serve``: one Retriever, its stage variants, items, audio.

Everything is loaded once (:meth:`SearchService.open`); a request's stage switches pick a
variant of the one :class:`~fortekit.search.retriever.Retriever` (made once, sharing the
index, the backbone and the text cache, by :meth:`Retriever.replace`), and concurrent
searches with the same switches run as one batch (:class:`MicroBatcher`). So what a request
gets is exactly what ``Retriever.search`` returns for its queries.

The index can change under a running server (``fortekit index add``, ``remove``, ``compact``, a
rebuild). :meth:`SearchService.reload` loads it again when its state
(:func:`~fortekit.search.index.state.index_state`) changed: the new index, its Retriever and
its warm-up are made beside the served one, and a single assignment swaps them in; a request
reads the served snapshot once, so it is answered wholly from the old state or wholly from the
new one. An index that cannot be loaded (half written, damaged) leaves the old state served and
logs E811. ``fortekit serve`` reloads on SIGHUP, on ``POST /v1/reload`` and when a request finds
the index's state changed (checked at most every ``reload_check_s`` seconds).

Example:
    >>> service = SearchService.open("clips.index", device="cpu")  # doctest: +SKIP
    >>> results, pipeline = service.search(["rain on a roof"], k=3)  # doctest: +SKIP
    >>> [hit.item_id for hit in results[0].hits]  # doctest: +SKIP
    ['clip3', 'clip0', 'clip7']
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import threading
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, ServeError
from fortekit.search.serve.audio_files import AudioFiles
from fortekit.search.serve.batching import MicroBatcher
from fortekit.search.serve.limits import SWITCH_VALUES, ServeLimits, StageSwitches

if TYPE_CHECKING:
    from fortekit.plugins.protocols import Backbone
    from fortekit.search.hits import SearchResult
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.pipeline.defaults import Pipeline
    from fortekit.search.retriever import Retriever
    from fortekit.search.stage1.result import RefinementResult

__all__ = ["RetrieverFactory", "SearchService"]

#: Makes the Retriever of a (re)loaded index: given the index and the backbone already loaded
#: (None at the first load), it returns the Retriever with the server's stage settings.
RetrieverFactory = Callable[["AudioIndex", "Backbone | None"], "Retriever"]
_LOG = logging.getLogger("fortekit.serve")
_LOAD_ATTEMPTS = 5  # an index rewritten 5 times while it is loaded is refused this time (E811)

_SearchKey = tuple["_Snapshot", tuple[str, str, str], int, bool]
_SEARCH_FIELDS = "query, queries, k, stage1, formula_scoring, stage3, explain"


class _Snapshot:
    """Everything a request reads that depends on the index: swapped in whole by a reload.

    A request takes the service's snapshot once and reads only it, so its answer comes from one
    state of the index even when a reload swaps another in meanwhile.
    """

    def __init__(self, retriever: Retriever, audio_roots: Sequence[Path] | None, state: str | None) -> None:
        self.retriever = retriever
        index = retriever.index
        self.rows = {item_id: row for row, item_id in enumerate(index.ids)}
        self.audio = AudioFiles(index.ids, index.paths, base=audio_roots[0] if audio_roots else None,
                                roots=audio_roots)
        self.variants: dict[tuple[str, str, str], Retriever] = {StageSwitches().key: retriever}
        self.online_refiner: Any = None
        self.state = state
        self.loaded_at = time.time()


class SearchService:
    """One index, its backbone and parser, loaded once, answering searches from many threads.

    Args:
        retriever: the Retriever of the index's default pipeline (``Retriever(index)``).
        limits: the bounds of one request.
        audio_roots: the folders audio files may be served from (default: the folders of the
            files the index registers); relative registered paths are read from the first one,
            else from the current directory.
        index_path: the index's folder: its name is what ``/v1/info`` shows (never the path),
            and :meth:`reload` reads it again.
        make_retriever: makes the Retriever of a reloaded index (default: the index's default
            pipeline on the backbone already loaded, ``Retriever(index, backbone=...)``).
        reload_check_s: how often (at most) a request checks whether the index's state changed
            and starts a reload in the background; 0 never (SIGHUP and ``POST /v1/reload`` still do).
    """

    def __init__(self, retriever: Retriever, *, limits: ServeLimits | None = None,
                 audio_roots: Sequence[str | os.PathLike[str]] | None = None,
                 index_path: str | os.PathLike[str] | None = None,
                 make_retriever: RetrieverFactory | None = None, reload_check_s: float = 0.0) -> None:
        if isinstance(reload_check_s, bool) or not isinstance(reload_check_s, (int, float)) \
                or not 0 <= reload_check_s < float("inf"):
            raise ServeError(Errors.E807.format(name="reload_check_s", expected="a number of seconds >= 0",
                                                value=reload_check_s))
        self.limits = limits or ServeLimits()
        self.folder = None if index_path is None else Path(os.path.abspath(os.fspath(index_path)))
        #: The index's folder name, what the API shows of it (never its path).
        self.index_name = "" if self.folder is None else self.folder.name
        self._audio_roots = None if audio_roots is None else [Path(root) for root in audio_roots]
        self._make_retriever = make_retriever
        self.reload_check_s = float(reload_check_s)
        self._served = _Snapshot(retriever, self._audio_roots, self._state_of(retriever.index))
        # One model lock: the batcher holds it while it ranks; item formulas and Stage 1 trees
        # (spaCy, the encoder) take it too, since neither is safe to share between threads. A
        # reload makes its Retriever and warms it under it too (they share the backbone).
        self._model = threading.RLock()
        self._batcher: MicroBatcher[SearchResult] = MicroBatcher(
            self._run, max_batch=self.limits.max_batch, max_queue=self.limits.max_queue)
        self._formula = lru_cache(maxsize=4096)(self._parse_caption)
        self._reloading = threading.Lock()  # one reload at a time; a second waits for it
        self._background_lock = threading.Lock()
        self._background: threading.Thread | None = None
        self._again = self._again_retry = False  # asked while one ran: run once more after it
        self._last_check = time.monotonic()
        self._failed_state: str | None = None  # the state that failed to load: not retried until it changes
        self.reloads = 0
        #: The code and message of the last reload that failed (None once one succeeds).
        self.reload_error: dict[str, str] | None = None

    @classmethod
    def open(cls, index: str | os.PathLike[str], *, device: str = "auto", backbone: str | None = None,
             limits: ServeLimits | None = None,
             audio_roots: Sequence[str | os.PathLike[str]] | None = None,
             make_retriever: RetrieverFactory | None = None, reload_check_s: float = 0.0) -> SearchService:
        """Load an index with its default pipeline, and warm it (one search) so the first request is fast.

        Args:
            index: the index's folder.
            device: "auto", "cpu", "cuda", ...
            backbone: a registered backbone name (None: the index's own).
            limits: the bounds of one request.
            audio_roots: see :class:`SearchService`.
            make_retriever: see :class:`SearchService` (default: ``Retriever`` with
                ``backbone`` and ``device``).
            reload_check_s: see :class:`SearchService`.

        Returns:
            The service.

        Raises:
            AudioIndexError: an index that cannot be read (E42x, E6xx).
            FortekitError: a backbone or stage that cannot be loaded, with its code.
        """
        from fortekit.search.retriever import Retriever

        def default_retriever(loaded: AudioIndex, shared: Backbone | None) -> Retriever:
            return Retriever(loaded, backbone=shared if shared is not None else backbone, device=device)

        make = make_retriever or default_retriever
        loaded, _ = _load_index(Path(index))
        service = cls(make(loaded, None), limits=limits, audio_roots=audio_roots, index_path=index,
                      make_retriever=make, reload_check_s=reload_check_s)
        service.search(["warm up"], k=1)
        return service

    # -- the served snapshot ----------------------------------------------------------------------
    @property
    def retriever(self) -> Retriever:
        """The Retriever of the index state served now (its default pipeline)."""
        return self._served.retriever

    @property
    def audio(self) -> AudioFiles:
        """The audio files of the index state served now."""
        return self._served.audio

    @property
    def state(self) -> str | None:
        """The state of the index served now (:func:`~fortekit.search.index.state.index_state`), or
        None for an index that was given in memory (not loaded from a folder)."""
        return self._served.state

    @staticmethod
    def _state_of(index: AudioIndex) -> str | None:
        from fortekit.errors import FortekitError
        from fortekit.search.index.state import index_state

        try:
            return index_state(index)
        except FortekitError:  # an index made in memory has no state (E643): nothing to reload
            return None

    # -- searching ------------------------------------------------------------------------------
    def variant(self, switches: StageSwitches) -> Retriever:
        """The Retriever of these switches over the index served now (made on first use, then kept).

        Example:
            >>> service.variant(StageSwitches(formula_scoring="off")).formula_scorer is None  # doctest: +SKIP
            True
        """
        return self._variant(self._served, switches)

    def _variant(self, served: _Snapshot, switches: StageSwitches) -> Retriever:
        found = served.variants.get(switches.key)  # no lock once made: a request never waits for a batch here
        if found is not None:
            return found
        with self._model:
            found = served.variants.get(switches.key)
            if found is None:
                found = served.variants[switches.key] = self._make_variant(served, switches)
            return found

    def _make_variant(self, served: _Snapshot, switches: StageSwitches) -> Retriever:
        from fortekit.search.pipeline import PipelineSpec

        base = served.retriever
        asked = PipelineSpec.from_switches(formula_scoring=switches.formula_scoring, stage3=switches.stage3,
                                           stage1="off" if switches.stage1 == "off" else "auto")
        changes: dict[str, Any] = asked.switched()
        if switches.stage1 == "online":  # one online Stage 1 per served index, shared by its variants
            changes["stage1"] = self._refiner(served)
        if not changes:
            return base
        variant = base.replace(**changes)
        requested = (("formula", "formula_scoring", switches.formula_scoring),
                     ("stage3", "stage3", switches.stage3), ("stage1", "stage1", switches.stage1))
        for stage, switch, value in requested:
            if value != "auto":  # say who switched it, in the words of the request
                state = variant.pipeline.state(stage)
                variant.pipeline = variant.pipeline.replace(stage, state.on, f"switched by the request "
                                                            f"({switch}={value})", state.detail)
        return variant

    def _refiner(self, served: _Snapshot) -> Any:
        """Stage 1 with the online beam: the default retriever's when it searches, else one made once.

        The default's own Stage 1 is usually the feedback regime (depth 0), which searches
        nothing; "online" asks for the beam, and the Stage 1 tree shows it.
        """
        own = served.retriever.refiner
        if own is not None and own.config.max_depth > 0:
            return own
        if served.online_refiner is None:
            from fortekit.search.stage1.assembly import build_refiner
            from fortekit.search.stage1.config import RefineConfig

            base = served.retriever
            served.online_refiner = build_refiner(base.backbone, config=RefineConfig.online(),
                                                  index=base.index, device=base.device)
        return served.online_refiner

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

        Example:
            >>> results, pipeline = service.search(["rain on a roof"], k=3)  # doctest: +SKIP
        """
        results, pipeline, _ = self.search_served(queries, k=k, switches=switches, explain=explain)
        return results, pipeline

    def search_served(self, queries: Sequence[str], *, k: int = 10, switches: StageSwitches | None = None,
                      explain: bool = False) -> tuple[list[SearchResult], Pipeline, str | None]:
        """:meth:`search`, with the state of the index that answered (all queries from that one).

        Args:
            queries, k, switches, explain: as :meth:`search`.

        Returns:
            The results, the pipeline that ran, and the index state they were ranked against.

        Raises:
            ServeError, CaptionError, CaptionTypeError: as :meth:`search`.

        Example:
            >>> results, pipeline, state = service.search_served(["rain"], k=1)  # doctest: +SKIP
        """
        from fortekit.fol.caption.pipeline import check_text

        switches = switches or StageSwitches()
        if len(queries) > self.limits.max_batch:
            raise ServeError(Errors.E794.format(count=len(queries), limit=self.limits.max_batch), status=422)
        self.limits.check_k(k)
        # Before the queue. The one text check also refuses a lone surrogate (E671, 422), as for every caller.
        texts = [check_text(text, function="POST /v1/search") for text in queries]
        served = self._served  # read once: every query of this request is ranked against it
        retriever = self._variant(served, switches)
        if not texts:
            return [], retriever.pipeline, served.state
        key: _SearchKey = (served, switches.key, k, bool(explain))
        return self._batcher.submit(key, texts), retriever.pipeline, served.state

    def _run(self, key: _SearchKey, texts: list[str]) -> list[SearchResult]:
        served, switches, k, explain = key  # the snapshot of the requests: a batch never mixes two
        retriever = self._variant(served, StageSwitches(*switches))
        with self._model:
            return retriever.search(texts, k=k, explain=explain)

    @property
    def batches(self) -> tuple[int, int]:
        """(batches run, batches that served more than one request) since the start."""
        return self._batcher.batches, self._batcher.batched

    # -- items ----------------------------------------------------------------------------------
    def row(self, item_id: str) -> int:
        """The index row of an item id (in the index state served now).

        Raises:
            ServeError: no such item (E795, status 404).
        """
        return self._row(self._served, item_id)

    @staticmethod
    def _row(served: _Snapshot, item_id: str) -> int:
        row = served.rows.get(item_id)
        if row is None:
            raise ServeError(Errors.E795.format(item_id=item_id, count=len(served.rows)), status=404)
        return row

    def item(self, item_id: str) -> dict[str, Any]:
        """An item's caption, the formula Π(caption), its stored predicates and where its audio is.

        Raises:
            ServeError: no such item (E795, status 404).
        """
        served = self._served
        row = self._row(served, item_id)
        index = served.retriever.index
        caption = index.captions[row]
        sets = index.predicate_sets
        return {
            "id": item_id, "row": row, "caption": caption,
            "formula": None if not caption else self._formula(caption),
            "predicates": sorted(str(symbol) for symbol in sets[row]) if sets else [],
            "audio": self.audio_url(item_id) if served.audio.has_audio(item_id) else None,
        }

    def public_result(self, result: SearchResult) -> dict[str, Any]:
        """``result.to_dict()`` as the API answers it: each hit's ``path`` is its audio URL (or null).

        The API never shows a path of the server's disk; an item with audio has it at this URL.

        Example:
            >>> service.public_result(results[0])["hits"][0]["path"]  # doctest: +SKIP
            '/v1/items/clip3/audio'
        """
        shown = result.to_dict()
        for hit in shown.get("hits", []):
            if hit.get("path") is not None:
                hit["path"] = self.audio_url(str(hit["id"]))
        return shown

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
        served = self._served
        self._row(served, item_id)
        return served.audio.resolve(item_id)

    def stage1_tree(self, query: str) -> str:
        """Stage 1's search tree for a query, as ``fol-refine --explain`` prints it.

        Raises:
            CaptionError, CaptionTypeError: an empty, too long or non-str query (E300-E302).
        """

        return str(self._refine(query).explain())

    def stage1_tree_data(self, query: str) -> dict[str, Any]:
        """Stage 1's search tree for a query as JSON (``GET /v1/stage1/tree?format=json``): what
        ``fol-refine`` writes per query, with every node of the tree (``tree``: id, parent, depth,
        formula, text, edit, feasible, kept and the objective's terms) and ``star``, the id of the
        node the search chose (phi*; 0, phi0, when nothing feasible beat it).

        Raises:
            CaptionError, CaptionTypeError: an empty, too long or non-str query (E300-E302).
        """
        result = self._refine(query)
        data: dict[str, Any] = result.to_dict(include_tree=True)
        data["star"] = next((node.node_id for node in result.tree
                             if node.formula == result.phi_star and node.feasible), 0)
        return data

    def _refine(self, query: str) -> RefinementResult:
        from fortekit.fol.caption.pipeline import check_text

        text = _refuse_surrogates(check_text(query, function="GET /v1/stage1/tree"), "query",
                                  "GET /v1/stage1/tree")
        served = self._served
        with self._model:
            refined: RefinementResult = self._refiner(served).refine(text)
        return refined

    # -- description ----------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """What ``/v1/info`` says: the index (its name and state, never its path), the default
        pipeline, the switches, the limits and the reloads.

        Example:
            >>> service.info()["index"]["name"]  # doctest: +SKIP
            'clips.index'
        """
        served = self._served
        retriever, index = served.retriever, served.retriever.index
        return {
            "index": {"name": self.index_name, "state": served.state, "index_id": index.meta.index_id,
                      "items": len(index), "kind": retriever.pipeline.kind,
                      "backbone": retriever.backbone.name,
                      "dim": int(index.dim), "captioner": index.meta.captioner,
                      "audio": sum(map(served.audio.has_audio, index.ids)),
                      "loaded_s_ago": round(time.time() - served.loaded_at, 1)},
            "pipeline": retriever.pipeline.to_dict(), "first_pass": retriever.first_pass,
            "switches": {name: list(values) for name, values in SWITCH_VALUES.items()},
            "limits": self.limits.to_dict(),
            "reload": {"check_s": self.reload_check_s, "reloads": self.reloads, "error": self.reload_error},
        }

    # -- reloading ----------------------------------------------------------------------------------
    def reload(self, *, retry_failed: bool = True) -> dict[str, Any]:
        """Load the index again when its state changed, and swap it in once it is wholly loaded.

        The new index, its Retriever (on the backbone already loaded) and a warm-up search are
        made while the old state is served; one assignment then swaps them in. Requests already
        running finish on the old state. One reload runs at a time.

        Args:
            retry_failed: load a state that failed before again (False: the automatic check,
                which waits for the index to change again instead of logging each try).

        Returns:
            ``{"reloaded": bool, "state": ..., "previous": ..., "items": ...}``: whether a new state
            was swapped in, the state served now and the one before.

        Raises:
            ServeError: the index changed but cannot be loaded (E811, status 409); the state
                served before is still served, and the log holds one warning line.

        Example:
            >>> service.reload()  # doctest: +SKIP
            {'reloaded': True, 'state': '3f2a9c1e-...', 'previous': 'none-...', 'items': 12}
        """
        with self._reloading:
            served = self._served
            if self.folder is None:  # an index given in memory: nothing to read again
                return self._reload_report(False, served)
            current = self._current_state(self.folder)
            if current == served.state:  # unchanged, or back to the state served (a failure is over)
                self.reload_error = self._failed_state = None
                return self._reload_report(False, served)
            if not retry_failed and current == self._failed_state:
                return self._reload_report(False, served)
            try:
                index, state = _load_index(self.folder)
                if state == served.state:  # changed and changed back meanwhile
                    return self._reload_report(False, served)
                with self._model:  # the Retriever and its warm-up use the shared backbone
                    retriever = self._retriever_for(index, served.retriever)
                    retriever.search(["warm up"], k=1)
                fresh = _Snapshot(retriever, self._audio_roots, state)
            except Exception as error:  # any failure (a bug included): the old state stays served
                self._failed_state = current
                message = Errors.E811.format(name=self.index_name, problem=self._shown_problem(error),
                                             state=served.state, items=len(served.retriever.index))
                self.reload_error = {"code": "E811", "message": message}
                _LOG.warning("%s", message)
                raise ServeError(message, status=409) from None
            self._served = fresh  # the swap: one assignment, read once by each request
            self.reloads += 1
            self.reload_error = self._failed_state = None
            _LOG.info("index %s reloaded: state %s -> %s, %d -> %d items", self.index_name, served.state,
                      fresh.state, len(served.retriever.index), len(index))
            return self._reload_report(True, fresh, previous=served)

    def _retriever_for(self, index: AudioIndex, old: Retriever) -> Retriever:
        if self._make_retriever is not None:
            return self._make_retriever(index, old.backbone)
        from fortekit.search.retriever import Retriever

        return Retriever(index, backbone=old.backbone, device=old.device)

    def _current_state(self, folder: Path) -> str:
        """The state of the index folder now, or a description of why it cannot be read."""
        from fortekit.errors import FortekitError
        from fortekit.search.index.state import read_folder_state

        try:
            return read_folder_state(folder)
        except (FortekitError, OSError) as error:
            return f"unreadable: {self._shown_problem(error)}"

    def _shown_problem(self, error: BaseException) -> str:
        """An error as the API may show it: the index folder's path replaced by its name."""
        text = str(error) or type(error).__name__
        if not isinstance(error, ServeError) and not text.startswith("["):
            text = f"{type(error).__name__}: {text}"
        if self.folder is not None:
            for shown in sorted({str(self.folder), os.path.realpath(self.folder)}, key=len, reverse=True):
                text = text.replace(shown, self.index_name)
        return text[:600].rstrip().rstrip(".")  # E811 goes on with its own sentence

    @staticmethod
    def _reload_report(reloaded: bool, served: _Snapshot,
                       previous: _Snapshot | None = None) -> dict[str, Any]:
        return {"reloaded": reloaded, "state": served.state,
                "previous": (previous or served).state, "items": len(served.retriever.index)}

    def reload_in_background(self, *, automatic: bool = False) -> None:
        """Run :meth:`reload` in a thread (one at a time; asked again while one runs: once more after it).

        Args:
            automatic: the automatic check asks (a state that failed is not loaded again until
                it changes); SIGHUP and ``POST /v1/reload`` retry it.

        Example:
            >>> service.reload_in_background()  # doctest: +SKIP
        """
        with self._background_lock:
            if self._background is not None:
                self._again = True
                self._again_retry = self._again_retry or not automatic
                return
            self._background = threading.Thread(target=self._reload_quietly, args=(not automatic,),
                                                name="fortekit-reload", daemon=True)
            self._background.start()

    def _reload_quietly(self, retry_failed: bool) -> None:
        while True:
            with contextlib.suppress(ServeError):  # reload logged it (E811); the old state is served
                self.reload(retry_failed=retry_failed)
            with self._background_lock:
                if not self._again:
                    self._background = None
                    return
                retry_failed, self._again, self._again_retry = self._again_retry, False, False

    def check_index(self) -> bool:
        """Start a background reload when the last check of the index's state is ``reload_check_s`` old.

        Called by the app before each request: the request itself is answered at once (from the
        state served now); the check reads a few small files in the background thread.

        Returns:
            Whether a check was started.

        Example:
            >>> service.check_index()  # doctest: +SKIP
            False
        """
        if self.reload_check_s <= 0 or self.folder is None:
            return False
        now = time.monotonic()
        if now - self._last_check < self.reload_check_s:
            return False
        self._last_check = now
        self.reload_in_background(automatic=True)
        return True


def _load_index(folder: Path) -> tuple[AudioIndex, str]:
    """The index in ``folder`` and its state, the two read from one write of it (tried again when a
    write of the index overtook the load).

    Raises:
        AudioIndexError: no index there, or a damaged one (E6xx).
        ServeError: the index was rewritten during each of the tries (E811's problem).
    """
    from fortekit.errors import FortekitError
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.state import index_state, read_folder_state

    for _ in range(_LOAD_ATTEMPTS):
        before = read_folder_state(folder)
        index = AudioIndex.load(folder)
        try:
            recorded: str | None = index_state(index)  # the state AudioIndex.load recorded with its files
        except FortekitError:  # a loader that records none: the folder's state before and after
            recorded = None
        if recorded is not None:
            return index, recorded
        if read_folder_state(folder) == before:
            return index, before
    raise ServeError(f"it was rewritten {_LOAD_ATTEMPTS} times while it was read")


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
