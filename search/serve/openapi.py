"""The API's contract: what ``/openapi.json`` states beyond what FastAPI derives from the routes.

FastAPI describes each route's parameters and its 200; this module adds what the server really
does, so that a client generated from the schema, or a schema-driven tester, meets no surprise:

- every status each operation can answer, each with the coded error body
  ``{"error": {"code", "status", "message"}}`` (:data:`ERROR_SCHEMA`);
- the 405 of every path, with the ``Allow`` header RFC 9110 requires
  (``components.responses.MethodNotAllowed``, named in each path's description);
- ``POST /v1/search``: exactly one of ``query`` and ``queries`` (``oneOf``), ``k`` from 1 to
  ``--max-k``, at most ``--max-batch`` queries, each a :func:`text_schema` (a visible character,
  a length that keeps any body the schema allows under ``--max-body-bytes``);
- the bounds of the other parameters (an item id, a query id: short enough for a request line).

The server holds requests to the same rules (:func:`check_text`), so that a request valid under
the schema is answered, and one invalid under it refused with a 4xx.

Example:
    >>> limits = ServeLimits(max_body_bytes=4096, max_batch=4)
    >>> text_bounds(limits)
    (298, 74)
    >>> check_text("rain", where="query", route="POST /v1/search", limit=10)
    'rain'
"""

from __future__ import annotations

import copy
import re
from functools import cache
from typing import Any

from fortekit.errors import Errors, ServeError
from fortekit.search.serve.limits import ServeLimits

__all__ = ["ERROR_SCHEMA", "ID_CHARS", "SYSTEM_CHARS", "TREE_QUERY_CHARS", "check_text", "describe_api",
           "text_bounds", "visible_pattern"]

#: The longest query of ``GET /v1/stage1/tree``, item id and evaluation query id, in characters: with
#: every character percent-encoded as 4 UTF-8 bytes (12 characters), the request line stays under
#: the 16 KiB uvicorn's HTTP parser reads.
TREE_QUERY_CHARS = 1000
ID_CHARS = 1000
QUERY_ID_CHARS = 500
SYSTEM_CHARS = 200
#: The most bytes one character of a query takes in a JSON body (an escaped pair: ``\\ud83d\\ude00``).
_BYTES_PER_CHAR = 12
#: What a body holds besides its queries' text: the field names, ``k``, the switches.
_BODY_OVERHEAD = 512
_MAX_CHARS = 100_000  # the text check's bound (fortekit.fol.caption.pipeline.MAX_CHARS)

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object", "title": "Error", "required": ["error"],
    "description": "Every refused or failed request: the code (see docs/errors.md), the status, the message.",
    "properties": {"error": {
        "type": "object", "required": ["code", "status", "message"],
        "properties": {"code": {"type": "string", "pattern": "^[EW][0-9]{3}$", "examples": ["E792"]},
                       "status": {"type": "integer", "minimum": 400, "maximum": 599},
                       "message": {"type": "string"}},
    }},
}
_ERRORS: dict[str, str] = {
    "400": "E791: a body that is not JSON, a Content-Length that is no number, a bad Range header",
    "403": "E809: a Host this server does not answer to; E810: a change sent by another site's page",
    "404": "not found (the message's code says what)",
    "409": "E811: the index cannot be loaded again; the old state is still served",
    "413": "E793: a body past --max-body-bytes",
    "416": "a Range past the end of the file",
    "422": "E792 and the text check's codes (E300, E301, E671): a field out of its bounds",
    "500": "E805: a bug of the server, with a request id its log repeats",
    "503": "E806: the search queue is full (--max-queue); try again",
}
_NOT_FOUND = {
    "search": "E803: this server serves no index (started with --eval only)",
    "item": "E795: no such item; E803: no index",
    "audio": "E795: no such item; E796: it has no audio file; E797: its file is missing; E803: no index",
    "eval": "E800: this server was started without --eval",
    "eval_queries": "E800: no --eval run; E802: no such system",
    "eval_query": "E800: no --eval run; E802: no such system; E808: no such query",
}
#: Per operation: its 404's meaning and the statuses it answers besides 200, 403, 413, 400 and 500.
_OPERATIONS: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]] = {
    ("post", "/v1/search"): ("search", ("404", "422", "503")),
    ("get", "/v1/items/{item_id}"): ("item", ("404",)),
    ("get", "/v1/items/{item_id}/audio"): ("audio", ("404", "416")),
    ("get", "/v1/stage1/tree"): ("search", ("404", "422")),
    ("get", "/v1/health"): (None, ()),
    ("post", "/v1/reload"): ("search", ("404", "409")),
    ("get", "/v1/info"): (None, ()),
    ("get", "/v1/eval"): ("eval", ("404",)),
    ("get", "/v1/eval/queries"): ("eval_queries", ("404", "422")),
    ("get", "/v1/eval/queries/{query_id}"): ("eval_query", ("404", "422")),
}
_ALWAYS = ("400", "403", "413", "500")


