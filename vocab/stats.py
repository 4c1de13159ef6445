"""Vocabulary statistics: category coverage of captions and the paper's comparison table.

Coverage of a category on a caption set is the fraction of captions with at least
one token (or multi-word run of up to four tokens) that grounds to a predicate of
that category. Tokens are spaCy's (the same pipeline as the builder); each content
token is grounded as written and, failing that, by its lemma, with tiers (i)-(ii)
(hard matches) unless ``soft`` adds tier (iii). This measures the *vocabulary*;
the full parser's Pass 1 decides which grounded words become predicates.

Example:
    >>> from fortekit.vocab.analyse import Token
    >>> from fortekit.vocab.grounding import Grounder
    >>> doc = (Token("a", "a", "DET", "DT"), Token("dog", "dog", "NOUN", "NN"),
    ...        Token("barks", "bark", "VERB", "VBZ"), Token("loudly", "loudly", "ADV", "RB"))
    >>> sorted(c.value for c in caption_categories(doc, Grounder()))
    ['intensity', 'sound_event']
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from fortekit.errors import Errors, PipelineMissingError
from fortekit.vocab.analyse import Token
from fortekit.vocab.grounding import Grounder
from fortekit.vocab.model import Category, pos_group
from fortekit.vocab.vocabulary import Vocabulary

__all__ = [
    "CoverageTable",
    "PaperRow",
    "caption_categories",
    "coverage",
    "coverage_table",
    "paper_table",
    "write_bar_chart",
]

_MAX_RUN = 4


@dataclass(frozen=True, slots=True)
class PaperRow:
    """One row of the paper's vocabulary table (its ``\\proxy{}`` targets)."""

    predicates: int
    audiocaps: float
    clotho: float
    examples: str


def paper_table() -> dict[Category, PaperRow]:
    """The paper's table, read from ``vocab/paper_table.json``.

    Example:
        >>> paper_table()[Category.SOUND_EVENT].predicates
        312
    """
    raw = json.loads(
        resources.files("fortekit.vocab").joinpath("paper_table.json").read_text(encoding="utf-8")
    )
    return {
        category: PaperRow(
            int(raw[category.value]["predicates"]),
            float(raw[category.value]["audiocaps"]),
            float(raw[category.value]["clotho"]),
            str(raw[category.value]["examples"]),
        )
        for category in Category
    }


def caption_categories(
    doc: Sequence[Token], grounder: Grounder, *, soft: bool = False
) -> dict[Category, str]:
    """The categories one analysed caption covers, each with the first symbol found.

    Args:
        doc: the caption's tokens (:func:`~fortekit.vocab.analyse.analyse_captions`).
        grounder: the grounder (and so the vocabulary) to use.
        soft: count tier (iii) matches too.

    Returns:
        Category -> a symbol of that category found in the caption.
    """
    found: dict[Category, str] = {}
    for token in doc:
        if pos_group(token.pos) is None or token.pos == "AUX":
            continue
        result = grounder.ground(token.text, token.pos)
        if not result.found or (result.soft and not soft):
            result = grounder.ground(token.lemma, token.pos)
        if result.entry is not None and (soft or not result.soft):
            found.setdefault(result.entry.category, result.entry.symbol)
    index = grounder.vocabulary.key_index
    words = [t for t in doc if t.text != "-"]
    for size in range(2, _MAX_RUN + 1):
        for start in range(len(words) - size + 1):
            window = words[start : start + size]
            for text in (" ".join(t.text for t in window), " ".join(t.lemma for t in window)):
                entries = index.get(text)
                if entries:
                    found.setdefault(entries[0].category, entries[0].symbol)
                    break
    return found


def coverage(
    docs: Sequence[Sequence[Token]], grounder: Grounder, *, soft: bool = False
) -> dict[Category, float]:
    """Fraction of captions (0-1) with at least one predicate of each category.

    Example:
        >>> from fortekit.vocab.analyse import Token
        >>> docs = [(Token("rain", "rain", "NOUN", "NN"),), (Token("xq", "xq", "X", "XX"),)]
        >>> coverage(docs, Grounder())[Category.SOUND_EVENT]
        0.5
    """
    hits = dict.fromkeys(Category, 0)
    for doc in docs:
        for category in caption_categories(doc, grounder, soft=soft):
            hits[category] += 1
    total = max(len(docs), 1)
    return {category: hits[category] / total for category in Category}


