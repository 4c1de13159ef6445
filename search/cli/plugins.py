"""``fortekit plugins``: what is installed, and where each plug-in came from.

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
from fortekit.plugins.cli import format_plugins
from fortekit.search.cli.common import add_json_option

__all__ = ["add_plugin_commands", "run_plugins"]


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
    add_json_option(parser, help="one JSON object per plug-in")
    parser.set_defaults(handler=run_plugins)
    return parser
