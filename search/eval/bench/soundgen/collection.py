"""The text side of a generated collection: clips.jsonl, caption CSVs and BEIR folders per split.

Everything here follows from the scenes (and the limiter gains of the rendered clips): the
captions from each clip's caption seed, the gold formula from its events, the queries and
their judgements from the truth of every clip of the split.

Example:
    >>> from fortekit.search.eval.bench.soundgen.scene import draw_scene
    >>> record = clip_record(draw_scene(0, 4), {"gain_db": 0.0})
    >>> record["split"], record["audio"], len(record["captions"])
    ('test', 'audio/clip000004.wav', 5)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fortekit.search.eval.bench.soundgen.captions import scene_captions, scene_formula
from fortekit.search.eval.bench.soundgen.queries import QUERY_KINDS, build_queries
from fortekit.search.eval.bench.soundgen.scene import GeneratorConfig, Scene
from fortekit.search.eval.bench.soundgen.writer import write_beir, write_caption_csv, write_jsonl

__all__ = ["clip_record", "write_collection"]


def clip_record(scene: Scene, rendered: dict[str, Any]) -> dict[str, Any]:
    """One line of clips.jsonl: the clip's whole truth.

    Args:
        scene: the clip's scene.
        rendered: its progress record (``gain_db``: the limiter's gain on the whole clip).
    """
    return {
        "_id": scene.clip_id, "split": scene.split, "audio": f"audio/{scene.clip_id}.wav",
        "structure": scene.structure, "events": [event.to_dict() for event in scene.events],
        "relations": [list(relation) for relation in scene.relations], "absent": scene.absent,
        "gain_db": rendered.get("gain_db", 0.0), "captions": scene_captions(scene),
        "formula": str(scene_formula(scene)),
    }


def write_collection(out: Path, config: GeneratorConfig, scenes: list[Scene],
                     rendered: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Write clips.jsonl, captions_{split}.csv and the {split}/ BEIR folders; the counts.

    Example:
        >>> write_collection(Path("out"), GeneratorConfig(n=10), [], {})  # doctest: +SKIP
        {'clips': 0, ...}
    """
    records = [clip_record(scene, rendered.get(scene.clip_id, {})) for scene in scenes]
    write_jsonl(out / "clips.jsonl", records)
    counts: dict[str, Any] = {"clips": len(records)}
    for split in ("train", "test"):
        chosen = [(scene, record) for scene, record in zip(scenes, records, strict=True)
                  if scene.split == split]
        counts[f"{split}_clips"] = len(chosen)
        if not chosen:
            continue
        write_caption_csv(out / f"captions_{split}.csv",
                          [(f"{scene.clip_id}.wav", record["captions"]) for scene, record in chosen])
        queries = build_queries([scene for scene, _ in chosen],
                                seed=config.seed + (1 if split == "test" else 0),
                                max_queries_per_kind=config.max_queries_per_kind, classes=config.classes)
        items = [{"_id": scene.clip_id, "title": "", "text": record["captions"][0],
                  "captions": record["captions"], "audio": f"../audio/{scene.clip_id}.wav"}
                 for scene, record in chosen]
        concepts = [{"_id": scene.clip_id, "concepts": {cls: 5 for cls in sorted(scene.classes)}}
                    for scene, _ in chosen]
        write_beir(out / split, split, items, queries, concepts)
        counts[f"{split}_queries"] = {kind: sum(q.kind == kind for q in queries) for kind in QUERY_KINDS}
    return counts
