"""The standard caption-indexed benchmark under exclusion by evidence and by resemblance (issue 42).

Caption 1 of each clip is the query, the mean of its other captions the item (as ``fortekit eval
--test --item-text mean``); the clip's other captions are its caption evidence. Both systems rank
through the same :class:`~fortekit.search.retriever.Retriever` with formula scoring and Stage 3's
default (the default pipeline without Stage 1 and Stage 2, which this change does not touch); only
``FormulaScoringConfig.exclusion`` differs (``--field uninterpreted``: only
``FormulaScoringConfig.uninterpreted``, "assert" before and "doubt" now). Prints R@1 / R@5 of each,
beside the frozen baseline, and how many queries changed rank::

    python scripts/standard_exclusion_ab.py --audiocaps ../shared/data/audiocaps/test.csv \\
        --clotho ../shared/data/clotho/clotho_captions_development.csv:2000-
    python scripts/standard_exclusion_ab.py --field uninterpreted \\
        --audiocaps ../shared/data/audiocaps/val.csv \\
        --clotho ../shared/data/clotho/clotho_captions_development.csv:0-2000
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

import torch

from fortekit.fol.caption import parse_captions
from fortekit.fol.predicates import predicates
from fortekit.plugins import get_backbone
from fortekit.search.formula.config import FormulaScoringConfig
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.pipeline import PipelineSpec
from fortekit.search.rerank import DEFAULT_ALPHA, Reranker
from fortekit.search.retriever import Retriever


def clips_audiocaps(path: Path) -> list[list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            groups[row["youtube_id"]].append(row["caption"])
    return [captions for captions in groups.values() if len(captions) >= 2]


def clips_clotho(spec: str) -> list[list[str]]:
    path, _, span = spec.partition(":")
    with Path(path).open(encoding="utf-8", newline="") as handle:
        rows = [[row[f"caption_{i}"] for i in range(1, 6)] for row in csv.DictReader(handle)]
    start, _, end = span.partition("-")
    return rows[int(start or 0): int(end) if end else None]


#: per compared field: its value before, its value now (the default), and the two systems' names
FIELDS = {
    "exclusion": ("resemblance", "evidence", "resemblance (before)", "evidence (now)"),
    "uninterpreted": ("assert", "doubt", "assert (before)", "doubt (now)"),
}


def run(name: str, clips: list[list[str]], backbone: object, field: str = "exclusion") -> None:
    queries = [captions[0] for captions in clips]
    others = [captions[1:] for captions in clips]
    flat = [text for group in others for text in group]
    encode = backbone.encode_text  # type: ignore[attr-defined]
    vectors = torch.nn.functional.normalize(encode(flat).float(), dim=1)
    items, at = [], 0
    for group in others:
        items.append(torch.nn.functional.normalize(vectors[at: at + len(group)].mean(dim=0), dim=0))
        at += len(group)
    item_matrix = torch.stack(items)
    parsed = [parse.formula for parse in parse_captions(flat)]
    sets, at = [], 0
    for group in others:
        found = [predicates(f) for f in parsed[at: at + len(group)] if f is not None]
        sets.append(frozenset().union(*found))
        at += len(group)
    ids = [f"clip{i}" for i in range(len(clips))]
    name_of_backbone = backbone.name  # type: ignore[attr-defined]
    index = AudioIndex.from_captions(ids, [group[0] for group in others], name_of_backbone,
                                     embeddings=item_matrix.numpy(), parse_captions=False,
                                     predicate_sets=sets)
    query_vectors = torch.nn.functional.normalize(encode(queries).float(), dim=1)
    formulas = [parse.formula for parse in parse_captions(queries)]
    base = Retriever(index, PipelineSpec(stage1=None, projection=None, order_check=False, formula=None,
                                         rerank=None, candidates=len(ids)),
                     backbone=backbone, device="cpu")
    before, _, old, new = FIELDS[field]
    systems = {
        "frozen baseline": base,
        old: base.replace(formula=FormulaScoringConfig(**{field: before}),  # type: ignore[arg-type]
                          rerank=Reranker(alpha=DEFAULT_ALPHA), captions=sets),
        new: base.replace(formula=FormulaScoringConfig(),
                          rerank=Reranker(alpha=DEFAULT_ALPHA), captions=sets),
    }
    ranks: dict[str, list[int]] = {}
    for system, retriever in systems.items():
        _, rows = retriever.rank(query_vectors, formulas, k=len(ids))
        ranks[system] = [int((rows[q] == q).nonzero()[0, 0]) + 1 for q in range(len(ids))]
        r1 = 100 * sum(r <= 1 for r in ranks[system]) / len(ids)
        r5 = 100 * sum(r <= 5 for r in ranks[system]) / len(ids)
        print(f"{name} ({len(ids)} clips) {system}: R@1 {r1:.2f}  R@5 {r5:.2f}", flush=True)
    changed = sum(a != b for a, b in zip(ranks[old], ranks[new], strict=True))
    negated = sum(1 for f in formulas if f is not None and "¬" in str(f))
    print(f"{name}: {changed} queries changed rank between {old} and {new}; "
          f"{negated} queries have a negation in their formula", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--audiocaps", type=Path, help="an AudioCaps CSV (clips grouped by youtube_id)")
    parser.add_argument("--clotho", help="a Clotho CSV, optionally :START-END (clip rows)")
    parser.add_argument("--field", choices=sorted(FIELDS), default="exclusion",
                        help="the FormulaScoringConfig field compared (default: exclusion)")
    args = parser.parse_args()
    backbone = get_backbone("minilm", device="cpu")
    if args.audiocaps:
        run("AudioCaps", clips_audiocaps(args.audiocaps), backbone, args.field)
    if args.clotho:
        run("Clotho", clips_clotho(args.clotho), backbone, args.field)


if __name__ == "__main__":
    main()
