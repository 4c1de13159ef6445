"""`fortekit serve`'s pages in a real browser (Debian's chromium, headless, driven by Playwright).

A uvicorn server runs in a thread of the test process over the generated sound collection (with its
WAV files) and a real ``fortekit eval --beir`` run; a second one serves a small index of hostile
captions. The browser is offline: every request that is not to 127.0.0.1 is blocked and recorded,
and none may be attempted. The pages send a strict Content-Security-Policy (no ``unsafe-eval``), so
the tests wait with locators and ``expect``, never with ``page.wait_for_function``.

What is checked: type a query and see the hits the API returns; play an audio hit (the element
loads the file); switch a stage off and see the ranking change; the Stage 1 tree link; every
caption and query is shown as text; the evaluation page (metrics, per-query table, sorting, the
detail of a query, by mouse and by keyboard); labels and landmarks; no horizontal scroll on a
1366x768 laptop screen.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("fastapi", reason="the serve extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the serve extra (uvicorn) is not installed")
pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

import httpx
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from fortekit.search.serve.app import create_app
from fortekit.search.serve.eval_run import EvalRun
from fortekit.search.serve.service import SearchService

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium to drive (scripts/setup.sh installs Debian's; Playwright never "
                             "downloads one)")

EXCLUSION = "a dog barking without a siren"
HOSTILE_CAPTIONS = {
    "clip0": "<script>window.__pwned = 1</script>",
    "clip1": '<img src=x onerror="window.__pwned=1">',
    "clip2": "a dog barks & a siren <b>wails</b>",
    "clip3": "rain falls on a tin roof",
    "clip4": "birds chirp in the morning",
}
HOSTILE_QUERY = '<img src=x onerror="window.__pwned=1"> a dog <script>window.__pwned=1</script>'
LAPTOP = {"width": 1366, "height": 768}
NUMBER = r"[0-9]+(?:\.[0-9]+)?"
IDS = "els => els.map(e => e.dataset.id)"
PAIR = {"system": "formula", "baseline": "baseline"}


class _Served:
    """An app served by uvicorn in a thread on 127.0.0.1 (a free port)."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        for _ in range(600):
            if self.server.started or not self.thread.is_alive():
                break
            self.thread.join(0.05)
        assert self.server.started, "uvicorn did not start"
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def base(sound_index: Path, negation_run: Path) -> Iterator[str]:
    """The URL of a server over the sound index and the evaluation run."""
    app = create_app(SearchService.open(sound_index, device="cpu"), eval_run=EvalRun.load(negation_run))
    with _Served(app) as url:
        yield url


