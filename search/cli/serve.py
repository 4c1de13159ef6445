"""``fortekit serve``: load an index once and answer searches over HTTP, with a search and an eval page.

Example:
    $ fortekit serve --index clips.index
    $ fortekit serve --index clips.index --port 8080 --stage1 off
    $ fortekit serve --eval runs/negation --eval-collection ../shared/data/negation/audiocaps_test
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from fortekit.search.cli.common import (
    add_index_option,
    add_stage1_option,
    add_stage_switches,
    add_threads_option,
    pipeline_spec,
)
from fortekit.search.serve.hosts import HostPolicy

__all__ = ["add_serve_command", "run_serve"]

#: The addresses that only this machine reaches; any other --host is said aloud (W870).
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_serve_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit serve`` on the ``fortekit`` sub-parsers.

    Example:
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_serve_command(parser.add_subparsers(dest="command"))
        >>> args = parser.parse_args(["serve", "--index", "idx"])
        >>> args.host, args.port, args.stage1, args.max_batch
        ('127.0.0.1', 8000, 'auto', 64)
    """
    from fortekit.search.serve.limits import ServeLimits

    limits = ServeLimits()
    parser = commands.add_parser(
        "serve",
        help="answer searches over HTTP with a results page (needs fortekit[serve])",
        description="Load an index, its backbone and the parser once, then answer over HTTP: the API under "
        "/v1 (POST /v1/search, GET /v1/items/ID, GET /v1/items/ID/audio, /v1/info, /v1/health; "
        "described at /openapi.json and /docs), the search page at / and, with --eval, the evaluation "
        "page at /eval. Listens on 127.0.0.1 unless --host says otherwise. Each request may switch "
        "Stage 1, formula scoring and Stage 3; the switches below set what 'auto' means. Needs the "
        "extra: pip install 'fortekit[serve]'. See docs/serve.md.",
    )
    add_index_option(parser, type=Path, help="the index to search (written by `fortekit index build`)")
    parser.add_argument("--eval", dest="eval_run", type=Path, metavar="RUN_DIR",
                        help="an output folder of `fortekit eval --beir`, shown at /eval")
    parser.add_argument("--eval-collection", type=Path, metavar="DIR",
                        help="the collection that run evaluated (default: the one its config.json names)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="the port (default: 8000; 0: any free one)")
    parser.add_argument("--allowed-host", action="append", metavar="NAME",
                        help="a Host name to answer besides localhost, 127.0.0.1, [::1] and the --host "
                        "address (repeatable): a proxy's or the machine's LAN name; .example.org: it and "
                        "its subdomains; '*': every name, which lets any web page read the API through "
                        "DNS rebinding (unsafe). Other names get 403 (E809); docs/serve.md")
    parser.add_argument("--reload-check", type=float, default=2.0, metavar="SECONDS",
                        help="check at most this often, when requests come, whether the index changed on "
                        "disk (index add/remove/compact), and load it again in the background "
                        "(default: 2; 0: never; SIGHUP and POST /v1/reload reload too)")
    parser.add_argument("--audio-root", action="append", type=Path, metavar="DIR",
                        help="a folder audio files may be served from (repeatable; default: the folders "
                        "of the files the index registers); relative paths in the index are read from "
                        "the first")
    stages = parser.add_argument_group("stages (each request may switch them)")
    add_stage1_option(stages, choices=("auto", "off", "feedback", "online", "offline"),
                      help="refine each query first (Stage 1); auto: the index kind's default")
    stages.add_argument("--lookup", type=Path, metavar="FILE",
                        help="stored refinements (a fol-refine output): queries it holds skip Stage 1, the "
                        "costliest stage of a request (docs/serve.md)")
    add_stage_switches(stages)
    add_threads_option(stages, role="service")
    stages.add_argument("--workers", type=int, default=1, metavar="N",
                        help="processes that answer, each with the index and the models loaded (default: "
                        "1); a search holds Python's lock, so one process keeps about one core busy: "
                        "give one per physical core (POSIX; docs/serve.md, \"Workers\")")
    stages.add_argument("--cache-entries", type=int, default=50_000, metavar="N",
                        help="text embeddings kept in memory (default: 50000, about 80 MB with MiniLM); "
                        "the server's memory stops growing with it")
    stages.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
    bounds = parser.add_argument_group("limits of one request")
    bounds.add_argument("--max-body-bytes", type=int, default=limits.max_body_bytes, metavar="N",
                        help=f"the largest request body (default: {limits.max_body_bytes})")
    bounds.add_argument("--max-batch", type=int, default=limits.max_batch, metavar="N",
                        help=f"queries per request (default: {limits.max_batch})")
    bounds.add_argument("--max-k", type=int, default=limits.max_k, metavar="N",
                        help=f"hits per query (default: {limits.max_k})")
    bounds.add_argument("--max-queue", type=int, default=limits.max_queue, metavar="N",
                        help=f"searches waiting at once before 503 (default: {limits.max_queue})")
    parser.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"],
                        default="info", help="the server's log level (default: info)")
    parser.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace, out: TextIO) -> int:
    """Handler of ``fortekit serve``: serve until interrupted; 2 when it cannot start.

    Returns:
        0 after a clean stop; 2 (a coded message on stderr) for a missing extra, an index or run
        that cannot be read, or an address that cannot be listened on.
    """
    from fortekit.errors import Errors, FortekitError, ServeError

    try:
        from fortekit.search.serve.app import require_serve_extra

        require_serve_extra()
        if args.index is None and args.eval_run is None:
            raise ServeError(Errors.E803)
        if not 0 <= args.reload_check < float("inf"):
            raise ServeError(Errors.E807.format(name="--reload-check", expected="a number of seconds >= 0",
                                                value=args.reload_check))
        workers = _check_workers(getattr(args, "workers", 1))
        hosts = HostPolicy(bound=args.host, allowed=tuple(args.allowed_host or ()))  # E812 before loading
        listener = _listen(args.host, args.port)
        hosts = _with_bound_address(hosts, listener.getsockname()[0])
        if workers > 1:
            return _serve_in_workers(args, out, hosts, listener, workers)
        app, service = _make_app(args, out, hosts)
    except FortekitError as exc:
        print(f"fortekit serve: {exc}", file=sys.stderr)
        return 2
    from fortekit.search.serve.allocator import fix_mmap_threshold

    fix_mmap_threshold()  # freed encoder buffers go back to the system: docs/serve.md, "Caches and memory"
    _announce(args, listener, hosts, out)
    _run_uvicorn(app, listener, args.log_level, on_hangup=service.reload_in_background if service else None)
    return 0


