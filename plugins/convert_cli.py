"""Old home of ``fortekit convert laion-clap``: the command moved to :mod:`fortekit.search.cli.convert`.

Its old names here (``add_convert_commands``, ``run_convert_laion_clap``) keep working
for one release with a warning (W800); this module imports nothing from ``fortekit.search``
until a name is asked for.

Example:
    >>> __all__
    []
"""

from __future__ import annotations

from fortekit._deprecated import moved_names

__all__: list[str] = []



# The commands moved to fortekit.search.cli; their old names work for one release (W800).
__getattr__ = moved_names(__name__, {
    "add_convert_commands": "fortekit.search.cli.convert",
    "run_convert_laion_clap": "fortekit.search.cli.convert",
})
