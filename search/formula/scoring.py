"""Formula scoring: rank items by evaluating the query's formula over them.

The formula (phi0 = Π(q), or Stage 1's phi*) is split into clauses
(:mod:`fortekit.search.formula.clauses`); each clause is verbalised with G and encoded like a
query, all clauses of a batch of queries in ONE encoder call through the text cache.
Each clause's similarity to each item is calibrated into a degree of truth in [0, 1],
and the degrees are combined with fuzzy connectives: ∧ by a t-norm (``min`` or
``product``), ∨ by its dual co-norm, ¬ by the complement ``1 - t`` (or, with
``negation="subtract"``, a conjunction's negated operands are subtracted with weight
``negation_weight``). The item's final score blends the logic with the whole query:

    s = (1 - gamma) * sim(q, item) + gamma * logic(phi, item)

It needs nothing but the backbone: clause texts are scored against the same item
vectors as the query (audio embeddings, caption means, or Stage 2's projections).
A plain query (one asserted clause) scores exactly ``sim(q, item)``; a formula with
nothing to score (None, only negations, only constants) falls back to the same.

Calibration (``calibration="zscore"``, the default): a clause's similarities are
standardised by their mean and standard deviation over the items (over an evenly
spaced sample of at most ``calibration_sample`` items, so a 100,000-item index costs
no more than a small one), then ``t = sigmoid(slope * z - shift)``. ``"minmax"`` maps
the sample's range to [0, 1]; ``"none"`` clips the cosine to [0, 1].
The calibration and the connectives are pure tensor functions in :mod:`fortekit.search.formula.fuzzy`.

Example:
    >>> import torch
    >>> from fortekit.fol import parse_formula
    >>> vectors = {"a dog barking": [1.0, 0.0, 0.0], "a person talking": [0.0, 1.0, 0.0]}
    >>> encode = lambda texts: torch.tensor([vectors[t] for t in texts])
    >>> scorer = FormulaScorer(encode, FormulaScoringConfig(gamma=1.0, calibration="none"))
    >>> items = torch.tensor([[0.8, 0.6, 0.0], [0.9, 0.0, 0.44]])  # barking+talking, barking alone
    >>> phi = parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]")
    >>> captions = [frozenset({"Dog", "Barking", "Man", "Talking"}), frozenset({"Dog", "Barking"})]
    >>> scores = scorer.score([phi], torch.tensor([[0.7, 0.6]]), items, captions=captions)
    >>> [round(v, 2) for v in scores[0].tolist()]  # the first caption holds "people talking"
    [0.0, 0.9]

By resemblance (before issue 42), the first item is pushed down by its similarity to the clause:

    >>> config = FormulaScoringConfig(gamma=1.0, calibration="none", exclusion="resemblance")
    >>> old = FormulaScorer(encode, config)
    >>> [round(v, 2) for v in old.score([phi], torch.tensor([[0.7, 0.6]]), items)[0].tolist()]
    [0.32, 0.9]
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fortekit.errors import Errors, EvaluationError
from fortekit.search.formula.clauses import (
    Clause,
    ClauseAnd,
    has_positive_clause,
    is_plain,
    leaf_polarities,
    leaves,
    split_clauses,
)
from fortekit.search.formula.config import (
    CALIBRATIONS,
    NEGATIONS,
    TNORMS,
    FormulaScoringConfig,
    QueryPlan,
    TextEncoder,
)
from fortekit.search.formula.evidence import LabelEvidence, ground_clauses
from fortekit.search.formula.fuzzy import (
    calibrate,
    calibration_sample,
    clause_statistics,
    conjunction_guard,
    evaluate_tree,
    scoped_statistics,
)
from fortekit.search.formula.uninterpreted import doubt_later_clauses, doubted_words

if TYPE_CHECKING:
    import torch

    from fortekit.fol.ast import Formula
    from fortekit.search.formula.exclusion import CaptionSymbols

__all__ = [
    "CALIBRATIONS",
    "NEGATIONS",
    "TNORMS",
    "FormulaScorer",
    "FormulaScoringConfig",
    "QueryPlan",
]

class FormulaScorer:
    """Score items by a formula's clauses, blended with the whole-query similarity.

    Args:
        encoder: the text encoder: a :class:`~fortekit.search.stage1.encoder.CachedTextEncoder`, a
            :class:`~fortekit.plugins.Backbone`, or any callable from texts to an (n, d) tensor.
        config: the :class:`FormulaScoringConfig`.
        verbaliser: G (default :func:`fortekit.verbalise.verbalise`).

    Example:
        >>> from fortekit.fol import parse_formula
        >>> scorer = FormulaScorer(lambda texts: None)
        >>> scorer.plan([parse_formula("∃x ∃y [Dog(x) ∧ Barking(x) ∧ ¬Music(y)]")])[0].texts
        ('a dog barking', 'music')
    """

    def __init__(
        self,
        encoder: Any,
        config: FormulaScoringConfig | None = None,
        *,
        verbaliser: Callable[[Formula], str] | None = None,
    ) -> None:
        self.config = config or FormulaScoringConfig()
        if hasattr(encoder, "encode"):
            self._encode: TextEncoder = encoder.encode
        elif hasattr(encoder, "encode_text"):
            self._encode = encoder.encode_text
        else:
            self._encode = encoder
        if verbaliser is None:
            from fortekit.verbalise import verbalise

            verbaliser = verbalise
        self._verbalise = verbaliser
        self._sample: tuple[weakref.ref[Any], tuple[Any, ...], torch.Tensor] | None = None
        self._symbols: tuple[Sequence[frozenset[str]], CaptionSymbols] | None = None

    def __repr__(self) -> str:
        return f"FormulaScorer({self.config!r})"

    def plan(self, formulas: Sequence[Formula | None]) -> list[QueryPlan]:
        """The clause tree and clause texts of each formula (no encoding).

        Args:
            formulas: one formula per query (None where a query has none).

        Returns:
            One :class:`QueryPlan` per formula.
        """
        plans: list[QueryPlan] = []
        for phi in formulas:
            if phi is None:
                plans.append(QueryPlan(None, (), "no formula"))
                continue
            tree = split_clauses(phi, max_clauses=self.config.max_clauses)
            doubted: tuple[Clause, ...] = ()
            words: tuple[str, ...] = ()
            if self.config.uninterpreted == "doubt" and not is_plain(tree):
                whole = tree
                tree, doubted = doubt_later_clauses(tree)
                words = tuple(doubted_words(whole)) if doubted else ()
            if tree is None:
                plans.append(QueryPlan(None, (), "no formula"))
            elif is_plain(tree):
                plans.append(QueryPlan(None, (), "an uninterpreted word" if doubted else "plain",
                                       doubted=self._doubted_texts(doubted), doubted_words=words))
            elif not has_positive_clause(tree):
                plans.append(QueryPlan(None, (), "no asserted clause"))
            else:
                texts = tuple(self._verbalise(leaf.formula) for leaf in leaves(tree))
                if not all(text.strip() for text in texts):
                    plans.append(QueryPlan(None, (), "no formula"))
                    continue
                negated = tuple(leaf_polarities(tree))
                sounds: tuple[Any, ...] = ()
                asserted: tuple[str, ...] = ()
                if any(negated) and self.config.exclusion == "evidence":
                    from fortekit.fol.violation import asserted_sound_symbols, default_check

                    check = default_check()
                    sounds = tuple(check.sound_of(leaf.formula) if flag else None
                                   for leaf, flag in zip(leaves(tree), negated, strict=True))
                    asserted = asserted_sound_symbols(phi, check)
                plans.append(QueryPlan(tree, texts, "", negated, sounds, asserted,
                                       doubted=self._doubted_texts(doubted), doubted_words=words))
        return plans

    def _doubted_texts(self, doubted: Sequence[Clause]) -> tuple[str, ...]:
        return tuple(self._verbalise(clause.formula) for clause in doubted)

    def companion_texts(self, formula: Formula | None, *, captions_judge: bool = False) -> list[str]:
        """The clause texts :meth:`rescore` will encode for a query's formula.

        The Retriever encodes them in the query's own encoder call (through the shared text
        cache), so that formula scoring finds them there and a query costs one call.

        Args:
            formula: the query's formula (None: nothing to encode).
            captions_judge: the items' captions will judge an excluded sound (caption symbols
                given, no label evidence): its clause needs no similarity and is left out.

        Example:
            >>> from fortekit.fol import parse_formula
            >>> scorer = FormulaScorer(lambda texts: None, FormulaScoringConfig())
            >>> scorer.companion_texts(parse_formula("∃x (Dog(x) ∧ Barking(x)) ∧ ∃y Rain(y)"))
            ['a dog barking', 'rain']
            >>> scorer.companion_texts(parse_formula("∃x Rain(x)"))  # plain: the query's own similarity
            []
            >>> excluding = parse_formula("∃x (Dog(x) ∧ Barking(x) ∧ ¬∃y Rain(y))")
            >>> scorer.companion_texts(excluding), scorer.companion_texts(excluding, captions_judge=True)
            (['a dog barking', 'rain'], ['a dog barking'])
        """
        plan = self.plan([formula])[0]
        if not plan.scored:
            return []
        judged = self._caption_judged_texts([plan]) if captions_judge else frozenset()
        return [text for text in dict.fromkeys(plan.texts) if text not in judged]

    def encode_clauses(self, plans: Sequence[QueryPlan], *, skip: frozenset[str] = frozenset(),
                       ) -> dict[str, torch.Tensor]:
        """Every distinct clause text of ``plans`` encoded in one encoder call, unit rows on the CPU.

        ``skip``: texts no similarity is needed for (excluded sounds judged by caption evidence):
        they get a zero row and cost no encoding.
        """
        import torch

        texts = list(dict.fromkeys(text for plan in plans for text in plan.texts if text not in skip))
        skipped = [text for text in dict.fromkeys(t for plan in plans for t in plan.texts) if text in skip]
        if not texts:
            return {text: torch.zeros(int(getattr(self, "_width", 1))) for text in skipped} if skipped else {}
        vectors = torch.as_tensor(self._encode(texts)).detach().to("cpu", torch.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EvaluationError(Errors.E481.format(
                problem=f"the encoder returned shape {tuple(vectors.shape)} for {len(texts)} clause texts",
            ))
        vectors = torch.nn.functional.normalize(vectors, dim=1)
        self._width = int(vectors.shape[1])
        found = dict(zip(texts, vectors, strict=True))
        found.update((text, vectors.new_zeros(vectors.shape[1])) for text in skipped)
        return found

    def score(
        self,
        formulas: Sequence[Formula | None],
        query_scores: torch.Tensor,
        items: torch.Tensor,
        *,
        candidates: torch.Tensor | None = None,
        plans: Sequence[QueryPlan] | None = None,
        evidence: LabelEvidence | None = None,
        captions: Sequence[frozenset[str]] | CaptionSymbols | None = None,
    ) -> torch.Tensor:
        """The blended score of every (query, item) pair, or of each query's candidate items.

        Args:
            formulas: one formula per query (phi0 or phi*); None falls back to ``query_scores``.
            query_scores: sim(q, item): (queries, items), or (queries, k) with ``candidates``.
            items: the item vectors the queries were scored against, (items, d), unit rows.
            candidates: optional (queries, k) item indices: score only these (the first pass's
                top k), ``query_scores`` being their similarities.
            plans: the :meth:`plan` of ``formulas``, when already made.
            evidence: label probabilities of the items (one row per item of ``items``, from a
                tagger): the clauses they ground are judged by them too (``evidence_weight``).
            captions: per item row, its caption's asserted symbol names
                (:func:`~fortekit.fol.violation.positive_names`): with ``exclusion="evidence"``,
                negated clauses are judged by them (None: by the contrastive test).

        Returns:
            A float32 tensor shaped like ``query_scores``, on its device.

        Raises:
            EvaluationError: shapes that do not fit (E481); evidence for another number of
                items (E494).
        """
        return self._score(formulas, query_scores, items, candidates=candidates, plans=plans,
                           evidence=evidence, captions=captions)[0]

    def _score(
        self, formulas: Sequence[Formula | None], query_scores: torch.Tensor, items: torch.Tensor, *,
        candidates: torch.Tensor | None, plans: Sequence[QueryPlan] | None, evidence: LabelEvidence | None,
        captions: Sequence[frozenset[str]] | CaptionSymbols | None,
    ) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
        """:meth:`score`, and per query with an excluded sound, which candidates hold evidence of it."""
        import torch

        plans = list(plans) if plans is not None else self.plan(formulas)
        scores = torch.as_tensor(query_scores)
        if scores.ndim != 2 or scores.shape[0] != len(plans):
            raise EvaluationError(Errors.E481.format(
                problem=f"query_scores of shape {tuple(scores.shape)} for {len(plans)} formulas",
            ))
        if candidates is not None and tuple(candidates.shape) != tuple(scores.shape):
            raise EvaluationError(Errors.E481.format(
                problem=f"candidates of shape {tuple(candidates.shape)}, scores {tuple(scores.shape)}",
            ))
        if candidates is None and scores.shape[1] != items.shape[0]:
            raise EvaluationError(Errors.E481.format(
                problem=f"scores for {scores.shape[1]} items but {items.shape[0]} item vectors",
            ))
        out = scores.detach().to(torch.float32).clone()
        evidenced: dict[int, torch.Tensor] = {}
        if not any(plan.scored for plan in plans) or (
            self.config.gamma == 0.0 and self.config.conjunction_gamma in (None, 0.0)
        ):
            return out, evidenced
        symbols = self._caption_symbols(captions)
        vectors = self.encode_clauses(plans, skip=self._judged_by_captions(plans, symbols, evidence))
        item_matrix = items.detach().to(out.device, torch.float32)
        texts = list(vectors)
        clause_matrix = torch.stack([vectors[text] for text in texts]).to(out.device)
        row_of = {text: row for row, text in enumerate(texts)}
        sample = self._calibration_rows(items, item_matrix)
        location, spread = clause_statistics(clause_matrix, sample, self.config)
        grounded = self._ground(evidence, clause_matrix, int(item_matrix.shape[0]))
        # One buffer for every query's candidate vectors: a fresh (k, d) tensor per query
        # costs more in page faults than the copy itself (docs/formula_scoring.md, "Speed").
        gathered = None if candidates is None else item_matrix.new_empty(
            (int(candidates.shape[1]), int(item_matrix.shape[1])))
        scored = [q for q, plan in enumerate(plans) if plan.tree is not None]
        for block in _query_blocks(scored, [len(plan.texts) for plan in plans], int(out.shape[1])):
            self._score_block(block, plans, out, item_matrix, candidates, gathered, clause_matrix,
                              [[row_of[text] for text in plans[q].texts] for q in block],
                              (location, spread), grounded, evidence,
                              _Exclusion(sample, symbols, evidenced))
        return out, evidenced

    def _score_block(
        self, block: list[int], plans: Sequence[QueryPlan], out: torch.Tensor, item_matrix: torch.Tensor,
        candidates: torch.Tensor | None, gathered: torch.Tensor | None, clause_matrix: torch.Tensor,
        rows: list[list[int]], statistics: tuple[torch.Tensor, torch.Tensor],
        grounded: list[int | None] | None, evidence: LabelEvidence | None, exclusion: _Exclusion,
    ) -> None:
        """Blend the logic of the queries ``block`` into their rows of ``out``, in place.

        The clause similarities of the whole block are calibrated in one call; the trees are
        then evaluated query by query and blended in one write.
        """
        import torch

        config = self.config
        leaf_rows = [row for query_rows in rows for row in query_rows]
        negated = [flag for q in block for flag in plans[q].negated]
        sims = out.new_empty((len(leaf_rows), int(out.shape[1])))
        where, scale = statistics[0][leaf_rows], statistics[1][leaf_rows]
        spans: list[tuple[int, int, int]] = []
        contrasted: list[tuple[int, torch.Tensor]] = []
        start = 0
        for q, query_rows in zip(block, rows, strict=True):
            end = start + len(query_rows)
            if candidates is None or gathered is None:
                selected = item_matrix
            else:
                selected = torch.index_select(item_matrix, 0, candidates[q].to(out.device, torch.long),
                                              out=gathered)
            leaf_matrix = clause_matrix[query_rows]
            if self._contrasts(plans[q], exclusion):
                leaf_matrix = self._orthogonalise(plans[q], leaf_matrix, start, contrasted)
            torch.mm(leaf_matrix, selected.T, out=sims[start:end])
            if config.negated_scope is not None and any(plans[q].negated):
                where[start:end], scale[start:end] = scoped_statistics(
                    sims[start:end], out[q], where[start:end], scale[start:end], plans[q].negated, config)
            spans.append((q, start, end))
            start = end
        if contrasted:
            # each orthogonalised clause calibrated over its own direction, in one product
            at = torch.tensor([row for row, _ in contrasted], dtype=torch.long, device=where.device)
            projected = torch.stack([vector for _, vector in contrasted]).to(exclusion.sample.device) \
                @ exclusion.sample.T
            where[at] = projected.mean(dim=1).to(where.device)
            scale[at] = projected.std(dim=1).clamp(min=1e-6).to(scale.device)
        degrees = calibrate(sims, where, scale, negated, config)
        logic_rows: list[torch.Tensor] = []
        gammas: list[float] = []
        keeps: list[float] = []
        for (q, start, end), query_rows in zip(spans, rows, strict=True):
            plan = plans[q]
            tree = plan.tree
            assert tree is not None
            truth = list(degrees[start:end])
            labelled: set[int] = set()
            if grounded is not None and evidence is not None:
                truth, labelled = self._with_evidence(truth, query_rows, plan.negated, grounded, evidence,
                                                      None if candidates is None else candidates[q])
            judged = bool(labelled)
            if self.config.exclusion == "evidence" and any(plan.negated):
                z = (sims[start:end] - where[start:end, None]) / scale[start:end, None]
                if not self._exclude_by_evidence(q, plan, truth, z, candidates, exclusion, labelled):
                    logic_rows.append(torch.zeros_like(out[q]))  # every exclusion unsure: similarity
                    gammas.append(0.0)
                    keeps.append(1.0)
                    continue
            if not judged and self._guards(plan):
                z = (sims[start:end] - where[start:end, None]) / scale[start:end, None]
                penalty = float(config.conjunction_gamma or 0.0) * conjunction_guard(
                    z, out[q], config.conjunction_threshold)
                blend = config.conjunction_blend
                if blend > 0.0 and bool((z[:, int(torch.argmax(out[q]))] < config.conjunction_trigger).any()):
                    # the first pass's best item lacks a sound asked for: the t-norm reorders too
                    logic_rows.append(blend * evaluate_tree(tree, truth, config) - penalty)
                    keeps.append(1.0 - blend)
                else:
                    logic_rows.append(-penalty)
                    keeps.append(1.0)  # the guard only subtracts: the similarity keeps its weight
                gammas.append(1.0)
                continue
            logic = evaluate_tree(tree, truth, config)
            gamma = config.gamma
            if config.conjunction_gamma is not None and not any(plan.negated):
                gamma = config.conjunction_gamma
            if judged and config.evidence_gamma is not None:
                gamma = config.evidence_gamma
            if config.saturation is not None:
                # Every item that satisfies the formula well enough gets the same bonus, so
                # the whole query's similarity alone orders them: the logic says what must
                # (not) be heard, the query's wording which of those fits best.
                logic = (logic / config.saturation).clamp(max=1.0)
            logic_rows.append(logic)
            gammas.append(gamma)
            keeps.append(1.0 - gamma)
        index = torch.tensor(block, dtype=torch.long, device=out.device)
        # (1 - gamma) is taken in Python, as a scalar blend would: the same float32 weights
        keep = torch.tensor(keeps, dtype=out.dtype, device=out.device)
        weight = torch.tensor(gammas, dtype=out.dtype, device=out.device)
        out[index] = keep[:, None] * out[index] + weight[:, None] * torch.stack(logic_rows)

    def _caption_symbols(self, captions: Sequence[frozenset[str]] | CaptionSymbols | None,
                         ) -> CaptionSymbols | None:
        """``captions`` as a :class:`CaptionSymbols`, made once per list the caller passes again."""
        from fortekit.search.formula.exclusion import CaptionSymbols

        if captions is None or isinstance(captions, CaptionSymbols):
            return captions
        cached = self._symbols
        if cached is not None and cached[0] is captions:
            return cached[1]
        symbols = CaptionSymbols(captions)
        self._symbols = (captions, symbols)
        return symbols

    def _judged_by_captions(self, plans: Sequence[QueryPlan], symbols: CaptionSymbols | None,
                            evidence: LabelEvidence | None) -> frozenset[str]:
        """Clause texts only caption evidence judges: their similarity is never read."""
        if symbols is None or evidence is not None:
            return frozenset()
        return self._caption_judged_texts(plans)

    def _caption_judged_texts(self, plans: Sequence[QueryPlan]) -> frozenset[str]:
        """Of ``plans``' clause texts, those only caption evidence judges (captions given, no labels)."""
        if self.config.exclusion != "evidence":
            return frozenset()
        judged: set[str] = set()
        needed: set[str] = set()
        for plan in plans:
            sounds = plan.sounds or (None,) * len(plan.texts)
            for text, flag, sound in zip(plan.texts, plan.negated, sounds, strict=True):
                (judged if flag and sound is not None else needed).add(text)
        return frozenset(judged - needed)

    def _contrasts(self, plan: QueryPlan, exclusion: _Exclusion) -> bool:
        """Whether ``plan``'s negated clauses take the contrastive test (no captions to judge by)."""
        return (self.config.exclusion == "evidence" and exclusion.captions is None
                and any(plan.negated) and not all(plan.negated))

    def _orthogonalise(self, plan: QueryPlan, leaf_matrix: torch.Tensor, start: int,
                       contrasted: list[tuple[int, torch.Tensor]]) -> torch.Tensor:
        """The query's leaf vectors with each negated one made orthogonal to the asked-for ones;
        each such vector is added to ``contrasted`` with its row in the block (its calibration
        statistics are taken over its own direction)."""
        from fortekit.search.formula.exclusion import orthogonal_clause

        leaf_matrix = leaf_matrix.clone()
        asserted = leaf_matrix[[j for j, flag in enumerate(plan.negated) if not flag]]
        for j, flag in enumerate(plan.negated):
            if not flag:
                continue
            vector, cosine = orthogonal_clause(leaf_matrix[j], asserted)
            if cosine >= self.config.max_clause_cosine:
                plan.unsure[j] = (f"the backbone cannot tell it from the asked-for sound "
                                  f"(clause cosine {cosine:.2f} >= {self.config.max_clause_cosine})")
                continue
            leaf_matrix[j] = vector
            contrasted.append((start + j, vector))
        return leaf_matrix

    def _exclude_by_evidence(
        self, q: int, plan: QueryPlan, truth: list[torch.Tensor], z: torch.Tensor,
        candidates: torch.Tensor | None, exclusion: _Exclusion, labelled: set[int],
    ) -> bool:
        """Replace the negated leaves' degrees (``truth``, in place) by evidence; record which
        candidates hold evidence. False when every negated leaf is unsure (similarity alone)."""
        import torch

        from fortekit.fol.violation import default_check
        from fortekit.search.formula.exclusion import caption_degrees

        config = self.config
        width = int(truth[0].shape[0])
        held = torch.zeros(width, dtype=torch.bool, device=truth[0].device)
        rows = torch.arange(width) if candidates is None else candidates[q]
        usable = 0
        for j, flag in enumerate(plan.negated):
            if not flag:
                if j in labelled:
                    # a tagger that does not hear an asked-for sound is evidence against the item too
                    held |= truth[j] < config.label_threshold
                continue
            sound = plan.sounds[j] if j < len(plan.sounds) else None
            if j in labelled:  # a tagger's probability: the richest evidence there is
                evidence_row = truth[j] >= config.label_threshold
            elif exclusion.captions is not None:
                if sound is None:
                    plan.unsure[j] = "it names no sound the grounded check can judge"
                    evidence_row = None
                else:
                    degrees, flags = caption_degrees(sound, plan.asserted, exclusion.captions, rows,
                                                     default_check(), config.source_weight)
                    truth[j] = degrees.to(truth[j].device, truth[j].dtype)
                    evidence_row = flags.to(held.device)
            elif j in plan.unsure:
                evidence_row = None
            else:
                evidence_row = z[j] >= config.contrast_margin
                truth[j] = truth[j] * evidence_row
            if evidence_row is None:
                truth[j] = torch.zeros_like(truth[j])
                continue
            usable += 1
            held |= evidence_row
        if usable:
            exclusion.evidenced[q] = held
        return usable > 0

    def _guards(self, plan: QueryPlan) -> bool:
        """Whether ``plan`` is a conjunction of asserted clauses that the guard scores."""
        config = self.config
        return (
            config.conjunction == "guard"
            and config.calibration == "zscore"
            and not any(plan.negated)
            and isinstance(plan.tree, ClauseAnd)
            and all(isinstance(operand, Clause) for operand in plan.tree.operands)
        )

    def _calibration_rows(self, items: torch.Tensor, item_matrix: torch.Tensor) -> torch.Tensor:
        """The calibration sample of ``item_matrix``, kept while the caller passes the same ``items``.

        An index is searched again and again: its sample need not be gathered again per batch
        (a 6 MB copy for 4,096 rows of 384). A change to ``items`` in place bumps its version;
        an inference tensor has no version, so its sample is gathered every time.
        """
        if items.is_inference():
            return calibration_sample(item_matrix, self.config.calibration_sample)
        key = (item_matrix.device, self.config.calibration_sample, items._version)
        cached = self._sample
        if cached is not None and cached[0]() is items and cached[1] == key:
            return cached[2]
        sample = calibration_sample(item_matrix, self.config.calibration_sample)
        try:
            self._sample = (weakref.ref(items), key, sample)
        except TypeError:  # pragma: no cover - a tensor subclass without weak references
            self._sample = None
        return sample

    def _ground(self, evidence: LabelEvidence | None, clause_matrix: torch.Tensor,
                n_items: int) -> list[int | None] | None:
        """Per clause row, its label in ``evidence`` (None: no label close enough); None without evidence."""
        import torch

        if evidence is None or self.config.evidence_weight == 0.0:
            return None
        if len(evidence) != n_items:
            raise EvaluationError(Errors.E494.format(
                problem=f"it has {len(evidence)} rows for {n_items} items",
            ))
        labels = torch.as_tensor(self._encode(list(evidence.labels))).detach().to("cpu", torch.float32)
        if labels.ndim != 2 or labels.shape[0] != len(evidence.labels):
            raise EvaluationError(Errors.E481.format(
                problem=f"the encoder returned shape {tuple(labels.shape)} for {len(evidence.labels)} labels",
            ))
        labels = torch.nn.functional.normalize(labels, dim=1).to(clause_matrix.device)
        return ground_clauses(clause_matrix, labels, self.config.evidence_match)

    def _with_evidence(
        self, truth: list[torch.Tensor], rows: list[int], negated: Sequence[bool],
        grounded: list[int | None], evidence: LabelEvidence, candidates: torch.Tensor | None,
    ) -> tuple[list[torch.Tensor], set[int]]:
        """The leaves' degrees with the evidence blended in, and the leaves that read it."""
        weight = self.config.evidence_weight
        out = list(truth)
        judged: set[int] = set()
        for leaf, (row, is_negated) in enumerate(zip(rows, negated, strict=True)):
            label = grounded[row]
            if label is None or (self.config.evidence_scope == "negated" and not is_negated):
                continue
            probability = evidence.column(label, candidates).to(truth[leaf].device, truth[leaf].dtype)
            out[leaf] = (1.0 - weight) * truth[leaf] + weight * probability
            judged.add(leaf)
        return out, judged

    def rescore(
        self,
        formulas: Sequence[Formula | None],
        top_scores: torch.Tensor,
        top_indices: torch.Tensor,
        items: torch.Tensor,
        *,
        k: int | None = None,
        plans: Sequence[QueryPlan] | None = None,
        evidence: LabelEvidence | None = None,
        captions: Sequence[frozenset[str]] | CaptionSymbols | None = None,
        depth: int | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Re-score each query's first-pass candidates by its formula and sort them.

        Args:
            formulas: one formula per query.
            top_scores: (queries, n) first-pass similarities, best first (``index.search``).
            top_indices: (queries, n) their item rows.
            items: every item vector of the collection (calibration samples them).
            k: keep the best k after re-scoring (default all n).
            plans: the :meth:`plan` of ``formulas``, when already made.
            evidence: label probabilities of every item (see :meth:`score`).
            captions: per item row, its caption's asserted symbol names (see :meth:`score`).
            depth: how many places the caller will read (default ``k``, else all): the floor is
                exact there; the places after them follow the scores.

        Returns:
            ``(scores, indices)``, (queries, k), best first; ties keep the first-pass order.
            With ``exclusion="evidence"`` and ``floor``, a candidate with no evidence of an
            excluded sound stays at or above its first-pass place
            (:func:`~fortekit.search.formula.exclusion.floor_order`).

        Example:
            >>> import torch
            >>> scorer = FormulaScorer(lambda texts: None)
            >>> scores, rows = scorer.rescore([None], torch.tensor([[0.9, 0.5]]), torch.tensor([[3, 1]]),
            ...                               torch.eye(4))
            >>> rows.tolist()
            [[3, 1]]
        """
        import torch

        from fortekit._top_k import stable_top_k

        blended, evidenced = self._score(formulas, top_scores, items, candidates=top_indices, plans=plans,
                                         evidence=evidence, captions=captions)
        if evidenced and self.config.floor:
            return self._floored(blended, top_indices, evidenced, k, depth)
        if k is not None and 0 < k < blended.shape[1] and blended.shape[0] > 0:
            # only the best k need an order: a selection, not a sort of every candidate
            values, order = stable_top_k(blended, k)
            return values, torch.gather(top_indices.to(order.device), 1, order)
        order = torch.sort(blended, dim=1, descending=True, stable=True).indices
        if k is not None:
            order = order[:, :k]
        return torch.gather(blended, 1, order), torch.gather(top_indices.to(order.device), 1, order)


    def _floored(self, blended: torch.Tensor, top_indices: torch.Tensor, evidenced: dict[int, torch.Tensor],
                 k: int | None, depth: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Sort each query's candidates, under the floor where it has evidence of an exclusion."""
        import torch

        from fortekit.search.formula.exclusion import floor_order, monotone_scores

        order = torch.sort(blended, dim=1, descending=True, stable=True).indices
        values = torch.gather(blended, 1, order)
        depth = k if depth is None else depth
        for q, held in evidenced.items():
            order[q] = floor_order(blended[q], held.to(blended.device), depth)
            values[q] = monotone_scores(blended[q][order[q]])
        if k is not None:
            order, values = order[:, :k], values[:, :k]
        return values, torch.gather(top_indices.to(order.device), 1, order)


@dataclass(slots=True)
class _Exclusion:
    """What the evidence test of one :meth:`FormulaScorer.score` call shares across blocks."""

    sample: torch.Tensor
    captions: CaptionSymbols | None
    evidenced: dict[int, torch.Tensor]


#: Clause similarities (leaves x candidates) held at once while scoring: 64 MB of float32.
_BLOCK_VALUES = 16 * 1024 * 1024


def _query_blocks(queries: list[int], leaves: list[int], width: int) -> list[list[int]]:
    """``queries`` in order, cut into blocks whose clause similarities fit :data:`_BLOCK_VALUES`."""
    blocks: list[list[int]] = []
    held = 0
    for q in queries:
        size = leaves[q] * width
        if blocks and held + size <= _BLOCK_VALUES:
            blocks[-1].append(q)
            held += size
        else:
            blocks.append([q])
            held = size
    return blocks
