"""``PipelineSpec``: what a :class:`~fortekit.search.retriever.Retriever` runs, stage by stage.

Each stage is ``"auto"`` (the default of the index's kind, :mod:`~.defaults`), ``None`` (off) or
its configuration. Every caller (the commands, the server, the benchmark, the Ray jobs and the
Python API) states its switches through :meth:`PipelineSpec.from_switches`, the one place where a
switch (``auto|on|off``, a regime name, a file) becomes a stage value; :func:`~.assemble.assemble`
then turns a spec into the stage objects for one index.

Example:
    >>> spec = PipelineSpec.from_switches(stage1="off", formula_scoring="on", stage3="auto")
    >>> spec.stage1 is None, type(spec.formula).__name__, spec.rerank
    (True, 'FormulaScoringConfig', 'auto')
    >>> PipelineSpec().switched()
    {}
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from fortekit._checks import check_int
from fortekit.errors import Errors, PipelineError

if TYPE_CHECKING:
    from fortekit.fol.predicates import PredicateSymbol
    from fortekit.search.formula.evidence import LabelEvidence
    from fortekit.search.formula.scoring import FormulaScoringConfig
    from fortekit.search.query_side import RefinementLookup
    from fortekit.search.rerank import Reranker
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import RefineConfig

__all__ = ["AUTO", "FIRST_PASSES", "STAGE1_REGIMES", "SWITCHES", "Auto", "PipelineSpec"]

Auto = Literal["auto"]
AUTO: Auto = "auto"
SWITCHES: tuple[str, ...] = ("auto", "on", "off")
STAGE1_REGIMES: tuple[str, ...] = ("auto", "off", "feedback", "online", "offline")
FIRST_PASSES: tuple[str, ...] = ("auto", "exact", "ann")


@dataclass(frozen=True, slots=True)
class PipelineSpec:
    """The stages to run: per stage ``"auto"`` (the kind's default), ``None`` (off) or its config.

    Attributes:
        stage1: a :class:`~fortekit.search.stage1.config.RefineConfig` (Stage 1 is built from it),
            a built :class:`~fortekit.search.stage1.beam.Refiner` (its backbone and text cache are
            shared), None, or "auto" (Stage 1's feedback regime where the kind uses it:
            :meth:`~fortekit.search.stage1.config.RefineConfig.feedback`).
        projection: a Stage 2 head (a ``.safetensors`` file or its folder), None, or "auto" (the
            head shipped for the backbone where the kind uses one).
        formula: a :class:`~fortekit.search.formula.scoring.FormulaScoringConfig`, None, or "auto".
        rerank: Stage 3's :class:`~fortekit.search.rerank.Reranker`, None, or "auto".
        order_check: True, False, or "auto".
        first_pass: "exact", "ann" (the index's saved FAISS index; with a Stage 2 head, its ANN
            part over the rows that head projects, or E425 where it has none), or "auto" (ANN from
            :data:`~fortekit.search.index.ann.ANN_MIN_ITEMS` items on; a head is kept where the
            index holds such a part, else the shipped head is off and a head given makes it exact).
        candidates: first-pass items re-scored per query.
        elaborator: Stage 1's elaborator when built from a config: "auto", "corpus", a registered
            name or an instance.
        anchors: Stage 1's anchor source when built from a config: "auto", a name, an instance or None.
        lookup: stored Stage 1 results; a query it holds skips Stage 1.
        evidence: a tagger's label evidence for the items (one row per item), None (none), or
            "auto" (the evidence the index stores, if any).
        captions: per item, the predicate symbols of everything its captions say, for the evidence
            of excluded sounds and the violation marks; None: the index's caption predicates.

    Example:
        >>> PipelineSpec(formula=None).switched()
        {'formula': None}
    """

    stage1: RefineConfig | Refiner | Auto | None = AUTO
    projection: str | os.PathLike[str] | Auto | None = AUTO
    formula: FormulaScoringConfig | Auto | None = AUTO
    rerank: Reranker | Auto | None = AUTO
    order_check: bool | Auto = AUTO
    first_pass: Literal["auto", "exact", "ann"] = "auto"
    candidates: int = 1000
    elaborator: Any = AUTO
    anchors: Any = AUTO
    lookup: RefinementLookup | None = None
    evidence: LabelEvidence | Auto | None = AUTO
    captions: Sequence[Iterable[PredicateSymbol | str]] | None = None

    def __post_init__(self) -> None:
        check_int(self.candidates, name="candidates", low=1, error=PipelineError, message=Errors.E423)
        if self.first_pass not in FIRST_PASSES:
            raise _bad("first_pass", " or ".join(repr(v) for v in FIRST_PASSES), self.first_pass)
        if self.order_check not in (True, False, AUTO):
            raise _bad("order_check", "True, False or 'auto'", self.order_check)
        for name in ("stage1", "projection", "formula", "rerank"):
            value = getattr(self, name)
            if isinstance(value, str) and value != AUTO and name != "projection":
                raise _bad(name, "'auto', None or a configuration (PipelineSpec.from_switches reads "
                                 "'on', 'off' and regime names)", value)

    def replace(self, **changes: Any) -> PipelineSpec:
        """The same spec with some fields changed.

        Example:
            >>> PipelineSpec().replace(rerank=None).rerank is None
            True
        """
        return dataclasses.replace(self, **changes)

    def switched(self) -> dict[str, Any]:
        """The stage fields the caller set (not ``"auto"``), by name.

        Example:
            >>> PipelineSpec(order_check=False).switched()
            {'order_check': False}
        """
        return {name: getattr(self, name) for name in ("stage1", "projection", "formula", "rerank",
                                                        "order_check") if getattr(self, name) != AUTO}

    @classmethod
    def first_pass_only(cls, candidates: int = 1000) -> PipelineSpec:
        """Every stage off and the exact first pass: the frozen retriever, the baseline of every table.

        Example:
            >>> PipelineSpec.first_pass_only(50).switched()
            {'stage1': None, 'projection': None, 'formula': None, 'rerank': None, 'order_check': False}
        """
        return cls(stage1=None, projection=None, formula=None, rerank=None, order_check=False,
                   first_pass="exact", candidates=candidates)

    @classmethod
    def from_switches(
        cls,
        *,
        stage1: str | RefineConfig | Refiner | None = AUTO,
        projection: str | os.PathLike[str] | None = AUTO,
        formula_scoring: str | bool | FormulaScoringConfig | None = AUTO,
        gamma: float | None = None,
        stage3: str | bool | Reranker | None = AUTO,
        order_check: str | bool | None = AUTO,
        first_pass: str = AUTO,
        candidates: int = 1000,
        lookup: RefinementLookup | None = None,
        elaborator: Any = AUTO,
        anchors: Any = AUTO,
    ) -> PipelineSpec:
        """The spec of a caller's switches: the one place a switch becomes a stage value.

        Args:
            stage1: "auto", "off" (or None), "feedback", "online", "offline", a ``RefineConfig`` or a built
                ``Refiner``.
            projection: "auto", "none"/"off" (or None), or a head's file or folder.
            formula_scoring: "auto", "on", "off" (or True, False; None is "auto"), or a
                ``FormulaScoringConfig``.
            gamma: formula scoring's weight of the logic; given with "auto", formula scoring is on.
            stage3: "auto", "on", "off" (or True, False; None is "auto"), or a ``Reranker``.
            order_check: "auto", "on", "off" (or True, False; None is "auto").
            first_pass: "auto", "exact" or "ann".
            candidates: first-pass items re-scored per query.
            lookup: stored Stage 1 results.
            elaborator: Stage 1's elaborator (when Stage 1 is built here).
            anchors: Stage 1's anchor source (when Stage 1 is built here).

        Returns:
            The :class:`PipelineSpec`.

        Raises:
            PipelineError: a switch that is none of its values (E423).

        Example:
            >>> spec = PipelineSpec.from_switches(stage1="online", projection="none", stage3="off")
            >>> type(spec.stage1).__name__, spec.projection, spec.rerank
            ('RefineConfig', None, None)
            >>> PipelineSpec.from_switches(stage3="maybe")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            fortekit.errors.PipelineError: [E423] The pipeline switch stage3 must be 'auto', 'on' or 'off'...
        """
        from fortekit.search.formula.scoring import FormulaScoringConfig
        from fortekit.search.rerank import Reranker

        formula_value: Any
        if isinstance(formula_scoring, FormulaScoringConfig):
            formula_value = formula_scoring
        else:
            formula: Any = _switch("formula_scoring", formula_scoring)
            if gamma is not None and formula is not False:
                formula = True
            formula_value = AUTO if formula == AUTO else (
                None if formula is False else
                FormulaScoringConfig() if gamma is None else FormulaScoringConfig(gamma=gamma))
        rerank_value: Any
        if isinstance(stage3, Reranker):
            rerank_value = stage3
        else:
            rerank = _switch("stage3", stage3)
            rerank_value = AUTO if rerank == AUTO else (Reranker() if rerank else None)
        checked = _switch("order_check", order_check)
        return cls(
            stage1=_stage1(stage1), projection=_projection(projection), formula=formula_value,
            rerank=rerank_value,
            order_check=checked, first_pass=first_pass,  # type: ignore[arg-type]
            candidates=candidates, elaborator=elaborator, anchors=anchors, lookup=lookup,
        )


def _switch(name: str, value: str | bool | None) -> bool | Auto:
    """An ``auto|on|off`` switch: "auto", True or False."""
    if value is None or value == AUTO:
        return AUTO
    if isinstance(value, bool):
        return value
    if value in ("on", "off"):
        return value == "on"
    raise _bad(name, "'auto', 'on' or 'off'", value)


def _stage1(value: object) -> Any:
    if value is None or value == "off":
        return None
    if value == AUTO:
        return AUTO
    if isinstance(value, str):
        from fortekit.search.stage1.config import RefineConfig

        regimes = {"feedback": RefineConfig.feedback, "online": RefineConfig.online,
                   "offline": RefineConfig.offline}
        if value not in regimes:
            raise _bad("stage1", " or ".join(repr(v) for v in STAGE1_REGIMES), value)
        return regimes[value]()
    return value


def _projection(value: str | os.PathLike[str] | None) -> str | os.PathLike[str] | Auto | None:
    if value is None or value in ("none", "off"):
        return None
    if value == AUTO:
        return AUTO
    return value


def _bad(name: str, expected: str, value: object) -> PipelineError:
    return PipelineError(Errors.E423.format(name=name, expected=expected, value=value))
