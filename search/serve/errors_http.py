"""Every failure of a request becomes a coded JSON answer: no traceback in the answer or in the log.

``{"error": {"code": "E792", "status": 422, "message": "[E792] k: ..."}}``, with the status a
client expects: 400 malformed JSON, 404 unknown route or item, 405 wrong method, 413 a body or
batch past the limits, 422 a field that is wrong, 503 a full queue, 500 (E805, with a request
id that the log repeats) for a bug. The pages get a few headers that keep a caption from ever
running as code (a Content-Security-Policy without inline scripts, ``nosniff``).

Before anything else, a request must name a host the server answers to (E809, 403) and, when a
web page sends one that changes something, come from the server's own pages (E810, 403):
:mod:`fortekit.search.serve.hosts`. Such answers, and a body past the limit, are sent before the
request's body is read; ``fortekit serve``'s HTTP protocol then reads and drops the rest before it
closes (:mod:`fortekit.search.serve.lingering`), so the client reads the answer, not a reset. No
message names a path of the server's disk: the folders the server reads are shown by their names.

Example:
    >>> error_body("[E795] No item 'x' in this index (3 items).", 404)["error"]["code"]
    'E795'
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import CaptionError, CaptionTypeError, Errors, FortekitError, ServeError
from fortekit.search.serve.hosts import SAFE_METHODS, HostPolicy
from fortekit.search.serve.limits import ServeLimits

if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

__all__ = ["LOGGER", "SECURITY_HEADERS", "error_body", "hide_paths", "install_error_handling"]

#: The log of the service: one line per refused or failed request (never a traceback).
LOGGER = logging.getLogger("fortekit.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Sent with every answer: no inline script or style runs, no sniffing, no framing, no referrer.
SECURITY_HEADERS: dict[str, str] = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; media-src 'self'; object-src 'none'; "
                               "base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
# /docs loads Swagger UI from the server (fastapi-offline's files, never a CDN), which sets styles
# inline: the one looser policy (inline styles; never an inline script, nothing from another site).
_DOCS_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                "img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                "frame-ancestors 'none'; form-action 'self'")
_CODE = re.compile(r"^\[([EW]\d{3})\]")
_SEARCH_FIELDS = "query, queries, k, stage1, formula_scoring, stage3, explain"


def error_body(message: str, status: int) -> dict[str, Any]:
    """The JSON of an error answer: its code (read from the message), status and message."""
    found = _CODE.match(message)
    return {"error": {"code": found.group(1) if found else "E805", "status": status, "message": message}}


def _answer(message: str, status: int, request: Request | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    from fastapi.responses import JSONResponse

    body = error_body(message, status)
    if request is not None:
        LOGGER.info("%s %s -> %d %s", request.method, _logged(request.url.path), status,
                    body["error"]["code"])
    return JSONResponse(body, status_code=status, headers=headers)


def _validation_message(errors: list[dict[str, Any]], route: str) -> tuple[str, int]:
    """E791 for a body that is not JSON (or not an object), else E792 naming the first bad field."""
    first: dict[str, Any] = errors[0] if errors else {"loc": (), "msg": "invalid request", "type": ""}
    kind = str(first.get("type", ""))
    location = [str(part) for part in first.get("loc", ()) if part not in ("body",)]
    if kind in ("json_invalid", "model_attributes_type", "dict_type", "model_type") and not location[1:]:
        context = first.get("ctx") or {}
        problem = str(context.get("error", "")) or str(first.get("msg", ""))
        return Errors.E791.format(problem=problem), 400
    where = ".".join(location) or "body"
    if kind == "extra_forbidden":
        problem = "is not a field of this route"
    elif kind == "missing":
        problem = "is required"
    else:
        problem = str(first.get("msg", "is not valid"))
        given = first.get("input")
        if isinstance(given, (int, float, bool)) or given is None:
            problem += f" (got {given!r})"
        elif isinstance(given, str) and len(given) <= 40:
            problem += f" (got {json.dumps(given)})"
    fields = _SEARCH_FIELDS if route == "POST /v1/search" else "the parameters /openapi.json lists for it"
    return Errors.E792.format(where=where, problem=problem, route=route, fields=fields), 422


class _BodyLimit:
    """Refuse a body past ``limit`` bytes (E793, 413), by its Content-Length or as it arrives."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            size = int(declared) if declared.isdigit() else -1
            if size < 0 or size > self.limit:
                from fastapi.responses import JSONResponse

                message = Errors.E793.format(size=declared.decode("latin-1")[:20], limit=self.limit) \
                    if size > self.limit else Errors.E791.format(problem="a Content-Length that is no number")
                status = 413 if size > self.limit else 400
                LOGGER.info("%s %s -> %d %s", scope.get("method"), _logged(str(scope.get("path"))), status,
                            error_body(message, status)["error"]["code"])
                await JSONResponse(error_body(message, status), status_code=status)(scope, receive, send)
                return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message.get("type") == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:  # an HTTPException: FastAPI turns any other error while
                    # it reads the body into its own 400, "There was an error parsing the body"
                    from starlette.exceptions import HTTPException

                    raise HTTPException(413, Errors.E793.format(size=f"more than {self.limit}",
                                                                limit=self.limit))
            return message

        await self.app(scope, limited, send)


