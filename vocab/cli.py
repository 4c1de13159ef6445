"""Old home of ``fortekit vocab ...``: the command moved to :mod:`fortekit.search.cli.vocab`.

Its old name here, ``add_vocab_commands``, keeps working for one release with a warning (W800);
this module imports nothing from ``fortekit.search`` until the name is asked for.

Example:
    >>> __all__
    []
"""

from __future__ import annotations

import importlib
from typing import Any

__all__: list[str] = []

_MOVED = {"add_vocab_commands": "fortekit.search.cli.vocab"}


def __getattr__(name: str) -> Any:
    """The command's old name, answered from its new module with a warning (W800)."""
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from fortekit._deprecated import warn_moved

    warn_moved(f"{__name__}.{name}", f"{module}.{name}")
    return getattr(importlib.import_module(module), name)
