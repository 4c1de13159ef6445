"""`fortekit serve`: no web page reads it (Host check), no path in an answer, reloads, a 413 that arrives.

Issue 43, cases 15-18:

- 15: a request is answered only when its ``Host`` names the server (``localhost``, ``127.0.0.1``,
  ``[::1]``, the bound address, ``--allowed-host``), else 403 E809; a state-changing request from
  a page of another origin is E810; no CORS header is ever sent;
- 16: no answer (info, health, search, items, errors, reload) holds a path of the server's disk;
- 17: ``index add``, ``remove`` and ``compact`` reach a running server by ``POST /v1/reload``, SIGHUP
  or the check between requests; a reload swaps the new state in whole (answers come from the
  old state or the new one, never an error) and a failed one keeps the old state (E811);
- 18: a body past the limit is answered with its 413, never a connection reset (a lingering close,
  bounded in time and bytes).

The in-process tests use FastAPI's TestClient and the index's default pipeline with Stage 1 off
(fast); the real server is ``fortekit serve`` in a subprocess on 127.0.0.1.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")

from fastapi.testclient import TestClient
from serve_fixtures import Server

from fortekit.errors import ServeError
from fortekit.search.serve.app import create_app
from fortekit.search.serve.hosts import HostPolicy, check_allowed_host, host_of
from fortekit.search.serve.service import SearchService

CAPTIONS = {"c0": "a dog barks in a quiet yard", "c1": "rain falls on a tin roof",
            "c2": "birds chirp in the morning", "c3": "a car engine idles"}
QUERIES = ["a dog barking", "rain on a roof", "birds in the morning"]
LOCAL = "http://127.0.0.1"
TRACEBACK = re.compile(r"^Traceback \(most recent call last\)", re.MULTILINE)


def _wav(path: Path, tone: int) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(bytes([tone % 256, 0]) * 400)


def _build(folder: Path, audio: Path, minilm: Any) -> Path:
    """An index of the four clips (their WAV files registered) and a link that leads outside."""
    from fortekit.plugins.protocols import AudioItem
    from fortekit.search.index.audio_index import AudioIndex

    items = [AudioItem(path=audio / f"{item_id}.wav", text=caption, item_id=item_id)
             for item_id, caption in CAPTIONS.items()]
    items.append(AudioItem(path=audio / "away.wav", text="a secret that lies elsewhere", item_id="away"))
    return AudioIndex.build(items, minilm).save(folder)


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("serve_host_reload")
    (root / "audio").mkdir()
    (root / "outside").mkdir()
    for tone, item_id in enumerate(CAPTIONS):
        _wav(root / "audio" / f"{item_id}.wav", tone + 1)
    _wav(root / "outside" / "secret.wav", 99)
    os.symlink(root / "outside" / "secret.wav", root / "audio" / "away.wav")
    return root


def _retriever_maker(minilm: Any) -> Any:
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.retriever import Retriever

    def make(index: Any, backbone: Any) -> Any:
        return Retriever(index, PipelineSpec(stage1=None), backbone=backbone or minilm, device="cpu")

    return make


def _service(folder: Path, minilm: Any, *, reload_check_s: float = 0.0) -> SearchService:
    return SearchService.open(folder, device="cpu", make_retriever=_retriever_maker(minilm),
                              reload_check_s=reload_check_s)


@pytest.fixture(scope="module")
def fixed(layout: Path, minilm: Any) -> TestClient:
    """A client of a server over an index that no test here changes."""
    folder = _build(layout / "fixed.index", layout / "audio", minilm)
    return TestClient(create_app(_service(folder, minilm)), base_url=LOCAL)


def _error(answer: Any, code: str, status: int) -> dict[str, Any]:
    assert answer.status_code == status, (answer.status_code, answer.text[:400])
    assert answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "status", "message"}
    assert body["error"]["code"] == code and body["error"]["status"] == status, body
    assert body["error"]["message"].startswith(f"[{code}] ")
    return body["error"]  # type: ignore[no-any-return]


# --- 15. the Host check -------------------------------------------------------------------------------


def test_the_host_policy_answers_only_the_names_of_its_address() -> None:
    loopback = HostPolicy()
    assert loopback.loopback and not loopback.everyone
    for host in ("localhost", "LOCALHOST:8000", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:8000",
                 "localhost."):
        assert loopback.allows_host(host), host
    for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example", "localhost.evil",
                 "127.0.0.2", "10.0.0.5", "", " ", "localhost:80/x", "a b", "user@localhost", "[::2]", None):
        assert not loopback.allows_host(host), host
    named = HostPolicy(bound="192.168.1.20", allowed=("search.example", ".lan.example"))
    assert not named.loopback
    for host in ("192.168.1.20:8000", "search.example", "lan.example", "box.lan.example:80", "localhost"):
        assert named.allows_host(host), host
    for host in ("192.168.1.21", "evil-lan.example", "search.example.evil"):
        assert not named.allows_host(host), host
    everywhere = HostPolicy(bound="0.0.0.0", machine_name="box")
    for host in ("10.1.2.3:8000", "[fe80::1]", "box", "localhost"):  # an IP cannot be rebound: no name
        assert everywhere.allows_host(host), host
    assert not everywhere.allows_host("attacker.example") and "any IP address" in everywhere.names()
    assert HostPolicy(allowed=("*",)).allows_host("anything.example")
    assert host_of("[::1]:80") == "::1" and host_of("[zz::1]") is None


def test_allowed_host_values_are_checked(layout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_allowed_host("Search.Example") == "search.example"
    assert check_allowed_host(".Example.org") == ".example.org"
    assert check_allowed_host("FE80::1") == check_allowed_host("[fe80::1]") == "fe80::1"
    for value in ("http://example.org", "example.org:8000", "example.org/x", "a b", "", ".10.0.0.1",
                  "[fe80::1]:80", "fe80::1:"):
        with pytest.raises(ServeError, match=r"^\[E812\] --allowed-host"):
            check_allowed_host(value)
    from fortekit.search.cli import main

    code = main(["serve", "--index", str(layout / "nowhere.index"), "--allowed-host", "http://x.example"])
    assert code == 2 and "[E812]" in capsys.readouterr().err  # refused before anything is loaded


ROUTES = [("GET", "/"), ("GET", "/eval"), ("GET", "/static/app.js"), ("GET", "/v1/info"),
          ("GET", "/v1/health"),
          ("GET", "/v1/items/c0"), ("GET", "/v1/items/c0/audio"), ("GET", "/openapi.json"), ("GET", "/docs"),
          ("GET", "/v1/stage1/tree?query=rain"), ("POST", "/v1/search"), ("POST", "/v1/reload"),
          ("GET", "/no/such/route")]


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example",
                                  "localhost.attacker.example:8000", "10.0.0.5"])
def test_a_foreign_host_is_e809_on_every_route(fixed: TestClient, host: str) -> None:
    for method, route in ROUTES:
        answer = fixed.request(method, route, headers={"host": host},
                               json={"query": "rain"} if method == "POST" else None)
        error = _error(answer, "E809", 403)
        assert host.split(":")[0] in error["message"] and "--allowed-host" in error["message"]
        assert "access-control-allow-origin" not in answer.headers
        assert answer.headers["x-content-type-options"] == "nosniff"  # the security headers too


@pytest.mark.parametrize("base", ["http://127.0.0.1", "http://127.0.0.1:8000", "http://localhost:9",
                                  "http://[::1]:8000"])
def test_the_loopback_names_are_answered_with_any_port(fixed: TestClient, base: str) -> None:
    client = TestClient(fixed.app, base_url=base)
    assert client.get("/v1/health").status_code == 200
    assert client.get("/").status_code == 200 and client.get("/static/app.js").status_code == 200
    answer = client.post("/v1/search", json={"query": "rain on a roof", "k": 2})
    assert answer.status_code == 200 and answer.json()["results"][0]["hits"][0]["id"] == "c1"


def test_a_page_of_another_origin_cannot_post_and_no_cors_header_is_sent(fixed: TestClient) -> None:
    body = {"query": "rain", "k": 1}
    for origin in ("http://attacker.example", "http://127.0.0.1:8000", "http://localhost", "null",
                   "https://127.0.0.1", "file://", "http://127.0.0.1/x"):
        for route in ("/v1/search", "/v1/reload"):
            error = _error(fixed.post(route, json=body, headers={"origin": origin}), "E810", 403)
            assert origin in error["message"]
    # the server's own pages: the origin is the Host the request names (the browser sends both)
    page = TestClient(fixed.app, base_url="http://127.0.0.1:8000")
    answer = page.post("/v1/search", json=body, headers={"origin": "http://127.0.0.1:8000"})
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers
    assert fixed.post("/v1/search", json=body, headers={"origin": "http://127.0.0.1"}).status_code == 200
    assert fixed.post("/v1/search", json=body).status_code == 200  # a program sends no Origin
    # reads from another origin: answered, but without a CORS header the browser shows the page nothing
    for method, route in (("GET", "/v1/info"), ("GET", "/v1/items/c0")):
        answer = fixed.request(method, route, headers={"origin": "http://attacker.example"})
        assert answer.status_code == 200
        assert not [name for name in answer.headers if name.lower().startswith("access-control-")]
    preflight = fixed.options("/v1/search", headers={"origin": "http://attacker.example",
                                                     "access-control-request-method": "POST"})
    assert preflight.status_code in (403, 405)
    assert not [name for name in preflight.headers if name.lower().startswith("access-control-")]


# --- 16. no path of the server's disk in any answer ---------------------------------------------------


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def test_no_answer_shows_a_path_of_the_servers_disk(layout: Path, minilm: Any) -> None:
    folder = _build(layout / "paths.index", layout / "audio", minilm)
    service = _service(folder, minilm)
    client = TestClient(create_app(service), base_url=LOCAL)
    answers = {
        "info": client.get("/v1/info"), "health": client.get("/v1/health"),
        "search": client.post("/v1/search", json={"queries": QUERIES, "k": 5, "explain": True}),
        "item": client.get("/v1/items/c0"), "link out": client.get("/v1/items/away/audio"),
        "no item": client.get("/v1/items/nope"), "reload": client.post("/v1/reload"),
        "openapi": client.get("/openapi.json"),
    }
    info = answers["info"].json()["index"]
    assert info["name"] == "paths.index" and "path" not in info
    assert info["state"] == service.state and info["state"] == answers["health"].json()["index_state"]
    hits = answers["search"].json()["results"][0]["hits"]
    assert all(hit["path"] == f"/v1/items/{hit['id']}/audio" for hit in hits)  # the audio's URL, not its file
    _error(answers["link out"], "E797", 403)
    (folder / "index.json").write_text("{", encoding="utf-8")  # a damaged index: E811 names it, by name
    answers["failed reload"] = client.post("/v1/reload")
    assert "paths.index" in _error(answers["failed reload"], "E811", 409)["message"]
    private = {str(layout), os.path.realpath(layout), str(Path.cwd()), str(Path.home()), "/tmp/", "/work/"}
    for name, answer in answers.items():
        for text in _texts(answer.json()):
            leaked = [path for path in private if len(path) > 1 and path in text]
            assert not leaked, f"{name} shows {leaked}: {text[:300]!r}"


# --- 17. reloads ---------------------------------------------------------------------------------------


def _ids(answer: dict[str, Any]) -> list[str]:
    return [hit["id"] for hit in answer["results"][0]["hits"]]


def _grown(minilm: Any, item_id: str, caption: str) -> Any:
    from fortekit.search.index.audio_index import AudioIndex

    return AudioIndex.from_captions([item_id], [caption], minilm)


def test_a_reload_swaps_in_what_add_remove_and_compact_wrote(layout: Path, minilm: Any) -> None:
    from fortekit.search.index.growing import add_to_index, compact_index, remove_from_index
    from fortekit.search.index.state import index_state

    folder = _build(layout / "grow.index", layout / "audio", minilm)
    client = TestClient(create_app(_service(folder, minilm)), base_url=LOCAL)
    first = client.get("/v1/health").json()
    assert first["items"] == 5 and first["index_state"] == index_state(folder) and first["reloads"] == 0
    assert client.post("/v1/reload").json()["reloaded"] is False  # nothing changed: nothing loaded

    add_to_index(folder, _grown(minilm, "c9", "a dog barks at a cat in a quiet yard"))
    before = client.post("/v1/search", json={"query": "a dog barking at a cat", "k": 2}).json()
    assert "c9" not in _ids(before) and before["index_state"] == first["index_state"]  # not yet reloaded
    report = client.post("/v1/reload").json()
    assert report == {"reloaded": True, "state": index_state(folder), "previous": first["index_state"],
                      "items": 6}
    after = client.post("/v1/search", json={"query": "a dog barking at a cat", "k": 2}).json()
    assert _ids(after)[0] == "c9" and after["index_state"] == report["state"]
    assert client.get("/v1/items/c9").json()["caption"] == "a dog barks at a cat in a quiet yard"

    remove_from_index(folder, ["c1"])
    assert client.post("/v1/reload").json()["items"] == 5
    assert "c1" not in _ids(client.post("/v1/search", json={"query": "rain on a tin roof", "k": 5}).json())
    _error(client.get("/v1/items/c1"), "E795", 404)
    _error(client.get("/v1/items/c1/audio"), "E795", 404)
    health = client.get("/v1/health").json()
    assert health["items"] == 5 and health["index_state"] == index_state(folder) and health["reloads"] == 2

    compact_index(folder)
    report = client.post("/v1/reload").json()
    assert report["reloaded"] and report["items"] == 5 and report["state"] == index_state(folder)
    info = client.get("/v1/info").json()
    assert info["index"]["state"] == report["state"] and info["reload"]["reloads"] == 3
    assert info["reload"]["error"] is None and info["index"]["items"] == 5
    assert client.get("/v1/items/c0/audio").status_code == 200  # audio is served from the new state too


def test_a_failed_reload_keeps_the_old_state_and_logs_e811(layout: Path, minilm: Any,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    folder = _build(layout / "broken.index", layout / "audio", minilm)
    service = _service(folder, minilm)  # no check between requests yet: each failure is this test's own
    client = TestClient(create_app(service), base_url=LOCAL)
    served = client.get("/v1/health").json()["index_state"]
    good = (folder / "items.jsonl").read_bytes()
    expected = _ids(client.post("/v1/search", json={"query": "rain on a roof", "k": 3}).json())
    caplog.set_level(logging.INFO, logger="fortekit.serve")
    for damage in (b'{"id": "c0", "capt', b""):  # a half-written file, then an empty one
        (folder / "items.jsonl").write_bytes(damage)
        os.utime(folder / "items.jsonl", ns=(time.time_ns(), time.time_ns()))
        error = _error(client.post("/v1/reload"), "E811", 409)
        assert f"({served}, 5 items)" in error["message"] and "broken.index" in error["message"]
        answer = client.post("/v1/search", json={"query": "rain on a roof", "k": 3}).json()
        assert answer["index_state"] == served and _ids(answer) == expected  # the old state answers
        assert client.get("/v1/health").json()["index_state"] == served
        assert client.get("/v1/info").json()["reload"]["error"]["code"] == "E811"
    warnings = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 2 and all(record.getMessage().startswith("[E811] ") for record in warnings)
    assert not [record for record in caplog.records if record.exc_info or record.levelno >= logging.ERROR]
    # the check between requests does not try the same broken state again (no warning a request)
    service.reload_check_s = 0.05
    for _ in range(5):
        time.sleep(0.06)
        client.get("/v1/health")
    _wait_for_background(service)
    assert len([record for record in caplog.records if record.levelno == logging.WARNING]) == 2
    (folder / "items.jsonl").write_bytes(good)  # the index is whole again: the same data, a new state
    assert client.post("/v1/reload").json()["reloaded"] is True
    assert client.get("/v1/info").json()["reload"]["error"] is None
    assert _ids(client.post("/v1/search", json={"query": "rain on a roof", "k": 3}).json()) == expected


def _wait_for_background(service: SearchService, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while service._background is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert service._background is None, "the background reload did not finish"


def test_a_change_is_loaded_between_requests(layout: Path, minilm: Any) -> None:
    from fortekit.search.index.growing import remove_from_index
    from fortekit.search.index.state import index_state

    folder = _build(layout / "checked.index", layout / "audio", minilm)
    service = _service(folder, minilm, reload_check_s=0.1)
    client = TestClient(create_app(service), base_url=LOCAL)
    old = client.get("/v1/health").json()["index_state"]
    remove_from_index(folder, ["c2"])
    new = index_state(folder)
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not seen or seen[-1] != new):
        seen.append(client.get("/v1/health").json()["index_state"])  # each request may start a check
        time.sleep(0.05)
    assert seen[-1] == new and set(seen) <= {old, new}, seen
    assert client.get("/v1/health").json()["items"] == 4
    assert service.reloads == 1
    never = _service(folder, minilm, reload_check_s=0)  # 0: only SIGHUP and POST /v1/reload
    remove_from_index(folder, ["c3"])
    assert not never.check_index() and never.state == new


def test_a_reload_while_requests_are_answered_gives_the_old_or_the_new_state(layout: Path,
                                                                            minilm: Any) -> None:
    """Three clients search without pause while the index is changed and reloaded six times: every
    answer is a 200 from one recorded state, holds only that state's items, and the same query gets
    the same ranking from the same state."""
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.growing import add_to_index, remove_from_index
    from fortekit.search.index.state import index_state

    folder = _build(layout / "race.index", layout / "audio", minilm)
    service = _service(folder, minilm)
    app = create_app(service)
    live = {index_state(folder): set(AudioIndex.load(folder).ids)}
    answers: list[tuple[str, str, list[str]]] = []
    failures: list[str] = []
    stop = threading.Event()

    def client_loop(offset: int) -> None:
        client = TestClient(app, base_url=LOCAL)
        turn = offset
        while not stop.is_set() and len(failures) < 5:
            query = QUERIES[turn % len(QUERIES)]
            turn += 1
            try:
                answer = client.post("/v1/search", json={"query": query, "k": 4})
            except Exception as error:
                failures.append(f"{type(error).__name__}: {error}")
                continue
            if answer.status_code != 200:
                failures.append(f"{answer.status_code} {answer.text[:300]}")
                continue
            body = answer.json()
            answers.append((body["index_state"], query, _ids(body)))

    threads = [threading.Thread(target=client_loop, args=(offset,)) for offset in range(3)]
    for thread in threads:
        thread.start()
    try:
        for step in range(6):
            time.sleep(0.3)
            if step % 2 == 0:
                remove_from_index(folder, ["c0"] if step == 0 else [f"dog{step - 2}"])
            else:
                add_to_index(folder, _grown(minilm, f"dog{step - 1}", "a dog barking in a yard"))
            live[index_state(folder)] = set(AudioIndex.load(folder).ids)
            assert service.reload()["state"] == index_state(folder)
        time.sleep(0.3)
    finally:
        stop.set()
        for thread in threads:
            thread.join(120)
    assert not failures, failures
    assert len({state for state, _, _ in answers}) >= 4, "the clients did not see the reloads"
    rankings: dict[tuple[str, str], list[str]] = {}
    for state, query, ids in answers:
        assert state in live, state
        assert set(ids) <= live[state], (state, ids)
        assert rankings.setdefault((state, query), ids) == ids, (state, query)


# --- the real server: SIGHUP, the Host check, a 413 that arrives ------------------------------------------


@pytest.fixture(scope="module")
def real(layout: Path, minilm: Any) -> Iterator[tuple[Server, int, Path]]:
    folder = _build(layout / "real.index", layout / "audio", minilm)
    running = Server("--index", str(folder), "--port", "0", "--device", "cpu", "--stage1", "off",
                     "--max-body-bytes", "65536", "--allowed-host", "search.example", "--reload-check", "0",
                     cwd=layout)
    try:
        yield running, running.port(), folder
    finally:
        running.stop()


def _request(port: int, method: str, path: str, body: Any = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=data,
                           headers={"content-type": "application/json", **(headers or {})})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        connection.close()


def _raw(port: int, request: bytes, body_chunks: Iterator[bytes] | None = None) -> tuple[bytes, float]:
    """Send a request and its whole body (as a client that reads only then), then read until the
    server closes; the answer's bytes and how long the close took after the last byte sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request)
        for chunk in body_chunks or ():
            sock.sendall(chunk)  # a reset here (the server gone with our bytes unread) fails the test
        sent = time.monotonic()
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data, time.monotonic() - sent


