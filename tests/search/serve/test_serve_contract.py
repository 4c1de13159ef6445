"""The API's contract holds: a property-based test generated from ``/openapi.json`` (schemathesis)
finds nothing against a real server, and ``/docs`` loads nothing from a CDN.

The server is the one ``fortekit serve`` runs: uvicorn, with its h11 protocol and lingering close,
in a thread of the test process on 127.0.0.1, over the generated sound collection (its WAV files
registered, so the audio route answers 200 and 206) and a small evaluation run. Schemathesis' own
command (``st run``, as a tester would run it) reads the schema from the server and, per
operation, sends its examples, the coverage phase's boundary and negative cases (each undeclared
method included: a 405 must carry ``Allow``), a bounded number of generated requests and the
stateful phase, with a fixed seed in its deterministic mode: the same requests on every run.
Every check runs: no 5xx, every status and content type documented, every body as its schema
says, every request valid under the schema accepted and every invalid one refused with a 4xx.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the serve extra (uvicorn) is not installed")
pytest.importorskip("fastapi_offline", reason="the serve extra (fastapi-offline) is not installed")
pytest.importorskip("schemathesis", reason="the test extra (schemathesis) is not installed")

import httpx

from fortekit.search.serve.app import DOCS_ASSETS, create_app
from fortekit.search.serve.eval_run import EvalRun
from fortekit.search.serve.limits import ServeLimits
from fortekit.search.serve.service import SearchService

#: Small bounds keep each generated batch quick to answer; the schema states them (maxItems, maximum).
LIMITS = ServeLimits(max_batch=4, max_k=50)
#: Generated requests per operation, besides its examples and the coverage phase's cases.
EXAMPLES = 12
#: The same requests on every run.
SEED = 20_240_601


def tiny_run(root: Path) -> Path:
    """A ``fortekit eval --beir`` output folder of two systems over one query (as eval_run's example)."""
    data = root / "data"
    (data / "qrels").mkdir(parents=True)
    items = {"d1": "rain on a roof", "d2": "rain and thunder", "d3": "a dog barks"}
    corpus = "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in items.items())
    (data / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    exclusion = {"kind": "without", "b": "thunder"}
    query = {"_id": "q1", "text": "rain without thunder", "metadata": exclusion}
    (data / "queries.jsonl").write_text(json.dumps(query) + "\n", encoding="utf-8")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    (data / "item_concepts.jsonl").write_text(json.dumps({"_id": "d2", "concepts": {"thunder": 1}}) + "\n",
                                              encoding="utf-8")
    run = root / "run"
    (run / "per_query").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"settings": {"beir": str(data)}}), encoding="utf-8")
    # in the order `fortekit eval --beir` writes them: `default` after the S3-... systems
    means = {"baseline": {"nDCG@10": 0.63, "violation@10": 0.5},
             "S3-paper": {"nDCG@10": 0.7, "violation@10": 0.5},
             "default": {"nDCG@10": 1.0, "violation@10": 0.0}}
    metrics = {"queries": 1, "items": 3, "systems": means}
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    for system, ndcg, top in (("baseline", 0.63, ["d2", "d1"]), ("S3-paper", 0.7, ["d2", "d1"]),
                              ("default", 1.0, ["d1", "d3"])):
        line = {"query_id": "q1", "query": "rain without thunder", "kind": "without", "metadata": exclusion,
                "nDCG@10": ndcg, "violation@10": 0.0, "top": top}
        (run / "per_query" / f"{system}.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    return run


class Served:
    """An app served as ``fortekit serve`` serves it (uvicorn, h11, lingering close), in a thread."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        from fortekit.search.serve.lingering import lingering_protocol

        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    http=lingering_protocol()))
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            self.thread.join(0.05)
        assert self.server.started, "uvicorn did not start"
        return f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def served(sound_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a real server over the sound index and a small evaluation run."""
    run = EvalRun.load(tiny_run(tmp_path_factory.mktemp("contract_eval")))
    service = SearchService.open(sound_index, device="cpu", limits=LIMITS)
    app = create_app(service, eval_run=run, limits=LIMITS)
    with Served(app) as url:
        yield url


def test_the_server_keeps_the_contract_of_its_schema(served: str, tmp_path: Path) -> None:
    """``st run --checks all`` over ``/openapi.json`` finds nothing: the command a tester runs."""
    command = [sys.executable, "-m", "schemathesis.cli", "run", f"{served}/openapi.json", "--checks", "all",
               "--phases", "examples,coverage,fuzzing,stateful", "--max-examples", str(EXAMPLES),
               "--seed", str(SEED), "--generation-deterministic",
               "--workers", "1", "--request-timeout", "60", "--no-color"]
    # in an empty folder: no schemathesis.toml of anyone else's is read
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-12_000:]
    assert re.search(r"\b[1-9][0-9]* generated, [1-9][0-9]* passed\b", report), report[-3000:]


