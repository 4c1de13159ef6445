"""Load and latency of ``fortekit serve`` on the loopback, against Retriever.search and ``fortekit search``.

Figures in docs/serve.md. A bounded load generator, part of the benchmarks (not a test):

1. starts ``fortekit serve --index DIR --port 0 --host 127.0.0.1`` as a subprocess (log level
   warning: no access log), reads its address from its first lines and waits for /v1/health;
2. sends ``--warmup`` single-query requests (not measured), then ``--requests`` single-query
   requests from ``--clients`` concurrent clients (threads, one ``httpx.Client`` each, one
   request in flight per client), each a distinct caption of AudioCaps val (a development
   part), until all are answered or ``--max-seconds`` have passed. Reported: client-side
   latency (p50, p95, p99, mean), the server's own ``took_ms``, errors (any answer but 200, or
   no answer), requests per second, and the server's resident memory (VmRSS of its process)
   after the warm-up and after every 100 requests;
3. sends ``--batch-queries`` other captions as batches of ``--batch-size`` (``{"queries": [...]}``)
   from one client;
4. stops the server, then runs ``fortekit search --index DIR --queries FILE -o OUT --batch-size N``
   on the same batch queries (timed whole, as a user waits for it) and on a file of one query
   (its start-up: Python, the index, the models); the difference estimates its search time;
5. loads the same pipeline in this process, warms it with the warm-up queries of step 2, and
   times ``Retriever.search`` alone: the first ``--baseline`` queries of step 2 one at a time,
   and the batch queries in batches. (The server has seen the 1,000 requests before its batch
   phase: its text cache is warmer than this one's or than ``fortekit search``'s.)

``--torch-threads N`` sets torch's intra-op threads (OMP_NUM_THREADS) of the server, of
``fortekit search`` and of step 5; on a machine whose cores are all busy, 1 can be much faster
than torch's default of one thread per core.

Every request goes to 127.0.0.1; every loop is bounded in count and in time. The server is
stopped in every case (terminate, then kill). The client shares the CPU with the server, and on
a shared machine other jobs do too: the CPU count and load average are printed at the start and
the end, and the figures are indicative.

The index (default): the 100,000 caption-indexed items of ``scripts/default_latency.py``, built
by it into ``--cache`` when missing (minutes) and reused after.

Run::

    python scripts/serve_load.py                                   # 4 clients, 1,000 requests
    python scripts/serve_load.py --stage1 off --json runs/serve_load_s1off.json
    python scripts/serve_load.py --index clips.index --requests 200 --batch-queries 64
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
URL_LINE = re.compile(r"http://127\.0\.0\.1:(\d+)/")


def _default_latency() -> Any:
    """scripts/default_latency.py as a module: its index and its queries are this script's."""
    spec = importlib.util.spec_from_file_location("default_latency", REPO / "scripts" / "default_latency.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _index_dir(args: argparse.Namespace, latency: Any) -> Path:
    if args.index is not None:
        return Path(args.index)
    folder = args.cache / f"captions_{args.items}.index"
    if not (folder / "index.json").is_file():
        latency._index(args.items, args.cache)  # builds and saves it (minutes), as default_latency.py does
    if not args.ann:
        return folder
    with_ann = args.cache / f"captions_{args.items}_hnsw.index"
    if not (with_ann / "index.json").is_file():
        _add_ann_parts(folder, with_ann)
    return with_ann


def _add_ann_parts(folder: Path, out: Path) -> None:
    """The index of ``folder`` with the parts ``fortekit index build --ann hnsw`` gives it: an HNSW
    part over its rows (the first pass, Stage 1's caption neighbours) and one over the rows its
    default Stage 2 head projects (docs/scale.md), saved into ``out``."""
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.pipeline.assemble import default_head

    index = AudioIndex.load(folder)
    tick = time.perf_counter()
    index.build_faiss("hnsw")
    index.build_projected_ann(default_head(index))  # type: ignore[arg-type]
    index.save(out, overwrite=True)
    print(f"HNSW parts of {len(index)} items built in {time.perf_counter() - tick:.0f} s into {out}",
          flush=True)


def _environment(args: argparse.Namespace) -> dict[str, str]:
    """The environment of the server and of ``fortekit search``: torch's threads when chosen."""
    env = dict(os.environ)
    if args.torch_threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(args.torch_threads)
    return env


def _machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def _family(pid: int) -> list[int]:
    """The process and its descendants (``fortekit serve --workers N`` forks its workers)."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                stack.extend(int(child) for child in task.read_text().split())
            except (OSError, ValueError):
                continue
    return found


def _rss_mb(pid: int) -> float | None:
    """The resident memory (VmRSS) of a process and its workers, in MB; None when it cannot be read."""
    total = 0.0
    try:
        for member in _family(pid):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return total


def _cpu_s(pid: int) -> float | None:
    """The CPU seconds (user and system, every thread) a process and its workers have used; None
    when unreadable."""
    total = 0.0
    try:
        for member in _family(pid):
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return total


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]

    return {"p50": round(statistics.median(ordered), 1), "p95": round(at(0.95), 1),
            "p99": round(at(0.99), 1), "mean": round(statistics.fmean(ordered), 1),
            "max": round(ordered[-1], 1)}


# -- the server -------------------------------------------------------------------------------------
class Server:
    """``fortekit serve`` in a subprocess on 127.0.0.1, any free port; :meth:`stop` in every case."""

    def __init__(self, index: Path, stage1: str, device: str, log: Path, env: dict[str, str],
                 threads: str | None = None, workers: int = 1) -> None:
        self.command = [sys.executable, "-m", "fortekit", "serve", "--index", str(index), "--host", HOST,
                        "--port", "0", "--stage1", stage1, "--device", device, "--log-level", "warning"]
        if threads:
            self.command += ["--threads", threads]
        if workers > 1:
            self.command += ["--workers", str(workers)]
        self.log = log
        self._stderr = log.open("w", encoding="utf-8")
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                        cwd=REPO, env={**env, "PYTHONUNBUFFERED": "1"})
        self.lines: Queue[str] = Queue()
        self.url = ""
        threading.Thread(target=self._drain, daemon=True).start()  # a full pipe would stall the server

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_ready(self, timeout: float) -> str:
        """The server's URL once /v1/health answers; RuntimeError when it exits or takes too long."""
        import httpx

        deadline = time.monotonic() + timeout
        while not self.url:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}): {self._tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no address from the server in {timeout:.0f} s: {self._tail()}")
            try:
                line = self.lines.get(timeout=1.0)
            except Empty:
                continue
            print(f"  server: {line}", flush=True)
            found = URL_LINE.search(line)
            if found:
                self.url = f"http://{HOST}:{found.group(1)}"
        with httpx.Client(base_url=self.url, timeout=10.0, trust_env=False) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the server exited ({self.process.returncode}): {self._tail()}")
                try:
                    if client.get("/v1/health").status_code == 200:
                        return self.url
                except httpx.HTTPError:
                    pass
                time.sleep(0.5)
        raise RuntimeError(f"/v1/health did not answer in {timeout:.0f} s")

    def _tail(self) -> str:
        self._stderr.flush()
        return " | ".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-5:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self._stderr.close()


# -- the load -------------------------------------------------------------------------------------
def _single_phase(url: str, queries: list[str], clients: int, k: int, max_seconds: float, timeout: float,
                  pid: int) -> dict[str, Any]:
    """``len(queries)`` single-query requests from ``clients`` threads; RSS every 100 answers."""
    import httpx

    lock = threading.Lock()
    state = {"next": 0, "done": 0}
    latencies: list[float] = []
    server_ms: list[float] = []
    errors: dict[str, int] = {}
    first_errors: list[str] = []
    memory: list[tuple[int, float | None]] = [(0, _rss_mb(pid))]
    deadline = time.monotonic() + max_seconds

    def client_loop() -> None:
        with httpx.Client(base_url=url, timeout=timeout, trust_env=False) as client:
            for _ in range(len(queries)):  # bounded: at most every request by this one client
                with lock:
                    turn = state["next"]
                    state["next"] += 1
                if turn >= len(queries) or time.monotonic() > deadline:
                    return
                tick = time.perf_counter()
                problem = None
                try:
                    answer = client.post("/v1/search", json={"query": queries[turn], "k": k})
                    elapsed = 1000 * (time.perf_counter() - tick)
                    if answer.status_code != 200:
                        problem = f"HTTP {answer.status_code}"
                        detail = answer.text[:200]
                    else:
                        body = answer.json()
                        took = float(body["took_ms"])
                        if len(body["results"]) != 1:
                            problem, detail = "wrong result count", str(len(body["results"]))
                except (httpx.HTTPError, ValueError, KeyError) as error:
                    problem, detail = type(error).__name__, str(error)[:200]
                with lock:
                    state["done"] += 1
                    if problem is None:
                        latencies.append(elapsed)
                        server_ms.append(took)
                    else:
                        errors[problem] = errors.get(problem, 0) + 1
                        if len(first_errors) < 5:
                            first_errors.append(f"{problem}: {detail}")
                    if state["done"] % 100 == 0:
                        memory.append((state["done"], _rss_mb(pid)))

    threads = [threading.Thread(target=client_loop, daemon=True) for _ in range(clients)]
    server_cpu, client_cpu = _cpu_s(pid), time.process_time()
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max_seconds + timeout + 30)
    wall = time.perf_counter() - started
    client_cpu = time.process_time() - client_cpu
    server_end = _cpu_s(pid)
    server_cpu = None if server_cpu is None or server_end is None else server_end - server_cpu
    if memory[-1][0] != state["done"]:
        memory.append((state["done"], _rss_mb(pid)))
    sent = min(state["next"], len(queries))
    rss = [mb for _, mb in memory if mb is not None]
    return {
        "clients": clients, "requests_planned": len(queries), "requests_sent": sent,
        "answered_200": len(latencies), "errors": sum(errors.values()), "error_kinds": errors,
        "first_errors": first_errors, "cut_by_max_seconds": sent < len(queries),
        "wall_s": round(wall, 2), "requests_per_s": round(state["done"] / wall, 2) if wall else 0.0,
        "latency_ms": _percentiles(latencies), "server_took_ms": _percentiles(server_ms),
        "server_cpu_ms_per_request": round(1000 * server_cpu / state["done"], 1)
        if server_cpu is not None and state["done"] else None,
        "client_cpu_ms_per_request": round(1000 * client_cpu / state["done"], 1) if state["done"] else None,
        "rss_mb": [(done, None if mb is None else round(mb, 1)) for done, mb in memory],
        "rss_first_mb": round(rss[0], 1) if rss else None, "rss_last_mb": round(rss[-1], 1) if rss else None,
        "rss_growth_mb": round(rss[-1] - rss[0], 1) if rss else None,
        "rss_max_mb": round(max(rss), 1) if rss else None,
    }


