"""Stage 2, the projection: the head, its loss, training and files (safetensors, no pickle).

Importing this package is light: each name loads its module (and torch) on first use, so
:mod:`fortekit.search.projection.shipped` (the heads that ship) is looked up without torch.

Example:
    >>> from fortekit.search.projection import ProjectionConfig
    >>> ProjectionConfig(dim=8).hidden_mult
    2
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fortekit._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from fortekit.search.projection.head import (
        CONFIG_NAME,
        TEMPERATURE_RANGE,
        WEIGHTS_NAME,
        LossTerms,
        ProjectionConfig,
        ProjectionData,
        ProjectionHead,
        load_projection,
        load_projection_data,
        project_embeddings,
        projection_loss,
        read_projection_config,
        read_safetensors,
        save_projection,
        save_projection_data,
    )

__all__ = [
    "CONFIG_NAME",
    "TEMPERATURE_RANGE",
    "WEIGHTS_NAME",
    "LossTerms",
    "ProjectionConfig",
    "ProjectionData",
    "ProjectionHead",
    "load_projection",
    "load_projection_data",
    "project_embeddings",
    "projection_loss",
    "read_projection_config",
    "read_safetensors",
    "save_projection",
    "save_projection_data",
]

# Every name is re-exported from head.py, which imports the rest (data.py, files.py) itself.
__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(__all__, "fortekit.search.projection.head"), names=globals()
)
