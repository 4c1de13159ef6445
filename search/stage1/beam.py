"""Stage 1: FOL-guided query refinement by a batched, best-first beam search.

For each query q: elaborate it into q+ and q-, parse all three (phi0, phi+, phi-),
keep the invariant set C, and grow phi0 with the operators of the depth schedule.
A child phi is feasible when its projection on the pivot v = normalise(f_T(G(phi+))
- f_T(G(phi-))) passes the threshold; the beam keeps the B feasible children of
lowest F(phi) = w c(phi) - u(phi); phi* is the best feasible node seen.

Batching: every depth encodes the verbalised children of ALL queries of a batch in
one backbone call (de-duplicated, through the text cache), and scores them with
tensor operations on the backbone's device. Scoring, the threshold, the choice of the
beam and the result are in :mod:`fortekit.search.stage1.selection`.

Example:
    >>> refiner = Refiner()  # doctest: +SKIP
    >>> result = refiner.refine("a dog barking")  # doctest: +SKIP
    >>> result.refined_text, result.terms.objective < 0  # doctest: +SKIP
    ('dog barking, loud', True)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from fortekit._checks import check_int
from fortekit.errors import Errors, RefineError
from fortekit.fol import Formula, invariant_predicates, predicates, successors
from fortekit.fol.caption import CaptionParser
from fortekit.search.stage1.anchors import AnchorRequest, Anchors, AnchorSource, NoAnchors
from fortekit.search.stage1.beam_state import Node, QueryState, StageTimes, anchor_tensors, formula_complexity
from fortekit.search.stage1.config import RefineConfig
from fortekit.search.stage1.encoder import CachedTextEncoder, TextEmbeddingCache
from fortekit.search.stage1.pools import PoolSources, candidate_pools, confidences
from fortekit.search.stage1.result import ObjectiveTerms, RefinementResult
from fortekit.search.stage1.selection import build_result, decide, score_nodes, select_beam

if TYPE_CHECKING:
    import torch

    from fortekit.plugins.protocols import Backbone, Elaborator

__all__ = ["VERBALISED_ENTRIES", "Refiner", "StageTimes"]

#: Candidate formulas whose verbalisation a :class:`Refiner` keeps (emptied when full): four times
#: the most one query may score (``MAX_SCORED_PER_QUERY``), so a query's beam and its neighbours'
#: are served. An entry is a formula and its text: about 2 kB for a caption's, about 6.5 kB for a
#: query of 30 unknown words, so at most about 35-110 MB (it was 500,000 entries: up to 3 GB).
VERBALISED_ENTRIES = 1 << 14


class Refiner:
    """Stage 1 over a backbone and an elaborator.

    Args:
        backbone: a registered backbone name (default "minilm", the embedded default)
            or a :class:`fortekit.plugins.Backbone` object.
        elaborator: a registered elaborator name (default "lexical") or an object.
        config: the hyperparameters (default :meth:`RefineConfig.online`).
        anchors: where e+ and e- come from (default none: the pivot only).
        device: for a backbone given by name: "auto", "cpu", "cuda", ...
        cache_dir: a directory for an on-disk text-embedding cache.
        parser: the caption parser (default: the shared rule parser).
        backbone_options: more options for a backbone given by name.

    Raises:
        UnknownPluginError: no such backbone or elaborator.
        RefineError: a bad configuration or cache.

    Example:
        >>> refiner = Refiner("minilm", "lexical", config=RefineConfig.offline())  # doctest: +SKIP
        >>> results = refiner.refine_many(["rain on a roof", "a person talking"])  # doctest: +SKIP
        >>> [r.refined_text for r in results]  # doctest: +SKIP
        ['rain on a roof, steady', 'person talking, loud']
    """

    def __init__(
        self,
        backbone: str | Backbone = "minilm",
        elaborator: str | Elaborator = "lexical",
        *,
        config: RefineConfig | None = None,
        anchors: AnchorSource | None = None,
        device: str = "auto",
        cache_dir: str | os.PathLike[str] | None = None,
        parser: CaptionParser | None = None,
        backbone_options: dict[str, Any] | None = None,
        pool_sources: PoolSources | None = None,
    ) -> None:
        from fortekit.plugins import get_backbone, get_elaborator, with_device

        if isinstance(backbone, str):  # options recorded with a device (an index's) must not clash
            backbone = get_backbone(backbone, **with_device(backbone_options or {}, device))
        if isinstance(elaborator, str):
            elaborator = get_elaborator(elaborator)
        if config is not None and not isinstance(config, RefineConfig):
            raise RefineError(Errors.E410.format(
                what="config", expected="fortekit.search.RefineConfig", type_name=type(config).__name__
            ))
        self.backbone = backbone
        self.elaborator = elaborator
        self.config = config or RefineConfig.online()
        self.anchors: AnchorSource = anchors if anchors is not None else NoAnchors()
        cache = TextEmbeddingCache(cache_dir, backbone=backbone.name, dim=int(backbone.dim))
        self.encoder = CachedTextEncoder(backbone, cache)
        self._parser = parser
        self._pool_sources = pool_sources
        self.times = StageTimes()
        self._verbalised: dict[Formula, str] = {}
        self.check_widths()

    def __repr__(self) -> str:
        return (
            f"Refiner(backbone={self.backbone.name!r}, elaborator={self.elaborator.name!r}, "
            f"anchors={self.anchors.name!r}, B={self.config.beam_width}, D={self.config.max_depth})"
        )

    # -- public API ------------------------------------------------------------------
    @property
    def parser(self) -> CaptionParser:
        if self._parser is None:
            from fortekit.fol.caption import default_parser

            self._parser = default_parser()
        return self._parser

    def check_query(self, query: object) -> str:
        """``query`` if Stage 1 can take it.

        Raises:
            EmptyCaptionError: empty or whitespace (E300).
            CaptionTooLongError: longer than the parser's limit (E301).
            CaptionTypeError: not a str (E302).
        """
        from fortekit.fol.caption.pipeline import check_text

        return check_text(query, function="refine", max_chars=self.parser.max_chars)

    def check_widths(self) -> None:
        """Refuse an anchor bank or a caption corpus whose rows are not as wide as the backbone's.

        Such rows come from another backbone; scoring with them would fail deep inside torch
        (or, worse, not fail). Called at construction, and again by whoever replaces
        ``anchors`` or ``elaborator`` afterwards.

        Raises:
            RefineError: E407, naming the part and both widths.
        """
        expected = int(self.backbone.dim)
        corpus = getattr(self.elaborator, "corpus", None)
        for what, part in (("The anchor bank", self.anchors), ("The caption corpus", corpus)):
            got = getattr(part, "dim", None) if part is not None else None
            if isinstance(got, int) and not isinstance(got, bool) and got != expected:
                raise RefineError(Errors.E407.format(what=what, got=got, expected=expected)
                                  + " Build it with this run's backbone.")

    def encode_texts(self, texts: str | Sequence[str]) -> torch.Tensor:
        """f_T of ``texts`` through the cache (one backbone call for the unknown ones); a str: its vector."""
        return self.encoder.encode(texts)

    def refine(self, query: str) -> RefinementResult:
        """Refine one query (see :meth:`refine_many`)."""
        return self.refine_many([query])[0]

    def refine_many(
        self,
        queries: Sequence[str],
        *,
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
        companions: Callable[[Formula], Sequence[str]] | None = None,
    ) -> list[RefinementResult]:
        """Refine queries, ``batch_size`` at a time (one encoder call per depth per batch).

        Args:
            queries: the query texts.
            batch_size: queries searched together.
            progress: called with the number of queries finished after each batch.
            companions: the texts a later stage will encode for a query's formula (formula
                scoring's clauses); the feedback regime encodes them in the queries' own call,
                into the shared text cache.

        Returns:
            One :class:`RefinementResult` per query, in order.

        Raises:
            EmptyCaptionError, CaptionTooLongError, CaptionTypeError: a bad query
                (check them first with :meth:`check_query` to skip bad ones).
            ElaborationError: the elaborator cannot elaborate a query.
        """
        check_int(batch_size, name="batch_size", error=RefineError, message=Errors.E400)
        if isinstance(queries, str):
            raise RefineError(Errors.E410.format(
                what="queries", expected="list of str (wrap one query in a list)", type_name="str"
            ))
        for query in queries:
            self.check_query(query)
        results: list[RefinementResult] = []
        for start in range(0, len(queries), batch_size):
            chunk = list(queries[start:start + batch_size])
            results.extend(self._refine_batch(chunk, companions))
            if progress is not None:
                progress(len(chunk))
        return results

    # -- one batch ---------------------------------------------------------------------
    def _refine_batch(
        self, queries: list[str], companions: Callable[[Formula], Sequence[str]] | None = None,
    ) -> list[RefinementResult]:
        import torch

        if self.config.max_depth == 0:
            return self._feedback_batch(queries, companions)
        started = time.perf_counter()
        states = self._prepare(queries)
        config = self.config

        # Depth 0, one encoder call: the raw queries (for the anchors' first pass),
        # G(phi0), G(phi+), G(phi-).
        texts: list[str] = []
        for state in states:
            texts.append(state.text)
            texts.append(self._text(state.phi0.formula))
            texts.extend(self._text(p.formula) for p in state.plus)
            texts.extend(self._text(p.formula) for p in state.minus)
        embedded = self._encode(texts)
        row_of = {text: row for row, text in enumerate(texts)}
        dim = embedded.shape[1]
        pivots = torch.zeros((len(states), dim), dtype=embedded.dtype, device=embedded.device)
        for i, state in enumerate(states):
            plus = embedded[[row_of[self._text(p.formula)] for p in state.plus]].mean(dim=0)
            minus = embedded[[row_of[self._text(p.formula)] for p in state.minus]].mean(dim=0)
            difference = plus - minus
            norm = float(difference.norm())
            # q+ and q- that verbalise alike give no direction: the pivot term is then 0.
            pivots[i] = difference / norm if norm > 1e-6 else difference * 0.0
        requests = [
            AnchorRequest(
                query=state.text,
                query_embedding=embedded[row_of[state.text]],
                predicates=predicates(state.phi0.formula),
                negative_predicates=tuple(predicates(p.formula) for p in state.minus),
            )
            for state in states
        ]
        anchors = self.anchors.anchor_batch(requests)
        positive, negative, has_positive, has_negative = anchor_tensors(anchors, embedded)

        roots = []
        for i, state in enumerate(states):
            state.index = i
            phi0 = state.phi0.formula
            root = Node(0, None, 0, phi0, (), formula_complexity(phi0, state.confidence))
            root.text = self._text(root.formula)
            state.nodes.append(root)
            state.known.add(phi0)
            roots.append(root)
        scoring = (pivots, positive, negative, has_positive, has_negative)
        root_rows = embedded[[row_of[node.text] for node in roots]]
        self._score(states, roots, root_rows, scoring)
        for state, root in zip(states, roots, strict=True):
            state.pivot0 = root.terms.pivot if root.terms else 0.0
            root.kept = True
            state.beam = [root]
            if config.threshold != "auto":
                decide(config, state, config.threshold)

        for depth in range(1, config.max_depth + 1):
            frontier = [
                (state, child) for state in states if state.active for child in self._expand(state, depth)
            ]
            if not frontier:
                continue
            tick = time.perf_counter()
            for _, child in frontier:
                child.text = self._text(child.formula)
            self.times.verbalise += time.perf_counter() - tick
            rows = self._encode([child.text for _, child in frontier])
            self._score(states, [child for _, child in frontier], rows, scoring, [s for s, _ in frontier])
            self._select(states, frontier)
        for state in states:
            if not state.threshold:  # "auto" never saw a candidate: phi0 stands
                decide(self.config, state, "relative")
        results = [self._result(state, anchors[state.index]) for state in states]
        self.times.total += time.perf_counter() - started
        return results

    def _feedback_batch(
        self, queries: list[str], companions: Callable[[Formula], Sequence[str]] | None,
    ) -> list[RefinementResult]:
        """Depth 0: no refinement search, only the anchors' move of q* (Rocchio's feedback).

        No elaboration, no pools and no candidate is encoded: the queries are parsed (the
        anchors judge the first pass's captions by phi0) and encoded once, and q* is the
        query's own embedding moved along e+ - e- by the anchors' weight. This is what
        the search returns for the queries whose best formula is phi0 (docs/refine.md,
        "What Stage 1's parts earn").
        """
        started = time.perf_counter()
        tick = time.perf_counter()
        unique = list(dict.fromkeys(queries))
        parsed = dict(zip(unique, self.parser.parse_many(unique), strict=True))
        self.times.parse += time.perf_counter() - tick
        texts = list(unique)
        if companions is not None:
            texts += [text for query in unique for text in companions(parsed[query].formula)]
        texts = list(dict.fromkeys(texts))
        rows = self._encode(texts)
        row_of = {text: row for row, text in enumerate(texts)}
        states: list[QueryState] = []
        for query in queries:
            phi0 = parsed[query]
            state = QueryState(query, phi0, [phi0], [phi0], frozenset(), None, confidences([phi0]))
            root = Node(0, None, 0, phi0.formula, (), formula_complexity(phi0.formula, state.confidence))
            root.text = self._text(root.formula)
            root.terms = ObjectiveTerms(0.0, root.complexity, 0.0, 0.0, 0.0, 0.0)
            root.feasible = root.kept = True
            state.nodes.append(root)
            state.threshold = "none"  # depth 0: no candidate was tested
            states.append(state)
        requests = [
            AnchorRequest(
                query=query,
                query_embedding=rows[row_of[query]],
                predicates=predicates(parsed[query].formula),
            )
            for query in queries
        ]
        anchors = self.anchors.anchor_batch(requests)
        results = [
            self._result(state, found) for state, found in zip(states, anchors, strict=True)
        ]
        self.times.total += time.perf_counter() - started
        return results

    def _prepare(self, queries: list[str]) -> list[QueryState]:
        if callable(getattr(self.elaborator, "elaborate_parsed", None)):
            return self._prepare_from_corpus(queries)
        tick = time.perf_counter()
        elaborate_many = getattr(self.elaborator, "elaborate_many", None)
        if callable(elaborate_many):
            elaborations = list(elaborate_many(queries))
        else:
            elaborations = [self.elaborator.elaborate(query) for query in queries]
        self.times.elaborate += time.perf_counter() - tick
        tick = time.perf_counter()
        config = self.config
        wanted: list[str] = []
        for query, elaboration in zip(queries, elaborations, strict=True):
            wanted.append(query)
            wanted.extend(elaboration.positives[: config.n_positives])
            wanted.extend(elaboration.negatives[: config.n_negatives])
        unique = list(dict.fromkeys(wanted))
        parsed = dict(zip(unique, self.parser.parse_many(unique), strict=True))
        self.times.parse += time.perf_counter() - tick
        states: list[QueryState] = []
        sources = self._pool_sources or PoolSources.default()
        for query, elaboration in zip(queries, elaborations, strict=True):
            phi0 = parsed[query]
            plus = [parsed[t] for t in elaboration.positives[: config.n_positives]] or [phi0]
            minus = [parsed[t] for t in elaboration.negatives[: config.n_negatives]] or [phi0]
            invariant = invariant_predicates(
                phi0.formula, [p.formula for p in plus], [p.formula for p in minus],
                require_all=config.invariant_require_all,
            )
            pools = candidate_pools(
                phi0, plus, minus, max_attributes=config.max_attributes,
                max_relations=config.max_relations, max_negations=config.max_negations, sources=sources,
            )
            states.append(QueryState(
                query, phi0, plus, minus, invariant, pools, confidences([phi0, *plus, *minus]),
            ))
        return states

    def _prepare_from_corpus(self, queries: list[str]) -> list[QueryState]:
        """phi+, phi- and the pools from a corpus's stored parses: only the queries are parsed."""
        tick = time.perf_counter()
        unique = list(dict.fromkeys(queries))
        parsed = dict(zip(unique, self.parser.parse_many(unique), strict=True))
        self.times.parse += time.perf_counter() - tick
        # Through the cache: the depth-0 call of the search finds these rows there.
        rows = self._encode(unique)
        tick = time.perf_counter()
        config = self.config
        found = dict(zip(unique, self.elaborator.elaborate_parsed(  # type: ignore[attr-defined]
            [parsed[q] for q in unique], rows, n_positives=config.n_positives, n_negatives=config.n_negatives,
            max_attributes=config.max_attributes, max_relations=config.max_relations,
            max_negations=config.max_negations,
        ), strict=True))
        self.times.elaborate += time.perf_counter() - tick
        states: list[QueryState] = []
        for query in queries:
            phi0, neighbourhood = parsed[query], found[query]
            plus = list(neighbourhood.positives) or [phi0]
            minus = list(neighbourhood.negatives) or [phi0]
            invariant = invariant_predicates(
                phi0.formula, [p.formula for p in plus], [p.formula for p in minus],
                require_all=config.invariant_require_all,
            )
            states.append(QueryState(
                query, phi0, plus, minus, invariant, neighbourhood.pools, confidences([phi0, *plus, *minus]),
            ))
        return states

    def _text(self, phi: Formula) -> str:
        text = self._verbalised.get(phi)
        if text is None:
            from fortekit.verbalise import verbalise

            text = verbalise(phi)
            if len(self._verbalised) >= VERBALISED_ENTRIES:  # emptied when full: see the constant
                self._verbalised.clear()
            self._verbalised[phi] = text
        return text

    def _encode(self, texts: list[str]) -> torch.Tensor:
        tick = time.perf_counter()
        rows = self.encoder.encode(texts)
        self.times.encode += time.perf_counter() - tick
        return rows

    def _expand(self, state: QueryState, depth: int) -> Iterator[Node]:
        tick = time.perf_counter()
        fresh: list[Node] = []
        for parent in state.beam:
            for successor in successors(
                parent.formula, depth, state.pools, state.invariant, schedule=self.config.schedule
            ):
                # Two parents can reach one formula (attr A then B, or B then A), and a
                # child can equal a node of an earlier depth: the first one stands.
                if successor.formula in state.known:
                    continue
                state.known.add(successor.formula)
                fresh.append(Node(
                    len(state.nodes) + len(fresh), parent.node_id, depth, successor.formula,
                    (successor.operator, *successor.argument),
                    formula_complexity(successor.formula, state.confidence),
                ))
        state.nodes.extend(fresh)
        self.times.expand += time.perf_counter() - tick
        return iter(fresh)

    def _score(
        self,
        states: list[QueryState],
        nodes: list[Node],
        rows: torch.Tensor,
        scoring: tuple[torch.Tensor, ...],
        owners: list[QueryState] | None = None,
    ) -> None:
        tick = time.perf_counter()
        score_nodes(self.config, nodes, rows, scoring, owners if owners is not None else states)
        self.times.score += time.perf_counter() - tick

    def _select(self, states: list[QueryState], frontier: list[tuple[QueryState, Node]]) -> None:
        tick = time.perf_counter()
        select_beam(self.config, states, frontier)
        self.times.score += time.perf_counter() - tick

    def _embedding(self, text: str) -> torch.Tensor:
        """A text's embedding, from the cache (encoded again if a small cache evicted it)."""
        row = self.encoder.cache.get(text)
        if row is None:
            row = self.encoder.encode([text])[0]
        return row.detach().float().cpu()

    def _result(self, state: QueryState, anchors: Anchors) -> RefinementResult:
        return build_result(self.config, state, anchors, self.anchors.name, self._embedding)
