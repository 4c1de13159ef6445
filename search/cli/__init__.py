"""The command-line tools, one module per command; ``fortekit`` and ``fol-refine`` start here.

Example:
    >>> parser = build_parser()
    >>> parser.prog
    'fortekit'
"""

from fortekit.search.cli.main import build_parser, build_refine_parser, fol_refine_main, main

__all__ = ["build_parser", "build_refine_parser", "fol_refine_main", "main"]
