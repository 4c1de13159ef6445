"""The table of installed plug-ins that ``fortekit plugins`` and ``fol-refine --list-plugins`` print.

The ``plugins`` command itself lives in :mod:`fortekit.search.cli.plugins`.

Example:
    >>> "captioners (" in format_plugins("captioner")
    True
"""

from __future__ import annotations

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
