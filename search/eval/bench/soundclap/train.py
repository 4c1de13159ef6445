"""``train_small_clap()``: the small CLAP and its tagger, trained together on a generated collection.

One CNN audio encoder feeds two heads: the CLAP head (symmetric InfoNCE against the projected,
frozen MiniLM embeddings of the clip's captions, with a learned temperature) and the tag head
(present classes, background bed, onsets, structure, attributes, from the generator's truth).
Log-mels and caption embeddings are computed once and cached, so an epoch is only the CNN.
The run is deterministic for a seed on one device. After training it measures text-to-audio
retrieval on the validation clips (each clip's first caption as the query, the clip as the
one relevant item) beside chance, and writes the backbone's and the tagger's files.

Example:
    >>> result = train_small_clap("runs/gen2000", "runs/clap", epochs=12)  # doctest: +SKIP
    >>> result.val_recall[1] > 10 * result.chance[1]  # doctest: +SKIP
    True
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fortekit.errors import Errors, SoundClapError
from fortekit.search.eval.bench.soundclap.config import TrainClapConfig
from fortekit.search.eval.bench.soundclap.data import (
    Clip,
    cached_log_mels,
    cached_text_embeddings,
    read_clips,
    tag_layout,
    tag_targets,
)

if TYPE_CHECKING:
    import torch

__all__ = ["TrainClapResult", "recall_at", "train_small_clap"]

#: The ranks at which retrieval is measured.
KS = (1, 5, 10)



#: The files and folders a training run writes directly in its ``out_dir``.
OUTPUT_NAMES = (
    "small_clap.json", "small_clap.safetensors", "tagger.json", "tagger.safetensors", "result.json",
)


@dataclass
class TrainClapResult:
    """What a training run did and measured.

    Attributes:
        out_dir: where the model files are.
        clap_config: small_clap.json; tagger_config: tagger.json (None when tag_weight is 0).
        device: where it trained.
        n_train, n_validation: clips used.
        losses: mean training loss per epoch (InfoNCE + tag_weight * tag loss).
        val_recall: text-to-audio R@k on the validation clips after training, by k (1, 5, 10).
        chance: the chance level of each R@k (k / n_validation).
        epoch_r1: validation R@1 after each epoch.
        tag_f1: micro-F1 of the predicted classes on the validation clips (None without a tagger).
        seconds: wall time of the whole call; seconds_features: of the log-mel and text caches.
        config: the settings used.
    """

    out_dir: Path
    clap_config: Path
    tagger_config: Path | None
    device: str
    n_train: int
    n_validation: int
    losses: list[float] = field(default_factory=list)
    val_recall: dict[int, float] = field(default_factory=dict)
    chance: dict[int, float] = field(default_factory=dict)
    epoch_r1: list[float] = field(default_factory=list)
    tag_f1: float | None = None
    seconds: float = 0.0
    seconds_features: float = 0.0
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what result.json holds)."""
        data = asdict(self)
        for key in ("out_dir", "clap_config", "tagger_config"):
            data[key] = None if data[key] is None else str(data[key])
        return data


def recall_at(text: Any, audio: Any, ks: tuple[int, ...] = KS) -> dict[int, float]:
    """Text-to-audio R@k when query i's one relevant item is audio i.

    Args:
        text: (n, d) query embeddings; audio: (n, d) item embeddings (unit norm).
        ks: the ranks.

    Example:
        >>> import torch
        >>> recall_at(torch.eye(3), torch.eye(3), (1,))
        {1: 1.0}
    """
    scores = text @ audio.T
    own = scores.diagonal().unsqueeze(1)
    rank = (scores > own).sum(dim=1)  # 0 when the relevant clip is first (ties count for it)
    return {k: float((rank < k).float().mean()) for k in ks} if len(scores) else dict.fromkeys(ks, 0.0)


def _split(clips: list[Clip], config: TrainClapConfig) -> tuple[list[Clip], list[Clip]]:
    train = [clip for clip in clips if clip.split == "train"]
    if config.validation_split == "test":
        validation = [clip for clip in clips if clip.split == "test"]
    else:
        validation = train[9::10]
        train = [clip for i, clip in enumerate(train) if i % 10 != 9]
    return train, validation[:config.max_validation]


def _schedule(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))


