"""What one request may ask of ``fortekit serve``, and the stage switches it may send.

Both are plain frozen dataclasses (no FastAPI here), shared by the service, the app and the
command line.

Example:
    >>> ServeLimits(max_k=50).check_k(10)
    10
    >>> StageSwitches(stage1="off").key
    ('off', 'auto', 'auto')
"""

from __future__ import annotations

from dataclasses import dataclass

from fortekit.errors import Errors, ServeError

__all__ = ["SWITCH_VALUES", "ServeLimits", "StageSwitches"]

#: The values each per-request stage switch takes; "auto" is the default of the index's kind.
SWITCH_VALUES: dict[str, tuple[str, ...]] = {
    "stage1": ("auto", "off", "online"),
    "formula_scoring": ("auto", "on", "off"),
    "stage3": ("auto", "on", "off"),
}


@dataclass(frozen=True, slots=True)
class ServeLimits:
    """The bounds of one request (each a ``fortekit serve`` option of the same name).

    Attributes:
        max_body_bytes: the largest request body read (413, E793, past it).
        max_batch: the most queries in one request (422, E794).
        max_k: the most hits per query.
        max_queue: the most searches waiting for the model at once (503, E806, past it).
    """

    max_body_bytes: int = 256 * 1024
    max_batch: int = 64
    max_k: int = 1000
    max_queue: int = 256

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_batch", "max_k", "max_queue"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ServeError(Errors.E807.format(name=name, expected="an int >= 1", value=value))

    def check_k(self, k: int) -> int:
        """``k`` itself when 1 <= k <= max_k.

        Raises:
            ServeError: k out of range (E792, status 422).

        Example:
            >>> ServeLimits(max_k=5).check_k(6)
            Traceback (most recent call last):
            ...
            fortekit.errors.ServeError: [E792] k: must be an int from 1 to 5, got 6. ...
        """
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self.max_k:
            raise ServeError(Errors.E792.format(
                where="k", problem=f"must be an int from 1 to {self.max_k}, got {k!r}",
                route="POST /v1/search", fields="query, queries, k, stage1, formula_scoring, stage3, explain",
            ), status=422)
        return k

    def to_dict(self) -> dict[str, int]:
        """A JSON-ready dict of the limits (``/v1/info``)."""
        return {"max_body_bytes": self.max_body_bytes, "max_batch": self.max_batch, "max_k": self.max_k,
                "max_queue": self.max_queue}


@dataclass(frozen=True, slots=True)
class StageSwitches:
    """The stages one request switches: each "auto" (the kind's default), or on/off.

    Attributes:
        stage1: "auto", "off" or "online" (Stage 1 with the online beam).
        formula_scoring: "auto", "on" or "off".
        stage3: "auto", "on" or "off".
    """

    stage1: str = "auto"
    formula_scoring: str = "auto"
    stage3: str = "auto"

    def __post_init__(self) -> None:
        for name, allowed in SWITCH_VALUES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ServeError(Errors.E792.format(
                    where=name, problem=f"must be one of {', '.join(map(repr, allowed))}, got {value!r}",
                    route="POST /v1/search",
                    fields="query, queries, k, stage1, formula_scoring, stage3, explain",
                ), status=422)

    @property
    def key(self) -> tuple[str, str, str]:
        """The switches as a tuple (a dictionary key)."""
        return (self.stage1, self.formula_scoring, self.stage3)
