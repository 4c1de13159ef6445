"""Old home of ``fortekit vocab ...``: the command moved to :mod:`fortekit.search.cli.vocab`.

Its old name here, ``add_vocab_commands``, keeps working for one release with a warning (W800);
this module imports nothing from ``fortekit.search`` until the name is asked for.

Example:
    >>> __all__
    []
"""

from __future__ import annotations

from fortekit._deprecated import moved_names

__all__: list[str] = []



# The commands moved to fortekit.search.cli; their old names work for one release (W800).
__getattr__ = moved_names(__name__, {"add_vocab_commands": "fortekit.search.cli.vocab"})
