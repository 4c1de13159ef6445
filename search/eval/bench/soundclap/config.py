"""The settings of a small-CLAP training run, checked before anything is read or computed.

Example:
    >>> config = TrainClapConfig(epochs=2, batch_size=32).check()
    >>> config.epochs, config.model.n_mels
    (2, 64)
    >>> TrainClapConfig(batch_size=1).check()
    Traceback (most recent call last):
    ...
    fortekit.errors.SoundClapError: [E573] The train-clap setting batch_size must be an int >= 2, not 1; see docs/soundclap.md.
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass, field

from fortekit._checks import check_int
from fortekit.errors import Errors, SoundClapError
from fortekit.plugins.backbones.small_clap import SmallClapConfig

__all__ = ["TrainClapConfig"]


@dataclass(frozen=True)
class TrainClapConfig:
    """How to train (the defaults fit a 20,000-clip collection into about 20 minutes on 2 CPU cores).

    Attributes:
        epochs: passes over the training clips.
        batch_size: clips per step (InfoNCE negatives are the rest of the batch).
        lr: peak AdamW learning rate (linear warm-up, then cosine decay).
        weight_decay: AdamW weight decay.
        seed: seeds the initialisation, the shuffles and the caption choices.
        captions_per_clip: how many of each clip's captions are embedded and drawn from (clip i
            takes captions i, i + 1, ... modulo its count, so that every caption style is seen);
            the frozen text encoder's time grows with it.
        tag_weight: weight of the tagger's loss beside InfoNCE (0: no tagger is trained).
        warmup: fraction of the steps spent warming up.
        validation_split: "test" validates on the collection's test split (held-out compositions
            included); "holdout" on every tenth training clip, left out of training.
        max_validation: at most this many validation clips (the first ones).
        threads: torch CPU threads (None: leave torch's default).
        model: the network sizes.
    """

    epochs: int = 8
    batch_size: int = 128
    lr: float = 2e-3
    weight_decay: float = 1e-2
    seed: int = 0
    captions_per_clip: int = 1
    tag_weight: float = 1.0
    warmup: float = 0.05
    validation_split: str = "test"
    max_validation: int = 1000
    threads: int | None = None
    model: SmallClapConfig = field(default_factory=SmallClapConfig)

    def check(self) -> TrainClapConfig:
        """The config itself when every setting is valid.

        Raises:
            SoundClapError: E573, naming the setting.
        """
        def fail(name: str, expected: str, value: object) -> SoundClapError:
            return SoundClapError(Errors.E573.format(name=name, expected=expected, value=value))

        check_int(self.epochs, name="epochs", error=SoundClapError, message=Errors.E573)
        check_int(self.batch_size, name="batch_size", error=SoundClapError, message=Errors.E573, low=2)
        check_int(self.seed, name="seed", error=SoundClapError, message=Errors.E573, low=0)
        check_int(self.captions_per_clip, name="captions_per_clip", error=SoundClapError,
                  message=Errors.E573, high=5)
        check_int(self.max_validation, name="max_validation", error=SoundClapError,
                  message=Errors.E573, low=2)
        if self.threads is not None:
            check_int(self.threads, name="threads", error=SoundClapError, message=Errors.E573)
        for name, value, high in (("lr", self.lr, 1.0), ("weight_decay", self.weight_decay, 1.0),
                                  ("tag_weight", self.tag_weight, 100.0), ("warmup", self.warmup, 0.5)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
                raise fail(name, f"a number from 0 to {high:g}", value)
        if self.lr <= 0:
            raise fail("lr", "a number above 0", self.lr)
        if self.validation_split not in ("test", "holdout"):
            raise fail("validation_split", "'test' or 'holdout'", self.validation_split)
        if not isinstance(self.model, SmallClapConfig):
            raise fail("model", "a SmallClapConfig", self.model)
        return self
