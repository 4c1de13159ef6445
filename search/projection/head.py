"""Stage 2: the projection head h_psi, its loss, and reading and writing it (safetensors only).

h_psi maps a frozen audio embedding e toward the refined-query space,

    h(e) = LayerNorm(e + W2 · Dropout(GELU(W1 e))),   W1: d -> 2d, W2: 2d -> d,

and similarities use the L2-normalised h(e). W2 (and its bias) start at zero, so an untrained head
is LayerNorm(e): the frozen retriever's ranking, up to the per-vector centring of LayerNorm, is where
training starts, and the residual branch only learns a correction. The temperature gamma is learnt
as log gamma (init 0.07) and kept in [0.01, 1].

Loss (paper, eq. align/logic), for a batch of b refined queries q*_i, audio e_i and negatives n_i:

    L = (CE(S / gamma) + CE(S^T / gamma)) / 2 + mu · -mean log sigmoid(<q*_i, h_i> - <n_i, h_i>)

with S_ij = <q*_i, h(e_j)>. Only psi (the head) and gamma get gradients: the encoders never run here,
the embeddings come in as constant tensors.

Saving and loading (safetensors plus JSON, never pickle) live in :mod:`fortekit.search.projection.files`
(the head) and :mod:`fortekit.search.projection.data` (training data), and are re-exported here:
``save_projection``, ``load_projection``, ``ProjectionData``, ``save_projection_data``,
``load_projection_data``.

Example:
    >>> import torch
    >>> head = ProjectionHead(8)
    >>> head.project(torch.eye(8)[:2]).shape
    torch.Size([2, 8])
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import torch
import torch.nn.functional as F  # noqa: N812 (the usual torch alias)
from torch import nn

from fortekit._checks import check_int
from fortekit.errors import Errors, ProjectionError
from fortekit.search.projection.data import ProjectionData, load_projection_data, save_projection_data
from fortekit.search.projection.files import (
    CONFIG_NAME,
    WEIGHTS_NAME,
    load_projection,
    read_projection_config,
    read_safetensors,
    save_projection,
)

if TYPE_CHECKING:
    import numpy as np

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

#: gamma is clamped here: below 0.01 the logits overflow float16 and the softmax is one-hot (CLIP
#: caps its logit scale at 100 for the same reason); above 1 cosine logits carry almost no contrast.
TEMPERATURE_RANGE = (0.01, 1.0)


@dataclass(frozen=True)
class ProjectionConfig:
    """Architecture and training settings of h_psi (the paper's defaults).

    Attributes:
        dim: the embedding dimension d of the backbone.
        hidden_mult: the hidden layer is hidden_mult · d wide (2).
        dropout: dropout after the GELU (0.1).
        mu: weight of L_logic (0.1).
        lr: peak AdamW learning rate (1e-4).
        weight_decay: AdamW weight decay of the two weight matrices (1e-2).
        epochs: training epochs (20).
        batch_size: items per step; every other item of the batch is an InfoNCE negative (128).
        grad_clip: maximum global gradient norm (1.0).
        temperature_init: initial gamma (0.07).
        seed: seeds the initial weights, the batch order and dropout.
        warmup_steps: linear warm-up steps before the cosine decay (0).

    Example:
        >>> ProjectionConfig.from_dict(ProjectionConfig(dim=4).to_dict()) == ProjectionConfig(dim=4)
        True
    """

    dim: int
    hidden_mult: int = 2
    dropout: float = 0.1
    mu: float = 0.1
    lr: float = 1e-4
    weight_decay: float = 1e-2
    epochs: int = 20
    batch_size: int = 128
    grad_clip: float = 1.0
    temperature_init: float = 0.07
    seed: int = 0
    warmup_steps: int = 0

    def __post_init__(self) -> None:
        _check_int("dim", self.dim, 1)
        _check_int("hidden_mult", self.hidden_mult, 1)
        _check_int("epochs", self.epochs, 1)
        _check_int("batch_size", self.batch_size, 2)
        _check_int("seed", self.seed, 0)
        _check_int("warmup_steps", self.warmup_steps, 0)
        _check_float("dropout", self.dropout, 0.0, 1.0, "a number in [0, 1)", upper_open=True)
        _check_float("mu", self.mu, 0.0, math.inf, "a number >= 0")
        _check_float("lr", self.lr, 0.0, math.inf, "a number > 0", lower_open=True)
        _check_float("weight_decay", self.weight_decay, 0.0, math.inf, "a number >= 0")
        _check_float("grad_clip", self.grad_clip, 0.0, math.inf, "a number > 0", lower_open=True)
        low, high = TEMPERATURE_RANGE
        _check_float("temperature_init", self.temperature_init, low, high, f"a number in [{low}, {high}]")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ProjectionConfig:
        """Settings from :meth:`to_dict` output; missing fields take their defaults (dim is required).

        Raises:
            ProjectionError: an unknown or missing field, or a bad value (E460).
        """
        names = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ProjectionError(Errors.E460.format(
                name=", ".join(unknown), expected=f"one of the fields {sorted(names)}", value=unknown[0],
            ))
        if "dim" not in values:
            raise ProjectionError(Errors.E460.format(name="dim", expected="given", value=None))
        return cls(**values)

    def replace(self, **changes: Any) -> ProjectionConfig:
        """A copy with some settings changed (validated again).

        Example:
            >>> ProjectionConfig(dim=4).replace(epochs=2).epochs
            2
        """
        return dataclasses.replace(self, **changes)


def _check_int(name: str, value: object, low: int) -> None:
    check_int(value, name=name, low=low, error=ProjectionError, message=Errors.E460)


def _check_float(
    name: str, value: object, low: float, high: float, expected: str,
    *, lower_open: bool = False, upper_open: bool = False,
) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        number = float(value)  # type: ignore[arg-type]
        above = number > low if lower_open else number >= low
        below = number < high if upper_open else number <= high
        ok = above and below
    if not ok:
        raise ProjectionError(Errors.E460.format(name=name, expected=expected, value=value))


class ProjectionHead(nn.Module):
    """h_psi: residual two-layer MLP with LayerNorm, plus the learnable temperature gamma.

    Args:
        dim: embedding dimension d.
        hidden_mult: hidden width as a multiple of d (2).
        dropout: dropout probability after the GELU (0.1).
        temperature_init: initial gamma (0.07).

    Example:
        >>> import torch
        >>> head = ProjectionHead(8)
        >>> round(float(head.temperature.detach()), 2)
        0.07
        >>> out = head(torch.randn(3, 8))
        >>> torch.allclose(out.norm(dim=-1), torch.ones(3))
        True
    """

    def __init__(
        self, dim: int, *, hidden_mult: int = 2, dropout: float = 0.1, temperature_init: float = 0.07,
    ) -> None:
        super().__init__()
        ProjectionConfig(dim=dim, hidden_mult=hidden_mult, dropout=dropout, temperature_init=temperature_init)
        self.dim = dim
        self.hidden_mult = hidden_mult
        self.dropout_p = dropout
        self.temperature_init = temperature_init
        self.fc1 = nn.Linear(dim, hidden_mult * dim)
        self.act = nn.GELU()
        self.dropout = nn.Dropout(dropout)
        self.fc2 = nn.Linear(hidden_mult * dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.log_temperature = nn.Parameter(torch.tensor(math.log(temperature_init)))
        # A zero residual branch makes the untrained head LayerNorm(e): training starts from the
        # frozen retriever's own ranking instead of from a random rotation of it.
        nn.init.zeros_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    @classmethod
    def from_config(cls, config: ProjectionConfig) -> ProjectionHead:
        """A fresh head with the architecture of `config`."""
        return cls(
            config.dim, hidden_mult=config.hidden_mult, dropout=config.dropout,
            temperature_init=config.temperature_init,
        )

    @property
    def temperature(self) -> torch.Tensor:
        """gamma, clamped to :data:`TEMPERATURE_RANGE` (a 0-d tensor that carries gradients)."""
        low, high = TEMPERATURE_RANGE
        return self.log_temperature.clamp(math.log(low), math.log(high)).exp()

    def clamp_temperature_(self) -> None:
        """Keep log gamma inside the range after an optimiser step (so its gradient never dies)."""
        low, high = TEMPERATURE_RANGE
        with torch.no_grad():
            self.log_temperature.clamp_(math.log(low), math.log(high))

    def transform(self, embeddings: torch.Tensor) -> torch.Tensor:
        """h(e) before normalisation: LayerNorm(e + W2 Dropout(GELU(W1 e)))."""
        residual = self.fc2(self.dropout(self.act(self.fc1(embeddings))))
        return self.norm(embeddings + residual)  # type: ignore[no-any-return]

    def forward(self, embeddings: torch.Tensor) -> torch.Tensor:
        """The L2-normalised projection used for similarities, shape (n, d)."""
        return F.normalize(self.transform(embeddings), dim=-1)

    def project(self, embeddings: torch.Tensor, batch_size: int = 4096) -> torch.Tensor:
        """Project embeddings for retrieval: eval mode (no dropout), no gradients, in batches.

        Args:
            embeddings: (n, d) float tensor, on any device.
            batch_size: rows per forward pass.

        Returns:
            (n, d) float32, L2-normalised, on the device of `embeddings`.

        Raises:
            ProjectionError: `embeddings` is not (n, d) (E461).
        """
        _check_matrix("embeddings", embeddings, self.dim)
        _check_int("batch_size", batch_size, 1)
        device = next(self.parameters()).device
        was_training = self.training
        self.eval()
        try:
            with torch.no_grad():
                parts = [
                    self(chunk.to(device=device, dtype=torch.float32)).to(embeddings.device)
                    for chunk in torch.split(embeddings, batch_size)
                ]
        finally:
            self.train(was_training)
        if not parts:
            return torch.empty((0, self.dim), dtype=torch.float32, device=embeddings.device)
        return torch.cat(parts)


class LossTerms(NamedTuple):
    """The Stage 2 loss and its parts (0-d tensors; `total` carries the gradients)."""

    total: torch.Tensor
    align: torch.Tensor
    logic: torch.Tensor


def projection_loss(
    q_star: torch.Tensor,
    audio: torch.Tensor,
    negatives: torch.Tensor | None,
    head: ProjectionHead,
    mu: float = 0.1,
) -> LossTerms:
    """L = symmetric InfoNCE(q*, h(e_a)) / gamma + mu · L_logic, for one batch.

    Args:
        q_star: (b, d) refined query embeddings f_T(G(phi*)) (normalised here again).
        audio: (b, d) frozen audio embeddings e_a of the matching items.
        negatives: (b, d) f_T(G(phi-)) per item, or None (then L_logic = 0).
        head: the projection head (its mode decides dropout).
        mu: weight of L_logic.

    Returns:
        LossTerms(total, align, logic).

    Raises:
        ProjectionError: shapes disagree or b < 2 (E461).

    Example:
        >>> import torch
        >>> q = torch.nn.functional.normalize(torch.randn(4, 8), dim=-1)
        >>> terms = projection_loss(q, q, None, ProjectionHead(8).eval())
        >>> float(terms.logic)
        0.0
    """
    _check_matrix("q_star", q_star, head.dim)
    _check_matrix("audio", audio, head.dim, rows=q_star.shape[0])
    if q_star.shape[0] < 2:
        raise ProjectionError(Errors.E461.format(
            what="the batch", shape=tuple(q_star.shape), expected="at least 2 rows (InfoNCE needs negatives)",
        ))
    projected = head(audio)
    queries = F.normalize(q_star, dim=-1)
    similarity = queries @ projected.T
    logits = similarity / head.temperature
    labels = torch.arange(similarity.shape[0], device=similarity.device)
    align = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2
    if negatives is None:
        logic = torch.zeros((), device=similarity.device)
    else:
        _check_matrix("negatives", negatives, head.dim, rows=q_star.shape[0])
        negative_similarity = (F.normalize(negatives, dim=-1) * projected).sum(dim=-1)
        logic = -F.logsigmoid(similarity.diagonal() - negative_similarity).mean()
    return LossTerms(align + mu * logic, align, logic)


def _check_matrix(what: str, tensor: object, dim: int, rows: int | None = None) -> None:
    expected = f"({'n' if rows is None else rows}, {dim})"
    if not isinstance(tensor, torch.Tensor):
        raise ProjectionError(Errors.E461.format(
            what=what, shape=type(tensor).__name__, expected=f"a torch.Tensor {expected}",
        ))
    bad_rows = rows is not None and tensor.shape[0] != rows
    if tensor.ndim != 2 or tensor.shape[1] != dim or bad_rows or not tensor.is_floating_point():
        shape = f"{tuple(tensor.shape)} ({tensor.dtype})"
        raise ProjectionError(Errors.E461.format(what=what, shape=shape, expected=f"float {expected}"))


def project_embeddings(
    head: ProjectionHead, embeddings: np.ndarray | torch.Tensor, batch_size: int = 4096,
) -> np.ndarray:
    """Project a collection's audio embeddings once, for an index to store (Stage 2 at query time).

    Args:
        head: a trained head (see :func:`load_projection`).
        embeddings: (n, d) numpy array or tensor, e.g. ``AudioIndex.embeddings``.
        batch_size: rows per forward pass.

    Returns:
        (n, d) float32 numpy array, L2-normalised rows.

    Raises:
        ProjectionError: `embeddings` is not an (n, d) numeric array (E461).

    Example:
        >>> import numpy as np
        >>> project_embeddings(ProjectionHead(4), np.eye(4)).dtype
        dtype('float32')
    """
    import numpy as np

    if isinstance(embeddings, torch.Tensor):
        return head.project(embeddings, batch_size=batch_size).to("cpu", torch.float32).numpy()
    if not isinstance(embeddings, np.ndarray) or embeddings.dtype.kind not in "fiu" or embeddings.ndim != 2:
        if isinstance(embeddings, np.ndarray):
            shape = f"{embeddings.shape} ({embeddings.dtype})"
        else:
            shape = type(embeddings).__name__
        raise ProjectionError(Errors.E461.format(
            what="embeddings", shape=shape, expected=f"float (n, {head.dim})",
        ))
    _check_int("batch_size", batch_size, 1)
    out = np.empty((embeddings.shape[0], head.dim), dtype=np.float32)
    # Chunk by chunk, so a memory-mapped or read-only index array is never copied whole.
    for start in range(0, embeddings.shape[0], batch_size):
        chunk = torch.from_numpy(np.array(embeddings[start:start + batch_size], dtype=np.float32))
        out[start:start + chunk.shape[0]] = head.project(chunk, batch_size=batch_size).numpy()
    return out
