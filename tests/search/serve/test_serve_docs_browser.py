"""In a real, offline browser (Debian's chromium driven by Playwright): ``/docs`` shows the API from
the server's own files, and the evaluation page opens on the ``default`` system.

Every request that is not to 127.0.0.1 is blocked and recorded, and none may be attempted: a page
that needed a CDN would stay blank here, as it would offline.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the serve extra (uvicorn) is not installed")
pytest.importorskip("fastapi_offline", reason="the serve extra (fastapi-offline) is not installed")
pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

from playwright.sync_api import Browser, Page, expect, sync_playwright
from search.serve.test_serve_contract import Served, tiny_run

from fortekit.search.serve.app import create_app
from fortekit.search.serve.eval_run import EvalRun
from fortekit.search.serve.service import SearchService

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium to drive (scripts/setup.sh installs Debian's; Playwright never "
                             "downloads one)")


@pytest.fixture(scope="module")
def base(cafe: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    run = EvalRun.load(tiny_run(tmp_path_factory.mktemp("docs_eval")))
    with Served(create_app(SearchService.open(cafe, device="cpu"), eval_run=run)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    playwright = sync_playwright().start()
    try:
        try:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        except Exception as error:  # a chromium that does not start (no display libraries ...)
            pytest.skip(f"chromium at {CHROMIUM} does not start under Playwright: {error}")
        yield launched
        launched.close()
    finally:
        playwright.stop()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    offsite: list[str] = []
    errors: list[str] = []

    def offline(route: Any) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            offsite.append(route.request.url)
            route.abort()

    context.route("**/*", offline)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
    page.on("console", lambda msg: errors.append(f"console: {msg.text}") if msg.type == "error" else None)
    yield page
    context.close()
    assert offsite == [], f"the page tried to reach the network: {offsite}"
    assert errors == [], f"the page logged errors: {errors}"


def test_docs_shows_every_operation_offline(base: str, page: Page) -> None:
    page.goto(f"{base}/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("fortekit")
    operations = page.locator(".opblock-summary-path")
    expect(operations.first).to_be_visible()
    paths = set(operations.all_inner_texts())
    assert {"/v1/search", "/v1/items/{item_id}", "/v1/stage1/tree"} <= {path.replace("\u200b", "")
                                                                         for path in paths}, paths


def test_the_evaluation_page_opens_on_default(base: str, page: Page) -> None:
    page.goto(f"{base}/eval")
    expect(page.locator("#system")).to_have_value("default")
    expect(page.locator("#baseline")).to_have_value("baseline")
