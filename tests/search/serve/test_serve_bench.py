"""What ``fortekit serve`` adds to a search (pytest-benchmark): the batcher, then HTTP, over the Retriever.

Three benchmarks in one group, in the same process, on the same real query (an AudioCaps val
caption) over an index of 300 real Clotho development captions with the bundled MiniLM and
the default pipeline of a caption index (Stage 1, the shipped head, formula scoring, Stage 3):

* ``Retriever.search`` of the query (the baseline);
* ``SearchService.search`` of it (the micro-batcher's queue and lock, no HTTP);
* ``POST /v1/search`` through ``fastapi.testclient.TestClient`` (the app, JSON both ways).

Every round starts with an empty text cache, as a new query would. A second group compares, in CPU
time (``time.process_time``, every thread), the search itself with everything else a request costs
(``POST /v1/search`` with the search's answer made beforehand). The load and latency of the
real server on the loopback (4 clients, 100,000 items) are measured by ``scripts/serve_load.py``
(figures in docs/serve.md).

One ordinary test checks that requests that arrive together are served together and get exactly
what ``Retriever.search`` returns for them alone.

Run: pytest tests/search/serve/test_serve_bench.py --benchmark-group-by=group -s -p no:cacheprovider
"""

from __future__ import annotations

import csv
import os
import threading
import time
from pathlib import Path

import pytest
from conftest import SHARED_DATA, require

pytest.importorskip("pytest_benchmark")
pytest.importorskip("fastapi")

ROUNDS = 1 if os.environ.get("CI") else 10
ITEMS = 300
GROUP = f"one query, default pipeline, {ITEMS} Clotho captions: Retriever, SearchService, HTTP"


def _audiocaps_val(count: int) -> list[str]:
    with require(SHARED_DATA / "audiocaps" / "val.csv").open(encoding="utf-8", newline="") as handle:
        return list(dict.fromkeys(row["caption"] for row in csv.DictReader(handle)))[:count]


