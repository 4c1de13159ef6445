"""``fortekit serve``: one warm process that answers searches over HTTP, with pages to look and listen.

The index, the backbone and the parser are loaded once; :class:`SearchService` ranks through the
one :class:`~fortekit.search.retriever.Retriever` (so an answer is what ``Retriever.search``
returns), and :func:`create_app` puts the versioned API (``/v1/...``) and the pages (``/`` and
``/eval``, static files shipped in the package) in front of it. FastAPI and uvicorn are the
optional extra ``fortekit[serve]``: nothing here imports them until :func:`create_app` is called.

Example:
    >>> from fortekit.search.serve import ServeLimits
    >>> ServeLimits().max_batch
    64
    >>> app = create_app(SearchService.open("clips.index"))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fortekit.search.serve.limits import ServeLimits, StageSwitches

if TYPE_CHECKING:
    from fortekit.search.serve.app import create_app
    from fortekit.search.serve.eval_run import EvalRun
    from fortekit.search.serve.service import SearchService

__all__ = ["EvalRun", "SearchService", "ServeLimits", "StageSwitches", "create_app"]

_LAZY = {
    "create_app": "fortekit.search.serve.app",
    "SearchService": "fortekit.search.serve.service",
    "EvalRun": "fortekit.search.serve.eval_run",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(_LAZY[name]), name)