def _announce(args: argparse.Namespace, listener: socket.socket, hosts: HostPolicy, out: TextIO,
              workers: str = "") -> None:
    """The address the server answers on, with the warnings its --host and --allowed-host call for."""
    from fortekit.errors import Errors

    host, port = listener.getsockname()[:2]
    if args.host not in LOOPBACK:
        print(f"fortekit serve: {Errors.W870.format(host=host, port=port)}", file=sys.stderr)
    if hosts.everyone:
        print(f"fortekit serve: {Errors.E813}", file=sys.stderr)
    shown = f"[{host}]" if ":" in host else host
    print(f"fortekit serve: http://{shown}:{port}/ ({workers}API: /v1, described at /docs; Ctrl-C stops; "
          f"SIGHUP reloads the index)", file=out)
    out.flush()


def _check_workers(value: object) -> int:
    """``--workers``: an int from 1 to :func:`~fortekit.search.serve.workers.max_workers` (each
    worker holds its own copy of the models: a slip of the keyboard must not fork thousands), and
    more than 1 only where processes can be forked (E814)."""
    from fortekit.errors import Errors, ServeError
    from fortekit.search.serve.workers import fork_supported, max_workers

    most = max_workers()
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ServeError(Errors.E807.format(name="--workers", expected=f"an int from 1 to {most}",
                                            value=value))
    if value > 1 and not fork_supported():
        raise ServeError(Errors.E814.format(workers=value))
    return value


def _serve_in_workers(args: argparse.Namespace, out: TextIO, hosts: HostPolicy, listener: socket.socket,
                      workers: int) -> int:
    """``--workers N``: the address is announced once, then N processes load and serve on the socket."""
    from fortekit.errors import FortekitError
    from fortekit.search.serve.workers import run_workers

    _announce(args, listener, hosts, out, f"{workers} worker processes; ")

    def serve_one() -> int:
        from fortekit.search.serve.allocator import fix_mmap_threshold

        try:
            app, service = _make_app(args, out, hosts)
        except FortekitError as exc:
            print(f"fortekit serve: {exc}", file=sys.stderr)
            return 2
        fix_mmap_threshold()
        _run_uvicorn(app, listener, args.log_level,
                     on_hangup=service.reload_in_background if service else None)
        return 0

    return run_workers(workers, serve_one)


