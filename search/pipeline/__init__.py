"""The pipeline: what a Retriever runs, stage by stage, and the one place switches become stages.

* :class:`PipelineSpec` (:mod:`~.spec`): per stage "auto", off (None) or a configuration;
  :meth:`PipelineSpec.from_switches` reads every caller's switches.
* :mod:`~.defaults`: the table of default pipelines per kind of index (package data,
  ``defaults.toml``, each default with the development part that chose it).
* :func:`assemble` (:mod:`~.assemble`): a spec and an index to the stage objects and the
  :class:`Pipeline` that says what runs and why.

Example:
    >>> from fortekit.search.pipeline import PipelineSpec
    >>> PipelineSpec.from_switches(formula_scoring="off").formula is None
    True
"""

from fortekit.search.pipeline.assemble import Stages, assemble, default_pipeline, plan, plan_kind
from fortekit.search.pipeline.defaults import Pipeline, StageState, index_kind, kind_defaults
from fortekit.search.pipeline.spec import AUTO, PipelineSpec

__all__ = ["AUTO", "Pipeline", "PipelineSpec", "StageState", "Stages", "assemble", "default_pipeline",
           "index_kind", "kind_defaults", "plan", "plan_kind"]
