"""`fortekit serve`'s API: what the Retriever answers, only registered audio, a description of itself."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")

from fastapi.testclient import TestClient

from fortekit.errors import ServeError
from fortekit.search.serve import ServeLimits, StageSwitches
from fortekit.search.serve.app import create_app
from fortekit.search.serve.batching import MicroBatcher
from fortekit.search.serve.service import SearchService

QUERIES = ["a dog barking without people talking", "rain on a roof", "birds chirping in the morning"]


@pytest.fixture(scope="module")
def cafe_service(cafe: Path) -> SearchService:
    return SearchService.open(cafe, device="cpu")


@pytest.fixture(scope="module")
def cafe_client(cafe_service: SearchService) -> TestClient:
    return TestClient(create_app(cafe_service), base_url="http://127.0.0.1")


@pytest.fixture(scope="module")
def sound_service(sound_index: Path) -> SearchService:
    return SearchService.open(sound_index, device="cpu")


@pytest.fixture(scope="module")
def sound_client(sound_service: SearchService) -> TestClient:
    return TestClient(create_app(sound_service), base_url="http://127.0.0.1")


def _search(client: TestClient, **body: Any) -> dict[str, Any]:
    answer = client.post("/v1/search", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def _assert_same_results(got: list[dict[str, Any]], wanted: list[dict[str, Any]]) -> None:
    """Equal, but for scores and their parts within 1e-5: a text encoded in another batch may differ
    in the 7th digit (the encoder's padding), and the text cache keeps whichever batch encoded it first."""
    assert len(got) == len(wanted)
    for result, expected in zip(got, wanted, strict=True):
        assert {**result, "hits": None} == {**expected, "hits": None}
        for hit, hit_expected in zip(result["hits"], expected["hits"], strict=True):
            assert hit["score"] == pytest.approx(hit_expected["score"], abs=1e-5)
            parts, parts_expected = hit.get("score_parts", []), hit_expected.get("score_parts", [])
            assert [part["stage"] for part in parts] == [part["stage"] for part in parts_expected]
            assert [part["amount"] for part in parts] == pytest.approx(
                [part["amount"] for part in parts_expected], abs=1e-5)
            assert {**hit, "score": None, "score_parts": None} == {**hit_expected, "score": None,
                                                                   "score_parts": None}


def test_a_search_returns_exactly_what_retriever_search_returns(cafe: Path, cafe_client: TestClient) -> None:
    from fortekit.search.retriever import Retriever

    retriever = Retriever(cafe, device="cpu")
    expected = [result.to_dict() for result in retriever.search(QUERIES, k=5, explain=True)]
    single = [_search(cafe_client, query=query, k=5, explain=True)["results"][0] for query in QUERIES]
    batch = _search(cafe_client, queries=QUERIES, k=5, explain=True)["results"]
    _assert_same_results(single, expected)
    _assert_same_results(batch, expected)


def test_the_stage_switches_give_the_retriever_of_those_stages(cafe: Path, cafe_client: TestClient) -> None:
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.retriever import Retriever

    for switches, options in [
        ({"stage1": "off"}, {"stage1": "off"}),
        ({"formula_scoring": "off", "stage3": "off"}, {"formula_scoring": False, "stage3": False}),
        ({"stage1": "off", "formula_scoring": "off"}, {"stage1": "off", "formula_scoring": False}),
    ]:
        retriever = Retriever(cafe, PipelineSpec.from_switches(**options), device="cpu")
        expected = [result.to_dict() for result in retriever.search(QUERIES, k=4)]
        answer = _search(cafe_client, queries=QUERIES, k=4, **switches)
        _assert_same_results(answer["results"], expected)
        stages = answer["pipeline"]["stages"]
        assert stages["stage1"]["on"] is (switches.get("stage1") != "off")
        assert stages["formula"]["on"] is (switches.get("formula_scoring") != "off")


def test_the_pipeline_and_the_timing_come_with_the_results(cafe_client: TestClient) -> None:
    answer = _search(cafe_client, query="rain on a roof", k=2)
    assert answer["pipeline"]["kind"] == "captions"
    assert set(answer["pipeline"]["stages"]) == {"stage1", "projection", "formula", "stage3", "order_check"}
    assert answer["took_ms"] > 0
    assert [hit["rank"] for hit in answer["results"][0]["hits"]] == [1, 2]


def test_the_answer_is_encoded_once_as_starlette_would_encode_it(cafe_client: TestClient,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson (where installed) or json.dumps: the document JSONResponse writes, its headers too."""
    import json

    from starlette.responses import JSONResponse

    from fortekit.search.serve import json_body

    answer = cafe_client.post("/v1/search", json={"query": "rain on a roof", "k": 3, "explain": True})
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    assert int(answer.headers["content-length"]) == len(answer.content)
    document = json.loads(answer.content)
    starlette = JSONResponse(document).body
    # orjson may write an exponent shorter (1e-7 for 1e-07): the same document, not always the same bytes
    assert json.loads(json_body.json_bytes(document)) == json.loads(starlette) == document
    monkeypatch.setattr(json_body, "_orjson_dumps", lambda: None)  # as without orjson: json.dumps
    assert json_body.json_bytes(document) == starlette
    with pytest.raises(ValueError, match="JSON compliant"):
        json_body.json_bytes({"score": float("nan")})  # refused, as JSONResponse refuses it


def test_an_item_has_its_caption_formula_and_predicates(cafe_client: TestClient) -> None:
    from fortekit.search.index.audio_index import AudioIndex

    answer = cafe_client.get("/v1/items/clip3")
    assert answer.status_code == 200
    item = answer.json()
    assert item["caption"] == "rain falls on a tin roof"
    assert "Rain(x)" in item["formula"] and "Roof(" in item["formula"]
    assert item["audio"] is None  # a caption-indexed item has no file
    assert "Rain/1" in item["predicates"]
    del AudioIndex


def test_audio_is_served_with_its_type_and_range_requests(sound_index: Path,
                                                          sound_client: TestClient) -> None:
    from fortekit.search.index.audio_index import AudioIndex

    index = AudioIndex.load(sound_index)
    item_id, path = index.ids[0], Path(str(index.paths[0]))
    data = path.read_bytes()
    whole = sound_client.get(f"/v1/items/{item_id}/audio")
    assert whole.status_code == 200
    assert whole.headers["content-type"] == "audio/wav"
    assert whole.headers["accept-ranges"] == "bytes"
    assert whole.content == data
    part = sound_client.get(f"/v1/items/{item_id}/audio", headers={"Range": "bytes=0-43"})
    assert part.status_code == 206
    assert part.content == data[:44] and part.content.startswith(b"RIFF")
    assert part.headers["content-range"] == f"bytes 0-43/{len(data)}"
    tail = sound_client.get(f"/v1/items/{item_id}/audio", headers={"Range": "bytes=-100"})
    assert tail.status_code == 206 and tail.content == data[-100:]
    item = sound_client.get(f"/v1/items/{item_id}").json()
    assert item["audio"] == f"/v1/items/{item_id}/audio"


def test_ids_holding_a_slash_reach_their_item(tmp_path: Path, minilm: Any) -> None:
    from fortekit.search.index.audio_index import AudioIndex

    folder = tmp_path / "slash.index"
    AudioIndex.from_captions(["clips/rain 1.wav", "clips/dog.wav"], ["rain on a roof", "a dog barks"],
                             minilm).save(folder)
    client = TestClient(create_app(SearchService.open(folder, device="cpu")), base_url="http://127.0.0.1")
    hits = _search(client, query="rain", k=1, stage1="off")["results"][0]["hits"]
    assert hits[0]["id"] == "clips/rain 1.wav"
    assert client.get("/v1/items/clips%2Frain%201.wav").json()["caption"] == "rain on a roof"
    assert client.get("/v1/items/clips/rain 1.wav").json()["caption"] == "rain on a roof"
    assert SearchService.audio_url("clips/rain 1.wav") == "/v1/items/clips%2Frain%201.wav/audio"


def test_health_info_and_openapi_describe_the_service(cafe_client: TestClient) -> None:
    assert cafe_client.get("/v1/health").json()["status"] == "ok"
    info = cafe_client.get("/v1/info").json()
    assert info["index"]["items"] == 8 and info["index"]["backbone"] == "minilm"
    assert info["index"]["kind"] == "captions" and info["eval"] is False
    assert info["pipeline"]["stages"]["stage1"]["on"] is True
    assert info["switches"]["stage1"] == ["auto", "off", "online"]
    assert info["limits"]["max_batch"] == ServeLimits().max_batch
    assert {"fortekit", "python", "fastapi", "torch", "spacy"} <= set(info["versions"])
    schema = cafe_client.get("/openapi.json").json()
    assert {"/v1/search", "/v1/health", "/v1/info", "/v1/items/{item_id}", "/v1/items/{item_id}/audio"} \
        <= set(schema["paths"])
    request = schema["components"]["schemas"]["SearchRequest"]
    assert request["additionalProperties"] is False
    fields = {"query", "queries", "k", "stage1", "formula_scoring", "stage3", "explain"}
    assert set(request["properties"]) == fields


def test_the_stage1_tree_is_the_refiners_explanation(cafe_client: TestClient) -> None:
    answer = cafe_client.get("/v1/stage1/tree", params={"query": "a dog barking"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    assert "φ0" in answer.text and "a dog barking" in answer.text


def test_the_stage1_tree_as_json_is_the_refiners_tree(cafe_client: TestClient) -> None:
    answer = cafe_client.get("/v1/stage1/tree", params={"query": "a dog barking", "format": "json"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    tree = answer.json()
    assert tree["query"] == "a dog barking" and tree["phi0"] and tree["tree"]
    ids = {node["id"] for node in tree["tree"]}
    assert tree["star"] in ids
    assert all(node["parent"] is None or node["parent"] in ids for node in tree["tree"])
    fields = {"id", "parent", "depth", "formula", "text", "edit", "feasible", "kept", "F"}
    assert fields <= set(tree["tree"][0])
    refused = cafe_client.get("/v1/stage1/tree", params={"query": "a dog", "format": "xml"})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "E792"


def test_the_pages_and_their_files_are_served_from_the_package(cafe_client: TestClient) -> None:
    page = cafe_client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "unsafe-inline" not in page.headers["content-security-policy"]
    for name in ("app.js", "eval.js", "style.css"):
        assert cafe_client.get(f"/static/{name}").status_code == 200
    assert cafe_client.get("/eval").status_code == 200


def test_a_server_without_an_index_or_a_run_is_refused() -> None:
    with pytest.raises(ServeError, match=r"\[E803\]"):
        create_app(None)


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from fortekit.search.serve.app import require_serve_extra

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "uvicorn" else real(name, *rest))
    with pytest.raises(ServeError, match=r"\[E790\].*uvicorn.*fortekit\[serve\]"):
        require_serve_extra()


def test_bad_limits_and_switches_are_coded() -> None:
    with pytest.raises(ServeError, match=r"\[E807\].*max_batch"):
        ServeLimits(max_batch=0)
    with pytest.raises(ServeError, match=r"\[E792\].*stage1"):
        StageSwitches(stage1="sometimes")


def test_the_batcher_runs_waiting_requests_together_and_isolates_a_failure() -> None:
    calls: list[list[str]] = []
    gate = threading.Event()

    def run(key: object, texts: list[str]) -> list[str]:
        calls.append(list(texts))
        if len(calls) == 1:
            gate.wait(5)  # hold the first batch so the others queue up behind it
        if "bad" in texts:
            raise ValueError("bad query")
        return [text.upper() for text in texts]

    batcher: MicroBatcher[str] = MicroBatcher(run, max_batch=16, max_queue=16)
    results: dict[str, object] = {}

    def client(text: str) -> None:
        try:
            results[text] = batcher.submit("key", [text])
        except ValueError as error:
            results[text] = error

    first = threading.Thread(target=client, args=("first",))
    first.start()
    while not calls:
        threading.Event().wait(0.01)
    others = [threading.Thread(target=client, args=(text,)) for text in ("a", "bad", "b")]
    for thread in others:
        thread.start()
    while len(batcher._pending) < 3:
        threading.Event().wait(0.01)
    gate.set()
    for thread in [first, *others]:
        thread.join(10)
    assert results["first"] == ["FIRST"] and results["a"] == ["A"] and results["b"] == ["B"]
    assert isinstance(results["bad"], ValueError)
    assert sorted(calls[1]) == ["a", "b", "bad"]  # the three waited and ran as one batch, then alone
    assert batcher.batched >= 1


def test_a_full_queue_is_503() -> None:
    gate = threading.Event()
    batcher: MicroBatcher[str] = MicroBatcher(lambda key, texts: (gate.wait(5), texts)[1], max_batch=4,
                                              max_queue=1)
    thread = threading.Thread(target=batcher.submit, args=("k", ["x"]))
    thread.start()
    while batcher.batches == 0:
        threading.Event().wait(0.01)
    waiting = threading.Thread(target=batcher.submit, args=("k", ["y"]))
    waiting.start()
    while not batcher._pending:
        threading.Event().wait(0.01)
    with pytest.raises(ServeError, match=r"\[E806\]") as refused:
        batcher.submit("k", ["z"])
    assert refused.value.status == 503
    gate.set()
    thread.join(10)
    waiting.join(10)


def test_importing_the_serve_package_loads_no_web_stack() -> None:
    code = ("import sys, fortekit.search.serve as s; from fortekit.search.serve import ServeLimits; "
            "assert not {'fastapi', 'uvicorn', 'starlette', 'torch'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_command_line_has_serve() -> None:
    from fortekit.search.cli.main import build_parser

    args = build_parser().parse_args(["serve", "--index", "idx", "--port", "0", "--stage1", "off"])
    assert (args.host, args.port, args.stage1, args.formula_scoring) == ("127.0.0.1", 0, "off", "auto")
