"""Stage 2, the projection: the head, its loss, training and files (safetensors, no pickle).

Example:
    >>> ProjectionConfig(dim=8).hidden_mult
    2
"""

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
