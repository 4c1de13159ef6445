"""`fortekit serve`'s pages in a real browser (Debian's chromium, headless, driven by Playwright).

A uvicorn server runs in a thread of the test process over the generated sound collection (with its
WAV files) and a real ``fortekit eval --beir`` run; a second one serves a small index of hostile
captions. The browser is offline: every request that is not to 127.0.0.1 is blocked and recorded,
and none may be attempted. The pages send a strict Content-Security-Policy (no ``unsafe-eval``), so
the tests wait with locators and ``expect``, never with ``page.wait_for_function``.

What is checked: type a query and see the hits the API returns; play an audio hit (the element
loads the file); switch a stage off and see the ranking change; the first hits on the first screen
of a 1280x800 screen, the pipeline as a line that opens; each hit's score bar (its parts, labelled,
a part that takes away hatched) and its clause similarities with their clauses; a hit's details
inline; 20 hits at a time and "More results"; the Stage 1 tree as a nested, collapsible tree;
the "Pushed down by the exclusion" section and the low-confidence notice (on the API's answer,
and on an answer given those fields by the test, so they are checked before and after the API
sends them); every caption and query is shown as text; the evaluation page (metrics, per-query
table, sorting, the detail of a query, by mouse and by keyboard); labels and landmarks; no
horizontal scroll on a 1366x768 laptop screen.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import wave
from collections.abc import Iterator
from itertools import pairwise
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
FIRST_SCREEN = {"width": 1280, "height": 800}
PAGE_SIZE = 20
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


def test_the_first_hits_are_on_the_first_screen_and_the_pipeline_is_one_line(
        context: tuple[BrowserContext, _Watch], base: str) -> None:
    page = _watched(*context)
    page.set_viewport_size(FIRST_SCREEN)
    _search(page, base, EXCLUSION)
    hits = page.locator("#hits > li.hit")
    expect(hits.first).to_be_visible()
    boxes = hits.evaluate_all("els => els.slice(0, 3).map(e => { const r = e.getBoundingClientRect(); "
                              "return [r.top, r.bottom]; })")
    assert page.evaluate("() => window.scrollY") == 0
    assert boxes[0][1] <= FIRST_SCREEN["height"], f"the first hit is not wholly on the first screen: {boxes}"
    assert all(top < FIRST_SCREEN["height"] for top, _ in boxes), f"three hits do not start on it: {boxes}"
    # the pipeline: one line of on/off chips; the figures only once opened, once per stage
    answer = _api_search(base, EXCLUSION)
    stages = answer["pipeline"]["stages"]
    details = page.locator("#pipeline-details")
    expect(details).not_to_have_attribute("open", "")
    expect(page.locator("#pipeline")).to_be_hidden()
    chips = page.locator("#pipeline-line .stage-chip")
    expect(chips).to_have_count(len(stages))
    for name, stage in stages.items():
        chip = page.locator(f'#pipeline-line .stage-chip[data-stage="{name}"]')
        expect(chip).to_be_visible()
        expect(chip.locator(".stage-state")).to_have_text("on" if stage["on"] else "off")
    summary_height = page.locator("#formula-panel").evaluate("el => el.getBoundingClientRect().height")
    assert summary_height < 160, f"the query and pipeline panel is {summary_height}px tall"
    page.locator("#pipeline-summary").click()
    expect(page.locator("#pipeline")).to_be_visible()
    whys = [stage["why"] for stage in stages.values() if stage.get("why")]
    expect(page.locator("#pipeline li.stage .stage-why:not(.stage-detail)")).to_have_text(whys)
    # the figures are the pipeline's, not each hit's: shown once, whatever the number of hits
    assert page.locator("main").inner_text().count(whys[0]) == 1
    # another query keeps it open
    page.locator("#query").fill("rain falling")
    page.locator("#query").press("Enter")
    expect(page.locator("#status")).to_have_text(re.compile(rf"^\d+ hits? in {NUMBER} ms$"))
    expect(page.locator("#pipeline")).to_be_visible()


def _format_parts(parts: list[dict[str, Any]]) -> str:
    from fortekit.search.hits import format_score_parts

    return format_score_parts(tuple((part["stage"], part["amount"]) for part in parts))


def test_each_hit_has_a_score_bar_of_its_labelled_parts(page: Page, base: str) -> None:
    _search(page, base, EXCLUSION)
    answer = _api_search(base, EXCLUSION)
    hits, clauses = _hits(answer), answer["results"][0]["clauses"]
    assert all(hit["score_parts"] for hit in hits)
    assert any(part["amount"] < 0 for hit in hits for part in hit["score_parts"]), \
        "the exclusion query should take something away from some hit"
    expect(page.locator("#score-legend")).to_be_visible()
    for hit in hits:
        shown = page.locator(f'#hits > li.hit[data-id="{hit["id"]}"]')
        bar = shown.locator("svg.score-bar")
        expect(bar).to_be_visible()
        line = _format_parts(hit["score_parts"])
        expect(bar).to_have_attribute("aria-label", f"score parts: {line}")
        expect(bar.locator("title")).to_have_text(line)
        assert shown.locator(".score-wrap").get_attribute("title") == f"{line} = {hit['score']:.3f}"
        rects = bar.locator("rect.bar-part")
        expect(rects).to_have_count(len(hit["score_parts"]))
        drawn = rects.evaluate_all("els => els.map(e => [e.dataset.stage, e.classList.contains('part-minus'),"
                                   " getComputedStyle(e).fill, Number(e.getAttribute('width'))])")
        for (stage, minus, fill, width), part in zip(drawn, hit["score_parts"], strict=True):
            assert stage == part["stage"] and minus == (part["amount"] < 0), (drawn, part)
            # a part that takes away is hatched (a pattern), one that adds filled with its colour
            assert fill.startswith("url(") == (part["amount"] < 0), (stage, fill)
            assert width > 0
        assert sum(part["amount"] for part in hit["score_parts"]) == pytest.approx(hit["score"], abs=1e-5)
        # the clause similarities are labelled with their clauses, the negated ones marked
        sims = shown.locator(".sims .sim")
        expect(sims).to_have_count(len(hit["clause_similarities"]))
        expect(sims.locator(".sim-clause")).to_have_text([clause["text"] for clause in clauses])
        values = [f"{value:.3f}" for value in hit["clause_similarities"]]
        expect(sims.locator(".sim-value")).to_have_text(values)
        expect(shown.locator(".sims .sim.negated")).to_have_count(sum(c["negated"] for c in clauses))
    # the bars share one scale: a higher score ends further right
    ends = page.locator("#hits svg.score-bar line.bar-end").evaluate_all(
        "els => els.map(e => Number(e.getAttribute('x1')))")
    for (end_a, end_b), (a, b) in zip(pairwise(ends), pairwise(hits), strict=True):
        if a["score"] > b["score"] + 1e-3:
            assert end_a > end_b, (a, b, end_a, end_b)


def test_a_hits_details_open_in_place(context: tuple[BrowserContext, _Watch], page: Page, base: str) -> None:
    _search(page, base, EXCLUSION)
    first = page.locator("#hits > li.hit").first
    item_id = first.get_attribute("data-id")
    assert item_id
    item = httpx.get(f"{base}/v1/items/{item_id}", timeout=60).json()
    hit = _hits(_api_search(base, EXCLUSION))[0]
    toggle = first.locator("button.details-toggle")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    box = first.locator(".hit-details")
    expect(box).to_be_hidden()
    assert first.locator("a[target]").count() == 0  # no link opens a tab
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(box).to_be_visible()
    expect(box.locator(".detail-caption")).to_have_text(item["caption"])
    expect(box.locator(".detail-formula")).to_have_text(item["formula"])
    expect(box.locator(".stored-preds li")).to_have_text(item["predicates"])
    rows = box.locator(".parts-table tr.part-row")
    expect(rows).to_have_count(len(hit["score_parts"]))
    expect(rows.locator("th")).to_have_text([part["stage"] for part in hit["score_parts"]])
    expect(box.locator(".parts-table tr.part-total td.num")).to_have_text(f"{hit['score']:.3f}")
    assert len(context[0].pages) == 1  # nothing opened a new tab
    assert "/v1/items/" not in urlsplit(page.url).path
    toggle.click()
    expect(box).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")


def test_hits_are_shown_twenty_at_a_time_with_more_results(page: Page, base: str) -> None:
    every = httpx.post(f"{base}/v1/search", json={"query": EXCLUSION, "k": 24}, timeout=60).json()
    ids = [hit["id"] for hit in _hits(every)]
    assert len(ids) == 24
    page.goto(f"{base}/?{httpx.QueryParams({'q': EXCLUSION, 'k': 24})}")
    expect(page.locator("#status")).to_have_text(re.compile(rf"^24 hits in {NUMBER} ms$"))
    expect(page.locator("#hits > li.hit")).to_have_count(PAGE_SIZE)
    more = page.locator("#more-button")
    expect(more).to_be_visible()
    expect(page.locator("#shown-count")).to_have_text(f"Showing {PAGE_SIZE} of 24")
    assert _shown_ids(page) == ids[:PAGE_SIZE]
    more.click()
    expect(page.locator("#hits > li.hit")).to_have_count(24)
    assert _shown_ids(page) == ids
    expect(page.locator(f"#hits > li.hit >> nth={PAGE_SIZE}")).to_be_focused()  # the first new hit
    expect(more).to_be_hidden()  # all the index's items are shown: nothing more to ask for

    # k used up below max_k: "More results" asks the server for 20 more
    _search(page, base, EXCLUSION)
    expect(page.locator("#hits > li.hit")).to_have_count(10)
    expect(more).to_be_visible()
    with page.expect_request(lambda r: urlsplit(r.url).path == "/v1/search") as sent:
        more.click()
    assert json.loads(sent.value.post_data or "{}")["k"] == 30
    expect(page.locator("#hits > li.hit")).to_have_count(24)
    expect(page.locator("#k")).to_have_value("30")
    assert parse_qs(urlsplit(page.url).query)["k"] == ["30"]
    expect(page.locator("#hits > li.hit >> nth=10")).to_be_focused()
    expect(more).to_be_hidden()


def test_the_stage1_tree_is_a_nested_collapsible_tree(
        page: Page, base: str, context: tuple[BrowserContext, _Watch]) -> None:
    _search(page, base, EXCLUSION)
    fold = page.locator("#tree-details")
    expect(fold).not_to_have_attribute("open", "")
    with page.expect_response(lambda r: urlsplit(r.url).path == "/v1/stage1/tree") as response:
        fold.locator("summary").first.click()
    assert parse_qs(urlsplit(response.value.url).query) == {"query": [EXCLUSION], "format": ["json"]}
    tree = response.value.json()
    nodes = page.locator("#tree-body li.tree-node")
    expect(nodes).to_have_count(len(tree["tree"]))
    # each node sits inside its parent's list, indented one level further
    placed = nodes.evaluate_all(
        "els => els.map(e => { const up = e.parentElement.closest('li.tree-node'); "
        "return [Number(e.dataset.node), up ? Number(up.dataset.node) : null, "
        "e.getBoundingClientRect().left]; })")
    parents = {node["id"]: node["parent"] for node in tree["tree"]}
    lefts = {node: left for node, _, left in placed}
    for node, parent, left in placed:
        assert parent == parents[node], (node, parent)
        if parent is not None and lefts[node] and lefts[parent]:
            assert left > lefts[parent], "a child is not indented under its parent"
    star = page.locator(f'#tree-body li.tree-node[data-node="{tree["star"]}"]')
    expect(star).to_have_class(re.compile(r"\bnode-star\b"))
    expect(star.locator(".tree-mark").first).to_have_text("★")
    expect(page.locator("#tree-body .tree-head code.tree-phi0")).to_have_text(tree["phi0"])
    with_children = {node["parent"] for node in tree["tree"] if node["parent"] is not None}
    expect(page.locator("#tree-body details.tree-fold")).to_have_count(len(with_children))
    if with_children:  # a node with children folds and unfolds
        folded = page.locator("#tree-body details.tree-fold").first
        expect(folded).to_have_attribute("open", "")
        folded.locator("summary").first.click()
        expect(folded).not_to_have_attribute("open", "")
        expect(folded.locator("ul.tree").first).to_be_hidden()
    # the same tree as text, from the link under it
    link = page.locator("#stage1-tree-link")
    href = link.get_attribute("href") or ""
    assert urlsplit(href).path == "/v1/stage1/tree"
    assert parse_qs(urlsplit(href).query) == {"query": [EXCLUSION]}
    with context[0].expect_page() as opened:
        link.click()
    text = opened.value
    text.wait_for_load_state()
    assert "φ0" in text.locator("body").inner_text()
    text.close()


def _with_fields(page: Page, **fields: Any) -> None:
    """Answer the page's searches with the server's answer plus ``fields`` on each result (a field
    that is a function is called with the result)."""
    def handle(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        for result in body["results"]:
            for name, value in fields.items():
                result[name] = value(result) if callable(value) else value
        route.fulfill(response=response, json=body)

    page.route("**/v1/search", handle)


def test_the_pushed_down_section_lists_what_the_exclusion_moved(page: Page, base: str) -> None:
    # as the API answers: a section exactly when it sends the list (it may not yet)
    _search(page, base, EXCLUSION)
    result = _api_search(base, EXCLUSION)["results"][0]
    section = page.locator("#pushed-down")
    if "pushed_down" in result:
        expect(section).to_be_visible()
        expect(page.locator("#pushed-count")).to_have_text(str(len(result["pushed_down"])))
        expect(page.locator("#pushed-list li.pushed-item")).to_have_count(len(result["pushed_down"]))
    else:
        expect(section).to_be_hidden()

    hostile = HOSTILE_CAPTIONS["clip1"]

    def pushed(answer: dict[str, Any]) -> list[dict[str, Any]]:
        last = answer["hits"][-1]
        return [{"id": "clip000009", "caption": "A dog barking with a distant siren", "was": 3, "now": 14,
                 "evidence": ["the caption names a siren", "siren: 0.81 against 0.12"]},
                {"id": last["id"], "caption": hostile, "was": 1, "now": None, "evidence": []}]

    _with_fields(page, pushed_down=pushed)
    _search(page, base, EXCLUSION)
    expect(section).to_be_visible()
    expect(section.locator("summary")).to_contain_text("Pushed down by the exclusion (2)")
    expect(section).not_to_have_attribute("open", "")
    items = page.locator("#pushed-list li.pushed-item")
    expect(items.first).to_be_hidden()
    section.locator("summary").click()
    expect(items).to_have_count(2)
    expect(items.nth(0).locator(".pushed-was")).to_have_text("was #3")
    expect(items.nth(0).locator(".pushed-now")).to_have_text("now #14")
    expect(items.nth(0).locator(".caption")).to_have_text("A dog barking with a distant siren")
    expect(items.nth(0).locator("ul.evidence li")).to_have_text(["the caption names a siren",
                                                                 "siren: 0.81 against 0.12"])
    expect(items.nth(1).locator(".pushed-was")).to_have_text("was #1")
    expect(items.nth(1).locator(".pushed-now")).to_have_text("now beyond the candidate pool")
    expect(items.nth(1).locator(".caption")).to_have_text(hostile)  # as text
    expect(items.nth(1).locator("ul.evidence")).to_have_count(0)
    expect(section.locator("img")).to_have_count(0)
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    # above the hits
    top = section.evaluate("el => el.getBoundingClientRect().top")
    assert top < page.locator("#hits > li.hit").first.evaluate("el => el.getBoundingClientRect().top")

    # an empty list: for a query with a negated clause, "(0)"; for one without, no section
    page.unroute("**/v1/search")
    _with_fields(page, pushed_down=[])
    _search(page, base, EXCLUSION)
    expect(page.locator("#pushed-count")).to_have_text("0")
    section.locator("summary").click()
    expect(page.locator("#pushed-none")).to_be_visible()
    _search(page, base, "rain falling")
    expect(section).to_be_hidden()


def test_a_low_confidence_answer_shows_a_notice_above_the_hits(page: Page, base: str) -> None:
    notice = page.locator("#confidence")
    _search(page, base, EXCLUSION)
    real = _api_search(base, EXCLUSION)["results"][0].get("confidence")
    if isinstance(real, dict) and real.get("low"):
        expect(notice).to_be_visible()
    else:
        expect(notice).to_be_hidden()

    reason = "no item matches any of the query's predicates (Qwzx/1, Flurb/1)"
    _with_fields(page, confidence={"low": True, "reason": reason, "code": "W856"})
    _search(page, base, "qwzx flurb")
    expect(notice).to_be_visible()
    expect(notice).to_have_text(re.compile(rf"W856: {re.escape(reason)}$"))
    expect(notice).to_have_attribute("role", "note")
    hits = page.locator("#hits > li.hit")
    expect(hits.first).to_be_visible()  # the hits are still shown, under the notice
    assert notice.evaluate("el => el.getBoundingClientRect().bottom") <= hits.first.evaluate(
        "el => el.getBoundingClientRect().top")
    page.unroute("**/v1/search")
    _with_fields(page, confidence={"low": False, "reason": "", "code": ""})
    _search(page, base, "rain falling")
    expect(notice).to_be_hidden()


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