def _batch_phase(url: str, queries: list[str], size: int, k: int, timeout: float) -> dict[str, Any]:
    """The queries as batches of ``size`` from one client, one after another."""
    import httpx

    times, errors = [], 0
    with httpx.Client(base_url=url, timeout=timeout, trust_env=False) as client:
        started = time.perf_counter()
        for start in range(0, len(queries), size):
            batch = queries[start:start + size]
            tick = time.perf_counter()
            try:
                answer = client.post("/v1/search", json={"queries": batch, "k": k})
                ok = answer.status_code == 200 and len(answer.json()["results"]) == len(batch)
            except (httpx.HTTPError, ValueError, KeyError):
                ok = False
            times.append(1000 * (time.perf_counter() - tick))
            errors += not ok
        wall = time.perf_counter() - started
    return {"queries": len(queries), "batch_size": size, "batches": len(times), "errors": errors,
            "wall_s": round(wall, 2), "queries_per_s": round(len(queries) / wall, 2),
            "batch_ms": _percentiles(times)}


def _cli_phase(index: Path, queries: list[str], probe: str, args: argparse.Namespace,
               folder: Path) -> dict[str, Any]:
    """``fortekit search --queries`` on the batch queries, and on one query (its start-up)."""

    def run(texts: list[str], name: str) -> tuple[float, int, int]:
        source, out = folder / f"{name}.txt", folder / f"{name}.jsonl"
        source.write_text("".join(text.replace("\n", " ") + "\n" for text in texts), encoding="utf-8")
        command = [sys.executable, "-m", "fortekit", "search", "--index", str(index),
                   "--queries", str(source), "-o", str(out), "--batch-size", str(args.batch_size),
                   "-k", str(args.k), "--stage1", args.stage1, "--device", args.device, "-q", "--no-progress"]
        tick = time.perf_counter()
        try:
            done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=_environment(args),
                                  timeout=args.max_seconds, check=False)
            status = done.returncode
        except subprocess.TimeoutExpired:  # run() has killed it
            status = -1
            print(f"  fortekit search ran past {args.max_seconds:.0f} s: stopped", flush=True)
        wall = time.perf_counter() - tick
        if status > 0:
            print(f"  fortekit search exited {status}: {done.stderr[-500:]}", flush=True)
        lines = len(out.read_text(encoding="utf-8").splitlines()) if out.is_file() else 0
        return wall, status, lines

    whole, status, lines = run(queries, "batch")
    alone, status_one, _ = run([probe], "one")
    search = whole - alone
    return {"queries": len(queries), "batch_size": args.batch_size, "exit": status, "lines_written": lines,
            "wall_s": round(whole, 2), "one_query_wall_s": round(alone, 2), "exit_one": status_one,
            "search_s_estimate": round(search, 2),
            "queries_per_s_estimate": round(len(queries) / search, 2) if search > 0 else None}


