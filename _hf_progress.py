"""Hugging Face's progress bars, hidden while fortekit loads a model.

transformers 5 draws a "Loading weights" bar on stderr every time it loads weights
(``transformers.core_model_loading`` wraps the weights in
``transformers.utils.logging.tqdm``), whatever fortekit's ``-q`` or ``--no-progress``
say and even when stderr is a log file. fortekit loads models inside
:func:`quiet_model_loading`, which turns those bars off for the load and restores the
previous setting after it. A user who wants them sets ``HF_HUB_DISABLE_PROGRESS_BARS=0``
(the Hugging Face variable that forces the bars on). Importing this module imports
nothing heavy; entering the block imports transformers, which the load needs anyway.

Example:
    >>> from fortekit._hf_progress import quiet_model_loading
    >>> with quiet_model_loading():
    ...     pass
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterator
from contextlib import contextmanager


def progress_asked_for() -> bool:
    """Whether the user forced Hugging Face's progress bars on (``HF_HUB_DISABLE_PROGRESS_BARS=0``).

    Example:
        >>> isinstance(progress_asked_for(), bool)
        True
    """
    try:
        from huggingface_hub import constants
    except ImportError:
        return False
    return constants.HF_HUB_DISABLE_PROGRESS_BARS is False


@contextmanager
def quiet_model_loading() -> Iterator[None]:
    """Hide transformers' and the hub's progress bars inside the block; restore them after it.

    Nothing changes when transformers is not installed, when the bars are off already,
    or when the user asked for them (:func:`progress_asked_for`).

    Example:
        >>> with quiet_model_loading():  # doctest: +SKIP
        ...     model = transformers.AutoModel.from_pretrained(path)  # no "Loading weights" bar
    """
    if progress_asked_for():
        yield
        return
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    if not hf_logging.is_progress_bar_enabled():
        yield
        return
    # transformers' switch also sets the hub's; the hub's own per-group states are put back.
    hub_tqdm = importlib.import_module("huggingface_hub.utils.tqdm")
    hub_states = dict(getattr(hub_tqdm, "progress_bar_states", {}))
    with warnings.catch_warnings():  # the hub warns when its environment variable has priority
        warnings.simplefilter("ignore")
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
        states = getattr(hub_tqdm, "progress_bar_states", None)
        if isinstance(states, dict):
            states.clear()
            states.update(hub_states)