def train_small_clap(
    collection_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    epochs: int | None = None,
    batch_size: int | None = None,
    seed: int | None = None,
    device: str = "auto",
    config: TrainClapConfig | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    log: Callable[[str], None] | None = None,
) -> TrainClapResult:
    """Train a small CLAP (and its tagger) on a generated collection and save them in ``out_dir``.

    Args:
        collection_dir: a folder written by ``fortekit bench generate`` (clips.jsonl, audio/).
        out_dir: where small_clap.{json,safetensors}, tagger.{json,safetensors} and
            result.json go (created).
        epochs, batch_size, seed: override those of ``config``.
        device: "auto" (CUDA when present), "cpu", "cuda", "cuda:N".
        config: the other settings (:class:`TrainClapConfig` defaults otherwise).
        cache_dir: where the log-mel and caption-embedding caches go (default out_dir/cache).
        log: called with one line per stage and epoch (None: silent).

    Returns:
        A :class:`TrainClapResult`.

    Raises:
        SoundClapError: E573 a bad setting, E574 not a collection, E575 too few clips,
            E576 an unwritable output folder.
        PluginOptionError: an unknown device.
        AudioReadError: a clip that cannot be read.

    Example:
        >>> train_small_clap("runs/gen", "runs/clap", epochs=0)
        Traceback (most recent call last):
        ...
        fortekit.errors.SoundClapError: [E573] The train-clap setting epochs must be an int >= 1, not 0; see docs/soundclap.md.
    """  # noqa: E501
    started = time.perf_counter()
    base = config or TrainClapConfig()
    given = (("epochs", epochs), ("batch_size", batch_size), ("seed", seed))
    overrides: dict[str, Any] = {name: value for name, value in given if value is not None}
    config = replace(base, **overrides).check()
    say = log or (lambda line: None)
    import torch

    from fortekit.plugins._runtime import resolve_device
    from fortekit.plugins.backbones._small_clap_nets import SmallClap, Tagger
    from fortekit.plugins.backbones.minilm import MiniLMBackbone

    resolved = resolve_device(device)
    if config.threads is not None:
        torch.set_num_threads(config.threads)
    from fortekit.errors import OutputError
    from fortekit.safe_write import check_no_foreign_files, create_output_directory

    out = Path(out_dir).expanduser()
    # a folder of the user's may be written into, but none of its files replaced
    check_no_foreign_files(out, [*OUTPUT_NAMES, *([] if cache_dir is not None else ["cache"])])
    try:
        create_output_directory(out)  # marked as fortekit's when new or empty
    except OutputError:
        raise
    except OSError as exc:
        raise SoundClapError(Errors.E576.format(path=out, problem=exc.strerror or exc)) from None
    cache = Path(cache_dir).expanduser() if cache_dir is not None else out / "cache"
    train, validation = _split(read_clips(collection_dir), config)
    for what, found, needed in (("training clips", len(train), config.batch_size),
                                ("validation clips", len(validation), 2)):
        if found < needed:
            problem = Errors.E575.format(path=collection_dir, found=found, what=what, needed=needed)
            raise SoundClapError(problem)

    torch.manual_seed(config.seed)
    model = SmallClap(config.model)
    layout = tag_layout()
    tagger = None
    if config.tag_weight:
        tagger = Tagger(config.model, layout.size, front=model.front, audio=model.audio)
    say(f"reading {len(train)} training and {len(validation)} validation clips")
    front_settings = {name: getattr(config.model, name) for name in ("sample_rate", "n_fft", "hop_length",
                                                                      "n_mels", "fmin", "fmax")}
    clips = train + validation
    mels = cached_log_mels(clips, model.front, front_settings, cache)
    text_encoder = MiniLMBackbone(device=resolved, batch_size=128)
    per_clip = config.captions_per_clip
    train_texts = [clip.captions[(row + i) % len(clip.captions)]
                   for row, clip in enumerate(train) for i in range(per_clip)]
    query_texts = [clip.captions[0] for clip in validation]
    texts = cached_text_embeddings(train_texts + query_texts, text_encoder.encode_text, cache,
                                   "all-MiniLM-L6-v2")
    del text_encoder
    seconds_features = time.perf_counter() - started
    say(f"log-mels {tuple(mels.shape)} and {len(texts)} caption embeddings ready ({seconds_features:.1f} s)")

    train_text = torch.from_numpy(texts[:len(train_texts)].reshape(len(train), per_clip, -1).copy())
    query_text = torch.from_numpy(texts[len(train_texts):].copy()).to(resolved)
    targets = {key: torch.from_numpy(value) for key, value in tag_targets(train, layout).items()}
    model.to(resolved)
    parameters = list(model.parameters()) + ([] if tagger is None else list(tagger.head.parameters()))
    optimiser = torch.optim.AdamW(parameters, lr=config.lr, weight_decay=config.weight_decay)
    steps_per_epoch = len(train) // config.batch_size
    total = steps_per_epoch * config.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: _schedule(step, total, max(1, int(config.warmup * total))))
    generator = torch.Generator().manual_seed(config.seed)
    result = TrainClapResult(out, out / "small_clap.json", None, resolved, len(train), len(validation),
                             seconds_features=seconds_features, config=_config_record(config))
    n_val = len(validation)
    val_mels = torch.from_numpy(np.array(mels[len(train):]))
    for epoch in range(1, config.epochs + 1):
        model.train()
        if tagger is not None:
            tagger.train()
        order = torch.randperm(len(train), generator=generator)
        running = 0.0
        for step in range(steps_per_epoch):
            index = order[step * config.batch_size:(step + 1) * config.batch_size]
            pick = torch.randint(per_clip, (len(index),), generator=generator)
            mel = torch.from_numpy(np.asarray(mels[index.numpy()], dtype=np.float32)).to(resolved)
            text = train_text[index, pick].to(resolved)
            features = model.audio.features(mel)
            audio_emb = torch.nn.functional.normalize(model.audio_head(features), dim=-1)
            text_emb = model.embed_text_features(text)
            scale = model.logit_scale.exp().clamp(max=100.0)
            logits = scale * text_emb @ audio_emb.T
            labels = torch.arange(len(index), device=resolved)
            loss: torch.Tensor = 0.5 * (torch.nn.functional.cross_entropy(logits, labels)
                          + torch.nn.functional.cross_entropy(logits.T, labels))
            if tagger is not None:
                batch_targets = {key: value[index].to(resolved) for key, value in targets.items()}
                loss = loss + config.tag_weight * _tag_loss(tagger.head(features), batch_targets, layout)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(parameters, 5.0)
            optimiser.step()
            scheduler.step()
            running += float(loss.detach())
        result.losses.append(round(running / max(1, steps_per_epoch), 5))
        recall = _validate(model, val_mels, query_text, resolved)
        result.epoch_r1.append(round(recall[1], 5))
        temperature = 1.0 / float(model.logit_scale.detach().exp())
        say(f"epoch {epoch:>3}/{config.epochs}  {time.perf_counter() - started:7.1f} s  "
            f"loss {result.losses[-1]:.4f}  temperature {temperature:.4f}  "
            f"val R@1 {recall[1]:.4f}  R@5 {recall[5]:.4f}")
    result.val_recall = {k: round(v, 5) for k, v in _validate(model, val_mels, query_text, resolved).items()}
    result.chance = {k: round(min(1.0, k / n_val), 5) for k in KS}
    if tagger is not None:
        result.tag_f1 = round(_tag_f1(tagger, val_mels, tag_targets(validation, layout), resolved, layout), 5)
    result.seconds = round(time.perf_counter() - started, 2)
    _save(model, tagger, layout, result, collection_dir)
    return result