def _in_process(index: Path, warm: list[str], singles: list[str], batch: list[str],
                args: argparse.Namespace) -> dict[str, Any]:
    """``Retriever.search`` alone, the pipeline ``fortekit serve`` runs, warmed as the server was."""
    import torch

    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.retriever import Retriever

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    tick = time.perf_counter()
    retriever = Retriever(index, PipelineSpec.from_switches(stage1=args.stage1), device=args.device)
    retriever.search(["warm up"], k=1)
    load = time.perf_counter() - tick
    for text in warm:  # the server's warm-up requests, one at a time
        retriever.search(text, k=args.k)
    times = []
    for text in singles:
        tick = time.perf_counter()
        retriever.search(text, k=args.k)
        times.append(1000 * (time.perf_counter() - tick))
    tick = time.perf_counter()
    for start in range(0, len(batch), args.batch_size):
        retriever.search(batch[start:start + args.batch_size], k=args.k)
    wall = time.perf_counter() - tick
    return {"pipeline": list(retriever.pipeline.running), "load_and_warm_s": round(load, 1),
            "torch_threads": torch.get_num_threads(), "single_queries": len(singles),
            "single_ms": _percentiles(times), "batch_queries": len(batch), "batch_wall_s": round(wall, 2),
            "batch_queries_per_s": round(len(batch) / wall, 2) if wall else None}


