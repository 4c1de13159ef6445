"""``results.md`` of ``fortekit eval --beir``: text-to-audio tables, then audio-to-text ones.

Reads the ``metrics.json`` document: ``t2a`` and ``a2t`` blocks (a document of an earlier
version, with ``systems`` and ``breakdown`` at the top only, reads as text to audio).

Example:
    >>> doc = {"collection": "x", "queries": 2, "items": 3, "systems": {"baseline": {"nDCG@10": 0.5}},
    ...        "breakdown": {"kind": {"and": {"baseline": {"queries": 1, "AP": 0.25}}}}}
    >>> print(results_markdown(doc).splitlines()[8])
    | baseline | 0.500 | – | – | – | – | – | – | – | – | – |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fortekit.search.eval.beir_metrics import GROUNDED_VIOLATION, MEASURES, VIOLATION

__all__ = ["results_markdown"]


def _number(value: object, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else "–"


def _p_value(value: object) -> str:
    if not isinstance(value, (int, float)):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _table(rows: Mapping[str, Mapping[str, Any]], chance: Mapping[str, float] | None = None,
           timing: str | None = "ms_per_query") -> str:
    columns = [*MEASURES, VIOLATION]
    if any(GROUNDED_VIOLATION in row for row in rows.values()):  # a run of this version: beside violation@10
        columns.append(GROUNDED_VIOLATION)
    tail = " | ms / query |" if timing else " |"
    lines = ["| System | " + " | ".join(columns) + " | p nDCG@10 | p AP" + tail,
             "|" + "---|" * (len(columns) + 3 + (1 if timing else 0))]
    for name, row in rows.items():
        cells = " | ".join(_number(row.get(column)) for column in columns)
        time = f" {_number(row.get(timing), 1)} |" if timing else ""
        lines.append(f"| {name} | {cells} | {_p_value(row.get('p_nDCG@10'))} | {_p_value(row.get('p_AP'))} |"
                     + time)
    if chance:
        cells = " | ".join(_number(chance.get(column)) for column in columns)
        lines.append(f"| *chance* | {cells} | – | –" + (" | – |" if timing else " |"))
    return "\n".join(lines)


def _text_to_audio(metrics: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if "t2a" in metrics:
        block: Mapping[str, Any] = metrics["t2a"]
        return block
    if "systems" in metrics:  # a metrics.json of an earlier version: text to audio at the top
        return {"systems": metrics["systems"], "breakdown": metrics.get("breakdown", {})}
    return None


def results_markdown(metrics: Mapping[str, Any]) -> str:
    """``results.md``: the text-to-audio tables (all queries, then per breakdown value), then the
    audio-to-text ones, each with a chance row where ``metrics.json`` has one.

    Args:
        metrics: the ``metrics.json`` document.

    Returns:
        The Markdown text.

    Example:
        >>> doc = {"collection": "x", "queries": 2, "items": 3, "a2t": {"items": 3, "texts": 2,
        ...        "systems": {"baseline": {"items": 3, "texts": 2, "R@1": 0.5}}, "breakdown": {},
        ...        "chance": {"all": {"R@1": 0.5}}}}
        >>> print("\\n".join(results_markdown(doc).splitlines()[4:9]))
        ## Audio to text: all texts (3 items, 2 texts)
        <BLANKLINE>
        | System | nDCG@10 | AP | P@10 | R@1 | R@5 | R@10 | violation@10 | p nDCG@10 | p AP |
        |---|---|---|---|---|---|---|---|---|---|
        | baseline | – | – | – | 0.500 | – | – | – | – | – |
    """
    lines = [f"# fortekit eval --beir: {metrics['collection']}", "",
             f"{metrics['queries']} queries, {metrics['items']} items. Metrics by trec_eval (ir-measures); "
             "p: two-sided paired t-test against the baseline, per query (per item for audio to text); "
             "chance: the expected value of a random ranking. violation@10: the share of the top 10 whose "
             "captions mention the excluded concept (item_concepts.jsonl); violated@10: whose captions "
             "hold a sound the query's formula excludes, by fortekit's own grounded check "
             "(docs/evaluation.md).", ""]
    t2a = _text_to_audio(metrics)
    if t2a is not None:
        chance = t2a.get("chance", {})
        lines += ["## All queries", "", _table(t2a["systems"], chance.get("all"))]
        for name, groups in t2a.get("breakdown", {}).items():
            for value, rows in groups.items():
                first: Mapping[str, Any] = next(iter(rows.values()), {})
                lines += ["", f"## {name} = {value} ({first.get('queries', 0)} queries)", "",
                          _table(rows, chance.get(name, {}).get(value))]
        lines.append("")
    a2t = metrics.get("a2t")
    if a2t is not None:
        chance = a2t.get("chance", {})
        lines += [f"## Audio to text: all texts ({a2t['items']} items, {a2t['texts']} texts)", "",
                  _table(a2t["systems"], chance.get("all"), timing=None)]
        for name, groups in a2t.get("breakdown", {}).items():
            for value, rows in groups.items():
                first = next(iter(rows.values()), {})
                lines += ["", f"## Audio to text: {name} = {value} ({first.get('items', 0)} items, "
                          f"{first.get('texts', 0)} texts)", "",
                          _table(rows, chance.get(name, {}).get(value), timing=None)]
        lines.append("")
    gap = metrics.get("modality_gap")
    if gap:
        lines += [f"## Modality gap ({gap.get('pairs', 0)} query-clip pairs)", ""]
        lines += [f"- {title}: paired cosine {row['paired_cosine']:.3f}, centroid distance "
                  f"{row['centroid_distance']:.3f}" for title, row in gap.items() if isinstance(row, dict)]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