def _tag_loss(logits: torch.Tensor, targets: dict[str, torch.Tensor], layout: Any) -> torch.Tensor:
    import torch
    from torch.nn import functional

    n, dims = len(layout.classes), len(layout.dimensions)
    present = targets["presence"]
    mask = present.sum().clamp(min=1.0)
    loss = functional.binary_cross_entropy_with_logits(logits[:, :n], present)
    bed = functional.binary_cross_entropy_with_logits(logits[:, n:2 * n], targets["bed"], reduction="none")
    loss = loss + (bed * present).sum() / mask
    onset = (torch.sigmoid(logits[:, 2 * n:3 * n]) - targets["onset"]).pow(2)
    loss = loss + 4.0 * (onset * present).sum() / mask
    loss = loss + functional.cross_entropy(logits[:, 3 * n:3 * n + 3], targets["structure"])
    if dims:
        choices = logits[:, 3 * n + 3:].reshape(-1, 3)
        loss = loss + functional.cross_entropy(choices, targets["attributes"].reshape(-1), ignore_index=-1)
    return loss


def _validate(model: Any, mels: Any, query_text: Any, device: str) -> dict[int, float]:
    import torch

    model.eval()
    with torch.inference_mode():
        audio = torch.cat([model.embed_mel(mels[i:i + 256].float().to(device))
                           for i in range(0, len(mels), 256)])
        return recall_at(model.embed_text_features(query_text), audio)


def _tag_f1(tagger: Any, mels: Any, targets: dict[str, np.ndarray], device: str, layout: Any) -> float:
    import torch

    tagger.eval()
    n = len(layout.classes)
    with torch.inference_mode():
        logits = torch.cat([tagger.head(tagger.audio.features(mels[i:i + 256].float().to(device)))
                            for i in range(0, len(mels), 256)]).cpu()
    predicted = (torch.sigmoid(logits[:, :n]) >= 0.5).numpy()
    truth = targets["presence"] > 0.5
    hits = float((predicted & truth).sum())
    return 2 * hits / max(1.0, float(predicted.sum() + truth.sum()))


def _config_record(config: TrainClapConfig) -> dict[str, Any]:
    data = asdict(config)
    data["model"] = config.model.to_dict()
    return data


def _save(model: Any, tagger: Any, layout: Any, result: TrainClapResult, collection: Any) -> None:
    from fortekit.plugins.backbones.small_clap import save_small_clap
    from fortekit.plugins.captioners.tagger import save_tagger

    model.cpu().eval()
    training = {"collection": str(collection), "n_train": result.n_train, "n_validation": result.n_validation,
                "val_recall": result.val_recall, "chance": result.chance, "config": result.config}
    try:
        result.clap_config = save_small_clap(model, result.out_dir, training=training)
        if tagger is not None:
            tagger.cpu().eval()
            result.tagger_config = save_tagger(tagger, layout, result.out_dir,
                                               training={**training, "tag_f1": result.tag_f1})
        from fortekit.errors import OutputError
        from fortekit.safe_write import atomic_write_text

        record = json.dumps(result.to_dict(), indent=2) + "\n"
        atomic_write_text(result.out_dir / "result.json", record)
    except OutputError:  # the safe writer's coded errors (E741, E743 naming the file)
        raise
    except OSError as exc:
        raise SoundClapError(Errors.E576.format(path=result.out_dir, problem=exc.strerror or exc)) from None