@cache
def visible_pattern() -> str:
    """A regular expression that finds a visible character of the Basic Multilingual Plane.

    A visible character is printable and no white space (``str.isprintable()`` and not
    ``str.isspace()``, by this Python's Unicode tables): not a control, format, private-use or
    unassigned character. Written as one class of ``\\uXXXX`` ranges, it reads the same in
    Python, ECMA-262 (with or without the ``u`` flag) and Rust.

    Example:
        >>> visible = re.compile(visible_pattern())
        >>> bool(visible.search(" \\t rain")), bool(visible.search("\\u200b\\x00 "))
        (True, False)
    """
    ranges: list[tuple[int, int]] = []
    start = None
    for point in range(0x10000):
        visible = not 0xD800 <= point <= 0xDFFF and chr(point).isprintable() and not chr(point).isspace()
        if visible and start is None:
            start = point
        elif not visible and start is not None:
            ranges.append((start, point - 1))
            start = None
    if start is not None:
        ranges.append((start, 0xFFFF))
    return "[" + "".join(f"\\u{low:04x}" if low == high else f"\\u{low:04x}-\\u{high:04x}"
                         for low, high in ranges) + "]"


@cache
def _visible() -> re.Pattern[str]:
    return re.compile(visible_pattern())


def text_bounds(limits: ServeLimits) -> tuple[int, int]:
    """The longest ``query`` and the longest query of ``queries``, in characters, on this server.

    Each is as long as a body may be while any body the schema allows (``--max-batch`` queries
    of that length, each character written as a 12-byte JSON escape) stays under
    ``--max-body-bytes``, and at most the text check's 100,000.

    Example:
        >>> text_bounds(ServeLimits())
        (21802, 340)
    """
    room = max(limits.max_body_bytes - _BODY_OVERHEAD, 0)
    single = room // _BYTES_PER_CHAR
    each = (room // limits.max_batch - 3) // _BYTES_PER_CHAR  # 2 quotes and a comma per query
    return max(min(single, _MAX_CHARS), 1), max(min(each, _MAX_CHARS), 1)


def check_text(text: str, *, where: str, route: str, limit: int, fields: str = "query") -> str:
    """``text`` itself when the schema's :func:`text_schema` holds for it.

    The length comes first, then the one text check of every caption and query (its codes: E300
    empty, E671 a lone surrogate), then the API's own rule of a visible character.

    Raises:
        CaptionError: the text check's refusal (E300, E671; status 422).
        ServeError: longer than ``limit`` characters, or no visible character from U+0000 to
            U+FFFF (E792, status 422).

    Example:
        >>> check_text("\\U0001f600", where="query", route="GET /v1/stage1/tree", limit=10)
        Traceback (most recent call last):
        ...
        fortekit.errors.ServeError: [E792] query: holds no visible character ...
    """
    from fortekit.fol.caption.pipeline import check_text as check_caption

    problem = ""
    if len(text) > limit:
        problem = (f"holds {len(text)} characters; this server takes at most {limit} here (the bound "
                   "keeps every request the schema allows under --max-body-bytes and --max-batch)")
    elif _visible().search(check_caption(text, function=route)) is None:
        problem = ("holds no visible character (a letter, digit or sign from U+0000 to U+FFFF: white "
                   "space, control, format, private-use and unassigned characters do not count)")
    if problem:
        raise ServeError(Errors.E792.format(where=where, problem=problem, route=route, fields=fields),
                         status=422)
    return text


def text_schema(limit: int) -> dict[str, Any]:
    """The JSON schema of a query text: 1 to ``limit`` characters, one of them visible."""
    return {"type": "string", "minLength": 1, "maxLength": limit, "pattern": visible_pattern(),
            "description": "a text with a visible character (pattern: a printable character that is "
                           "no white space, from U+0000 to U+FFFF); ANSI escape sequences count as "
                           "invisible too (E300)",
            "examples": ["a dog barking without people talking"]}


def _error_response(text: str) -> dict[str, Any]:
    body = {"schema": {"$ref": "#/components/schemas/Error"}}
    return {"description": text, "content": {"application/json": body}}


def describe_api(generated: dict[str, Any], limits: ServeLimits, *, systems: tuple[str, ...] = (),
                 item_ids: tuple[str, ...] = ()) -> dict[str, Any]:
    """``/openapi.json``: FastAPI's schema with the server's whole contract (a new dict).

    Args:
        generated: what FastAPI derives from the routes.
        limits: this server's bounds (``k``, the batch, the texts).
        systems: the evaluation run's systems (the values ``system`` and ``baseline`` take).
        item_ids: a few ids of the index, shown as examples of ``item_id``.

    Returns:
        The schema, with every status, constraint and the 405's ``Allow`` header stated.
    """
    schema = copy.deepcopy(generated)
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):  # FastAPI's 422 body, never sent here
        schemas.pop(name, None)
    schemas["Error"] = copy.deepcopy(ERROR_SCHEMA)
    single, each = text_bounds(limits)
    schemas["QueryText"] = text_schema(single)
    schemas["BatchQueryText"] = text_schema(each)
    components["headers"] = {"Allow": {
        "description": "The methods the path answers (RFC 9110, 15.5.6), such as `GET`.",
        "required": True, "schema": {"type": "string"}}}
    components["responses"] = {"MethodNotAllowed": {
        "description": "E799: the path does not answer this method; `Allow` lists those it answers.",
        "headers": {"Allow": {"$ref": "#/components/headers/Allow"}},
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}}
    _search_request(schemas.get("SearchRequest"), limits)
    for path, item in schema.get("paths", {}).items():
        methods = sorted(method.upper() for method in item if method in ("get", "post", "put", "delete"))
        allowed = ", ".join(methods)
        item["description"] = (f"Answers {allowed}. Any other method gets 405 (E799) with the header "
                               f"`Allow: {allowed}` (#/components/responses/MethodNotAllowed).")
        for method, operation in item.items():
            if not isinstance(operation, dict) or (method, path) not in _OPERATIONS:
                continue
            not_found, statuses = _OPERATIONS[(method, path)]
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            for status in sorted({*_ALWAYS, *statuses}):
                text = _NOT_FOUND[not_found] if status == "404" and not_found else _ERRORS[status]
                responses[status] = _error_response(text)
            _parameters(operation, systems, item_ids)
    _audio(schema)
    return schema


