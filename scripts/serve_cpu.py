"""Where the CPU of a ``fortekit serve`` request goes: the search itself against everything else.

Figures in docs/serve.md ("Load and latency"). A measurement script, not a test:

1. runs the real command, ``fortekit serve --index DIR --host 127.0.0.1 --port P --log-level
   warning`` (``fortekit.search.cli.main``), in this process, over the 1,000-item caption index
   of ``scripts/default_latency.py`` (built into ``--cache`` when missing);
2. once it answers ``/v1/health``, a client subprocess sends ``--warmup`` requests, then
   ``--requests`` single-query requests (distinct AudioCaps val captions, ``k`` 10) from
   ``--clients`` concurrent clients (``http.client``, one connection and one request in flight
   each), so the clients' CPU is not the server's;
3. around that load it reads the CPU time of every thread of this process
   (``/proc/self/task/*/schedstat``, nanoseconds) and of the whole process
   (``time.process_time``), and sums CPU time (``time.thread_time``) inside these calls:
   ``Retriever.search`` (the search itself: encoder, stages, ranking), ``SearchService.search_served``
   (the search with the request's checks and the micro-batcher's hand-off), the result
   dicts (``SearchService.public_result``) and the JSON encoding of the answer.

The search is ``Retriever.search``'s thread time plus the threads Python did not start (torch's
and the tokenizer's pools); everything else is the HTTP and JSON layer: the event loop's thread
(uvicorn's HTTP parsing, the middleware, FastAPI reading and validating the body, the hop to the
worker thread and back, sending) and the rest of the worker threads (the endpoint, the checks,
the batcher, building and encoding the answer). ``--profile N`` then sends N more requests with
cProfile on the event loop's thread and prints its top functions.

Every request goes to 127.0.0.1; every loop is bounded in count and time. The machine's load
average is printed with the figures: on a shared machine they are indicative, CPU time less so
than wall time.

Run::

    python scripts/serve_cpu.py                          # 1,000 items, 4 clients, 300 requests
    python scripts/serve_cpu.py --requests 300 --profile 150 --json runs/serve_cpu.json
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib.util
import io
import json
import os
import pstats
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: The client: CLIENTS threads, one keep-alive connection each, the queries (stdin, JSON) shared out.
CLIENT = r"""
import http.client, json, sys, threading, time
port, clients = int(sys.argv[1]), int(sys.argv[2])
queries = json.load(sys.stdin)
lock, answers = threading.Lock(), []
def run(mine):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    for text in mine:
        body = json.dumps({"query": text, "k": 10})
        tick = time.perf_counter()
        connection.request("POST", "/v1/search", body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        data = answer.read()
        took = json.loads(data).get("took_ms") if answer.status == 200 else None
        with lock:
            answers.append((answer.status, (time.perf_counter() - tick) * 1000, took, len(data)))
    connection.close()
threads = [threading.Thread(target=run, args=(queries[n::clients],)) for n in range(clients)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print(json.dumps(answers))
"""


def _default_latency() -> Any:
    spec = importlib.util.spec_from_file_location("default_latency", REPO / "scripts" / "default_latency.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Clocks:
    """CPU time (``time.thread_time``) summed inside named calls, on whichever thread runs them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ns: dict[str, int] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            tick = time.thread_time_ns()
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.thread_time_ns() - tick
                with self.lock:
                    self.ns[label] = self.ns.get(label, 0) + spent
                    self.calls[label] = self.calls.get(label, 0) + 1

        setattr(owner, name, timed)

    def reset(self) -> None:
        with self.lock:
            self.ns.clear()
            self.calls.clear()


def _instrument(clocks: Clocks, plain_json: bool) -> None:
    from starlette.responses import JSONResponse

    from fortekit.search.retriever import Retriever
    from fortekit.search.serve import service

    clocks.wrap(Retriever, "search", "search")
    clocks.wrap(service.SearchService, "search_served", "service")
    clocks.wrap(service.SearchService, "public_result", "result dicts")
    clocks.wrap(JSONResponse, "render", "JSON encoding")
    try:
        from fortekit.search.serve import json_body
    except ImportError:  # a checkout from before the answer was encoded by json_body
        return
    clocks.wrap(json_body, "json_bytes", "JSON encoding")
    if plain_json:  # json.dumps, as Starlette's JSONResponse encodes (the A/B of orjson)
        json_body._orjson_dumps = lambda: None


def _threads() -> dict[int, tuple[str, int]]:
    """Every thread of this process: tid -> (name, CPU nanoseconds)."""
    found = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            found[int(task.name)] = (name, int((task / "schedstat").read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _send(port: int, clients: int, queries: list[str], timeout: float) -> list[list[Any]]:
    done = subprocess.run([sys.executable, "-c", CLIENT, str(port), str(clients)], input=json.dumps(queries),
                          capture_output=True, text=True, timeout=timeout, check=True)
    answers: list[list[Any]] = json.loads(done.stdout)
    return answers


def _wait_for(port: int, deadline: float) -> None:
    import http.client

    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/v1/health")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError("the server did not answer /v1/health in time")


class Profiled:
    """The app, with cProfile switched on and off on the event loop's thread between requests."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.wanted = False
        self.profile = cProfile.Profile()
        self.on = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.wanted != self.on:
            (self.profile.enable if self.wanted else self.profile.disable)()
            self.on = self.wanted
        await self.app(scope, receive, send)


def _measure(args: argparse.Namespace, port: int, clocks: Clocks, profiled: list[Profiled],
             report: dict[str, Any]) -> None:
    try:
        _wait_for(port, time.monotonic() + args.max_seconds)
        latency = _default_latency()
        queries = latency._queries(args.warmup + args.requests + args.profile)
        warm, load = queries[:args.warmup], queries[args.warmup:args.warmup + args.requests]
        _send(port, args.clients, warm, args.max_seconds)
        main_tid, me = threading.main_thread().native_id, threading.get_native_id()
        workers = {thread.native_id for thread in threading.enumerate()
                   if thread.name.startswith("AnyIO worker thread")}
        report["load_average_start"] = [round(x, 2) for x in os.getloadavg()]
        clocks.reset()
        before, cpu0, wall0 = _threads(), time.process_time_ns(), time.perf_counter()
        answers = _send(port, args.clients, load, args.max_seconds)
        after, cpu1, wall1 = _threads(), time.process_time_ns(), time.perf_counter()
        report["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        python_threads = {thread.native_id: thread.name for thread in threading.enumerate()}
        workers |= {tid for tid, name in python_threads.items() if name.startswith("AnyIO worker thread")}
        spent = {tid: after[tid][1] - before.get(tid, ("", 0))[1] for tid in after}
        requests = len(answers)
        ok = sum(1 for status, *_ in answers if status == 200)

        def ms(ns: float) -> float:
            return round(ns / 1e6 / max(requests, 1), 3)

        loop = spent.get(main_tid, 0)
        worker = sum(spent[tid] for tid in spent if tid in workers)
        native = sum(value for tid, value in spent.items() if tid not in python_threads)
        other = sum(value for tid, value in spent.items()
                    if tid in python_threads and tid not in workers and tid not in (main_tid, me))
        total = cpu1 - cpu0
        search = clocks.ns.get("search", 0) + native
        service = clocks.ns.get("service", 0)
        report.update({
            "requests": requests, "ok": ok, "clients": args.clients,
            "wall_s": round(wall1 - wall0, 2), "requests_per_s": round(requests / (wall1 - wall0), 1),
            "latency_ms_p50": round(sorted(a[1] for a in answers)[requests // 2], 1),
            "took_ms_p50": round(sorted(a[2] for a in answers if a[2] is not None)[ok // 2], 1)
            if ok else None,
            "answer_bytes_mean": round(sum(a[3] for a in answers) / max(requests, 1)),
            "cpu_ms_per_request": {
                "total (process)": ms(total),
                "search (Retriever.search + torch/tokenizer threads)": ms(search),
                "everything else": ms(total - search),
                "  event loop thread (HTTP, middleware, body and validation, hand-off, sending)": ms(loop),
                "  worker threads less the search": ms(worker - clocks.ns.get("search", 0)),
                "    service call less the search (checks, variant, batcher)":
                    ms(service - clocks.ns.get("search", 0)),
                "    result dicts": ms(clocks.ns.get("result dicts", 0)),
                "    JSON encoding": ms(clocks.ns.get("JSON encoding", 0)),
                "  other Python threads": ms(other),
                "  not attributed (threads that ended, this script's thread)":
                    ms(total - loop - worker - native - other),
            },
            "calls": dict(clocks.calls),
        })
        if args.profile and profiled:
            profiled[0].wanted = True
            _send(port, args.clients, queries[args.warmup + args.requests:], args.max_seconds)
            profiled[0].wanted = False
            _send(port, 1, ["one more, to switch the profile off"], args.max_seconds)
            text = io.StringIO()
            stats = pstats.Stats(profiled[0].profile, stream=text)
            stats.sort_stats(args.profile_sort).print_stats(30)
            report["profile_event_loop"] = text.getvalue()
    except BaseException as error:  # reported; the server is stopped in every case
        report["error"] = f"{type(error).__name__}: {error}"
    finally:
        os.kill(os.getpid(), signal.SIGINT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=None, help="an index folder (default: the cached one)")
    parser.add_argument("--items", type=int, default=1000, help="items of the cached caption index")
    parser.add_argument("--cache", type=Path, default=REPO / "runs" / "latency")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="then N requests with cProfile on the event loop's thread")
    parser.add_argument("--profile-sort", default="tottime",
                        help="cProfile's order: tottime, cumulative, ...")
    parser.add_argument("--max-seconds", type=float, default=900)
    parser.add_argument("--plain-json", action="store_true",
                        help="encode answers with json.dumps even where orjson is installed")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("serve_args", nargs="*", help="more options of fortekit serve (after --)")
    args = parser.parse_args()

    index = args.index
    if index is None:
        index = args.cache / f"captions_{args.items}.index"
        if not (index / "index.json").is_file():
            _default_latency()._index(args.items, args.cache)
    clocks = Clocks()
    _instrument(clocks, args.plain_json)
    profiled: list[Profiled] = []
    if args.profile:
        from fortekit.search.cli import serve as serve_cli

        made = serve_cli._make_app

        def make_app(*given: Any, **options: Any) -> Any:
            app, service = made(*given, **options)
            profiled.append(Profiled(app))
            return profiled[0], service

        serve_cli._make_app = make_app  # type: ignore[assignment]
    port = _free_port()
    report: dict[str, Any] = {"index": os.fspath(index), "cpus": os.cpu_count(),
                              "json": "json.dumps" if args.plain_json or not _has("orjson") else "orjson"}
    watcher = threading.Thread(target=_measure, args=(args, port, clocks, profiled, report), daemon=True)
    watcher.start()
    from fortekit.search.cli import main as fortekit

    code = fortekit(["serve", "--index", os.fspath(index), "--host", "127.0.0.1", "--port", str(port),
                     "--log-level", "warning", *args.serve_args])
    watcher.join(timeout=30)
    profile = report.pop("profile_event_loop", None)
    print(json.dumps(report, indent=2))
    if profile:
        print(profile)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**report, "serve_exit": code}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
