"""``fortekit serve --workers N``: processes forked on one socket, supervised by the command
(fortekit.search.serve.workers), over an index of real Clotho development captions."""

from __future__ import annotations

import csv
import http.client
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="--workers forks processes (POSIX only)")

from conftest import SHARED_DATA, require  # noqa: E402
from serve_fixtures import Server  # noqa: E402

from fortekit.search.serve.workers import fork_supported, run_workers  # noqa: E402

CLOTHO_DEV = SHARED_DATA / "clotho" / "clotho_captions_development.csv"


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found.extend(int(child) for child in task.read_text().split())
    return found


def _wait_for_children(pid: int, count: int, timeout: float = 60) -> list[int]:
    """The process's children once there are ``count`` (the URL is printed before the fork)."""
    deadline = time.monotonic() + timeout
    while len(_children(pid)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    found = _children(pid)
    assert len(found) == count, found
    return found


def _post(port: int, body: Any) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("POST", "/v1/search", body=json.dumps(body).encode(),
                           headers={"content-type": "application/json"})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        connection.close()


@pytest.fixture(scope="module")
def captions() -> list[str]:
    with require(CLOTHO_DEV).open(encoding="utf-8", newline="") as handle:
        return [row["caption_1"] for row in list(csv.DictReader(handle))[:40]]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory, captions: list[str], minilm: Any) -> Path:
    from fortekit.search.index.audio_index import AudioIndex

    folder = tmp_path_factory.mktemp("serve_workers") / "clotho.index"
    AudioIndex.from_captions([f"clip{i}" for i in range(len(captions))], captions, minilm).save(folder)
    return folder


def test_two_workers_answer_on_one_port_and_stop_cleanly(index_dir: Path, captions: list[str]) -> None:
    running = Server("--index", str(index_dir), "--port", "0", "--device", "cpu", "--stage1", "off",
                     "--workers", "2", "--log-level", "warning", cwd=index_dir.parent)
    try:
        port = running.port()
        workers = _wait_for_children(running.process.pid, 2)
        # both load, then both answer: the same query gets the same ranking from either
        rankings = set()
        for _ in range(8):
            status, body = _post(port, {"query": captions[3], "k": 5})
            assert status == 200, body
            rankings.add(tuple(hit["id"] for hit in body["results"][0]["hits"]))
        assert len(rankings) == 1 and "clip3" in next(iter(rankings))
    finally:
        code = running.stop()
    assert code == 0, "".join(running.err)[-3000:]
    assert all(not Path(f"/proc/{pid}").exists() or
               "zombie" in Path(f"/proc/{pid}/status").read_text().lower() for pid in workers)


@pytest.mark.parametrize("value", ["0", "-1", "100000"])
def test_a_bad_worker_count_is_a_coded_error(index_dir: Path, value: str) -> None:
    command = [sys.executable, "-m", "fortekit", "serve", "--index", str(index_dir), "--port", "0",
               "--workers", value]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "E807" in done.stderr and "Traceback" not in done.stderr


def test_fork_is_supported_here() -> None:
    assert fork_supported() and callable(run_workers)  # run_workers forks: run in subprocesses only


_SUPERVISOR = textwrap.dedent("""
    import os, sys, time
    from fortekit.search.serve.workers import run_workers

    mode = sys.argv[1]

    def serve_one():
        if mode == "exits":
            return 3
        while True:  # until the parent passes SIGTERM on (default action: the worker ends)
            time.sleep(0.05)

    print("started", flush=True)
    sys.exit(run_workers(2, serve_one))
""")


def test_a_worker_that_exits_on_its_own_stops_the_service_with_its_status() -> None:
    done = subprocess.run([sys.executable, "-c", _SUPERVISOR, "exits"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 3, done.stderr


def test_a_signal_to_the_supervisor_reaches_every_worker() -> None:
    process = subprocess.Popen([sys.executable, "-c", _SUPERVISOR, "waits"], stdout=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "started"
        _wait_for_children(process.pid, 2)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0  # asked to stop: a clean stop, whatever the workers' statuses