def _search_request(request: dict[str, Any] | None, limits: ServeLimits) -> None:
    if request is None:
        return
    properties = request["properties"]
    properties["query"]["anyOf"] = [{"$ref": "#/components/schemas/QueryText"}, {"type": "null"}]
    properties["queries"]["anyOf"] = [{"type": "array", "maxItems": limits.max_batch,
                                       "items": {"$ref": "#/components/schemas/BatchQueryText"}},
                                      {"type": "null"}]
    properties["k"] = {"type": "integer", "minimum": 1, "maximum": limits.max_k, "default": 10, "title": "K",
                       "description": properties["k"].get("description", "hits per query")}
    # exactly one of the two is given (a null counts as not given)
    request["oneOf"] = [
        {"required": ["query"], "properties": {"query": {"type": "string"}}},
        {"required": ["queries"], "properties": {"queries": {"type": "array"}}},
    ]


def _parameters(operation: dict[str, Any], systems: tuple[str, ...], item_ids: tuple[str, ...]) -> None:
    for parameter in operation.get("parameters", []):
        name, where = parameter.get("name"), parameter.get("in")
        bound = parameter.setdefault("schema", {})
        if name == "query" and where == "query":
            parameter["schema"] = {**text_schema(TREE_QUERY_CHARS), "title": "Query"}
        elif where == "path":
            bound.update({"minLength": 1, "maxLength": QUERY_ID_CHARS if name == "query_id" else ID_CHARS})
            if name == "item_id" and item_ids:
                bound["examples"] = [item_id for item_id in item_ids if len(item_id) <= ID_CHARS]
        elif name in ("system", "baseline") and systems:
            bound.update({"description": "a system of the run: " + ", ".join(systems),
                          "examples": list(systems)})


def _audio(schema: dict[str, Any]) -> None:
    from fortekit.search.serve.audio_files import MEDIA_TYPES

    operation = schema.get("paths", {}).get("/v1/items/{item_id}/audio", {}).get("get")
    if operation is None:
        return
    binary = {"schema": {"type": "string", "format": "binary"}}
    types = {media: binary for media in sorted(set(MEDIA_TYPES.values()))}
    responses = operation["responses"]
    responses["200"] = {"description": "The whole file (`Accept-Ranges: bytes`).", "content": types}
    responses["206"] = {"description": "The range asked for (a `Range: bytes=...` header).", "content": types}
