"""The JSON of a search answer, encoded once: by orjson when it is installed, else as Starlette does.

``POST /v1/search`` answers about 5 kB of JSON a query (ten hits with their score parts and
predicates). Starlette's ``JSONResponse`` encodes it with :func:`json.dumps` (compact, UTF-8, no
NaN): about 60 µs for ten hits on this 2-core CPU. orjson, where it is installed (the ``serve``
extra installs it; without it :func:`json.dumps` writes the answer), writes the same document in
about 5 µs: the same keys, values and order, UTF-8 unescaped as ``ensure_ascii=False`` writes
it; only a number's exponent may be written shorter (``1e-7``, not ``1e-07``: the same number).
docs/serve.md, "Load and latency", has the measurement of where a request's CPU goes
(``scripts/serve_cpu.py``).

Example:
    >>> json_bytes({"id": "clip3", "score": 0.5, "caption": "rain é", "path": None})
    b'{"id":"clip3","score":0.5,"caption":"rain \\xc3\\xa9","path":null}'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

__all__ = ["json_bytes"]


@cache
def _orjson_dumps() -> Callable[[Any], bytes] | None:
    """orjson's ``dumps``, or None when orjson is not installed (imported on first use, once)."""
    try:
        import orjson
    except ImportError:
        return None
    dumps: Callable[[Any], bytes] = orjson.dumps
    return dumps


def json_bytes(content: Any) -> bytes:
    """`content` as compact UTF-8 JSON, the document Starlette's ``JSONResponse`` writes.

    orjson writes it when it is installed; a value orjson does not take (a key that is not a
    string, an integer past 64 bits) is written by :func:`json.dumps`, as without it. A number
    that is not finite (none is in an answer: every score is) is refused by :func:`json.dumps` and
    written ``null`` by orjson.

    Args:
        content: JSON values (dicts, lists, strings, numbers, booleans, None).

    Returns:
        The UTF-8 bytes.

    Raises:
        ValueError, TypeError: a value JSON cannot hold, as :func:`json.dumps` raises them.

    Example:
        >>> json.loads(json_bytes({"hits": [{"rank": 1, "score_parts": ()}]}))
        {'hits': [{'rank': 1, 'score_parts': []}]}
    """
    dumps = _orjson_dumps()
    if dumps is not None:
        try:
            return dumps(content)
        except TypeError:  # orjson.JSONEncodeError: json.dumps says what it is, or writes it
            pass
    return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                      separators=(",", ":")).encode("utf-8")
