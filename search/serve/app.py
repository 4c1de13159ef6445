"""The HTTP side of ``fortekit serve``: the versioned API (``/v1/...``), the pages and their files.

Routes (OpenAPI at ``/openapi.json``, browsable at ``/docs``):

- ``POST /v1/search``: a query or a batch, ``k``, the stage switches and ``explain``; answers
  ``{"results": [SearchResult.to_dict(), ...], "pipeline": ..., "took_ms": ...}``;
- ``GET /v1/items/{id}`` and ``GET /v1/items/{id}/audio`` (only files the index registers,
  with range requests);
- ``GET /v1/stage1/tree?query=...``: Stage 1's search tree, as text (``&format=json``: its nodes);
- ``GET /v1/health``, ``GET /v1/info`` (the index by its folder's name and its state, never a path);
- ``POST /v1/reload``: load the index again if its state changed (swapped in once wholly loaded);
- ``GET /v1/eval``, ``/v1/eval/queries``, ``/v1/eval/queries/{query_id}``: a ``fortekit eval
  --beir`` run (with ``--eval``);
- ``/`` (the search page), ``/eval`` (the evaluation page), ``/static/{file}``.

Every error is JSON, ``{"error": {"code": "E792", "status": 422, "message": "[E792] ..."}}``,
with a 4xx status for a bad request and no traceback, in the answer or in the log
(:mod:`fortekit.search.serve.errors_http`). Only requests that name a host of the server are
answered (E809; :mod:`fortekit.search.serve.hosts`: no web page reads the API by DNS rebinding).

Example:
    >>> from fastapi.testclient import TestClient  # doctest: +SKIP
    >>> app = create_app(SearchService.open("clips.index"))  # doctest: +SKIP
    >>> client = TestClient(app, base_url="http://127.0.0.1")  # doctest: +SKIP
    >>> answer = client.post("/v1/search", json={"query": "rain on a roof", "k": 2})  # doctest: +SKIP
    >>> answer.json()["results"][0]["hits"][0]["id"]  # doctest: +SKIP
    'clip3'
"""

import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fortekit.errors import Errors, ServeError
from fortekit.search.serve.hosts import HostPolicy
from fortekit.search.serve.limits import ServeLimits, StageSwitches

if TYPE_CHECKING:
    from fastapi import FastAPI

    from fortekit.search.serve.errors_http import ASGIApp, Receive, Scope, Send
    from fortekit.search.serve.eval_run import EvalRun
    from fortekit.search.serve.service import SearchService

__all__ = ["DOCS_ASSETS", "PAGES", "STATIC_FILES", "create_app", "docs_assets_dir", "require_serve_extra"]

_SEARCH = "POST /v1/search"
_FIELDS = "query, queries, k, stage1, formula_scoring, stage3, explain"

#: The files under ``/static/``: the only ones served, by name (no path is ever read from a request).
STATIC_FILES: dict[str, str] = {
    "common.js": "text/javascript; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
    "eval.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8", "index.html": "text/html; charset=utf-8",
    "eval.html": "text/html; charset=utf-8", "docs.html": "text/html; charset=utf-8",
    "docs.js": "text/javascript; charset=utf-8",
}
#: The pages, by route.
PAGES = {"/": "index.html", "/eval": "eval.html", "/docs": "docs.html"}
#: The files of Swagger UI under ``/docs/assets/``, from the package ``fastapi-offline`` (the
#: ``serve`` extra): the API's page loads nothing from a CDN.
DOCS_ASSETS: dict[str, str] = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8", "swagger-ui.css": "text/css; charset=utf-8",
    "favicon.png": "image/png",
}


def require_serve_extra() -> None:
    """Check that the ``serve`` extra (FastAPI, uvicorn) is installed.

    Raises:
        ServeError: a package is missing (E790).

    Example:
        >>> require_serve_extra()
    """
    from importlib.util import find_spec

    modules = {"fastapi": "fastapi", "uvicorn": "uvicorn", "fastapi_offline": "fastapi-offline"}
    missing = [package for name, package in modules.items() if find_spec(name) is None]
    if missing:
        raise ServeError(Errors.E790.format(missing=", ".join(missing)))


