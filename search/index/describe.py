"""An index in words and numbers: what ``fortekit index build|add|compact`` print and ``index info`` shows.

Example:
    >>> import numpy as np
    >>> from fortekit.search.index.audio_index import AudioIndex
    >>> index = AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1), parse_captions=False)
    >>> ann_line(index)
    'exact (no ANN index)'
    >>> index_facts(index, "a.index")["count"]
    1
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fortekit.search.index.audio_index import AudioIndex

__all__ = [
    "ann_line",
    "build_summary",
    "empty_index_facts",
    "empty_info_rows",
    "evidence_line",
    "index_facts",
    "info_rows",
    "predicate_line",
    "projected_line",
]


def ann_line(index: AudioIndex) -> str:
    """How an index is searched: exact, or its ANN kind with the recall measured at build.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> ann_line(AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1),
        ...                                   parse_captions=False))
        'exact (no ANN index)'
    """
    kind = index.faiss_kind
    if kind is None:
        return "exact (no ANN index)"
    measured = _recall_text(index.meta.ann_recall)
    settings = ", ".join(f"{name} {value}" for name, value in index.meta.faiss_settings.items())
    return f"FAISS {kind}{f' ({settings})' if settings else ''}{measured}; {index.layout.describe()}"


def projected_line(index: AudioIndex) -> str:
    """The ANN part over projected rows, in words: its head, kind and recall (``index info``, ``build-ann``).

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> projected_line(AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1),
        ...                                         parse_captions=False))
        'none (a search with a Stage 2 head takes exact candidates, or turns the head off with ANN ones)'
    """
    part = index.projected_ann
    if part is None:
        return ("none (a search with a Stage 2 head takes exact candidates, or turns the head off with "
                "ANN ones)")
    return f"FAISS {index.faiss_kind} over the rows projected by {part.describe()}{_recall_text(part.recall)}"


def _recall_text(recall: float | None) -> str:
    return "" if recall is None else f", recall@10 against exact {recall:.3f} (measured at build)"


def predicate_line(index: AudioIndex) -> str:
    """The share of items whose captions gave predicates.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> predicate_line(AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1),
        ...                                         parse_captions=False))
        'predicates: captions not parsed (--no-parse)'
    """
    with_predicates = sum(1 for symbols in index.predicate_sets if symbols)
    share = 100.0 * with_predicates / max(len(index), 1)
    if not index.meta.parsed:
        return "predicates: captions not parsed (--no-parse)"
    return (f"predicates: {with_predicates} of {len(index)} items ({share:.1f}%); "
            f"{index.unparsed_count} caption(s) missing or unparsable")


def evidence_line(index: AudioIndex) -> str:
    """The label evidence a tagger captioner left, in words.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> evidence_line(AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1),
        ...                                        parse_captions=False))
        'label evidence: none'
    """
    labels = index.meta.evidence_labels
    if labels is None:
        return "label evidence: none"
    shown = ", ".join(labels[:4]) + (", ..." if len(labels) > 4 else "")
    return f"label evidence: {len(labels)} labels ({shown})"


def build_summary(index: AudioIndex, out: str | os.PathLike[str]) -> list[str]:
    """The lines ``fortekit index build`` prints about the index it saved into `out`.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> index = AudioIndex.from_captions(["a"], [None], "enc", embeddings=np.eye(1), parse_captions=False)
        >>> build_summary(index, "a.index")[0]
        'indexed 1 items (1-d, backbone enc) into a.index'
    """
    lines = [
        f"indexed {len(index)} items ({index.dim}-d, backbone {index.backbone_name}) into {Path(out)}",
        predicate_line(index),
        f"search: {ann_line(index)}",
    ]
    if index.projected_ann is not None:
        lines.append(f"projected: {projected_line(index)}")
    if index.meta.captioner is not None:
        lines.append(f"captions: written by the captioner {index.meta.captioner}; {evidence_line(index)}")
    return lines


def index_facts(index: AudioIndex, directory: str | os.PathLike[str]) -> dict[str, Any]:
    """What an index holds, as JSON values (``fortekit index info --json``; the command adds its pipeline).

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> index = AudioIndex.from_captions(["a"], ["rain"], "enc", embeddings=np.eye(1),
        ...                                  parse_captions=False)
        >>> facts = index_facts(index, "a.index")
        >>> facts["count"], facts["with_captions"], facts["faiss"]
        (1, 1, None)
    """
    with_captions = sum(1 for caption in index.captions if caption is not None)
    with_predicates = sum(1 for symbols in index.predicate_sets if symbols)
    return {
        "directory": os.fspath(directory), "count": len(index), "dim": index.dim,
        "backbone": index.backbone_name, "backbone_options": dict(index.meta.backbone_options),
        "normalised": index.meta.normalised, "with_captions": with_captions,
        "parsed": index.meta.parsed, "with_predicates": with_predicates,
        "predicate_share": with_predicates / len(index), "unparsed": index.unparsed_count,
        "faiss": index.faiss_kind, "ann_recall": index.meta.ann_recall,
        "faiss_settings": dict(index.meta.faiss_settings),
        "projected_ann": None if index.projected_ann is None else index.projected_ann.to_json(),
        "parts": index.layout.shards + 1, "removed": index.layout.removed, "captioner": index.meta.captioner,
        "captioner_options": dict(index.meta.captioner_options),
        "evidence_labels": None if index.evidence is None else list(index.evidence.labels),
        # A grown folder is written as version 2; loaded, its parts are one index of version 1's shape.
        "format_version": 2 if index.layout.shards or index.layout.removed else index.meta.format_version,
        "fortekit_version": index.meta.fortekit_version,
    }


def info_rows(index: AudioIndex, facts: dict[str, Any]) -> list[tuple[str, Any]]:
    """The rows of ``fortekit index info``'s table: a label and its value, from :func:`index_facts`.

    Example:
        >>> import numpy as np
        >>> from fortekit.search.index.audio_index import AudioIndex
        >>> index = AudioIndex.from_captions(["a"], ["rain"], "enc", embeddings=np.eye(1),
        ...                                  parse_captions=False)
        >>> info_rows(index, index_facts(index, "a.index"))[:3]
        [('index', 'a.index'), ('items', 1), ('dim', 1)]
    """
    options = ", ".join(f"{key}={value}" for key, value in facts["backbone_options"].items())
    captioner_options = ", ".join(f"{key}={value}" for key, value in facts["captioner_options"].items())
    captioner = facts["captioner"] or "none (the captions came with the items)"
    with_captions = facts["with_captions"]
    return [
        ("index", facts["directory"]), ("items", facts["count"]), ("dim", facts["dim"]),
        ("backbone", facts["backbone"] + (f" ({options})" if options else "")),
        ("normalised", "yes" if facts["normalised"] else "no"),
        ("captions", f"{with_captions} ({100.0 * with_captions / len(index):.1f}%)"),
        ("predicates", predicate_line(index).removeprefix("predicates: ")),
        ("captioner", captioner + (f" ({captioner_options})" if captioner_options else "")),
        ("evidence", evidence_line(index).removeprefix("label evidence: ")),
        ("search", ann_line(index)),
        *([("projected", projected_line(index))] if index.faiss_kind is not None else []),
        ("format", f"{facts['format_version']} (written by fortekit {facts['fortekit_version']})"),
    ]


def empty_index_facts(directory: str | os.PathLike[str], problem: str) -> dict[str, Any] | None:
    """The facts of an index whose every item is removed (0 items), or None when `directory` is not one.

    Args:
        directory: the index folder.
        problem: the message its load gave (E639), kept in the facts.

    Example:
        >>> empty_index_facts("no/such.index", "[E601] ...") is None
        True
    """
    from fortekit.errors import FortekitError
    from fortekit.search.index.growing import read_layout

    try:
        layout = read_layout(directory)
    except FortekitError:
        return None
    if layout.live:
        return None
    meta, manifest = layout.meta, layout.manifest
    return {
        "directory": os.fspath(directory), "count": 0, "dim": meta.dim, "backbone": meta.backbone,
        "parts": len(manifest.parts), "removed": manifest.removed_count, "problem": problem,
    }


def empty_info_rows(facts: dict[str, Any]) -> list[tuple[str, Any]]:
    """The rows of ``fortekit index info``'s table for an index of no items, from :func:`empty_index_facts`.

    Example:
        >>> facts = {"directory": "a.index", "dim": 8, "backbone": "enc", "parts": 2, "removed": 3}
        >>> empty_info_rows(facts)[1]
        ('items', '0 (every item is removed)')
    """
    return [("index", facts["directory"]), ("items", "0 (every item is removed)"), ("dim", facts["dim"]),
            ("backbone", facts["backbone"]), ("parts", f"{facts['parts']}, {facts['removed']} removed items")]