@pytest.fixture(scope="module")
def clotho_index(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    from fortekit.search.index import AudioIndex

    path = require(SHARED_DATA / "clotho" / "clotho_captions_development.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        captions = list(dict.fromkeys(row["caption_1"] for row in csv.DictReader(handle)))[:ITEMS]
    directory = tmp_path_factory.mktemp("serve_bench") / "clotho.index"
    AudioIndex.from_captions([f"clotho{i}" for i in range(len(captions))], captions, minilm).save(directory)
    return directory


def _retriever(index: Path, minilm):  # type: ignore[no-untyped-def]
    from fortekit.search.retriever import Retriever

    return Retriever(index, backbone=minilm, device="cpu")


@pytest.fixture(scope="module")
def retriever(clotho_index, minilm):  # type: ignore[no-untyped-def]
    return _retriever(clotho_index, minilm)


@pytest.fixture(scope="module")
def service(retriever):  # type: ignore[no-untyped-def]
    from fortekit.search.serve.service import SearchService

    made = SearchService(retriever)
    made.search(["warm up"], k=1)  # spaCy, the head and the tables load here, not in a figure
    return made


@pytest.fixture(scope="module")
def client(service):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    from fortekit.search.serve.app import create_app

    with TestClient(create_app(service), base_url="http://127.0.0.1") as made:  # one event loop, as a server
        yield made


@pytest.fixture(scope="module")
def query() -> str:
    return _audiocaps_val(1)[0]


def _cold(retriever) -> None:  # type: ignore[no-untyped-def]
    """An empty text cache (Stage 1, formula scoring and the query share it): a new query's work."""
    from fortekit.search.stage1.encoder import TextEmbeddingCache

    old = retriever.encoder.cache
    retriever.encoder.cache = TextEmbeddingCache(backbone=old.backbone, dim=old.dim, identity=old.identity)


@pytest.mark.benchmark_suite
@pytest.mark.benchmark(group=GROUP)
def test_bench_retriever_search(benchmark, retriever, service, query) -> None:  # type: ignore[no-untyped-def]
    """The baseline: the Retriever alone (``service`` only warms the same models first)."""
    results = benchmark.pedantic(lambda: retriever.search([query], k=10), setup=lambda: _cold(retriever),
                                 rounds=ROUNDS, iterations=1)
    assert len(results[0].hits) == 10


@pytest.mark.benchmark_suite
@pytest.mark.benchmark(group=GROUP)
def test_bench_service_search(benchmark, retriever, service, query) -> None:  # type: ignore[no-untyped-def]
    """The batcher's overhead: one request alone in the queue, the model lock, the variant lookup."""
    results, _ = benchmark.pedantic(lambda: service.search([query], k=10), setup=lambda: _cold(retriever),
                                    rounds=ROUNDS, iterations=1)
    assert len(results[0].hits) == 10


@pytest.mark.benchmark_suite
@pytest.mark.benchmark(group=GROUP)
def test_bench_http_search(benchmark, retriever, client, query) -> None:  # type: ignore[no-untyped-def]
    """The HTTP overhead on top: validation, the threadpool hop, JSON of ten hits."""
    answer = benchmark.pedantic(lambda: client.post("/v1/search", json={"query": query, "k": 10}),
                                setup=lambda: _cold(retriever), rounds=ROUNDS, iterations=1)
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["results"][0]["hits"]) == 10


LAYER = f"CPU time, one query, default pipeline, {ITEMS} Clotho captions: the search against the HTTP layer"


@pytest.mark.benchmark_suite
@pytest.mark.benchmark(group=LAYER, timer=time.process_time)
def test_bench_layer_the_search_itself(benchmark, retriever, service, query) -> None:  # type: ignore[no-untyped-def]
    """The search's CPU time (every thread of the process): ``Retriever.search`` of a query it has not
    seen, each round another (the caches warm with what earlier queries met, as a server's are)."""
    fresh = iter(_audiocaps_val(ROUNDS * 10 + 2)[1:])
    results = benchmark.pedantic(lambda text: retriever.search([text], k=10),
                                 setup=lambda: ((next(fresh),), {}), rounds=ROUNDS * 10, iterations=1,
                                 warmup_rounds=1)
    assert len(results[0].hits) == 10


@pytest.mark.benchmark_suite
@pytest.mark.benchmark(group=LAYER, timer=time.process_time)
def test_bench_layer_everything_but_the_search(benchmark, retriever, service, client, query,  # type: ignore[no-untyped-def]
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``POST /v1/search`` with the search's answer made beforehand: all the rest of a request.

    The body's reading and validation, the checks, the micro-batcher's hand-off, the worker
    thread's hop, the result dicts and the JSON encoding (ten hits with their score parts), the
    middleware; and, in this process, the test client's own work (an upper bound: a real client
    is another process). scripts/serve_cpu.py measures the real server (docs/serve.md).
    """
    made = retriever.search([query], k=10)
    monkeypatch.setattr(service.retriever, "search", lambda texts, k, explain: made * len(texts))
    answer = benchmark.pedantic(lambda: client.post("/v1/search", json={"query": query, "k": 10}),
                                rounds=ROUNDS * 10, iterations=1, warmup_rounds=1)
    assert answer.status_code == 200, answer.text
    assert answer.json()["results"][0]["hits"] == service.public_result(made[0])["hits"]


def test_concurrent_requests_are_batched_and_match_the_retriever(clotho_index, minilm) -> None:  # type: ignore[no-untyped-def]
    """4 threads x 25 requests, released together each time: same ids and scores as one query alone."""
    from fortekit.search.serve.service import SearchService

    threads, rounds = 4, 25
    queries = _audiocaps_val(threads * rounds)
    baseline = _retriever(clotho_index, minilm)  # its own text cache: nothing is shared with the service
    expected = {text: baseline.search(text, k=10) for text in queries}
    service = SearchService(_retriever(clotho_index, minilm))
    service.search(["warm up"], k=1)
    before = service.batches
    calls = service.retriever.encoder.stats.calls
    barrier = threading.Barrier(threads, timeout=120)
    got: dict[str, object] = {}
    failures: list[BaseException] = []

    def client(first: int) -> None:
        try:
            for turn in range(rounds):
                barrier.wait()  # the 4 requests of a turn arrive together
                text = queries[first + threads * turn]
                got[text] = service.search([text], k=10)[0][0]
        except BaseException as error:  # reported below; a broken barrier releases the others
            failures.append(error)
            barrier.abort()

    workers = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=600)
    assert not failures, failures
    assert not any(worker.is_alive() for worker in workers)
    assert sorted(got) == sorted(queries)
    for text in queries:
        mine, alone = got[text], expected[text]
        assert [hit.item_id for hit in mine.hits] == [hit.item_id for hit in alone.hits], text  # type: ignore[attr-defined]
        assert [hit.score for hit in mine.hits] == pytest.approx(  # type: ignore[attr-defined]
            [hit.score for hit in alone.hits], abs=1e-5), text
    batches, batched = (now - then for now, then in zip(service.batches, before, strict=True))
    print(f"\n{threads * rounds} requests in {batches} batches, {batched} of them with more than one request")
    assert batches < threads * rounds and batched > 0
    # the whole query side of a batch, its Stage 1 and clause texts included, is one encoder call
    assert service.retriever.encoder.stats.calls - calls <= batches


def test_a_request_does_not_wait_for_the_running_batch_to_join_the_queue(service) -> None:  # type: ignore[no-untyped-def]
    """The variant of known switches is found without the model lock, which a running batch holds.

    Otherwise the requests that arrive while a batch runs wait for it outside the queue, and the
    next batch starts with whichever of them gets there first: 97 batches for 100 requests in the
    test above, instead of 50.
    """
    from fortekit.search.serve.limits import StageSwitches

    expected = service.variant(StageSwitches())
    holding, release = threading.Event(), threading.Event()

    def batch() -> None:  # holds the model lock as a running batch does
        with service._model:
            holding.set()
            release.wait(timeout=30)

    runner = threading.Thread(target=batch, daemon=True)
    runner.start()
    try:
        assert holding.wait(timeout=30)
        found: list[object] = []
        looker = threading.Thread(target=lambda: found.append(service.variant(StageSwitches())), daemon=True)
        looker.start()
        looker.join(timeout=5)
        assert found == [expected], "variant() waited for the model lock"
    finally:
        release.set()
        runner.join(timeout=30)