def _check_range(header: str | None, path: Path) -> None:
    """Refuse a Range header that FileResponse would answer in plain text: E792, 400 or 416."""
    from starlette.responses import FileResponse, MalformedRangeHeader, RangeNotSatisfiable

    parse = getattr(FileResponse, "_parse_range_header", None)
    if header is None or parse is None:
        return
    size = path.stat().st_size
    try:
        parse(header, size)
    except MalformedRangeHeader as error:
        problem, status = f"{str(error.content).removeprefix('Range header: ')} (got {header[:40]!r})", 400
    except RangeNotSatisfiable:
        problem, status = f"asks for bytes past the end of the file ({size} bytes)", 416
    else:
        return
    raise ServeError(Errors.E792.format(
        where="the Range header", problem=problem, route="GET /v1/items/{id}/audio",
        fields="Range: bytes=START-END, bytes=START- or bytes=-LAST",
    ), status=status)


def static_dir() -> Path:
    """The folder of the pages' files, inside the installed package."""
    return Path(str(resources.files("fortekit.search.serve").joinpath("static")))


def docs_assets_dir() -> Path:
    """The folder of Swagger UI's files that the package ``fastapi-offline`` ships.

    Example:
        >>> (docs_assets_dir() / "swagger-ui-bundle.js").is_file()
        True
    """
    return Path(str(resources.files("fastapi_offline").joinpath("static")))


class _CheckIndex:
    """Before each request, let the service check (at most every few seconds, in the background)
    whether its index changed on disk; the request is answered at once from the state served."""

    def __init__(self, app: "ASGIApp", service: "SearchService") -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] == "http":
            self.service.check_index()
        await self.app(scope, receive, send)