class _HostCheck:
    """Answer only requests that name a host of the server (E809) and, for a request that changes
    something sent by a web page, come from the server's own pages (E810): no DNS rebinding."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hosts = [value.decode("latin-1") for name, value in scope.get("headers") or [] if name == b"host"]
        origins = [value.decode("latin-1") for name, value in scope.get("headers") or [] if name == b"origin"]
        host = hosts[0] if len(hosts) == 1 else None  # none, or two that disagree: no host
        method, path = str(scope.get("method", "")), _shown(str(scope.get("path", "")))
        message = ""
        if not self.policy.allows_host(host):
            shown = "(none)" if not hosts else hosts[0] if len(hosts) == 1 else " and ".join(hosts[:2])
            message = Errors.E809.format(host=_logged(shown, 100), allowed=", ".join(self.policy.names()))
        elif method not in SAFE_METHODS and origins and not (
                len(origins) == 1 and self.policy.allows_origin(origins[0], host, str(scope.get("scheme")))):
            message = Errors.E810.format(method=method, path=path, origin=_logged(origins[0], 100),
                                         host=_logged(host or "", 100))
        if not message:
            await self.app(scope, receive, send)
            return
        from fastapi.responses import JSONResponse

        body = error_body(message, 403)
        LOGGER.info("%s %s -> 403 %s", method, _logged(path), body["error"]["code"])
        await JSONResponse(body, status_code=403)(scope, receive, send)


class _SecurityHeaders:
    """Add :data:`SECURITY_HEADERS` to every answer (a looser policy for the /docs page only)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        docs = scope.get("path") == "/docs"

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(name, value) for name, value in message.get("headers", [])
                           if name.decode("latin-1").lower() not in SECURITY_HEADERS]
                for name, value in SECURITY_HEADERS.items():
                    if docs and name == "content-security-policy":
                        value = _DOCS_POLICY
                    headers.append((name.encode("latin-1"), value.encode("latin-1")))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


