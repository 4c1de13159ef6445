"""Stage 1 speed (pytest-benchmark): online latency, offline throughput, the encoder-only floor.

Run: pytest tests/search/stage1/test_refine_bench.py --benchmark-group-by=group -s
(figures in docs/refine.md)
"""

from __future__ import annotations

import os

import pytest
from conftest import SHARED_DATA, require

from fortekit.search import RefineConfig, Refiner
from fortekit.search.stage1.encoder import TextEmbeddingCache
from fortekit.search.stage1.relations import read_caption_column

pytest.importorskip("pytest_benchmark")

# Three rounds for the figures in docs/refine.md; one on CI, where the suite's time matters
# more than the spread (the runs still assert the encoder-call budget).
ROUNDS = 1 if os.environ.get("CI") else 3


@pytest.fixture(scope="module")
def queries() -> list[str]:
    return read_caption_column(require(SHARED_DATA / "audiocaps" / "val.csv"), "caption")[:40:2]


@pytest.fixture(scope="module")
def backbone():
    from fortekit.plugins import get_backbone

    return get_backbone("minilm", device="cpu")


def _cold(refiner: Refiner) -> None:
    """Every round starts with an empty text cache, as a new query would."""
    refiner.encoder.cache = TextEmbeddingCache(backbone=refiner.backbone.name, dim=refiner.backbone.dim)
    refiner.encoder.stats.reset()
    refiner.times.reset()


def _report(benchmark, refiner: Refiner, count: int) -> None:
    stats, times = refiner.encoder.stats, refiner.times
    outside = 1 - stats.seconds / times.total if times.total else 0.0
    benchmark.extra_info.update({
        "queries": count,
        "encoder_calls_per_round": stats.calls,
        "texts_encoded_per_round": stats.texts_encoded,
        "share_outside_encoder": round(outside, 3),
        "seconds": {name: round(getattr(times, name), 4) for name in (
            "elaborate", "parse", "expand", "verbalise", "encode", "score", "total")},
    })
    print(f"\n{benchmark.group}: {stats.calls} encoder calls, {stats.texts_encoded} texts, "
          f"{outside:.1%} of the time outside the encoder; {benchmark.extra_info['seconds']}")


@pytest.mark.benchmark(group="online (B=3, D=2), one query at a time")
def test_bench_online_latency(benchmark, backbone, queries) -> None:
    refiner = Refiner(backbone, "lexical", config=RefineConfig.online())
    refiner.refine(queries[0])  # spaCy and the tables load once, not in the figure

    def run() -> None:
        for query in queries:
            refiner.refine(query)

    benchmark.pedantic(run, setup=lambda: _cold(refiner), rounds=ROUNDS, iterations=1)
    _report(benchmark, refiner, len(queries))


@pytest.mark.benchmark(group="online (B=3, D=2), one query at a time")
def test_bench_encoder_floor_query_only(benchmark, backbone, queries) -> None:
    """The frozen retriever's own cost: f_T(q), one query per call."""
    benchmark.pedantic(lambda: [backbone.encode_text([q]) for q in queries], rounds=ROUNDS, iterations=1)


@pytest.mark.benchmark(group="offline (B=5, D=4), batches of 20")
def test_bench_offline_throughput(benchmark, backbone, queries) -> None:
    refiner = Refiner(backbone, "lexical", config=RefineConfig.offline())
    refiner.refine(queries[0])
    benchmark.pedantic(
        lambda: refiner.refine_many(queries, batch_size=len(queries)),
        setup=lambda: _cold(refiner), rounds=ROUNDS, iterations=1,
    )
    _report(benchmark, refiner, len(queries))
    assert refiner.encoder.stats.calls <= 1 + refiner.config.max_depth  # one call per depth per batch


@pytest.mark.benchmark(group="offline (B=5, D=4), batches of 20")
def test_bench_encoder_floor_same_texts(benchmark, backbone, queries) -> None:
    """The encoder alone on exactly the texts the offline search encodes, in one call."""
    refiner = Refiner(backbone, "lexical", config=RefineConfig.offline())
    results = refiner.refine_many(queries, batch_size=len(queries))
    texts = list(dict.fromkeys(
        [r.query for r in results]
        + [node.text for r in results for node in r.tree]
        + [p for r in results for p in (*r.positives, *r.negatives)]
    ))
    benchmark.pedantic(lambda: backbone.encode_text(texts), rounds=ROUNDS, iterations=1)
    benchmark.extra_info["texts"] = len(texts)


class _Recorder:
    """A backbone that records the batches it is asked to encode (to replay them bare)."""

    def __init__(self, backbone) -> None:  # type: ignore[no-untyped-def]
        self.backbone, self.batches = backbone, []
        self.name, self.dim, self.device = backbone.name, backbone.dim, backbone.device

    def encode_text(self, texts):  # type: ignore[no-untyped-def]
        self.batches.append(list(texts))
        return self.backbone.encode_text(texts)


@pytest.fixture(scope="module")
def caption_corpus(backbone):  # type: ignore[no-untyped-def]
    """Caption 2 of every AudioCaps val clip: the item captions an index of that collection holds."""
    from fortekit.search.eval.datasets import load_collection
    from fortekit.search.stage1.corpus import CaptionCorpus

    clips = load_collection(require(SHARED_DATA / "audiocaps" / "val.csv"))
    return CaptionCorpus.from_captions([clip.captions[1] for clip in clips], backbone)


def _corpus_refiner(backbone, corpus):  # type: ignore[no-untyped-def]
    from fortekit.search.stage1.corpus_elaborator import CorpusElaborator
    from fortekit.search.stage1.feedback import FeedbackAnchors

    return Refiner(backbone, CorpusElaborator(corpus), anchors=FeedbackAnchors(corpus),
                   config=RefineConfig.online())


@pytest.mark.benchmark(group="online with a corpus and feedback anchors (the defaults with an index)")
def test_bench_online_corpus_feedback(benchmark, backbone, queries, caption_corpus) -> None:
    refiner = _corpus_refiner(backbone, caption_corpus)
    refiner.refine(queries[0])

    def run() -> None:
        for query in queries:
            refiner.refine(query)

    benchmark.pedantic(run, setup=lambda: _cold(refiner), rounds=ROUNDS, iterations=1)
    _report(benchmark, refiner, len(queries))
    # Nothing but the query is parsed: one parse per query, no elaboration texts.
    assert refiner.encoder.stats.calls <= len(queries) * (2 + refiner.config.max_depth)


@pytest.mark.benchmark(group="online with a corpus and feedback anchors (the defaults with an index)")
def test_bench_encoder_alone_on_the_same_batches(benchmark, backbone, queries, caption_corpus) -> None:
    """The encoder alone, replaying exactly the batches the online search sent it (cold cache)."""
    refiner = _corpus_refiner(backbone, caption_corpus)
    refiner.refine(queries[0])
    _cold(refiner)
    recorder = _Recorder(backbone)
    refiner.encoder.backbone = recorder
    for query in queries:
        refiner.refine(query)
    batches = recorder.batches

    def replay() -> None:
        for batch in batches:
            backbone.encode_text(batch)

    benchmark.pedantic(replay, rounds=ROUNDS, iterations=1)
    benchmark.extra_info.update({"calls": len(batches), "texts": sum(map(len, batches))})