@pytest.fixture(scope="module")
def hostile_base(minilm: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a server over an index whose captions are HTML and script."""
    from fortekit.search.index.audio_index import AudioIndex

    directory = tmp_path_factory.mktemp("hostile") / "hostile.index"
    AudioIndex.from_captions(list(HOSTILE_CAPTIONS), list(HOSTILE_CAPTIONS.values()), minilm).save(directory)
    with _Served(create_app(SearchService.open(directory, device="cpu"))) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    playwright: Playwright = sync_playwright().start()
    try:
        try:
            launched = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"])
        except Exception as error:  # a chromium that does not start (no display libraries ...)
            pytest.skip(f"chromium at {CHROMIUM} does not start under Playwright: {error}")
        yield launched
        launched.close()
    finally:
        playwright.stop()


class _Watch:
    """What a browser context did: the requests it tried off 127.0.0.1, page errors, console errors."""

    def __init__(self) -> None:
        self.offsite: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []


@pytest.fixture
def context(browser: Browser) -> Iterator[tuple[BrowserContext, _Watch]]:
    context = browser.new_context(viewport=LAPTOP)
    watch = _Watch()

    def offline(route: Any) -> None:
        url = route.request.url
        if urlsplit(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            watch.offsite.append(url)
            route.abort()

    context.route("**/*", offline)
    context.on("request", lambda request: None if request.url.startswith(("http://127.0.0.1:", "data:"))
               else watch.offsite.append(request.url))
    yield context, watch
    context.close()
    assert watch.offsite == [], f"the page tried to reach the network: {watch.offsite}"
    assert watch.errors == [], f"the page logged errors: {watch.errors}"
    assert watch.dialogs == [], f"the page opened dialogs: {watch.dialogs}"


def _watched(context: BrowserContext, watch: _Watch) -> Page:
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("pageerror", lambda error: watch.errors.append(f"pageerror: {error}"))
    page.on("console", lambda msg: watch.errors.append(f"console: {msg.text}")
            if msg.type == "error" else None)

    def dialog(d: Any) -> None:
        watch.dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    return page


@pytest.fixture
def page(context: tuple[BrowserContext, _Watch]) -> Page:
    return _watched(*context)


def _api_search(base: str, query: str, **switches: str) -> dict[str, Any]:
    answer = httpx.post(f"{base}/v1/search", json={"query": query, "k": 10, "explain": True, **switches},
                        timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def _hits(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return answer["results"][0]["hits"]  # type: ignore[no-any-return]


def _shown_ids(page: Page) -> list[str]:
    return [str(i) for i in page.locator("#hits > li.hit").evaluate_all(IDS)]


def _search(page: Page, base: str, query: str) -> None:
    """Open the search page, type the query, press Enter and wait for the hits."""
    page.goto(f"{base}/")
    expect(page.locator("#index-summary")).not_to_have_text("")  # /v1/info answered
    page.locator("#query").fill(query)
    page.locator("#query").press("Enter")
    expect(page.locator("#status")).to_have_text(re.compile(rf"^(\d+ hits?|No hits) in {NUMBER} ms$"))


def _no_horizontal_scroll(page: Page) -> None:
    width = page.locator("html").evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert width[0] <= width[1] <= LAPTOP["width"], f"the page scrolls sideways: {width}"


# ---------------------------------------------------------------- the search page


def test_typing_a_query_shows_the_hits_the_api_returns(page: Page, base: str) -> None:
    _search(page, base, EXCLUSION)
    answer = _api_search(base, EXCLUSION)
    hits, result = _hits(answer), answer["results"][0]
    expect(page.locator("#status")).to_have_text(re.compile(rf"^{len(hits)} hits in {NUMBER} ms$"))
    assert _shown_ids(page) == [hit["id"] for hit in hits]
    expect(page.locator("#hits > li.hit p.caption")).to_have_text([hit["caption"] for hit in hits])
    expect(page.locator("#hits > li.hit .rank")).to_have_text([f"#{hit['rank']}" for hit in hits])
    violating = [hit["id"] for hit in hits if hit["violated"]]
    assert violating, "the exclusion query should rank an item that mentions the siren"
    assert page.locator("#hits > li.hit.violated").evaluate_all(IDS) == violating
    first_violating = page.locator(f'#hits > li.hit[data-id="{violating[0]}"]')
    expect(first_violating.locator("ul.violated li")).to_have_count(
        len(hits[_index(hits, violating[0])]["violated"]))
    expect(page.locator("#hits > li.hit audio")).to_have_count(len(hits))  # every item has a file
    # the explanation: the formulas, the clauses (the siren negated), the pipeline that ran
    expect(page.locator("#formula-panel")).to_be_visible()
    expect(page.locator("#formula-panel code.phi0")).to_have_text(result["phi0"])
    clauses = page.locator("#formula-panel ul.clauses li.clause")
    expect(clauses).to_have_count(len(result["clauses"]))
    expect(page.locator("#formula-panel li.clause.negated")).to_have_count(
        sum(1 for clause in result["clauses"] if clause["negated"]))
    expect(page.locator("#formula-panel li.clause.negated")).to_contain_text([re.compile("siren", re.I)])
    for name, stage in answer["pipeline"]["stages"].items():
        state = "stage-on" if stage["on"] else "stage-off"
        expect(page.locator(f'#pipeline li.stage[data-stage="{name}"]')).to_have_class(
            re.compile(rf"\b{state}\b"))
    assert parse_qs(urlsplit(page.url).query) == {"q": [EXCLUSION]}


def _index(hits: list[dict[str, Any]], item_id: str) -> int:
    return next(i for i, hit in enumerate(hits) if hit["id"] == item_id)


def test_an_audio_hit_plays(page: Page, base: str, sound_collection: Path) -> None:
    _search(page, base, "rain falling")
    audio = page.locator("#hits > li.hit audio").first
    item_id = page.locator("#hits > li.hit").first.get_attribute("data-id")
    assert item_id
    assert audio.get_attribute("preload") == "none"
    assert audio.get_attribute("src") == f"/v1/items/{item_id}/audio"
    with page.expect_response(lambda r: urlsplit(r.url).path == f"/v1/items/{item_id}/audio") as response:
        audio.evaluate("el => el.play()")
    assert response.value.status in (200, 206)
    assert response.value.headers["content-type"].startswith("audio/")
    with wave.open(str(sound_collection / "audio" / f"{item_id}.wav")) as wav:
        seconds = wav.getnframes() / wav.getframerate()
    # the element loaded the file: it knows its duration, and it plays
    for _ in range(100):
        state = audio.evaluate("el => ({ready: el.readyState, duration: el.duration, error: el.error && "
                               "el.error.code, time: el.currentTime, paused: el.paused})")
        if state["ready"] >= 2 and state["time"] > 0:
            break
        page.wait_for_timeout(100)
    assert state["error"] is None, state
    assert state["ready"] >= 1, state
    assert state["duration"] == pytest.approx(seconds, abs=0.05), state
    assert not state["paused"], state
    audio.evaluate("el => el.pause()")


def test_switching_a_stage_off_changes_the_ranking(page: Page, base: str) -> None:
    _search(page, base, EXCLUSION)
    before = _shown_ids(page)
    assert before == [hit["id"] for hit in _hits(_api_search(base, EXCLUSION))]
    formula = page.locator('#pipeline li.stage[data-stage="formula"]')
    expect(formula).to_have_class(re.compile(r"\bstage-on\b"))

    page.locator("#formula_scoring").select_option("off")  # re-runs the query
    expect(formula).to_have_class(re.compile(r"\bstage-off\b"))
    expect(formula.locator(".stage-state")).to_have_text("off")
    expect(page.locator("#search-button")).to_be_enabled()
    after = _shown_ids(page)
    off = _hits(_api_search(base, EXCLUSION, formula_scoring="off"))
    assert after == [hit["id"] for hit in off]
    assert after != before
    expect(page.locator("#hits > li.hit p.caption")).to_have_text([hit["caption"] for hit in off])
    assert parse_qs(urlsplit(page.url).query) == {"q": [EXCLUSION], "formula_scoring": ["off"]}

    page.reload()  # the URL keeps the query and the switches
    expect(page.locator("#formula_scoring")).to_have_value("off")
    expect(page.locator("#query")).to_have_value(EXCLUSION)
    expect(formula).to_have_class(re.compile(r"\bstage-off\b"))
    assert _shown_ids(page) == after

    page.locator("#formula_scoring").select_option("auto")
    expect(formula).to_have_class(re.compile(r"\bstage-on\b"))
    assert _shown_ids(page) == before


def test_the_stage1_tree_link_answers_the_tree_of_the_query(
        page: Page, base: str, context: tuple[BrowserContext, _Watch]) -> None:
    _search(page, base, EXCLUSION)
    link = page.locator("#stage1-tree-link")
    href = link.get_attribute("href")
    assert href is not None
    assert urlsplit(href).path == "/v1/stage1/tree"
    assert parse_qs(urlsplit(href).query) == {"query": [EXCLUSION]}
    answer = httpx.get(f"{base}{href}", timeout=60)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.text.strip()
    with context[0].expect_page() as opened:
        link.click()
    tree = opened.value
    tree.wait_for_load_state()
    assert tree.locator("body").inner_text().strip() == answer.text.strip()
    tree.close()


def test_every_caption_and_query_is_shown_as_text(page: Page, hostile_base: str) -> None:
    _search(page, hostile_base, HOSTILE_QUERY)
    answer = _api_search(hostile_base, HOSTILE_QUERY)
    hits = _hits(answer)
    assert {hit["caption"] for hit in hits} == set(HOSTILE_CAPTIONS.values())
    expect(page.locator("#hits > li.hit p.caption")).to_have_text([hit["caption"] for hit in hits])
    for caption in HOSTILE_CAPTIONS.values():  # the markup is shown, character for character
        expect(page.get_by_text(caption, exact=True)).to_have_count(1)
    # the query went through as text too: into the box, the URL and the tree link
    expect(page.locator("#query")).to_have_value(HOSTILE_QUERY)
    href = page.locator("#stage1-tree-link").get_attribute("href") or ""
    assert parse_qs(urlsplit(href).query) == {"query": [HOSTILE_QUERY]}
    for where in ("#hits", "#formula-panel", "main"):
        expect(page.locator(f"{where} img")).to_have_count(0)
        expect(page.locator(f"{where} script")).to_have_count(0)
        expect(page.locator(f"{where} b")).to_have_count(0)
    assert page.evaluate("() => typeof window.__pwned") == "undefined"

    # the same query from the URL (a shared link) renders the same, still as text
    page.goto(f"{hostile_base}/?{httpx.QueryParams({'q': HOSTILE_QUERY})}")
    expect(page.locator("#status")).to_have_text(re.compile(rf"^{len(hits)} hits in {NUMBER} ms$"))
    expect(page.locator("#hits > li.hit p.caption")).to_have_text([hit["caption"] for hit in hits])
    expect(page.locator("main img")).to_have_count(0)
    assert page.evaluate("() => typeof window.__pwned") == "undefined"


# ---------------------------------------------------------------- the evaluation page


def _metric_systems(run: Path) -> dict[str, dict[str, Any]]:
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    block = metrics.get("t2a")
    return block["systems"] if isinstance(block, dict) else metrics["systems"]  # type: ignore[no-any-return]


def _gains(page: Page) -> list[str]:
    return page.locator("#queries tbody tr td.gain").all_inner_texts()


def _as_number(text: str) -> float:
    return float(text.replace("+", ""))


def test_the_evaluation_page_compares_the_systems(page: Page, base: str, negation_run: Path) -> None:
    page.goto(f"{base}/")
    expect(page.locator("#eval-link")).to_be_visible()
    page.locator("#eval-link").click()
    expect(page).to_have_url(re.compile(rf"^{re.escape(base)}/eval(\?.*)?$"))
    systems = _metric_systems(negation_run)
    rows = page.locator("table#metrics tbody tr[data-system]")
    expect(rows).to_have_count(len(systems))
    for name, row in systems.items():
        cells = page.locator(f'table#metrics tr[data-system="{name}"] td')
        headers = page.locator("table#metrics thead th").all_inner_texts()[1:]
        expect(cells.nth(headers.index("nDCG@10"))).to_have_text(f"{row['nDCG@10']:.3f}")
    expect(page.locator("#system")).to_have_value("formula")
    expect(page.locator("#baseline")).to_have_value("baseline")

    queries = httpx.get(f"{base}/v1/eval/queries", params=PAIR).json()
    assert len(queries) == 40
    body = page.locator("table#queries tbody tr[data-query-id]")
    expect(body).to_have_count(40)
    # by gain, largest first; a click on the header sorts the other way
    expect(page.locator('table#queries th[data-key="gain"]')).to_have_attribute("aria-sort", "descending")
    gains = [_as_number(text) for text in _gains(page)]
    assert gains == sorted(gains, reverse=True)
    assert sorted(gains) == sorted(round(q["gain"], 3) + 0.0 for q in queries)
    page.locator('table#queries th[data-key="gain"] button.sort').click()
    expect(page.locator('table#queries th[data-key="gain"]')).to_have_attribute("aria-sort", "ascending")
    gains = [_as_number(text) for text in _gains(page)]
    assert gains == sorted(gains)
    page.locator('table#queries th[data-key="query"] button.sort').click()
    texts = page.locator("table#queries tbody button.query-button").all_inner_texts()
    assert texts == sorted(texts, key=str.lower)

    # a click on a query shows both top 10s, the relevant items and the violations marked as the API says
    chosen = next((q for q in queries if q["excluded"]), queries[0])
    page.locator(f'tr[data-query-id="{chosen["query_id"]}"] button.query-button').click()
    detail = page.locator("#detail")
    expect(detail).to_be_visible()
    expect(page.locator("#detail-heading")).to_have_text(chosen["query"])
    expected = httpx.get(f"{base}/v1/eval/queries/{chosen['query_id']}",
                         params=PAIR).json()
    _assert_detail(page, expected)
    assert parse_qs(urlsplit(page.url).query)["query"] == [chosen["query_id"]]
    _no_horizontal_scroll(page)


def _assert_detail(page: Page, expected: dict[str, Any]) -> None:
    for side in ("baseline", "system"):
        items = page.locator(f"#detail section.detail-{side} ol.top li.top-item")
        expect(items).to_have_count(10)
        top = expected[side]["top"][:10]
        assert items.evaluate_all(IDS) == [item["id"] for item in top]
        relevant = page.locator(f"#detail section.detail-{side} li.top-item.relevant")
        assert relevant.evaluate_all(IDS) == [
            item["id"] for item in top if item["relevance"] and item["relevance"] > 0]
        violates = page.locator(f"#detail section.detail-{side} li.top-item.violates")
        assert violates.evaluate_all(IDS) == [
            item["id"] for item in top if item["violates"]]


def test_the_evaluation_page_works_from_the_keyboard(page: Page, base: str) -> None:
    page.goto(f"{base}/eval")
    expect(page.locator("table#queries tbody tr[data-query-id]")).to_have_count(40)
    gain = page.locator('table#queries th[data-key="gain"] button.sort')
    gain.focus()
    page.keyboard.press("Tab")
    first = page.locator("table#queries tbody button.query-button").first
    expect(first).to_be_focused()
    query_id = first.get_attribute("data-query-id")
    page.keyboard.press("Enter")
    expect(page.locator("#detail")).to_be_visible()
    expect(page.locator("#detail-heading")).to_be_focused()  # the reader is taken to the detail
    expect(page.locator(f'tr[data-query-id="{query_id}"]')).to_have_class(re.compile(r"\bselected\b"))
    expect(first).to_have_attribute("aria-current", "true")
    expected = httpx.get(f"{base}/v1/eval/queries/{query_id}",
                         params=PAIR).json()
    _assert_detail(page, expected)
    # Enter on a header's button sorts
    gain.focus()
    page.keyboard.press("Enter")
    expect(page.locator('table#queries th[data-key="gain"]')).to_have_attribute("aria-sort", "ascending")


# ---------------------------------------------------------------- accessibility, screen size


@pytest.mark.parametrize("path", ["/", "/eval"])
def test_every_control_has_a_label_and_the_page_a_main_landmark(page: Page, base: str, path: str) -> None:
    page.goto(f"{base}{path}")
    expect(page.locator("#status")).to_have_attribute("aria-live", "polite")
    if path == "/eval":
        expect(page.locator("table#queries tbody tr[data-query-id]")).to_have_count(40)
    controls = page.locator("input, select, textarea")
    assert controls.count() >= 2
    unlabelled = controls.evaluate_all(
        "els => els.filter(e => !e.labels || e.labels.length === 0 || !e.labels[0].textContent.trim())"
        ".map(e => e.id || e.outerHTML)")
    assert unlabelled == []
    nameless = page.locator("button").evaluate_all(
        "els => els.filter(e => !e.textContent.trim() && !e.getAttribute('aria-label'))"
        ".map(e => e.outerHTML)")
    assert nameless == []
    expect(page.get_by_role("main")).to_have_count(1)
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    assert page.locator("html").get_attribute("lang") == "en"
    labels = {"/": {"query": "Query", "k": "k", "stage1": "Stage 1 (query refinement)",
                    "formula_scoring": "Formula scoring", "stage3": "Stage 3 (re-ranking)"},
              "/eval": {"system": "System", "baseline": "Baseline"}}[path]
    for control, label in labels.items():
        expect(page.locator("input, select").and_(page.get_by_label(label, exact=True))).to_have_id(control)


def test_a_laptop_screen_needs_no_horizontal_scroll(page: Page, base: str) -> None:
    _search(page, base, EXCLUSION)
    _no_horizontal_scroll(page)
    page.goto(f"{base}/eval")
    expect(page.locator("table#queries tbody tr[data-query-id]")).to_have_count(40)
    page.locator("table#queries tbody button.query-button").first.click()
    expect(page.locator("#detail")).to_be_visible()
    _no_horizontal_scroll(page)
