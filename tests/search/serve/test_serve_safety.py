"""`fortekit serve` under hostile requests: coded 4xx errors, no traceback, no file outside the index.

The issue's safety requirements, case by case: path traversal in every route that takes a path
or an id (``../``, ``..%2F``, ``%2e%2e%2f``, ``%252e``, absolute paths, backslashes, NUL, very
long and unicode ids), links and odd files that an index registers (a link to a secret file
outside the indexed folder, a link to a folder, a FIFO, a missing file), hostile search bodies
(malformed JSON, non-objects, unknown fields, wrong types, ``k`` out of range, batches and
bodies past the limits, with and without Content-Length, hostile query text), wrong methods,
unknown routes, the security headers, and a real server on the loopback (its address, W870,
disconnecting clients beside well-behaved ones, a port in use, nothing to serve).

Paths are sent to the app as uvicorn hands them over (:func:`asgi`: the request target
percent-decoded, dot segments kept), since an HTTP client such as httpx removes ``..`` before
sending; the real server gets a few of them over a raw socket too. Every answer is checked to
hold a coded JSON error and never the bytes of the secret file (:data:`MARKER`), and the log of
every test here (``fortekit.serve``, uvicorn, starlette) to hold no traceback and no error.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
import wave
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")

import anyio
import anyio.from_thread
from beir_fixtures import CONCEPTS, CORPUS, QUERIES, make_beir
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fortekit.errors import ServeError
from fortekit.search.serve import ServeLimits
from fortekit.search.serve.app import create_app
from fortekit.search.serve.audio_files import AudioFiles
from fortekit.search.serve.service import SearchService

try:
    from fortekit.search.serve.eval_run import EvalRun
except ImportError as missing:  # being written beside these tests: the eval routes then skip
    EvalRun = None  # type: ignore[assignment,misc]
    EVAL_MISSING = f"fortekit.search.serve.eval_run.EvalRun does not import yet: {missing}"
else:
    EVAL_MISSING = ""

#: The content of the secret files outside the index: no answer may ever hold it.
MARKER = f"FORTEKIT-SECRET-{uuid.uuid4().hex}"
CODED = re.compile(r"^\[([EW]\d{3})\] ")
#: A frame of a Python traceback, as it would appear in an answer (raw or JSON-escaped).
PY_FRAME = re.compile(rb'File \\?"[^"\\]+\.py\\?", line \d+')
#: The first line of a Python traceback, where it would start a line of a log.
TRACEBACK = re.compile(r"^Traceback \(most recent call last\)", re.MULTILINE)
#: The request bounds of the in-process app (small, so that the limits are cheap to reach).
LIMITS = ServeLimits(max_body_bytes=200_000, max_batch=4, max_k=50, max_queue=64)
CLEAN = ("c0", "c1", "c2")
CAPTIONS = {
    "c0": "a dog barks in a quiet yard",
    "c1": "rain falls on a tin roof",
    "c2": "birds chirp in the morning",
    "secret_link": "a cat meows",
    "abs_link": "a bell rings",
    "dir_link": "waves crash on the shore",
    "inner_dir_link": "a car engine idles",
    "notes_link": "people talk in a cafe",
    "fifo": "thunder rumbles",
    "missing": "a door slams",
    "loop": "a phone rings",
    "swapped": "wind blows through trees",
    "captions_only": "a baby cries",
    "clips/rain 1.wav": "rain on a window",
}
SETTINGS = dict(
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
JSON = {"content-type": "application/json"}


# --- the collection: clean clips, and links and odd files the index registers -----------------------


def _wav(path: Path, seconds: float = 0.05, tone: int = 0) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(bytes([tone % 256, 0]) * int(8000 * seconds))


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """root/audio (the indexed folder, with its links and odd files) and root/outside (the secrets)."""
    root = tmp_path_factory.mktemp("serve_safety")
    audio, outside = root / "audio", root / "outside"
    for folder in (audio, audio / "sub", audio / "clips", outside, outside / "dir"):
        folder.mkdir(parents=True, exist_ok=True)
    for position, name in enumerate(CLEAN):
        _wav(audio / f"{name}.wav", tone=position + 1)
    _wav(audio / "clips" / "rain 1.wav", tone=9)
    _wav(audio / "swapped.wav", tone=7)
    secret = outside / "secret.wav"
    secret.write_text(f"RIFF {MARKER} a secret that merely ends in .wav", encoding="utf-8")
    (outside / "secret.txt").write_text(MARKER, encoding="utf-8")
    (outside / "dir" / "x.wav").write_text(MARKER, encoding="utf-8")
    (audio / "notes.txt").write_text(MARKER, encoding="utf-8")
    links = {
        "secret_link.wav": "../outside/secret.wav",
        "abs_link.wav": str(secret),
        "dir_link.wav": "../outside/dir",
        "inner_dir_link.wav": "sub",
        "notes_link.wav": "notes.txt",
        "loop.wav": "loop.wav",
    }
    for name, target in links.items():
        os.symlink(target, audio / name)
    os.mkfifo(audio / "fifo.wav")
    _wav(audio / "missing.wav")
    return {"root": root, "audio": audio, "outside": outside, "secret": secret}


@pytest.fixture(scope="module")
def hostile_index(layout: dict[str, Path], minilm: Any) -> Path:
    from fortekit.plugins.protocols import AudioItem
    from fortekit.search.index.audio_index import AudioIndex

    audio = layout["audio"]
    files = {"clips/rain 1.wav": audio / "clips" / "rain 1.wav", "captions_only": None}
    items = [
        AudioItem(path=files.get(item_id, audio / f"{item_id}.wav"), text=caption, item_id=item_id)
        for item_id, caption in CAPTIONS.items()
    ]
    directory = AudioIndex.build(items, minilm).save(layout["root"] / "hostile.index")
    (audio / "missing.wav").unlink()  # registered, then gone
    return directory


def _tiny_run(root: Path) -> Path:
    """A hand-made `fortekit eval --beir` run (baseline, formula) over beir_fixtures' collection."""
    from fortekit.search.eval.beir_metrics import violation_at

    collection = make_beir(root / "coll")
    run = root / "run"
    (run / "per_query").mkdir(parents=True)
    for system, top in (("baseline", ["d1", "d2", "d3"]), ("formula", ["d2", "d8", "d1"])):
        rows = [
            {
                "query_id": query["_id"],
                "query": query["text"],
                "kind": query["metadata"]["kind"],
                "metadata": query["metadata"],
                "nDCG@10": 0.5,
                "violation@10": violation_at(top, query["metadata"]["b"], CONCEPTS)
                if query["metadata"]["kind"] == "without"
                else None,
                "top": top,
            }
            for query in QUERIES
        ]
        (run / "per_query" / f"{system}.jsonl").write_text(
            "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
        )
    means = {system: {"nDCG@10": 0.5, "description": system} for system in ("baseline", "formula")}
    (run / "metrics.json").write_text(
        json.dumps({"queries": len(QUERIES), "items": len(CORPUS), "systems": means}), encoding="utf-8"
    )
    (run / "config.json").write_text(
        json.dumps({"settings": {"beir": str(collection), "out": str(run)}}), encoding="utf-8"
    )
    return run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_run(tmp_path_factory.mktemp("serve_safety_eval"))


