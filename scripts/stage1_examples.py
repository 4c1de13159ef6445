"""Print Stage 1 before and after for random development queries (docs/refine.md, "Examples").

Caption-indexed Clotho development clips 1..N (the benchmark's training part): caption 1
of a clip is the query, the mean embedding of captions 2-5 the item, caption 2 the item's
caption. "Before" is the lexical elaborator without anchors; "after" the corpus elaborator
over the items' captions with feedback anchors (the defaults with an index). Usage:

    python scripts/stage1_examples.py \
        ../shared/data/clotho/clotho_captions_development.csv:2000 --n 20 --seed 7
"""

from __future__ import annotations

import argparse
import random

import torch

from fortekit.plugins import get_backbone
from fortekit.search import RefineConfig, Refiner
from fortekit.search.eval.datasets import load_collection
from fortekit.search.stage1.corpus import CaptionCorpus, parse_captions_once
from fortekit.search.stage1.corpus_elaborator import CorpusElaborator
from fortekit.search.stage1.feedback import FeedbackAnchors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection", help="CSV[:first N clips]")
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    path, _, limit = args.collection.partition(":")
    clips = [clip for clip in load_collection(path) if len(clip.captions) >= 5]
    clips = clips[: int(limit)] if limit else clips
    backbone = get_backbone("minilm", device="auto")
    items = torch.nn.functional.normalize(
        torch.stack([backbone.encode_text(list(clip.captions[1:5])).mean(0) for clip in clips]), dim=-1)
    captions = [clip.captions[1] for clip in clips]
    corpus = CaptionCorpus(items, captions, parse_captions_once(captions), normalised=True)
    chosen = random.Random(args.seed).sample(range(len(clips)), args.n)
    queries = [clips[i].captions[0] for i in chosen]
    config = RefineConfig.online()
    before = Refiner(backbone, "lexical", config=config).refine_many(queries)
    after = Refiner(backbone, CorpusElaborator(corpus), anchors=FeedbackAnchors(corpus),
                    config=config).refine_many(queries)
    for number, (i, old, new) in enumerate(zip(chosen, before, after, strict=True), start=1):
        rank_old = int((items @ old.q_star > items[i] @ old.q_star).sum()) + 1
        rank_new = int((items @ new.q_star > items[i] @ new.q_star).sum()) + 1
        print(f"**{number}. {old.query}** (clip {i + 1}; its item's rank {rank_old} before, "
              f"{rank_new} after)\n")
        for label, result in (("before (lexical, no anchors)", old), ("after (corpus, feedback)", new)):
            print(f"- {label}:")
            print(f"  - phi+: {' | '.join(result.positives)}")
            print(f"  - phi-: {' | '.join(result.negatives)}")
            print(f"  - phi*: `{result.phi_star}`")
            print(f"  - G(phi*): {result.refined_text}")
        print()


if __name__ == "__main__":
    main()