# -- report ---------------------------------------------------------------------------------------
def _table(report: dict[str, Any]) -> str:
    rows = ["phase                                   count     p50     p95     p99    mean  per s  errors"]

    def row(name: str, count: int, figures: dict[str, float], rate: float | None, errors: int | str) -> None:
        cells = " ".join(f"{figures.get(key, float('nan')):7.1f}" for key in ("p50", "p95", "p99", "mean"))
        shown = f"{rate:6.1f}" if rate is not None else "     -"
        rows.append(f"{name:<38} {count:6d} {cells} {shown}  {errors}")

    single = report.get("single")
    if single:
        row(f"serve: single queries, {single['clients']} clients (ms)", single["answered_200"],
            single["latency_ms"], single["requests_per_s"], single["errors"])
        row("  the server's took_ms (ms)", single["answered_200"], single["server_took_ms"], None, "")
        rate = single["requests_per_s"]
        bound = f"{1000 * single['clients'] / rate:.0f} ms" if rate else "-"
        rows.append(f"  CPU per request: server {single['server_cpu_ms_per_request']} ms, this client "
                    f"{single['client_cpu_ms_per_request']} ms; {single['clients']} clients / {rate} req/s "
                    f"= {bound} a request (Little's law)")
    batch = report.get("batch")
    if batch:
        row(f"serve: batches of {batch['batch_size']}, 1 client (ms/batch)", batch["batches"],
            batch["batch_ms"], batch["queries_per_s"], batch["errors"])
    cli = report.get("cli")
    if cli:
        rows.append(f"fortekit search --queries: {cli['queries']} queries in {cli['wall_s']:.1f} s whole, "
                    f"{cli['one_query_wall_s']:.1f} s for one query (start-up) -> "
                    f"{cli['search_s_estimate']:.1f} s searching, {cli['queries_per_s_estimate']} queries/s")
    alone = report.get("retriever")
    if alone:
        row("Retriever.search alone, in process (ms)", alone["single_queries"], alone["single_ms"], None, "")
        rows.append(f"Retriever.search, batches of {report['batch_size']}: {alone['batch_queries']} queries "
                    f"in {alone['batch_wall_s']:.1f} s, {alone['batch_queries_per_s']} queries/s")
    if single:
        rows.append(f"server RSS: {single['rss_first_mb']} MB after warm-up, {single['rss_last_mb']} MB "
                    f"after {single['requests_sent']} requests (growth {single['rss_growth_mb']} MB, max "
                    f"{single['rss_max_mb']} MB)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, help="the index (default: the 100,000-item caption index)")
    parser.add_argument("--items", type=int, default=100_000, help="items of the default index")
    parser.add_argument("--ann", action="store_true",
                        help="the default index with its HNSW parts, as `fortekit index build --ann hnsw` "
                        "writes it (built once into --cache)")
    parser.add_argument("--cache", type=Path, default=REPO / "runs" / "latency", help="where it is kept")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--requests", type=int, default=1000, help="measured single-query requests")
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured requests first")
    parser.add_argument("--max-seconds", type=float, default=600.0,
                        help="cap of the single-query phase (and of each fortekit search run)")
    parser.add_argument("--request-timeout", type=float, default=120.0)
    parser.add_argument("--stage1", choices=["auto", "off"], default="auto", help="passed to fortekit serve")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--batch-queries", type=int, default=320, help="queries of the batch phase (0: none)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--baseline", type=int, default=100,
                        help="queries of step 2 timed with Retriever.search alone (0: skip step 5)")
    parser.add_argument("--no-cli", action="store_true", help="skip fortekit search --queries")
    parser.add_argument("--torch-threads", type=int, default=0,
                        help="torch's intra-op threads in the server, fortekit search and step 5 (through "
                        "OMP_NUM_THREADS; 0: torch's default, one per core)")
    parser.add_argument("--serve-threads", metavar="N|auto",
                        help="fortekit serve --threads (default: the service's policy, physical cores // "
                        "workers)")
    parser.add_argument("--workers", type=int, default=1, help="fortekit serve --workers (default: 1)")
    parser.add_argument("--start-timeout", type=float, default=600.0)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)

    latency = _default_latency()
    index = _index_dir(args, latency)
    needed = args.warmup + args.requests + args.batch_queries + 1
    queries = latency._queries(needed)
    if len(queries) < needed:
        print(f"only {len(queries)} distinct queries for {needed}: they repeat", flush=True)
        queries = [queries[i % len(queries)] for i in range(needed)]
    warm = queries[:args.warmup]
    singles = queries[args.warmup:args.warmup + args.requests]
    batch = queries[args.warmup + args.requests:needed - 1]
    probe = queries[needed - 1]
    report: dict[str, Any] = {
        "index": str(index), "stage1": args.stage1, "device": args.device, "k": args.k,
        "serve_threads": args.serve_threads, "workers": args.workers,
        "batch_size": args.batch_size, "torch_threads": args.torch_threads or "default",
        "machine_start": _machine(), "command": sys.argv,
    }
    print(f"serve_load: {index}, stage1 {args.stage1}, {args.clients} clients, {len(singles)} requests "
          f"(+{len(warm)} warm-up), {len(batch)} batch queries, torch threads {report['torch_threads']}; "
          f"cpus {report['machine_start']['cpus']}, load average {report['machine_start']['load_average']}",
          flush=True)

    with tempfile.TemporaryDirectory(prefix="serve_load_") as scratch:
        folder = Path(scratch)
        server = Server(index, args.stage1, args.device, folder / "server.log", _environment(args),
                        args.serve_threads, args.workers)
        try:
            tick = time.perf_counter()
            url = server.wait_ready(args.start_timeout)
            report["server_start_s"] = round(time.perf_counter() - tick, 1)
            print(f"  ready in {report['server_start_s']} s at {url}; warm-up ...", flush=True)
            _single_phase(url, warm, 1, args.k, args.max_seconds, args.request_timeout, server.pid)
            print(f"  {len(singles)} requests from {args.clients} clients ...", flush=True)
            report["single"] = _single_phase(url, singles, args.clients, args.k, args.max_seconds,
                                             args.request_timeout, server.pid)
            if batch:
                print(f"  {len(batch)} queries in batches of {args.batch_size} ...", flush=True)
                report["batch"] = _batch_phase(url, batch, args.batch_size, args.k, args.request_timeout)
        finally:
            server.stop()
        if batch and not args.no_cli:
            print("  fortekit search --queries ...", flush=True)
            report["cli"] = _cli_phase(index, batch, probe, args, folder)
    if args.baseline:
        print("  Retriever.search in this process ...", flush=True)
        report["retriever"] = _in_process(index, warm, singles[:args.baseline], batch, args)
    report["machine_end"] = _machine()
    print(_table(report))
    print(f"cpus {report['machine_end']['cpus']}, load average at the start "
          f"{report['machine_start']['load_average']}, at the end {report['machine_end']['load_average']}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    single = report.get("single", {})
    return 1 if single.get("errors") or report.get("batch", {}).get("errors") else 0


if __name__ == "__main__":
    sys.exit(main())
