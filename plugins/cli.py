"""The ``plugins`` sub-command: what is installed, and where each plug-in came from.

:func:`add_plugin_commands` adds it to any argparse sub-parsers object; its handler
follows the CLI convention ``handler(args, out) -> exit code``.

Example:
    >>> import argparse, io
    >>> parser = argparse.ArgumentParser(prog="fortekit")
    >>> _ = add_plugin_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["plugins", "--kind", "captioner"])
    >>> out = io.StringIO()
    >>> args.handler(args, out)
    0
    >>> "stored" in out.getvalue()
    True
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from fortekit.plugins import KINDS, list_plugins

__all__ = ["add_plugin_commands", "format_plugins", "run_plugins"]


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


def run_plugins(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``plugins``: print the table (or JSON with --json); exit code 0."""
    if getattr(args, "json", False):
        rows: list[dict[str, Any]] = [
            {
                "kind": row.kind, "name": row.name, "source": row.source, "target": row.target,
                "distribution": row.distribution, "summary": row.summary, "available": row.available,
                "missing": list(row.missing),
            }
            for row in list_plugins(args.kind)
        ]
        for row in rows:
            print(json.dumps(row, ensure_ascii=False), file=out)
        return 0
    out.write(format_plugins(args.kind))
    return 0


def add_plugin_commands(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``plugins`` sub-command to an ``add_subparsers()`` object.

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    Returns:
        The new sub-parser (its defaults set ``handler=run_plugins``).

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser()
        >>> _ = add_plugin_commands(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["plugins", "--json"]).json
        True
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "plugins",
        help="list the installed backbones, elaborators and captioners, and where each came from",
        description=(
            "List the plug-ins fortekit can use: built-ins, those registered in code, and those "
            "that installed packages provide through the entry-point groups fortekit.backbones, "
            "fortekit.elaborators and fortekit.captioners."
        ),
    )
    parser.add_argument("--kind", choices=KINDS, help="list one kind only")
    parser.add_argument("--json", action="store_true", help="one JSON object per plug-in")
    parser.set_defaults(handler=run_plugins)
    return parser