def test_the_schema_states_every_status_constraint_and_the_405s_allow(served: str) -> None:
    spec = httpx.get(f"{served}/openapi.json").json()
    paths = spec["paths"]
    for route in ("/v1/items/{item_id}", "/v1/items/{item_id}/audio", "/v1/eval", "/v1/eval/queries",
                  "/v1/eval/queries/{query_id}", "/v1/search", "/v1/stage1/tree", "/v1/reload"):
        assert "404" in next(iter(paths[route].values()))["responses"], route
    search = paths["/v1/search"]["post"]["responses"]
    assert {"200", "400", "403", "404", "413", "422", "500", "503"} <= set(search)
    assert {"200", "206", "416"} <= set(paths["/v1/items/{item_id}/audio"]["get"]["responses"])
    request = spec["components"]["schemas"]["SearchRequest"]
    k = request["properties"]["k"]
    assert k["type"] == "integer" and k["minimum"] == 1 and k["maximum"] == LIMITS.max_k
    assert request["properties"]["queries"]["anyOf"][0]["maxItems"] == LIMITS.max_batch
    assert [branch["required"] for branch in request["oneOf"]] == [["query"], ["queries"]]
    tree = paths["/v1/stage1/tree"]["get"]["parameters"][0]["schema"]
    assert tree["minLength"] == 1 and re.search(tree["pattern"], "") is None  # an empty query is forbidden
    assert spec["components"]["responses"]["MethodNotAllowed"]["headers"]["Allow"]
    for route, item in paths.items():
        assert "405" in item["description"] and "Allow" in item["description"], route
    # what the schema forbids, the server refuses; each 405 names the methods in Allow
    assert httpx.post(f"{served}/v1/search", json={}).status_code == 422
    assert httpx.get(f"{served}/v1/stage1/tree", params={"query": ""}).status_code == 422
    assert httpx.post(f"{served}/v1/search", json={"queries": ["rain"] * 5}).json()["error"]["code"] == "E794"
    # JSON Schema counts 3.0 as an integer: so does the server
    three = httpx.post(f"{served}/v1/search", json={"query": "rain", "k": 3.0, "stage1": "off"}, timeout=60)
    assert three.status_code == 200 and len(three.json()["results"][0]["hits"]) == 3
    for method, route, allowed in (("DELETE", "/v1/search", "POST"), ("POST", "/v1/items/x", "GET"),
                                   ("PUT", "/v1/items/x/audio", "GET"), ("TRACE", "/v1/health", "GET")):
        answer = httpx.request(method, f"{served}{route}")
        assert answer.status_code == 405 and answer.headers["allow"] == allowed, (method, route)
        assert answer.json()["error"]["code"] == "E799"


def test_docs_loads_only_local_files(served: str) -> None:
    for page in ("/docs",):
        answer = httpx.get(f"{served}{page}")
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
        policy = answer.headers["content-security-policy"]
        assert "http" not in policy and "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
        urls = re.findall(r'(?:src|href)="([^"]+)"', answer.text)
        assert urls and all(url.startswith("/") and not url.startswith("//") for url in urls), urls
        for url in urls:
            asset = httpx.get(f"{served}{url}")
            assert asset.status_code == 200 and asset.content, url
    assert httpx.get(f"{served}/docs/assets/swagger-ui-bundle.js").headers["content-type"].startswith(
        "text/javascript")
    assert httpx.get(f"{served}/docs/assets/..%2Fcore.py").status_code == 404
    assert set(DOCS_ASSETS) >= {"swagger-ui-bundle.js", "swagger-ui.css"}
    assert httpx.get(f"{served}/redoc").status_code == 404  # no ReDoc page: it loads its logo from a CDN


def test_the_evaluation_opens_on_the_default_system(served: str) -> None:
    summary = httpx.get(f"{served}/v1/eval").json()
    assert [row["name"] for row in summary["systems"]] == ["baseline", "S3-paper", "default"]
    assert summary["baseline"] == "baseline" and summary["system"] == "default"
