"""Stage 2 training checkpoints: the run's state, the learning-rate schedule, and their files.

After every epoch ``checkpoint.safetensors`` (weights and the AdamW moments, flattened to named
tensors) and ``checkpoint.json`` (epoch, step, config, data fingerprint, optimiser groups,
schedule, history) are replaced atomically (:func:`save_checkpoint`); :func:`load_checkpoint`
restores a run from them, refusing one made with other settings or data.
:func:`fortekit.search.projection.training.train_projection` drives both.

Example:
    >>> CosineSchedule(0.1, warmup=0, total=10).lr(0)
    0.1
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from fortekit import __version__
from fortekit.errors import Errors, ProjectionError
from fortekit.search.projection.files import read_safetensors
from fortekit.search.projection.head import ProjectionConfig, ProjectionHead

__all__ = [
    "CHECKPOINT_NAME",
    "CosineSchedule",
    "EpochStats",
    "TrainingState",
    "load_checkpoint",
    "save_checkpoint",
]

CHECKPOINT_NAME = "checkpoint"
_CHECKPOINT_FORMAT = "fortekit-projection-checkpoint"


@dataclass(frozen=True)
class EpochStats:
    """What one epoch did: mean losses over its steps, gamma and lr at its end, validation R@1."""

    epoch: int
    step: int
    loss: float
    align: float
    logic: float
    temperature: float
    lr: float
    val_r1: float | None
    seconds: float


class CosineSchedule:
    """lr(step): linear warm-up, then cosine decay to 0 at the last step; a pure function of step.

    Example:
        >>> schedule = CosineSchedule(1.0, warmup=2, total=6)
        >>> [round(schedule.lr(step), 2) for step in range(6)]
        [0.5, 1.0, 1.0, 0.85, 0.5, 0.15]
    """

    def __init__(self, peak: float, warmup: int, total: int) -> None:
        self.peak, self.warmup, self.total = peak, warmup, max(total, 1)

    def lr(self, step: int) -> float:
        """The learning rate at global step ``step`` (0-based)."""
        if step < self.warmup:
            return self.peak * (step + 1) / self.warmup
        progress = (step - self.warmup) / max(self.total - self.warmup, 1)
        return self.peak * 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))

    def state_dict(self) -> dict[str, Any]:
        """What the checkpoint records of the schedule."""
        return {"kind": "cosine", "peak": self.peak, "warmup": self.warmup, "total": self.total}


@dataclass
class TrainingState:
    """Where a training run stands: epochs and steps done, their stats, the R@1 before training.

    Example:
        >>> TrainingState().epoch, TrainingState().history
        (0, [])
    """

    epoch: int = 0
    step: int = 0
    history: list[EpochStats] = field(default_factory=list)
    baseline_r1: float | None = None
    initial_r1: float | None = None



def _write_json(path: Path, document: dict[str, Any]) -> None:
    from fortekit.safe_write import atomic_write_text

    atomic_write_text(path, json.dumps(document, indent=2) + "\n")  # temporary file, fsync, rename


def save_checkpoint(
    out: Path,
    head: ProjectionHead,
    optimizer: torch.optim.AdamW,
    schedule: CosineSchedule,
    config: ProjectionConfig,
    fingerprint: dict[str, str | None],
    state: TrainingState,
) -> None:
    """Replace ``out``'s checkpoint.safetensors and checkpoint.json with the run's state.

    The tensors (weights, AdamW moments) are written first, the JSON last: it names the epoch.

    Raises:
        ProjectionError: the files cannot be written (E470).

    Example:
        >>> save_checkpoint(out, head, optimizer, schedule, config, fingerprint, state)  # doctest: +SKIP
    """
    from safetensors.torch import save_file

    optimizer_state = optimizer.state_dict()
    tensors = {f"model.{k}": v.detach().to("cpu").contiguous() for k, v in head.state_dict().items()}
    for index, moments in optimizer_state["state"].items():
        for key, value in moments.items():
            tensors[f"optimizer.{index}.{key}"] = torch.as_tensor(value).detach().to("cpu").contiguous()
    groups = [{k: list(v) if isinstance(v, tuple) else v for k, v in g.items()}
              for g in optimizer_state["param_groups"]]
    document = {
        "format": _CHECKPOINT_FORMAT, "fortekit_version": __version__, "epoch": state.epoch,
        "step": state.step, "config": config.to_dict(), "data": fingerprint,
        "optimizer": {"param_groups": groups}, "scheduler": {**schedule.state_dict(), "step": state.step},
        "rng": {"scheme": "torch.manual_seed(seed * 100003 + epoch) at each epoch start; batch order "
                "from a Generator seeded seed * 7919 + epoch", "seed": config.seed},
        "baseline_r1": state.baseline_r1, "initial_r1": state.initial_r1,
        "history": [asdict(s) for s in state.history],
    }
    from fortekit.errors import OutputError
    from fortekit.safe_write import atomic_write

    weights = out / f"{CHECKPOINT_NAME}.safetensors"
    metadata = {"epoch": str(state.epoch), "step": str(state.step)}
    try:
        atomic_write(weights, lambda temporary: save_file(tensors, str(temporary), metadata=metadata))
        # The JSON goes last: it names the epoch, and the tensors' metadata must agree with it.
        _write_json(out / f"{CHECKPOINT_NAME}.json", document)
    except OutputError:  # the safe writer's coded errors (E741, E743 naming the file)
        raise
    except OSError as exc:
        raise ProjectionError(Errors.E470.format(path=weights, problem=exc)) from exc


def load_checkpoint(
    out: Path,
    head: ProjectionHead,
    optimizer: torch.optim.AdamW,
    config: ProjectionConfig,
    fingerprint: dict[str, str | None],
) -> TrainingState:
    """Restore ``head`` and ``optimizer`` from ``out``'s checkpoint and return the run's state.

    Raises:
        ProjectionError: the checkpoint was made with other settings or data (E467), or it
            is broken: unreadable, of another format, tensors and JSON of different epochs (E468).

    Example:
        >>> state = load_checkpoint(out, head, optimizer, config, fingerprint)  # doctest: +SKIP
        >>> state.epoch  # doctest: +SKIP
        3
    """
    path = out / f"{CHECKPOINT_NAME}.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("format") != _CHECKPOINT_FORMAT:
            raise ValueError(f"format is {document.get('format')!r}")
        tensors, metadata = read_safetensors(out / f"{CHECKPOINT_NAME}.safetensors")
        if metadata.get("epoch") != str(document["epoch"]):
            raise ValueError(
                f"the tensors are of epoch {metadata.get('epoch')}, the JSON of {document['epoch']}"
            )
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        raise ProjectionError(Errors.E468.format(path=out, problem=exc)) from exc
    saved = document.get("config", {})
    changed = sorted(k for k, v in config.to_dict().items() if saved.get(k) != v)
    if changed:
        detail = ", ".join(f"{k}={saved.get(k)!r} (now {getattr(config, k)!r})" for k in changed)
        raise ProjectionError(Errors.E467.format(path=out, problem=f"it was trained with {detail}"))
    if document.get("data") != fingerprint:
        raise ProjectionError(Errors.E467.format(
            path=out, problem="it was trained on other data (the tensors' SHA-1 differ)",
        ))
    try:
        head.load_state_dict({k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")})
        moments: dict[int, dict[str, torch.Tensor]] = {}
        for key, value in tensors.items():
            if key.startswith("optimizer."):
                _, index, name = key.split(".", 2)
                moments.setdefault(int(index), {})[name] = value
        groups = [{k: tuple(v) if k == "betas" else v for k, v in g.items()}
                  for g in document["optimizer"]["param_groups"]]
        optimizer.load_state_dict({"state": moments, "param_groups": groups})
        history = [EpochStats(**record) for record in document["history"]]
    except (RuntimeError, ValueError, KeyError, TypeError) as exc:
        raise ProjectionError(Errors.E468.format(path=out, problem=exc)) from exc
    return TrainingState(
        epoch=int(document["epoch"]), step=int(document["step"]), history=history,
        baseline_r1=document.get("baseline_r1"), initial_r1=document.get("initial_r1"),
    )
