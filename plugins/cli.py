"""The table of installed plug-ins that ``fortekit plugins`` and ``fol-refine --list-plugins`` print.

The ``plugins`` command itself lives in :mod:`fortekit.search.cli.plugins`; its old names here
(``add_plugin_commands``, ``run_plugins``) keep working for one release with a warning (W800).

Example:
    >>> "captioners (" in format_plugins("captioner")
    True
"""

from __future__ import annotations

from fortekit._deprecated import moved_names
from fortekit.plugins import KINDS, list_plugins

__all__ = ["format_plugins"]



def format_plugins(kind: str | None = None) -> str:
    """A table of the plug-ins, grouped by kind: name, source, status and target.

    Example:
        >>> "minilm" in format_plugins("backbone")
        True
    """
    lines: list[str] = []
    for each in (KINDS if kind is None else (kind,)):
        rows = list_plugins(each)
        lines.append(f"{each}s ({len(rows)}):")
        table = [
            (
                row.name,
                row.source if row.distribution is None else f"{row.source} ({row.distribution})",
                "ok" if row.available else "needs " + ", ".join(row.missing),
                row.target,
            )
            for row in rows
        ]
        widths = [max((len(cells[i]) for cells in table), default=0) for i in range(3)]
        for row, (name, origin, status, target) in zip(rows, table, strict=True):
            lines.append(f"  {name:<{widths[0]}}  {origin:<{widths[1]}}  {status:<{widths[2]}}  {target}")
            if row.summary:
                lines.append(f"  {'':<{widths[0]}}  {row.summary}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# The commands moved to fortekit.search.cli; their old names work for one release (W800).
__getattr__ = moved_names(__name__, {
    "add_plugin_commands": "fortekit.search.cli.plugins", "run_plugins": "fortekit.search.cli.plugins",
})