@pytest.fixture(scope="module")
def service(hostile_index: Path) -> SearchService:
    return SearchService.open(hostile_index, device="cpu", limits=LIMITS)


@pytest.fixture(scope="module")
def app(service: SearchService, run_dir: Path) -> Any:
    return create_app(service, eval_run=EvalRun.load(run_dir) if EvalRun is not None else None)


@pytest.fixture(scope="module")
def client(app: Any) -> Iterator[TestClient]:
    with TestClient(app, base_url="http://127.0.0.1") as test_client:  # an error escaping the app fails
        yield test_client


@pytest.fixture(scope="module")
def portal() -> Iterator[anyio.from_thread.BlockingPortal]:
    with anyio.from_thread.start_blocking_portal() as running:
        yield running


@pytest.fixture(autouse=True)
def quiet_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every test here: no log record with a traceback (exc_info, or a line of its own that starts
    one), at ERROR, or on more than one line (a hostile path must not write log lines of its own);
    a test that provokes a 500 on purpose checks its own record and clears the log."""
    caplog.set_level(logging.INFO)
    yield caplog
    loud = [
        f"{record.name} {record.levelname}: {record.getMessage()[:300]!r}"
        for record in caplog.records
        if record.exc_info
        or record.levelno >= logging.ERROR
        or TRACEBACK.search(record.getMessage())
        or "\n" in record.getMessage()
        or "\r" in record.getMessage()
    ]
    assert not loud, "the log holds tracebacks, errors or injected lines:\n" + "\n".join(loud)


# --- helpers -----------------------------------------------------------------------------------------

Answer = tuple[int, dict[str, str], bytes]


def asgi(
    portal: anyio.from_thread.BlockingPortal,
    app: Any,
    target: str,
    *,
    method: str = "GET",
    headers: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
) -> Answer:
    """Call the app with a request target as uvicorn hands it over: percent-decoded, ``..`` kept.

    An error that escapes the app (what uvicorn would log with its traceback) fails the test.
    """
    raw_path, _, query = target.encode("ascii").partition(b"?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": unquote(raw_path.decode("ascii")),
        "raw_path": raw_path,
        "query_string": query,
        "root_path": "",
        "state": {},
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "headers": [
            *([] if any(name.lower() == "host" for name, _ in headers) else [(b"host", b"127.0.0.1:8000")]),
            *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers),
        ],
    }

    async def call() -> Answer:
        status, answer_headers, chunks, given_body = 0, {}, [], False

        async def receive() -> dict[str, Any]:
            nonlocal given_body
            if not given_body:
                given_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                answer_headers.update(
                    (name.decode("latin-1").lower(), value.decode("latin-1"))
                    for name, value in message.get("headers", [])
                )
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        with anyio.fail_after(60):
            await app(scope, receive, send)
        return status, answer_headers, b"".join(chunks)

    return portal.call(call)


def coded(
    status: int,
    headers: dict[str, str],
    body: bytes,
    *,
    codes: Sequence[str] = (),
    statuses: Sequence[int] = (),
    what: str = "",
) -> dict[str, Any]:
    """Check a coded JSON error answer (4xx, code, status, message), without marker or traceback."""
    shown = f"{what}: {status} {body[:400]!r}"
    assert MARKER.encode() not in body, f"the secret file was served! {shown}"
    assert b"root:x:0:0" not in body and not PY_FRAME.search(body), shown
    assert 400 <= status < 500, f"not a 4xx: {shown}"
    assert not statuses or status in statuses, f"expected a status in {statuses}: {shown}"
    assert headers.get("content-type", "").startswith("application/json"), shown
    payload = json.loads(body)
    assert set(payload) == {"error"} and set(payload["error"]) == {"code", "status", "message"}, shown
    error = payload["error"]
    found = CODED.match(error["message"])
    assert found and found.group(1) == error["code"] and error["status"] == status, shown
    assert not codes or error["code"] in codes, f"expected a code in {codes}: {shown}"
    return error  # type: ignore[no-any-return]


def reply(answer: Any) -> Answer:
    """A TestClient answer as (status, headers, body)."""
    return answer.status_code, {k.lower(): v for k, v in answer.headers.items()}, answer.content


def clean_files(layout: dict[str, Path]) -> set[bytes]:
    audio = layout["audio"]
    return {(audio / f"{name}.wav").read_bytes() for name in (*CLEAN, "swapped")} | {
        (audio / "clips" / "rain 1.wav").read_bytes()
    }


# --- 1. path traversal over every route that takes a path or an id ----------------------------------

#: Raw request-target pieces (ASCII, as a client would put them on the request line).
TRAVERSALS = [
    "..",
    "../",
    "../../../../etc/passwd",
    "..%2F..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%2E%2E/%2E%2E/etc/passwd",
    "%252e%252e%252fetc%252fpasswd",
    "..%252f..%252fetc%252fpasswd",
    "/etc/passwd",
    "%2Fetc%2Fpasswd",
    "..\\..\\etc\\passwd",
    "%5C..%5C..%5Cetc%5Cpasswd",
    "c0%00.wav",
    "c0%00",
    "%00",
    "..%00/",
    "%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd",
    "%ED%A0%80",
    "%FF%FE",
    "a" * 5000,
    "%2e" * 2000,
    "%C3%A9t%C3%A9",
    quote("日本語/ファイル"),
    quote("\u202ec0"),
    "c0/../c1",
    "c0%2F..%2F..%2Foutside%2Fsecret.wav",
    "~/.ssh/id_rsa",
    "%7E%2F.bashrc",
    "/proc/self/environ",
    "file:%2F%2F%2Fetc%2Fpasswd",
    "secret_link.wav",
    "audio/secret_link.wav",
    "../outside/secret.wav",
    "..%2Foutside%2Fsecret.wav",
    "..%2F..%2Foutside%2Fsecret.txt",
    "notes.txt",
    "%2e%2e%2fnotes.txt",
    "..;/..;/etc/passwd",
]


def _route_cases(secret: Path) -> list[str]:
    return [
        *TRAVERSALS,
        str(secret),
        quote(str(secret), safe=""),
        quote(str(secret), safe="/"),
        "..%2F" * 20 + quote(str(secret).lstrip("/"), safe=""),
    ]


ROUTES = {  # route template -> the codes a refusal may carry there
    "/v1/items/{p}": ("E795", "E798"),
    "/v1/items/{p}/audio": ("E795", "E798"),
    "/static/{p}": ("E798",),
    "/{p}": ("E798", "E799"),
    "/v1/eval/queries/{p}?system=formula": ("E808", "E798"),
    "/v1/eval/queries?system={p}": ("E802", "E792"),
    "/v1/eval/queries/q1?system=formula&baseline={p}": ("E802", "E792"),
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_traversal_in_every_route_is_a_coded_4xx_and_never_a_file(
    route: str,
    portal: Any,
    app: Any,
    layout: dict[str, Path],
) -> None:
    if "eval" in route and EVAL_MISSING:
        pytest.skip(EVAL_MISSING)
    failures = []
    for piece in _route_cases(layout["secret"]):
        target = route.replace("{p}", piece)
        if "?" in route.split("{p}")[0]:  # in a query string: '&' and '#' would cut it
            target = route.replace("{p}", quote(unquote(piece), safe=""))
        try:
            coded(*asgi(portal, app, target), codes=ROUTES[route], what=target[:120])
        except AssertionError as failure:
            failures.append(str(failure))
    assert not failures, f"{len(failures)} hostile paths answered wrongly:\n" + "\n".join(failures)


def test_dot_segments_reach_the_app_undecoded_and_are_refused(portal: Any, app: Any) -> None:
    """What reached the app is the id with its '..' (the message names it): refused, not normalised."""
    for target, item_id in [
        ("/v1/items/../../../../etc/passwd", "../../../../etc/passwd"),
        ("/v1/items/..%2F..%2Foutside%2Fsecret.wav/audio", "../../outside/secret.wav"),
        ("/v1/items/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "../../etc/passwd"),
        ("/v1/items/%252e%252e%252f/audio", "%2e%2e%2f"),
        ("/v1/items/%2Fetc%2Fpasswd/audio", "/etc/passwd"),
    ]:
        error = coded(*asgi(portal, app, target), codes=("E795",), statuses=(404,), what=target)
        assert repr(item_id) in error["message"], (target, error["message"])


def test_a_raw_absolute_url_and_a_very_long_id_are_refused(portal: Any, app: Any, client: TestClient) -> None:
    coded(*asgi(portal, app, "/v1/items/" + "x" * 100_000), codes=("E795",), statuses=(404,))
    coded(*asgi(portal, app, "/v1/items/" + "%2e%2e%2f" * 10_000 + "etc/passwd/audio"), codes=("E795",))
    error = coded(*reply(client.get("/v1/items/" + quote("ß∂ƒ©˙∆˚¬…æ", safe=""))), codes=("E795",))
    assert "ß∂ƒ©˙∆˚¬…æ" in error["message"]  # unicode ids are read as sent
    # a message quotes a long path cut to 200 characters, never the whole of it
    error = coded(*asgi(portal, app, "/nope/" + "y" * 50_000), codes=("E798",))
    assert len(error["message"]) < 2_000


# --- links and odd files the index registers ---------------------------------------------------------

REFUSED = {  # item id -> (status, the reason E797 gives)
    "secret_link": (403, "outside the indexed folders"),
    "abs_link": (403, "outside the indexed folders"),
    "dir_link": (403, "outside the indexed folders"),
    "inner_dir_link": (403, "not a regular file"),
    "fifo": (403, "not a regular file"),
    "notes_link": (403, "not an audio type"),
    "missing": (404, "does not exist"),
    "loop": (404, "does not exist"),
}


@pytest.mark.parametrize("item_id", list(REFUSED))
@pytest.mark.parametrize("range_header", [None, "bytes=0-99", "bytes=-10"])
def test_links_and_odd_files_the_index_registers_are_refused(
    item_id: str,
    range_header: str | None,
    portal: Any,
    app: Any,
) -> None:
    status, reason = REFUSED[item_id]
    headers = [("range", range_header)] if range_header else []
    error = coded(
        *asgi(portal, app, f"/v1/items/{item_id}/audio", headers=headers),
        codes=("E797",),
        statuses=(status,),
        what=item_id,
    )
    assert reason in error["message"], error["message"]
    item = asgi(portal, app, f"/v1/items/{item_id}")  # the item itself answers, without the file
    assert item[0] == 200 and MARKER.encode() not in item[2]


def test_clean_files_are_served_whole_and_by_range(portal: Any, app: Any, layout: dict[str, Path]) -> None:
    for item_id, path in [
        ("c0", layout["audio"] / "c0.wav"),
        ("clips%2Frain%201.wav", layout["audio"] / "clips" / "rain 1.wav"),
    ]:
        data = path.read_bytes()
        status, headers, body = asgi(portal, app, f"/v1/items/{item_id}/audio")
        assert (status, headers["content-type"], body) == (200, "audio/wav", data), item_id
        status, headers, body = asgi(
            portal, app, f"/v1/items/{item_id}/audio", headers=[("range", "bytes=0-43")]
        )
        assert (status, body) == (206, data[:44]), item_id


def test_an_item_without_audio_and_hostile_range_headers_are_coded(portal: Any, app: Any) -> None:
    coded(*asgi(portal, app, "/v1/items/captions_only/audio"), codes=("E796",), statuses=(404,))
    for value, status in [
        ("bytes=9-1", 400),
        ("bytes=abc", 400),
        ("items=0-1", 400),
        ("bytes=", 400),
        ("bytes=99999999-", 416),
        ("bytes=-0", 416),
        ("bytes=\x00-1", 400),
    ]:
        coded(
            *asgi(portal, app, "/v1/items/c0/audio", headers=[("range", value)]),
            codes=("E792",),
            statuses=(status,),
            what=f"Range: {value!r}",
        )


def test_a_file_swapped_for_a_link_after_the_start_is_refused(
    portal: Any,
    app: Any,
    layout: dict[str, Path],
) -> None:
    swapped = layout["audio"] / "swapped.wav"
    assert asgi(portal, app, "/v1/items/swapped/audio")[0] == 200
    kept = swapped.read_bytes()
    swapped.unlink()
    os.symlink(layout["secret"], swapped)
    try:  # every request checks the file again: the link is refused
        coded(*asgi(portal, app, "/v1/items/swapped/audio"), codes=("E797",), statuses=(403,))
    finally:
        swapped.unlink()
        swapped.write_bytes(kept)


def test_audio_roots_name_the_folders_files_may_come_from(
    service: SearchService,
    layout: dict[str, Path],
    tmp_path: Path,
    portal: Any,
) -> None:
    audio, secret = layout["audio"], layout["secret"]
    ids = ["plain", "up", "absolute", "link", "nested"]
    paths = ["c0.wav", "../outside/secret.wav", str(secret), "secret_link.wav", "clips/rain 1.wav"]
    files = AudioFiles(ids, paths, base=audio, roots=[audio])  # relative paths read from the first root
    assert files.resolve("plain") == (audio / "c0.wav").resolve()
    assert files.resolve("nested") == (audio / "clips" / "rain 1.wav").resolve()
    for item_id in ("up", "absolute", "link"):
        with pytest.raises(ServeError, match=r"\[E797\].*outside the indexed folders") as refused:
            files.resolve(item_id)
        assert refused.value.status == 403
    alias = tmp_path / "alias"
    os.symlink(audio, alias)  # a root given through a link is its real folder
    assert (
        AudioFiles(["plain"], ["c0.wav"], base=alias, roots=[alias]).resolve("plain")
        == (audio / "c0.wav").resolve()
    )
    # the default roots are the registered files' folders: a file up from them is outside
    assert set(
        AudioFiles(["a", "b"], [str(audio / "c0.wav"), str(audio / "clips" / "rain 1.wav")]).roots
    ) == {audio.resolve(), (audio / "clips").resolve()}
    # --audio-root naming another folder: the index's own files are outside it now
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    narrowed = create_app(SearchService(service.retriever, limits=LIMITS, audio_roots=[elsewhere]))
    for item_id in ("c0", "secret_link", "notes_link"):
        error = coded(*asgi(portal, narrowed, f"/v1/items/{item_id}/audio"), codes=("E797",), statuses=(403,))
        assert "(elsewhere)" in error["message"]  # the folder by its name: no path in an answer
        assert str(elsewhere.resolve()) not in error["message"]


# --- 2. fuzz: item ids and paths --------------------------------------------------------------------

ID_TEXT = st.text(
    st.one_of(st.characters(exclude_categories=("Cs",)), st.sampled_from(list("/.%\\\x00?#~:;"))), max_size=40
)


@settings(max_examples=150, **SETTINGS)  # type: ignore[arg-type]
@given(item_id=ID_TEXT, safe=st.sampled_from(["", "/", "/.", "/.%", "/.%\\~:;"]), audio=st.booleans())
@example(item_id="../outside/secret.wav", safe="/.", audio=True)
@example(item_id="secret_link", safe="", audio=True)
@example(item_id="c0/../secret_link", safe="/.", audio=True)
@example(item_id="%2e%2e/notes.txt", safe="/.%", audio=True)
@example(item_id="c0\x00", safe="", audio=True)
def test_fuzz_item_ids_never_5xx_and_never_a_file_outside(
    item_id: str,
    safe: str,
    audio: bool,
    portal: Any,
    app: Any,
    layout: dict[str, Path],
) -> None:
    target = "/v1/items/" + quote(item_id, safe=safe) + ("/audio" if audio else "")
    status, headers, body = asgi(portal, app, target)
    assert MARKER.encode() not in body, f"the secret file was served for {target!r}"
    if status == 200:  # only a registered clean file, or an item's JSON
        if headers["content-type"].startswith("audio/"):
            assert body in clean_files(layout), target
        else:
            assert json.loads(body)["id"] in CAPTIONS, target
        return
    coded(status, headers, body, codes=("E795", "E796", "E797", "E798"), what=target)


# --- 3. hostile search bodies -------------------------------------------------------------------------

BAD_BODIES: list[tuple[str, bytes, int, str]] = [  # (name, body, status, code)
    ("open brace", b"{", 400, "E791"),
    ("trailing comma", b'{"query": "rain",}', 400, "E791"),
    ("single quotes", b"{'query': 'rain'}", 400, "E791"),
    ("unclosed", b'{"query": "rain"', 400, "E791"),
    ("two objects", b'{"query": "rain"}{"query": "rain"}', 400, "E791"),
    ("NUL", b"\x00", 400, "E791"),
    ("not UTF-8", b"\xff\xfd\xfe", 400, "E791"),
    ("UTF-16 object", b"\xff\xfe{\x00}\x00", 422, "E792"),
    ("lone byte", b'{"query": "\xc3"}', 400, "E791"),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000, 400, "E791"),
    ("deep object", b'{"a":' * 30_000 + b"1" + b"}" * 30_000, 400, "E791"),
    ("list", b"[]", 400, "E791"),
    ("list of one", b'[{"query": "rain"}]', 400, "E791"),
    ("number", b"3", 400, "E791"),
    ("string", b'"rain"', 400, "E791"),
    ("null", b"null", 400, "E791"),
    ("true", b"true", 400, "E791"),
    ("unknown field", b'{"query": "rain", "limit": 3}', 422, "E792"),
    ("field case", b'{"query": "rain", "K": 3}', 422, "E792"),
    ("__proto__", b'{"query": "rain", "__proto__": {"k": 1}}', 422, "E792"),
    ("k string", b'{"query": "rain", "k": "3"}', 422, "E792"),
    ("k fraction", b'{"query": "rain", "k": 3.5}', 422, "E792"),
    ("k bool", b'{"query": "rain", "k": true}', 422, "E792"),
    ("k huge", b'{"query": "rain", "k": 1000000000000000000000000000000}', 422, "E792"),
    ("k negative", b'{"query": "rain", "k": -1}', 422, "E792"),
    ("k zero", b'{"query": "rain", "k": 0}', 422, "E792"),
    ("k past max_k", b'{"query": "rain", "k": 51}', 422, "E792"),
    ("k null", b'{"query": "rain", "k": null}', 422, "E792"),
    ("k NaN", b'{"query": "rain", "k": NaN}', 422, "E792"),
    ("k Infinity", b'{"query": "rain", "k": Infinity}', 422, "E792"),
    ("k 1e400", b'{"query": "rain", "k": 1e400}', 422, "E792"),
    ("query number", b'{"query": 3}', 422, "E792"),
    ("query list", b'{"query": ["rain"]}', 422, "E792"),
    ("query object", b'{"query": {"text": "rain"}}', 422, "E792"),
    ("query null", b'{"query": null}', 422, "E792"),
    ("queries string", b'{"queries": "rain"}', 422, "E792"),
    ("queries numbers", b'{"queries": [1]}', 422, "E792"),
    ("queries null item", b'{"queries": [null]}', 422, "E792"),
    ("queries nested", b'{"queries": [["rain"]]}', 422, "E792"),
    ("explain string", b'{"query": "rain", "explain": "yes"}', 422, "E792"),
    ("stage1 unknown", b'{"query": "rain", "stage1": "sometimes"}', 422, "E792"),
    ("stage1 null", b'{"query": "rain", "stage1": null}', 422, "E792"),
    ("stage3 surrogate", b'{"query": "rain", "stage3": "\\ud800"}', 422, "E792"),
    ("field surrogate", b'{"query": "rain", "\\ud800": 1}', 422, "E792"),
    ("both", b'{"query": "rain", "queries": ["dog"]}', 422, "E792"),
    ("neither", b"{}", 422, "E792"),
    ("only k", b'{"k": 3}', 422, "E792"),
    ("batch past max_batch", json.dumps({"queries": ["rain"] * 5}).encode(), 422, "E794"),
    ("batch of 10000", json.dumps({"queries": ["r"] * 10_000}).encode(), 422, "E794"),
    ("only an emoji", json.dumps({"query": "\U0001f600"}).encode(), 422, "E792"),
    ("batch query past its bound", json.dumps({"queries": ["r" * 5_000]}).encode(), 422, "E792"),
    ("empty query", b'{"query": ""}', 422, "E300"),
    ("whitespace", b'{"query": " \\t\\n "}', 422, "E300"),
    ("NUL query", b'{"query": "\\u0000"}', 422, "E300"),
    ("zero widths", b'{"query": "\\u200b\\u200b"}', 422, "E300"),
    ("only a surrogate", b'{"query": "\\udfff"}', 422, "E300"),
    ("100 kB + 1", json.dumps({"query": "r" * 100_001}).encode(), 422, "E792"),  # past the schema's bound
    ("lone surrogate", b'{"query": "\\ud800 rain on a roof"}', 422, "E671"),
    ("lone surrogate in a batch", b'{"queries": ["rain", "dog \\udc00"]}', 422, "E671"),
    ("past max_body_bytes", json.dumps({"query": "rain " * 50_000}).encode(), 413, "E793"),
]


@pytest.mark.parametrize(("name", "body", "status", "code"), BAD_BODIES, ids=[case[0] for case in BAD_BODIES])
def test_hostile_search_bodies_are_coded_4xx(
    name: str, body: bytes, status: int, code: str, client: TestClient
) -> None:
    error = coded(
        *reply(client.post("/v1/search", content=body, headers=JSON)),
        codes=(code,),
        statuses=(status,),
        what=name,
    )
    if name.startswith("lone surrogate"):
        assert "lone surrogate" in error["message"], error


def test_a_chunked_body_past_the_limit_is_e793(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(30):  # 30 x 10 kB, past 200 kB, with no Content-Length
            yield b"r" * 10_000
        yield b'"}'

    coded(*reply(client.post("/v1/search", content=chunks(), headers=JSON)), codes=("E793",), statuses=(413,))


@pytest.mark.parametrize(
    ("length", "status", "code"),
    [
        ("abc", 400, "E791"),
        ("-5", 400, "E791"),
        ("99999999999999999999", 413, "E793"),
        (str(LIMITS.max_body_bytes + 1), 413, "E793"),
    ],
)
def test_a_content_length_that_is_wrong_is_coded(
    length: str,
    status: int,
    code: str,
    portal: Any,
    app: Any,
) -> None:
    answer = asgi(
        portal,
        app,
        "/v1/search",
        method="POST",
        body=b'{"query": "rain"}',
        headers=[("content-type", "application/json"), ("content-length", length)],
    )
    coded(*answer, codes=(code,), statuses=(status,))


HOSTILE_TEXT = [
    "<script>alert(1)</script>",
    "\u202erain on a roof\u202c",
    "\u200f\u202bdog\u202a barks",
    "🌧️ rain 🐕 dog",
    "rain\x07\x1b[31m dog",
    "rain\x00dog",
    "' OR 1=1 --",
    "{{7*7}} ${7*7}",
    "%s%n%x",
    "../../etc/passwd",
    "r" * 16_000,  # about the longest query the schema allows with a 200 kB body (text_bounds)
    "a dog " * 2_000,
    "\ufeffrain",
    "\U0010ffff rain",
]


def test_hostile_query_text_is_answered_and_echoed_as_json(client: TestClient) -> None:
    for text in HOSTILE_TEXT:
        answer = client.post("/v1/search", json={"query": text, "k": 2, "explain": True})
        assert answer.status_code == 200, (text[:60], answer.text[:400])
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.json()["results"][0]["query"] == text  # JSON, never a page: nothing to escape
    batch = client.post("/v1/search", json={"queries": HOSTILE_TEXT[:4], "k": 1})
    assert batch.status_code == 200 and len(batch.json()["results"]) == 4


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
QUERY_TEXT = st.lists(
    st.one_of(st.text(max_size=12), st.sampled_from(["\ud800", "\udfff", "\x00", "\u202e", " "])), max_size=4
).map("".join)
FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "query": st.one_of(QUERY_TEXT, JSON_VALUES),
        "queries": st.one_of(st.lists(QUERY_TEXT, max_size=6), JSON_VALUES),
        "k": st.one_of(st.integers(-5, 60), JSON_VALUES),
        "stage1": st.sampled_from(["auto", "off", "online", "on", ""]),
        "formula_scoring": st.sampled_from(["auto", "on", "off", None]),
        "stage3": st.sampled_from(["auto", "off", 1]),
        "explain": st.one_of(st.booleans(), JSON_VALUES),
        "extra": JSON_VALUES,
    },
)


@settings(max_examples=120, **SETTINGS)  # type: ignore[arg-type]
@given(value=st.one_of(JSON_VALUES, FIELDS))
def test_fuzz_any_json_body_is_answered_or_a_coded_4xx(value: Any, client: TestClient) -> None:
    body = json.dumps(value).encode()  # \\u escapes: lone surrogates reach the app as JSON sends them
    answer = client.post("/v1/search", content=body, headers=JSON)
    if answer.status_code == 200:
        assert "results" in answer.json()
        return
    coded(*reply(answer), what=body[:200].decode("ascii", "replace"))


# --- 5. methods, unknown routes, the Stage 1 tree, the eval routes ---------------------------------------


def test_wrong_methods_are_e799_and_unknown_routes_e798(portal: Any, app: Any) -> None:
    for method, target in [
        ("GET", "/v1/search"),
        ("PUT", "/v1/search"),
        ("DELETE", "/v1/search"),
        ("PATCH", "/v1/search"),
        ("POST", "/v1/items/c0"),
        ("DELETE", "/v1/items/c0/audio"),
        ("POST", "/v1/health"),
        ("PUT", "/static/app.js"),
        ("POST", "/"),
        ("TRACE", "/v1/info"),
        ("OPTIONS", "/v1/search"),
    ]:
        error = coded(
            *asgi(portal, app, target, method=method),
            codes=("E799",),
            statuses=(405,),
            what=f"{method} {target}",
        )
        assert method in error["message"]
    for target in [
        "/v1/nope",
        "/v2/search",
        "/v1",
        "/v1/items",
        "/v1/eval/queries/q1/extra",
        "/static/",
        "/static/.env",
        "/static/app.js/x",
        "/.git/config",
        "/index.html",
        "/favicon.ico",
    ]:
        coded(*asgi(portal, app, target), codes=("E798",), statuses=(404,), what=target)


def test_the_stage1_tree_query_string_is_checked(portal: Any, app: Any) -> None:
    coded(*asgi(portal, app, "/v1/stage1/tree"), codes=("E792",), statuses=(422,))
    for query in ["", "%20%20", "%00", "%E2%80%8B"]:
        coded(
            *asgi(portal, app, f"/v1/stage1/tree?query={query}"), codes=("E300",), statuses=(422,), what=query
        )
    coded(*asgi(portal, app, "/v1/stage1/tree?query=" + "r" * 100_001), codes=("E792",), statuses=(422,))
    status, headers, body = asgi(portal, app, "/v1/stage1/tree?query=%ED%A0%80%3Cscript%3E%2e%2e%2f")
    assert status == 200 and headers["content-type"].startswith("text/plain"), body[:300]


def test_eval_routes_with_unknown_systems_and_queries(portal: Any, app: Any) -> None:
    if EVAL_MISSING:
        pytest.skip(EVAL_MISSING)
    assert asgi(portal, app, "/v1/eval")[0] == 200
    assert asgi(portal, app, "/v1/eval/queries/q1?system=formula")[0] == 200
    for target, status, code in [
        ("/v1/eval/queries?system=nope", 404, "E802"),
        ("/v1/eval/queries?system=formula&baseline=nope", 404, "E802"),
        ("/v1/eval/queries", 422, "E792"),
        ("/v1/eval/queries?system=" + "s" * 201, 422, "E792"),
        ("/v1/eval/queries/q1", 422, "E792"),
        ("/v1/eval/queries/nope?system=formula", 404, "E808"),
        ("/v1/eval/queries/q1?system=..%2F..%2Fconfig", 404, "E802"),
        ("/v1/eval/queries/%2e%2e?system=formula", 404, "E808"),
        ("/v1/eval/queries/q1%00?system=formula", 404, "E808"),
        ("/v1/eval/queries/" + "q" * 10_000 + "?system=formula", 404, "E808"),
    ]:
        coded(*asgi(portal, app, target), codes=(code,), statuses=(status,), what=target[:100])


def test_hostile_paths_write_no_lines_of_their_own_in_the_log(
    portal: Any, app: Any, caplog: pytest.LogCaptureFixture
) -> None:
    injected = "%0ATraceback%20(most%20recent%20call%20last):%0D%0A%20%20File%20%22x%22%1B[31m"
    for target in [
        f"/v1/items/a{injected}",
        f"/v1/items/a{injected}/audio",
        f"/nope{injected}",
        f"/static/x{injected}",
        "/v1/items/" + "%E2%80%AE" * 3 + "x",
    ]:
        coded(*asgi(portal, app, target), codes=("E795", "E798"), what=target)
    # refused before routing, by its Content-Length: the path as the server decoded it
    coded(
        *asgi(portal, app, f"/v1/search{injected}", method="POST", headers=[("content-length", "999999999")]),
        codes=("E793",),
        statuses=(413,),
    )
    lines = [record.getMessage() for record in caplog.records if record.name == "fortekit.serve"]
    assert len(lines) == 6, lines
    assert not any(char in line for line in lines for char in "\x1b\u202e\x00"), lines
    # the quiet_log fixture checks that no record holds a line break or starts a traceback


def test_trailing_slashes_are_no_redirects(portal: Any, app: Any) -> None:
    """No 307 built from the Host header: a path that is no route is E798 (a foreign Host, E809)."""
    for target in ["/v1/health/", "/static/../", "/v1/info/", "/v1/eval/"]:
        for host, code, status in (("localhost:1", "E798", 404), ("evil.example", "E809", 403)):
            answer, headers, body = asgi(portal, app, target, headers=[("host", host)])
            assert "location" not in headers, (target, headers)
            coded(answer, headers, body, codes=(code,), statuses=(status,), what=target)


# --- 6. the security headers, on pages, files, answers and errors ----------------------------------------


def _secure(headers: dict[str, str], what: str) -> None:
    policy = headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "unsafe-eval" not in policy, (
        what,
        policy,
    )
    assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy, (what, policy)
    assert headers.get("x-content-type-options") == "nosniff", what


def test_security_headers_on_pages_answers_and_errors(
    portal: Any,
    app: Any,
    service: SearchService,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    for method, target, body in [
        ("GET", "/", b""),
        ("GET", "/eval", b""),
        ("GET", "/static/app.js", b""),
        ("GET", "/static/style.css", b""),
        ("GET", "/v1/health", b""),
        ("GET", "/v1/items/c0", b""),
        ("GET", "/v1/items/c0/audio", b""),
        ("GET", "/v1/nope", b""),
        ("GET", "/static/../x", b""),
        ("PUT", "/v1/search", b""),
        ("POST", "/v1/search", b"{"),
        ("POST", "/v1/search", b'{"query": "rain", "k": 0}'),
        ("GET", "/v1/items/secret_link/audio", b""),
    ]:
        status, headers, _ = asgi(portal, app, target, method=method, body=body, headers=list(JSON.items()))
        _secure(headers, f"{method} {target} -> {status}")
    status, headers, _ = asgi(
        portal, app, "/v1/search", method="POST", body=b"{}", headers=[("content-length", "999999999")]
    )
    assert status == 413
    _secure(headers, "413 by Content-Length")

    def broken(item_id: str) -> dict[str, Any]:
        raise RuntimeError(f"simulated bug near {MARKER}")

    monkeypatch.setattr(service, "item", broken)
    status, headers, body = asgi(
        portal, app, "/v1/items/c0"
    )  # the app answers; nothing escapes to the server
    assert status == 500 and json.loads(body)["error"]["code"] == "E805", body
    assert MARKER.encode() not in body and b"Traceback" not in body
    _secure(headers, "500")
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(errors) == 1 and not errors[0].exc_info and "RuntimeError" in errors[0].getMessage()
    request_id = re.search(r"request id (\w+)", json.loads(body)["error"]["message"])
    assert request_id and request_id.group(1) in errors[0].getMessage()
    caplog.clear()  # the one ERROR line is this test's own


# --- 7. a real server on the loopback ------------------------------------------------------------------


class Server:
    """A ``fortekit serve`` subprocess, its stdout and stderr read as they come."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fortekit", "serve", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        for stream, sink in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, sink), daemon=True).start()

    def _read(self, stream: Any, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)
            self._lines.put(line)

    def url(self, timeout: float = 240) -> tuple[str, int]:
        """The host and port of the printed URL (fails with the output when the server stopped)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            found = re.search(r"fortekit serve: http://(\[[^\]]+\]|[^:/]+):(\d+)/", line)
            if found:
                return found.group(1), int(found.group(2))
        self.stop()
        raise AssertionError(
            f"no URL printed; exit {self.process.poll()}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"
        )

    @property
    def stdout(self) -> str:
        return "".join(self.out)

    @property
    def stderr(self) -> str:
        return "".join(self.err)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _listening_address(port: int) -> str | None:
    """The local address /proc/net/tcp lists as listening on ``port`` (hex, as the kernel writes it)."""
    table = Path("/proc/net/tcp")
    if not table.exists():
        return None
    for line in table.read_text().splitlines()[1:]:
        fields = line.split()
        address, hex_port = fields[1].split(":")
        if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
            return address
    return None


def _http(
    port: int, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def _raw(port: int, request: bytes, *, read: bool = True) -> bytes:
    """Send bytes as they are (a request line httpx would normalise) and read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        if not read:
            return b""
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:  # the server closed with our bytes unread: what came is kept
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def _ranking(answer: dict[str, Any]) -> list[tuple[str, float]]:
    """A search's hits as (id, score): batched with others, a score may move in its last digit."""
    return [(hit["id"], hit["score"]) for hit in answer["results"][0]["hits"]]


