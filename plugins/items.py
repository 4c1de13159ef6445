"""Checking what encoders and captioners are given: lists of paths, AudioItems or (samples, rate) pairs.

No numpy or torch here, so that model-free plug-ins (the stored captioner) stay light.

Example:
    >>> from fortekit.plugins.items import check_items
    >>> [item.path for item in check_items(["a.wav", "b.flac"])]
    ['a.wav', 'b.flac']
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from fortekit.errors import EncoderInputError, Errors
from fortekit.plugins.protocols import AudioItem

__all__ = ["EXPECTED", "as_item", "check_items"]

EXPECTED = "pass a file path, a fortekit.plugins.AudioItem or a (samples, sample_rate) pair"


def as_item(item: object, index: int = 0, method: str = "encode_audio") -> AudioItem:
    """Normalise one input (path, AudioItem or (samples, rate) pair) to an AudioItem.

    Raises:
        EncoderInputError: any other type.

    Example:
        >>> as_item("a.wav").path
        'a.wav'
    """
    if isinstance(item, AudioItem):
        return item
    if isinstance(item, (str, os.PathLike)):
        return AudioItem(path=item)
    if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], (str, os.PathLike)):
        return AudioItem(samples=item[0], sample_rate=item[1])
    raise EncoderInputError(Errors.E213.format(
        method=method, index=index, type_name=type(item).__name__, expected=EXPECTED,
    ))


def check_items(items: object, method: str = "encode_audio") -> list[AudioItem]:
    """`items` as a list of AudioItem; a bare path is a typed error (it is not a list).

    Raises:
        EncoderInputError: a str, bytes, path or pair instead of a list, or a bad item.
    """
    if isinstance(items, (str, bytes, os.PathLike, AudioItem)) or not isinstance(items, Sequence):
        raise EncoderInputError(Errors.E212.format(
            method=method, what="audio items", type_name=type(items).__name__,
            hint=" Wrap a single item in a list: [item].",
        ))
    return [as_item(item, index, method) for index, item in enumerate(items)]