@dataclass(frozen=True, slots=True)
class CoverageTable:
    """Predicates per category and coverage on two caption sets, beside the paper's.

    Attributes:
        counts: predicates per category.
        audiocaps: coverage (0-1) on the AudioCaps captions measured.
        clotho: coverage (0-1) on the Clotho captions measured.
        captions: how many captions each set had (``audiocaps``, ``clotho``).
        paper: the paper's targets.
    """

    counts: dict[Category, int]
    audiocaps: dict[Category, float]
    clotho: dict[Category, float]
    captions: dict[str, int]
    paper: dict[Category, PaperRow]

    def format(self) -> str:
        """The table in Markdown, our figures first and the paper's in brackets."""
        lines = [
            "| Category | #Pred (paper) | AC cov. (paper) | Cl cov. (paper) | met |",
            "|---|---:|---:|---:|:---:|",
        ]
        for category in Category:
            paper = self.paper[category]
            ac, cl = 100 * self.audiocaps[category], 100 * self.clotho[category]
            met = ac >= paper.audiocaps and cl >= paper.clotho
            lines.append(
                f"| {category.label} | {self.counts[category]} ({paper.predicates}) | "
                f"{ac:.1f}% ({paper.audiocaps:.1f}%) | {cl:.1f}% ({paper.clotho:.1f}%) | "
                f"{'yes' if met else 'no'} |"
            )
        total = sum(self.counts.values())
        paper_total = sum(row.predicates for row in self.paper.values())
        lines.append(f"| **Total** | **{total}** ({paper_total}) | | | |")
        lines.append(
            f"\nAC: {self.captions['audiocaps']} AudioCaps captions; Cl: {self.captions['clotho']} "
            "Clotho captions. Coverage: share of captions with at least one predicate of the category."
        )
        return "\n".join(lines)


def coverage_table(
    vocabulary: Vocabulary,
    audiocaps: Sequence[Sequence[Token]],
    clotho: Sequence[Sequence[Token]],
    grounder: Grounder | None = None,
    *,
    soft: bool = False,
) -> CoverageTable:
    """Measure the vocabulary table on analysed AudioCaps and Clotho captions.

    Args:
        vocabulary: the vocabulary to measure.
        audiocaps: analysed AudioCaps captions (the paper: test; fortekit: val).
        clotho: analysed Clotho captions (fortekit: development).
        grounder: a grounder over ``vocabulary`` (default: a new one with WordNet).
        soft: count tier (iii) matches too.

    Returns:
        The table.
    """
    grounder = grounder or Grounder(vocabulary)
    return CoverageTable(
        counts=vocabulary.counts(),
        audiocaps=coverage(audiocaps, grounder, soft=soft),
        clotho=coverage(clotho, grounder, soft=soft),
        captions={"audiocaps": len(audiocaps), "clotho": len(clotho)},
        paper=paper_table(),
    )


def write_bar_chart(counts: Mapping[Category, int], path: str | os.PathLike[str]) -> Path:
    """Write the bar chart of predicates per category (the paper's figure) as a PNG.

    Args:
        counts: predicates per category (:meth:`Vocabulary.counts`).
        path: the PNG to write.

    Returns:
        The path written.

    Raises:
        PipelineMissingError: (E112) if matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PipelineMissingError(Errors.E112) from None
    ordered = sorted(counts.items(), key=lambda item: -item[1])
    labels = [category.label for category, _ in ordered]
    values = [value for _, value in ordered]
    figure, axis = plt.subplots(figsize=(7.5, 4.0), dpi=120)
    bars = axis.bar(labels, values, color="#4c72b0")
    axis.bar_label(bars, fontsize=8)
    axis.set_ylabel("# predicates")
    axis.set_title("V_audio: predicates per category")
    axis.tick_params(axis="x", labelrotation=25, labelsize=8)
    axis.grid(axis="y", linestyle=":", alpha=0.5)
    figure.tight_layout()
    from fortekit.safe_write import atomic_write

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    def draw(temporary: Path) -> None:
        figure.savefig(temporary, format="png", metadata={"Software": None})

    try:
        atomic_write(target, draw)
    finally:
        plt.close(figure)
    return target
