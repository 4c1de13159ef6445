"""Checks of integer settings, written once (a count, a k, a batch size, a depth).

Python's ``True`` is an int, so ``isinstance(x, int) and x >= 1`` lets ``k=True`` through;
these checks refuse bools. The caller names its coded message and error class, so each
subsystem keeps its own code (E400 Stage 1, E613 the index, E460 the projection, E480
re-ranking and evaluation). This module imports nothing heavy.

Example:
    >>> from fortekit.errors import Errors, EvaluationError
    >>> check_int(5, name="top_n", error=EvaluationError, message=Errors.E480, what="re-ranker")
    5
    >>> check_int(True, name="top_n", error=EvaluationError, message=Errors.E480, what="re-ranker")
    Traceback (most recent call last):
    ...
    fortekit.errors.EvaluationError: [E480] The re-ranker setting top_n must be an int >= 1, not True; see docs/evaluation.md.
"""  # noqa: E501

from __future__ import annotations

import numbers
from typing import Any, TypeGuard

__all__ = ["check_int", "int_range", "is_int"]


def is_int(value: object, low: int | None = None, high: int | None = None, *,
           numpy: bool = False) -> TypeGuard[int]:
    """Whether ``value`` is an int (never a bool) with ``low <= value <= high``.

    Args:
        value: what to check.
        low: the least value allowed; None for no bound.
        high: the greatest value allowed; None for no bound.
        numpy: accept NumPy integers (any :class:`numbers.Integral`) too.

    Example:
        >>> is_int(3, 1), is_int(0, 1), is_int(True, 0), is_int(2.0), is_int(7, 1, 5)
        (True, False, False, False, False)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral if numpy else int):
        return False
    number = int(value)
    return (low is None or number >= low) and (high is None or number <= high)


def int_range(low: int | None = 1, high: int | None = None) -> str:
    """How a message says which ints are allowed.

    Example:
        >>> int_range(1), int_range(0, 9), int_range(None, 3), int_range(None)
        ('an int >= 1', 'an int from 0 to 9', 'an int <= 3', 'an int')
    """
    if low is not None and high is not None:
        return f"an int from {low} to {high}"
    if low is not None:
        return f"an int >= {low}"
    return f"an int <= {high}" if high is not None else "an int"


def check_int(
    value: object, *, name: str, error: type[Exception], message: str,
    low: int | None = 1, high: int | None = None, expected: str | None = None,
    numpy: bool = False, **fields: Any,
) -> int:
    """``value`` as an int if :func:`is_int` accepts it, else ``error(message.format(...))``.

    Args:
        value: the setting's value.
        name: the setting's name, ``{name}`` in the message.
        error: the error class to raise (a coded :class:`fortekit.errors.FortekitError`).
        message: the coded template, e.g. ``Errors.E480``; it is given ``name``, ``value``,
            ``expected`` and ``fields`` (unused ones are ignored).
        low: the least value allowed (default 1); None for no bound.
        high: the greatest value allowed; None for no bound.
        expected: the message's words for what is allowed (default: :func:`int_range`).
        numpy: accept NumPy integers too (returned as a Python int).
        **fields: the message's other fields, e.g. ``what``.

    Returns:
        The value, as a Python int.

    Example:
        >>> from fortekit.errors import AudioIndexError, Errors
        >>> check_int(0, name="k", error=AudioIndexError, message=Errors.E613)
        Traceback (most recent call last):
        ...
        fortekit.errors.AudioIndexError: [E613] k must be an int >= 1, not 0. (See docs/errors.md#e613.)
    """
    if not is_int(value, low, high, numpy=numpy):
        words = expected if expected is not None else int_range(low, high)
        raise error(message.format(name=name, value=value, expected=words, **fields))
    return int(value)