def _split(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


@pytest.fixture(scope="module")
def server(hostile_index: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, int]]:
    running = Server(
        "--index",
        str(hostile_index),
        "--port",
        "0",
        "--device",
        "cpu",
        "--max-body-bytes",
        "65536",
        "--max-batch",
        "8",
        cwd=tmp_path_factory.mktemp("serve_cwd"),
    )
    try:
        host, port = running.url()
        assert host == "127.0.0.1", running.stdout
        yield running, port
    finally:
        running.stop()


def test_the_server_listens_on_the_loopback_by_default(server: tuple[Server, int]) -> None:
    running, port = server
    assert "W870" not in running.stderr, running.stderr
    address = _listening_address(port)
    assert address in (None, "0100007F"), f"listening on {address}, not 127.0.0.1"
    assert _http(port, "GET", "/v1/health")[0] == 200


def test_the_real_server_refuses_hostile_requests_without_a_traceback(
    server: tuple[Server, int],
    layout: dict[str, Path],
) -> None:
    running, port = server
    seen = len(running.err)  # this test's lines of the server's stderr only
    for target, codes in [
        (b"/v1/items/../../../../etc/passwd", ("E795",)),
        (b"/v1/items/../../outside/secret.wav/audio", ("E795",)),
        (b"/v1/items/..%2F..%2Foutside%2Fsecret.wav/audio", ("E795",)),
        (b"/v1/items/%2e%2e%2f%2e%2e%2fetc%2fpasswd/audio", ("E795",)),
        (b"/v1/items/secret_link/audio", ("E797",)),
        (b"/v1/items/fifo/audio", ("E797",)),
        (b"/static/../../../../etc/passwd", ("E798",)),
        (b"/static/..%2F..%2Fapp.py", ("E798",)),
        (b"/v1/items/" + quote(str(layout["secret"]), safe="").encode() + b"/audio", ("E795",)),
        (b"/v1/items/c0%00/audio", ("E795",)),
        (b"/../../etc/passwd", ("E798",)),
    ]:
        status, headers, body = _split(
            _raw(port, b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        )
        coded(status, headers, body, codes=codes, what=target.decode())
    for body, status, code in [
        (b'{"query": "\\ud800 rain"}', 422, "E671"),
        (b"{", 400, "E791"),
        (b'{"query": "rain", "k": 0}', 422, "E792"),
    ]:
        answer = _http(port, "POST", "/v1/search", body, JSON)
        assert answer[0] == status and json.loads(answer[1])["error"]["code"] == code, answer
    chunked = b"".join(b"%x\r\n%s\r\n" % (8192, b"r" * 8192) for _ in range(10)) + b"0\r\n\r\n"
    status, headers, body = _split(
        _raw(
            port,
            b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            b"application/json\r\nTransfer-Encoding: chunked\r\nConnection: close"
            b"\r\n\r\n" + chunked,
        )
    )
    coded(status, headers, body, codes=("E793",), statuses=(413,))
    status, headers, body = _split(
        _raw(
            port,
            b"GET /v1/items/c0/audio HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: "
            b"bytes=9-1\r\nConnection: close\r\n\r\n",
        )
    )
    coded(status, headers, body, codes=("E792",), statuses=(400,))
    # a Content-Length that says less than is sent: the rest is a bad next request, answered by uvicorn
    _raw(
        port,
        b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 5\r\n\r\n" + b'{"query": "rain"}' + b"\x00garbage\r\n\r\n",
    )
    time.sleep(0.5)
    assert running.process.poll() is None, running.stderr
    assert _http(port, "GET", "/v1/health")[0] == 200
    stderr = "".join(running.err[seen:])
    assert not TRACEBACK.search(stderr) and "ERROR" not in stderr, stderr[-4000:]


def test_clients_that_disconnect_do_not_disturb_the_others(server: tuple[Server, int]) -> None:
    running, port = server
    seen = len(running.err)  # this test's lines of the server's stderr only
    queries = ["a dog barks", "rain on a tin roof", "birds in the morning"]

    def search(query: str) -> dict[str, Any]:
        status, body = _http(port, "POST", "/v1/search", json.dumps({"query": query, "k": 5}).encode(), JSON)
        assert status == 200, body[:300]
        answer = json.loads(body)
        return {"results": answer["results"], "pipeline": answer["pipeline"]}

    expected = {query: _ranking(search(query)) for query in queries}  # each alone, first

    def half_body() -> None:
        _raw(
            port,
            b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 400\r\n\r\n{"query": "ra',
            read=False,
        )

    def gone_before_the_answer(reset: bool) -> None:
        body = json.dumps({"queries": ["a dog barks loudly"] * 8, "k": 20, "explain": True}).encode()
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        if reset:  # close with a RST, not a FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.sendall(
            b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        sock.close()

    def slow_headers() -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            time.sleep(0.3)

    failures: list[str] = []
    answers: list[tuple[str, dict[str, Any]]] = []

    def well_behaved(query: str) -> None:
        try:
            for _ in range(3):
                answers.append((query, search(query)))
        except Exception as error:
            failures.append(f"{query}: {type(error).__name__}: {error}")

    for _ in range(2):  # two rounds, each bounded by the joins' timeouts
        threads = [threading.Thread(target=well_behaved, args=(query,)) for query in queries]
        threads += [
            threading.Thread(target=half_body),
            threading.Thread(target=gone_before_the_answer, args=(False,)),
            threading.Thread(target=gone_before_the_answer, args=(True,)),
            threading.Thread(target=slow_headers),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not any(thread.is_alive() for thread in threads), "a client hung"
    assert not failures, failures
    assert len(answers) == 18
    for query, answer in answers:
        got = _ranking(answer)
        assert [hit for hit, _ in got] == [hit for hit, _ in expected[query]], (query, got, expected[query])
        assert all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(got, expected[query], strict=True)), query
        assert answer["pipeline"] == search(query)["pipeline"]
    time.sleep(0.5)
    assert running.process.poll() is None, running.stderr
    stderr = "".join(running.err[seen:])
    assert not TRACEBACK.search(stderr) and "ERROR" not in stderr, stderr[-4000:]


def test_another_host_is_said_aloud(run_dir: Path, tmp_path: Path) -> None:
    if EVAL_MISSING:
        pytest.skip(EVAL_MISSING)
    running = Server("--eval", str(run_dir), "--host", "0.0.0.0", "--port", "0", cwd=tmp_path)
    try:
        host, port = running.url(120)
        assert host == "0.0.0.0"
        # the warning is written before the address, but stderr has its own reader thread
        deadline = time.monotonic() + 10
        while "[W870]" not in running.stderr and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "[W870]" in running.stderr and f"0.0.0.0:{port}" in running.stderr, running.stderr
        assert _listening_address(port) in (None, "00000000")
        assert _http(port, "GET", "/v1/health")[0] == 200  # through the loopback only
    finally:
        running.stop()


def test_a_port_in_use_and_nothing_to_serve_are_coded_exits(hostile_index: Path, tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        taken = Server("--index", str(hostile_index), "--port", str(port), "--device", "cpu", cwd=tmp_path)
        nothing = Server("--port", "0", cwd=tmp_path)
        try:
            for running, code in ((taken, "[E804]"), (nothing, "[E803]")):
                status = running.process.wait(timeout=120)
                time.sleep(0.2)  # the readers catch the last lines
                assert status == 2 and code in running.stderr, (status, running.stderr)
                assert not TRACEBACK.search(running.stderr) and "http://" not in running.stdout
        finally:
            taken.stop()
            nothing.stop()