def _with_bound_address(hosts: HostPolicy, address: str) -> HostPolicy:
    """The policy with the address the socket got (``--host`` may be a name) among its names."""
    from dataclasses import replace

    if address in ("0.0.0.0", "::") or address == hosts.bound:
        return hosts
    return replace(hosts, allowed=(*hosts.allowed, f"[{address}]" if ":" in address else address))


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port), or a coded error (E804) instead of uvicorn's exit."""
    from fortekit.errors import Errors, ServeError

    if not 0 <= port <= 65535:
        raise ServeError(Errors.E804.format(host=host, port=port, problem="a port is from 0 to 65535"))
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
    except OSError as exc:
        raise ServeError(Errors.E804.format(host=host, port=port, problem=exc.strerror or exc)) from None
    listener.listen(128)
    listener.set_inheritable(True)
    return listener


def _make_app(args: argparse.Namespace, out: TextIO, hosts: HostPolicy) -> tuple[Any, Any]:
    """The app and its search service (None without --index)."""
    from fortekit.search.retriever import Retriever
    from fortekit.search.serve.app import create_app
    from fortekit.search.serve.limits import ServeLimits
    from fortekit.search.serve.service import SearchService

    limits = ServeLimits(max_body_bytes=args.max_body_bytes, max_batch=args.max_batch, max_k=args.max_k,
                         max_queue=args.max_queue)
    service = None
    if args.index is not None:
        if args.cache_entries < 1:
            from fortekit.errors import Errors, ServeError

            raise ServeError(Errors.E807.format(name="--cache-entries", expected="an int >= 1",
                                                value=args.cache_entries))
        print(f"fortekit serve: loading {args.index} ...", file=out)
        out.flush()
        from fortekit.search.refine.lookup import LookupTable

        lookup = LookupTable.load(args.lookup) if args.lookup is not None else None

        def make_retriever(index: Any, backbone: Any) -> Any:
            """The server's Retriever of an index; a reload passes the backbone already loaded."""
            retriever = Retriever(index, pipeline_spec(args, lookup=lookup), backbone=backbone,
                                  device=args.device)
            retriever.encoder.cache.max_entries = args.cache_entries
            return retriever

        # open() warms it (one search), so the first request finds every model loaded
        service = SearchService.open(args.index, device=args.device, limits=limits,
                                     audio_roots=args.audio_root, make_retriever=make_retriever,
                                     reload_check_s=args.reload_check)
        print(f"fortekit serve: {service.retriever!r}", file=out)
    run = None
    if args.eval_run is not None:
        from fortekit.search.serve.eval_run import EvalRun

        run = EvalRun.load(args.eval_run, collection=args.eval_collection)
        run.preload()  # a damaged run or collection is refused now, not on the first request
    return create_app(service, eval_run=run, limits=limits, hosts=hosts), service


def _run_uvicorn(app: Any, listener: socket.socket, log_level: str,
                 on_hangup: Callable[[], None] | None = None) -> None:
    """Serve with uvicorn's h11 protocol and a lingering close (a 413 reaches the client, not a reset);
    SIGHUP calls ``on_hangup`` (a reload of the index) from the event loop, not from the signal."""
    import asyncio
    import copy
    import signal

    import uvicorn

    from fortekit.search.serve.lingering import lingering_protocol

    class Server(uvicorn.Server):
        async def serve(self, sockets: list[socket.socket] | None = None) -> None:
            if on_hangup is not None and hasattr(signal, "SIGHUP"):
                asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, on_hangup)
            await super().serve(sockets)

    # the service's own lines (a refused request's code, a reload, E811) beside uvicorn's, as its are
    logs = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    logs["loggers"]["fortekit.serve"] = {"handlers": ["default"], "level": log_level.upper(),
                                         "propagate": False}
    config = uvicorn.Config(app, log_level=log_level, access_log=log_level in ("info", "debug"),
                            timeout_graceful_shutdown=5, http=lingering_protocol(), log_config=logs)
    Server(config).run(sockets=[listener])