def _split(raw: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, _, value in (line.partition(": ") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, json.loads(body)


def test_the_real_server_answers_its_names_only(real: tuple[Server, int, Path]) -> None:
    running, port, _ = real
    for host, status in (("attacker.example", 403), (f"attacker.example:{port}", 403),
                         ("search.example", 200), ("Search.Example:80", 200), ("localhost", 200),
                         (f"127.0.0.1:{port}", 200), ("[::1]", 200)):
        answer, _, body = _split(_raw(port, b"GET /v1/health HTTP/1.1\r\nHost: %s\r\n"
                                            b"Connection: close\r\n\r\n" % host.encode())[0])
        assert answer == status, (host, body)
        assert status == 200 or body["error"]["code"] == "E809"
    no_host, _, body = _split(_raw(port, b"GET /v1/health HTTP/1.0\r\n\r\n")[0])
    assert no_host == 403 and body["error"]["code"] == "E809"
    # refused before its body is read, a large POST still gets its 403, not a reset
    size = 2 * 1024 * 1024
    raw, _ = _raw(port, b"POST /v1/search HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % size, _body(size, False))
    status, headers, body = _split(raw)
    assert status == 403 and body["error"]["code"] == "E809" and headers.get("connection") == "close"
    assert "[E813]" not in "".join(running.err)


def test_sighup_and_post_reload_while_the_real_server_answers(real: tuple[Server, int, Path],
                                                              minilm: Any) -> None:
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.growing import add_to_index, remove_from_index
    from fortekit.search.index.state import index_state

    running, port, folder = real
    seen = len(running.err)
    live = {index_state(folder): set(AudioIndex.load(folder).ids)}
    answers: list[tuple[str, list[str]]] = []
    failures: list[str] = []
    stop = threading.Event()

    def client_loop() -> None:
        while not stop.is_set() and len(failures) < 5:
            try:
                status, body = _request(port, "POST", "/v1/search", {"query": "a dog barking", "k": 4})
            except OSError as error:
                failures.append(f"{type(error).__name__}: {error}")
                continue
            if status != 200:
                failures.append(f"{status} {body}")
            else:
                answers.append((body["index_state"], _ids(body)))

    threads = [threading.Thread(target=client_loop) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        add_to_index(folder, _grown(minilm, "hup", "a dog barking loudly at night"))
        live[index_state(folder)] = set(AudioIndex.load(folder).ids)
        running.process.send_signal(signal.SIGHUP)  # reloaded in the background
        deadline = time.monotonic() + 120
        while _request(port, "GET", "/v1/health")[1]["index_state"] != index_state(folder):
            assert time.monotonic() < deadline and running.process.poll() is None, "SIGHUP did not reload"
            time.sleep(0.1)
        remove_from_index(folder, ["c0", "hup"])
        live[index_state(folder)] = set(AudioIndex.load(folder).ids)
        status, report = _request(port, "POST", "/v1/reload")
        assert status == 200 and report["reloaded"] and report["state"] == index_state(folder), report
        time.sleep(0.5)
    finally:
        stop.set()
        for thread in threads:
            thread.join(120)
    assert not failures, failures
    assert {state for state, _ in answers} <= set(live) and len(answers) > 3
    assert all(set(ids) <= live[state] for state, ids in answers)
    health = _request(port, "GET", "/v1/health")[1]
    assert health["items"] == 4 and health["reloads"] == 2
    assert running.process.poll() is None
    stderr = "".join(running.err[seen:])
    assert "reloaded" in stderr and not TRACEBACK.search(stderr) and "ERROR" not in stderr, stderr[-3000:]


def _body(size: int, chunked: bool) -> Iterator[bytes]:
    piece = b"r" * 65536
    for _ in range(size // len(piece)):
        yield b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
    if chunked:
        yield b"0\r\n\r\n"


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
@pytest.mark.parametrize("close", [True, False])
def test_a_body_past_the_limit_gets_its_413_not_a_reset(real: tuple[Server, int, Path], framing: str,
                                                        close: bool) -> None:
    """5 MB against a 64 kB limit, sent whole before the answer is read (as most clients do): the
    413 arrives each time, and the connection is closed once the body is read (not kept open)."""
    _, port, _ = real
    size = 5 * 1024 * 1024
    head = (b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + (b"Connection: close\r\n" if close else b"")
            + (b"Transfer-Encoding: chunked\r\n" if framing == "chunked"
               else b"Content-Length: %d\r\n" % size)
            + b"\r\n")
    for _ in range(3):  # "sometimes" a reset: never, three times over
        raw, closed_after = _raw(port, head, _body(size, framing == "chunked"))
        status, headers, body = _split(raw)
        assert status == 413 and body["error"]["code"] == "E793", body
        assert headers.get("connection") == "close" and closed_after < 5, (headers, closed_after)


def test_the_linger_is_bounded_in_time_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that stops sending, or sends without end, is closed after the bounds; the answer
    still comes first. Keep-alive requests that read their body are untouched."""
    import uvicorn
    from fastapi import FastAPI

    from fortekit.search.serve import lingering
    from fortekit.search.serve.errors_http import install_error_handling
    from fortekit.search.serve.limits import ServeLimits

    monkeypatch.setattr(lingering, "LINGER_IDLE_SECONDS", 0.5)
    monkeypatch.setattr(lingering, "LINGER_SECONDS", 2.0)
    monkeypatch.setattr(lingering, "LINGER_BYTES", 1024 * 1024)
    app = FastAPI()
    install_error_handling(app, ServeLimits(max_body_bytes=1000))

    @app.post("/echo")
    def echo(body: dict[str, Any]) -> dict[str, Any]:
        return body

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           http=lingering.lingering_protocol()))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        head = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        big = head + b"Content-Length: 100000000\r\n\r\n"
        # a client that stalls: the answer and the end of the stream come at once; after the idle
        # bound (0.5 s) the server has closed, and what the client sends then is refused
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(big + b"x" * 5000)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
            assert _split(data)[0] == 413, data[:200]
            time.sleep(1.0)
            assert _sending_fails(sock, pause=0.05, seconds=2), "the server kept a stalled client"
        # a client that trickles (each piece within the idle bound): closed at the time bound (2 s)
        monkeypatch.setattr(lingering, "LINGER_BYTES", 10**9)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(big)
            started = time.monotonic()
            assert _sending_fails(sock, pause=0.1, seconds=8), "the server kept a trickling client"
            assert 1.5 < time.monotonic() - started < 2.0 + 1.5
        # a client that floods: closed at the byte bound (1 MiB), long before the time bound
        monkeypatch.setattr(lingering, "LINGER_BYTES", 1024 * 1024)
        monkeypatch.setattr(lingering, "LINGER_SECONDS", 30.0)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(big)
            started = time.monotonic()
            assert _sending_fails(sock, pause=0.0, seconds=8), "the server kept a flooding client"
            assert time.monotonic() - started < 3
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)  # keep-alive is kept
        for value in (1, 2):
            connection.request("POST", "/echo", body=json.dumps({"n": value}),
                               headers={"content-type": "application/json"})
            answer = connection.getresponse()
            assert answer.status == 200 and json.loads(answer.read()) == {"n": value}
        connection.close()
    finally:
        server.should_exit = True
        thread.join(10)


def _sending_fails(sock: socket.socket, *, pause: float, seconds: float) -> bool:
    """Send small pieces until the server's close makes a send fail (True), or for ``seconds`` (False)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            sock.sendall(b"z" * 1024)
        except OSError:  # EPIPE or ECONNRESET: the server closed
            return True
        if pause:
            time.sleep(pause)
    return False


def test_the_lingering_protocol_is_not_imported_with_the_package() -> None:
    code = ("import sys, fortekit.search.serve, fortekit.search.serve.hosts, fortekit.search.cli.serve; "
            "print(sorted(m for m in ('uvicorn', 'h11', 'fastapi', 'starlette') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           check=True)
    assert found.stdout.strip() == "[]", found.stdout + found.stderr
