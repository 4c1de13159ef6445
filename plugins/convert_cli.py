"""Old home of ``fortekit convert laion-clap``: the command moved to :mod:`fortekit.search.cli.convert`.

Its old names here (``add_convert_commands``, ``run_convert_laion_clap``) keep working
for one release with a warning (W800); this module imports nothing from ``fortekit.search``
until a name is asked for.

Example:
    >>> __all__
    []
"""

from __future__ import annotations

import importlib
from typing import Any

__all__: list[str] = []

_MOVED = {
    "add_convert_commands": "fortekit.search.cli.convert",
    "run_convert_laion_clap": "fortekit.search.cli.convert",
}


def __getattr__(name: str) -> Any:
    """The command's old name, answered from its new module with a warning (W800)."""
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from fortekit._deprecated import warn_moved

    warn_moved(f"{__name__}.{name}", f"{module}.{name}")
    return getattr(importlib.import_module(module), name)