class _Failures:
    """Answer E805 (500) for an error no handler answered, and end the request there.

    Starlette's outermost middleware answers through the ``Exception`` handler too, but then
    raises the error again, and the server logs its traceback; here it is logged in one line.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as error:
            answer = _failure(str(scope.get("method", "")), str(scope.get("path", "")), error)
            if not started:
                await answer(scope, receive, send)


def _failure(method: str, path: str, error: BaseException) -> JSONResponse:
    """E805 (500) with a request id, and one log line that repeats it (the traceback at debug level)."""
    request_id = uuid.uuid4().hex[:12]
    LOGGER.error("request %s: %s %s failed: %s: %s", request_id, method, _logged(path),
                 type(error).__name__, _logged(str(error), 300))
    LOGGER.debug("request %s traceback", request_id, exc_info=error)
    return _answer(Errors.E805.format(kind=type(error).__name__, request_id=request_id), 500)


def hide_paths(message: str, folders: Sequence[str | os.PathLike[str]]) -> str:
    """``message`` with each folder's path (as given and with its links followed) written as its name.

    Args:
        message: an error message.
        folders: the folders the server reads (the index, the audio roots, the evaluation run ...).

    Returns:
        The message, naming no path of the server's disk that begins with one of the folders.

    Example:
        >>> hide_paths("[E801] The collection /data/sets/coll cannot be read", ["/data/sets/coll"])
        '[E801] The collection coll cannot be read'
    """
    shown: dict[str, str] = {}
    for folder in folders:
        path = Path(folder)
        for spelling in (os.path.abspath(path), os.path.realpath(path)):
            if spelling not in ("/", ""):
                shown[spelling] = path.name or "(folder)"
    for spelling in sorted(shown, key=len, reverse=True):  # the longest first: a folder inside another
        message = message.replace(spelling, shown[spelling])
    return message


def install_error_handling(app: FastAPI, limits: ServeLimits, *, hosts: HostPolicy | None = None,
                           folders: Callable[[], Sequence[str | os.PathLike[str]]] | None = None) -> None:
    """Put the host check, the body limit, the security headers and the coded error answers on ``app``.

    Args:
        app: the FastAPI app.
        limits: the request bounds (the body limit).
        hosts: the names the server answers to (default: the loopback's, :class:`HostPolicy`).
        folders: the folders whose paths no answer may show (they are shown by name).
    """
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect

    app.add_middleware(_Failures)  # the innermost: its answer gets the headers below
    app.add_middleware(_BodyLimit, limit=limits.max_body_bytes)
    app.add_middleware(_HostCheck, policy=hosts or HostPolicy())  # before the body is read
    app.add_middleware(_SecurityHeaders)
    routes = ", ".join(sorted({getattr(route, "path", "") for route in app.routes} - {""}))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        route = f"{request.method} {_shown(request.url.path)}"
        message, status = _validation_message(list(error.errors()), route)
        return _answer(message, status, request)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        known = ", ".join(sorted({getattr(route, "path", "") for route in app.routes} - {""})) or routes
        if isinstance(error.detail, str) and _CODE.match(error.detail):  # ours (E793 from _BodyLimit)
            message = error.detail
        elif error.status_code == 404:
            message = Errors.E798.format(method=request.method, path=_shown(request.url.path), routes=known)
        elif error.status_code == 405:
            allowed = (error.headers or {}).get("Allow", "GET")
            message = Errors.E799.format(path=_shown(request.url.path), method=request.method,
                                         allowed=allowed)
            # RFC 9110 (15.5.6): a 405 names the methods the path answers
            return _answer(message, 405, request, headers={"Allow": allowed})
        else:
            message = Errors.E791.format(problem=str(error.detail))
        return _answer(message, error.status_code, request)

    @app.exception_handler(FortekitError)
    async def refused(request: Request, error: FortekitError) -> JSONResponse:
        status = error.status if isinstance(error, ServeError) else (
            422 if isinstance(error, (CaptionError, CaptionTypeError)) else 400)
        return _answer(hide_paths(str(error), [*folders(), Path.cwd(), Path.home()] if folders else
                                  [Path.cwd(), Path.home()]), status, request)

    @app.exception_handler(ClientDisconnect)
    async def gone(request: Request, error: ClientDisconnect) -> JSONResponse:
        LOGGER.info("%s %s -> client disconnected", request.method, _logged(request.url.path))
        return _answer(Errors.E791.format(problem="the client closed the connection mid-request"), 400)

    @app.exception_handler(Exception)
    async def failed(request: Request, error: Exception) -> JSONResponse:
        # one line, no traceback: the request id ties the answer to it (run with --log-level debug
        # to see the traceback); _Failures answers first, this only what a middleware raised
        return _failure(request.method, request.url.path, error)


def _shown(path: str, limit: int = 200) -> str:
    """A request path cut to 200 characters, for a message."""
    return path if len(path) <= limit else path[:limit - 1] + "…"


def _logged(text: str, limit: int = 200) -> str:
    """A path or message for the log: cut, on one line, control and format characters escaped (a
    path holding ``%0A`` writes no line of its own).

    Example:
        >>> _logged("/v1/items/a\\nb")
        '/v1/items/a\\\\nb'
    """
    shown = _shown(text, limit)
    return shown if shown.isprintable() else "".join(
        char if char.isprintable() else ascii(char)[1:-1] for char in shown)