def create_app(service: "SearchService | None" = None, *, eval_run: "EvalRun | None" = None,
               limits: ServeLimits | None = None, hosts: HostPolicy | None = None) -> "FastAPI":
    """The ASGI app of ``fortekit serve``.

    Args:
        service: the warm search service (None: no index, only the evaluation page).
        eval_run: a ``fortekit eval --beir`` run for the evaluation page (None: no such page).
        limits: the request bounds (default: the service's, else :class:`ServeLimits`'s).
        hosts: the Host names answered (default: ``localhost``, ``127.0.0.1`` and ``[::1]`` only;
            ``fortekit serve`` builds it from ``--host`` and ``--allowed-host``).

    Returns:
        A FastAPI app; run it with uvicorn (``fortekit serve`` does).

    Raises:
        ServeError: the ``serve`` extra is missing (E790), or neither service nor run (E803).
    """
    require_serve_extra()
    if service is None and eval_run is None:
        raise ServeError(Errors.E803)
    from fastapi import FastAPI, Query, Request
    from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response

    from fortekit import __version__
    from fortekit.search.serve import json_body
    from fortekit.search.serve.errors_http import install_error_handling
    from fortekit.search.serve.openapi import TREE_QUERY_CHARS, check_text, describe_api, text_bounds
    from fortekit.search.serve.schemas import SearchRequest
    from fortekit.search.serve.service import versions

    limits = limits or (service.limits if service is not None else ServeLimits())

    class EncodedJSON(JSONResponse):
        """A JSON answer encoded once, by orjson where it is installed (:mod:`.json_body`)."""

        def render(self, content: Any) -> bytes:
            return json_body.json_bytes(content)

    app = FastAPI(
        title="fortekit", version=__version__, redirect_slashes=False,  # no Host-built redirects: E798
        description="FOL-guided text-to-audio retrieval: search an index, read its items, play their audio.",
        docs_url=None, redoc_url=None,  # /docs is served below from local files, never from a CDN
    )
    derived = app.openapi
    contract: list[dict[str, Any]] = []  # built on first use, once

    def openapi() -> dict[str, Any]:  # FastAPI's schema and the server's whole contract (openapi.py)
        if not contract:
            ids = tuple(service.retriever.index.ids[:1]) if service is not None else ()
            contract.append(describe_api(derived(), limits, systems=eval_run.systems if eval_run else (),
                                         item_ids=ids))
        return contract[0]

    app.openapi = openapi  # type: ignore[method-assign]
    def folders() -> list[Path]:  # read at each error: a reload may change the audio folders
        found: list[Path] = []
        if service is not None:
            found += [*([service.folder] if service.folder is not None else []), *service.audio.roots]
        if eval_run is not None:
            found += [eval_run.path, eval_run.collection_path]
        return found

    if service is not None:  # the innermost: only a request the host check let through checks
        app.add_middleware(_CheckIndex, service=service)
    install_error_handling(app, limits, hosts=hosts, folders=folders)
    started = time.time()

    def need_service() -> "SearchService":
        if service is None:
            raise ServeError(Errors.E803, status=404)
        return service

    def need_run() -> "EvalRun":
        if eval_run is None:
            raise ServeError(Errors.E800.format(path="(none)", problem="this server was started without "
                                                "--eval RUN_DIR"), status=404)
        return eval_run

    @app.post("/v1/search", tags=["search"], summary="Rank the index for a query or a batch")
    def search(request: SearchRequest) -> JSONResponse:
        """What ``Retriever.search`` returns for the queries, with the pipeline that ran."""
        clock = time.perf_counter()
        single, each = text_bounds(limits)
        if request.query is not None:
            queries = [check_text(request.query, where="query", route=_SEARCH, limit=single, fields=_FIELDS)]
        else:
            queries = list(request.queries or [])
            if len(queries) > limits.max_batch:  # the schema's maxItems: a field out of bounds (422)
                raise ServeError(Errors.E794.format(count=len(queries), limit=limits.max_batch), status=422)
            queries = [check_text(text, where=f"queries.{number}", route=_SEARCH, limit=each, fields=_FIELDS)
                       for number, text in enumerate(queries)]
        switches = StageSwitches(request.stage1, request.formula_scoring, request.stage3)
        found = need_service()
        results, pipeline, state = found.search_served(queries, k=request.k, switches=switches,
                                                       explain=request.explain)
        return EncodedJSON({
            "results": [found.public_result(result) for result in results], "pipeline": pipeline.to_dict(),
            "index_state": state, "took_ms": round((time.perf_counter() - clock) * 1000, 3),
        })

    @app.get("/v1/items/{item_id:path}/audio", tags=["items"], summary="An item's audio file",
             response_class=FileResponse)
    def item_audio(item_id: str, request: Request) -> Response:
        """The file the index registers for the item; range requests are answered (206)."""
        found = need_service()
        path = found.audio_file(item_id)
        _check_range(request.headers.get("range"), path)
        return FileResponse(path, media_type=found.audio.media_type(path),
                            headers={"Cache-Control": "private, max-age=3600"})

    @app.get("/v1/items/{item_id:path}", tags=["items"], summary="An item's caption, formula and audio")
    def item(item_id: str) -> JSONResponse:
        """The caption, Π(caption), the stored predicates and the audio's URL (or null)."""
        return JSONResponse(need_service().item(item_id))

    tree_json = {"schema": {"type": "object", "required": ["query", "phi0", "phi_star", "tree", "star"],
                            "description": "With `format=json`: the refinement and every node of the tree "
                                           "(`tree`), and `star`, the id of the node chosen (phi*)."}}

    @app.get("/v1/stage1/tree", tags=["refine"], summary="Stage 1's search tree for a query",
             response_class=PlainTextResponse, responses={200: {"content": {"application/json": tree_json}}})
    def stage1_tree(query: str = Query(...), format: Literal["text", "json"] = Query(
            "text", description="`text`: as `fol-refine --explain` prints it; `json`: the tree's nodes, "
                                "for the search page")) -> Response:
        """The tree ``fol-refine --explain`` prints: each edit, its objective, kept or pruned."""
        check_text(query, where="query", route="GET /v1/stage1/tree", limit=TREE_QUERY_CHARS)
        if format == "json":
            return JSONResponse(need_service().stage1_tree_data(query))
        return PlainTextResponse(need_service().stage1_tree(query))

    @app.get("/v1/health", tags=["service"], summary="Whether the service answers")
    def health() -> dict[str, Any]:
        """``{"status": "ok", ...}`` once the index is loaded."""
        answer: dict[str, Any] = {"status": "ok", "uptime_s": round(time.time() - started, 1),
                                  "items": len(service.retriever.index) if service is not None else 0}
        if service is not None:  # how many searches ran together (the micro-batcher, docs/serve.md)
            answer["batches"], answer["batched"] = service.batches
            answer["index_state"], answer["reloads"] = service.state, service.reloads
        return answer

    @app.post("/v1/reload", tags=["service"], summary="Load the index again if it changed on disk")
    def reload() -> dict[str, Any]:
        """Load the index again when its state changed (``index add``, ``remove``, ``compact``), and
        swap it in once it is wholly loaded; the old state answers meanwhile. E811 (409): it cannot
        be loaded, and the old state is still served."""
        return need_service().reload()

    @app.get("/v1/info", tags=["service"], summary="The index, the pipeline, the switches and the limits")
    def info() -> dict[str, Any]:
        """What this server serves and how: the index, default pipeline, switches, limits, versions."""
        described: dict[str, Any] = {"index": None, "pipeline": None, "switches": None}
        if service is not None:
            described.update(service.info())
        described.update({"fortekit_version": __version__, "limits": limits.to_dict(),
                          "eval": eval_run is not None, "versions": versions()})
        return described

    @app.get("/v1/eval", tags=["evaluation"], summary="The run's metric table per system")
    def eval_summary() -> JSONResponse:
        """The run, its collection and, per system, every measure of ``metrics.json``."""
        return JSONResponse(need_run().summary())

    @app.get("/v1/eval/queries", tags=["evaluation"], summary="Per query: a system against the baseline")
    def eval_queries(system: str = Query(..., max_length=200),
                     baseline: str | None = Query(None, max_length=200)) -> JSONResponse:
        """One row per query with both systems' nDCG@10, violation@10 and violated@10, and the gain."""
        return JSONResponse(need_run().queries(system, baseline))

    @app.get("/v1/eval/queries/{query_id}", tags=["evaluation"], summary="Both systems' top 10 for a query")
    def eval_query(query_id: str, system: str = Query(..., max_length=200),
                   baseline: str | None = Query(None, max_length=200)) -> JSONResponse:
        """Each side's top 10 with captions, relevance and violations (the grounded check's marks)."""
        return JSONResponse(need_run().query(query_id, system, baseline))

    folder = static_dir()

    def page(name: str) -> FileResponse:
        return FileResponse(folder / name, media_type=STATIC_FILES[name],
                            headers={"Cache-Control": "no-cache"})

    @app.get("/", include_in_schema=False)
    def search_page() -> Response:
        return page("index.html")

    @app.get("/eval", include_in_schema=False)
    def evaluation_page() -> Response:
        return page("eval.html")

    @app.get("/docs", include_in_schema=False)
    def docs_page() -> Response:
        return page("docs.html")

    assets = docs_assets_dir()

    @app.get("/docs/assets/{name}", include_in_schema=False)
    def docs_asset(name: str) -> Response:
        if name not in DOCS_ASSETS:  # a name, never a path
            known = ", ".join(f"/docs/assets/{file}" for file in DOCS_ASSETS)
            raise ServeError(Errors.E798.format(method="GET", path=f"/docs/assets/{name}", routes=known),
                             status=404)
        return FileResponse(assets / name, media_type=DOCS_ASSETS[name],
                            headers={"Cache-Control": "public, max-age=86400"})

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in STATIC_FILES:  # a name, never a path: nothing but these files is read
            known = ", ".join(f"/static/{file}" for file in STATIC_FILES)
            raise ServeError(Errors.E798.format(method="GET", path=f"/static/{name}", routes=known),
                             status=404)
        return page(name)

    return app
