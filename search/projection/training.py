"""Training h_psi: data files, the loop (AdamW, cosine schedule, clipping), validation R@1, resume.

The loop is independent of Stage 1: it takes tensors of refined queries q* (computed by the caller,
e.g. with the cached Stage 1 refinement), audio embeddings and optional negatives f_T(G(phi-)).

Determinism and resume. The initial weights come from ``seed``; each epoch reseeds the batch order
and dropout from (seed, epoch) and the learning rate is a function of the global step, so an epoch
depends only on the state at its start. After every epoch the checkpoint
(:mod:`fortekit.search.projection.checkpoint`) is replaced atomically; a resumed run therefore
ends with bit-identical weights to an uninterrupted one on the same device.

Example:
    >>> import tempfile, torch
    >>> q = torch.nn.functional.normalize(torch.randn(8, 4), dim=-1)
    >>> data = ProjectionData(query=q, audio=q)
    >>> config = ProjectionConfig(dim=4, epochs=1, batch_size=4)
    >>> report = train_projection(data, config=config, out_dir=tempfile.mkdtemp(), progress=False)
    >>> report.epochs_run
    1
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from fortekit.errors import Errors, ProjectionError
from fortekit.search.projection.checkpoint import (
    CHECKPOINT_NAME,
    CosineSchedule,
    EpochStats,
    TrainingState,
    load_checkpoint,
    save_checkpoint,
)
from fortekit.search.projection.data import ProjectionData
from fortekit.search.projection.files import CONFIG_NAME, WEIGHTS_NAME, save_projection
from fortekit.search.projection.head import ProjectionConfig, ProjectionHead, projection_loss

__all__ = [
    "TrainingReport",
    "recall_at_1",
    "train_projection",
]

@dataclass
class TrainingReport:
    """The outcome of :func:`train_projection`.

    Attributes:
        config: the settings.
        history: one EpochStats per completed epoch (including those of a resumed run).
        start_epoch: epochs already done when this call began (0 unless it resumed).
        baseline_r1: validation R@1 of the unprojected audio embeddings (None without validation).
        initial_r1: validation R@1 through the untrained head.
        weights_path: projection.safetensors; config_path: projection.json.
        device: where it trained.
    """

    config: ProjectionConfig
    history: list[EpochStats]
    start_epoch: int
    baseline_r1: float | None
    initial_r1: float | None
    weights_path: Path
    config_path: Path
    device: str

    @property
    def epochs_run(self) -> int:
        """Epochs trained by this call."""
        return len(self.history) - self.start_epoch

    @property
    def final_r1(self) -> float | None:
        """Validation R@1 after the last epoch."""
        return self.history[-1].val_r1 if self.history else self.initial_r1


def recall_at_1(queries: torch.Tensor, items: torch.Tensor, batch_size: int = 1024) -> float:
    """Share of queries whose top-1 item (cosine) is the item of the same row.

    Example:
        >>> import torch
        >>> recall_at_1(torch.eye(3), torch.eye(3))
        1.0
    """
    queries = torch.nn.functional.normalize(queries.float(), dim=-1)
    items = torch.nn.functional.normalize(items.float().to(queries.device), dim=-1)
    hits = 0
    for start in range(0, queries.shape[0], batch_size):
        best = (queries[start:start + batch_size] @ items.T).argmax(dim=1)
        hits += int((best == torch.arange(start, start + best.shape[0], device=best.device)).sum())
    return hits / max(queries.shape[0], 1)


def _make_optimizer(head: ProjectionHead, config: ProjectionConfig) -> torch.optim.AdamW:
    # Decay only the two weight matrices (the usual AdamW practice); decaying the LayerNorm gain,
    # biases or log gamma would pull them to 0, away from the identity-like start.
    decay = [head.fc1.weight, head.fc2.weight]
    rest = [p for p in head.parameters() if all(p is not d for d in decay)]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": rest, "weight_decay": 0.0}],
        lr=config.lr,
    )


def train_projection(
    train: ProjectionData,
    *,
    config: ProjectionConfig | None = None,
    validation: ProjectionData | None = None,
    out_dir: str | Path,
    device: str = "auto",
    resume: bool = True,
    progress: bool = True,
    on_epoch_end: Callable[[EpochStats], None] | None = None,
) -> TrainingReport:
    """Train h_psi and gamma with InfoNCE + mu L_logic; checkpoint every epoch; write the final head.

    Args:
        train: training items (q*, audio, optional negatives).
        config: settings (default: the paper's, with dim from `train`).
        validation: items for the per-epoch R@1 (query -> projected audio among them), or None.
        out_dir: gets checkpoint.* after each epoch and projection.safetensors/.json at the end.
        device: "auto" (CUDA when present), "cpu", "cuda", ...
        resume: continue from out_dir's checkpoint when there is one (else start over).
        progress: show a tqdm bar on stderr.
        on_epoch_end: called with each epoch's stats after its checkpoint is written.

    Returns:
        A TrainingReport.

    Raises:
        ProjectionError: bad settings or data (E460/E466), an incompatible or broken checkpoint
            (E467/E468), a non-finite loss (E469), unwritable out_dir (E470).

    Example:
        >>> report = train_projection(train, config=ProjectionConfig(dim=512), validation=val,
        ...                           out_dir="runs/clotho")  # doctest: +SKIP
        >>> report.weights_path.name  # doctest: +SKIP
        'projection.safetensors'
    """
    from fortekit.plugins._runtime import resolve_device

    config = ProjectionConfig(dim=train.dim) if config is None else config
    for name, data in (("training", train), ("validation", validation)):
        if data is not None and data.dim != config.dim:
            raise ProjectionError(Errors.E460.format(
                name="dim", expected=f"the {name} data's dimension {data.dim}", value=config.dim,
            ))
    from fortekit.errors import OutputError
    from fortekit.safe_write import check_no_foreign_files, create_output_directory

    out = Path(out_dir)
    # a folder of the user's may be written into, but none of its files replaced (a resumed
    # run reads its own checkpoint, so only a fresh run claims those names)
    checkpoints = [] if resume else [f"{CHECKPOINT_NAME}.json", f"{CHECKPOINT_NAME}.safetensors"]
    check_no_foreign_files(out, [WEIGHTS_NAME, CONFIG_NAME, *checkpoints])
    try:
        create_output_directory(out)  # marked as fortekit's when new or empty
    except OutputError:
        raise
    except OSError as exc:
        raise ProjectionError(Errors.E470.format(path=out, problem=exc)) from exc
    if not resume:
        # Otherwise a run stopped before its first checkpoint would later resume the old one.
        for suffix in (".json", ".safetensors"):
            (out / f"{CHECKPOINT_NAME}{suffix}").unlink(missing_ok=True)
    device = resolve_device(device)
    fingerprint = {
        "train": train.fingerprint(), "validation": None if validation is None else validation.fingerprint(),
    }
    cuda = [torch.device(device).index or 0] if torch.device(device).type == "cuda" else []
    # The caller's CPU RNG (and that of the CUDA device trained on) is left as it was: all seeding
    # happens inside this fork.
    with torch.random.fork_rng(devices=cuda):
        torch.manual_seed(config.seed)
        head = ProjectionHead.from_config(config).to(device)
        optimizer = _make_optimizer(head, config)
        steps_per_epoch = len(_batches(train.size, config.batch_size, torch.arange(train.size)))
        schedule = CosineSchedule(config.lr, config.warmup_steps, config.epochs * steps_per_epoch)
        if resume and (out / f"{CHECKPOINT_NAME}.json").exists():
            state = load_checkpoint(out, head, optimizer, config, fingerprint)
        else:
            state = TrainingState()
            if validation is not None:
                state.baseline_r1 = recall_at_1(validation.query.to(device), validation.audio.to(device))
                state.initial_r1 = _validate(head, validation, device)
        start_epoch = state.epoch
        tensors = [None if t is None else t.to(device) for t in (train.query, train.audio, train.negative)]
        for epoch in range(state.epoch + 1, config.epochs + 1):
            stats = _run_epoch(head, optimizer, schedule, tensors, config, state, epoch, device,
                               validation, progress)
            state.epoch, state.history = epoch, [*state.history, stats]
            save_checkpoint(out, head, optimizer, schedule, config, fingerprint, state)
            if on_epoch_end is not None:
                on_epoch_end(stats)
    weights_path = save_projection(
        head, out / WEIGHTS_NAME, config=config, history=[asdict(s) for s in state.history],
        extra={"baseline_r1": state.baseline_r1, "initial_r1": state.initial_r1},
    )
    return TrainingReport(
        config=config, history=state.history, start_epoch=start_epoch, baseline_r1=state.baseline_r1,
        initial_r1=state.initial_r1, weights_path=weights_path, config_path=out / CONFIG_NAME, device=device,
    )


def _batches(n: int, size: int, order: torch.Tensor) -> list[torch.Tensor]:
    # A trailing batch of one item has no in-batch negative: it is skipped (it moves each epoch).
    return [order[start:start + size] for start in range(0, n, size) if min(size, n - start) >= 2]


def _validate(head: ProjectionHead, data: ProjectionData, device: str) -> float:
    return recall_at_1(data.query.to(device), head.project(data.audio.to(device)))


def _run_epoch(
    head: ProjectionHead,
    optimizer: torch.optim.AdamW,
    schedule: CosineSchedule,
    tensors: list[torch.Tensor | None],
    config: ProjectionConfig,
    state: TrainingState,
    epoch: int,
    device: str,
    validation: ProjectionData | None,
    progress: bool,
) -> EpochStats:
    from tqdm.auto import tqdm

    query, audio, negative = tensors
    assert query is not None and audio is not None
    started = time.perf_counter()
    # Batch order and dropout depend on (seed, epoch) only, so a resumed epoch replays exactly.
    torch.manual_seed(config.seed * 100_003 + epoch)
    shuffle = torch.Generator().manual_seed(config.seed * 7919 + epoch)
    order = torch.randperm(query.shape[0], generator=shuffle)
    batches = _batches(query.shape[0], config.batch_size, order)
    head.train()
    totals = torch.zeros(3, dtype=torch.float64, device=device)
    bar = tqdm(batches, desc=f"epoch {epoch}/{config.epochs}", file=sys.stderr, disable=not progress,
               unit="batch", leave=True)
    lr = config.lr
    for index in bar:
        lr = schedule.lr(state.step)
        for group in optimizer.param_groups:
            group["lr"] = lr
        index = index.to(device)
        terms = projection_loss(
            query[index], audio[index], None if negative is None else negative[index], head, mu=config.mu,
        )
        if not bool(torch.isfinite(terms.total)):
            raise ProjectionError(Errors.E469.format(
                value=float(terms.total.detach()), epoch=epoch, step=state.step, lr=lr,
            ))
        optimizer.zero_grad(set_to_none=True)
        terms.total.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(head.parameters(), config.grad_clip)
        optimizer.step()
        head.clamp_temperature_()
        state.step += 1
        totals += torch.stack([t.detach().double() for t in terms]) * index.shape[0]
        if state.step % 10 == 0:
            bar.set_postfix(loss=f"{float(terms.total.detach()):.4f}")
    seen = sum(int(b.shape[0]) for b in batches)
    loss, align, logic = (totals / max(seen, 1)).tolist()
    val_r1 = _validate(head, validation, device) if validation is not None else None
    bar.set_postfix(loss=f"{loss:.4f}", **({} if val_r1 is None else {"val_R@1": f"{val_r1:.3f}"}))
    bar.close()
    return EpochStats(
        epoch=epoch, step=state.step, loss=loss, align=align, logic=logic,
        temperature=float(head.temperature.detach()), lr=lr, val_r1=val_r1,
        seconds=time.perf_counter() - started,
    )
