"""Take the screenshots of ``fortekit serve``'s pages for docs/serve.md, from the current code.

It serves an index and a ``fortekit eval --beir`` run on 127.0.0.1 (uvicorn in a thread, the app of
``fortekit serve``), opens the pages in Debian's chromium, headless and offline (Playwright drives
it and never downloads a browser), and writes

- ``docs/img/serve/search.png``: the first screen (1280x800) of the search page after an exclusion
  query: the query's formula and clauses, the pipeline as one line, then the hits with their
  score bars (the default pipeline);
- ``docs/img/serve/search_open.png``: the same page with the pipeline's figures, the Stage 1 tree,
  the first hit's details and (when the API sends it) "Pushed down by the exclusion" opened;
- ``docs/img/serve/search_formula_off.png``: the first screen of the same query with formula
  scoring switched off;
- ``docs/img/serve/search_confidence.png``: the first screen of a nonsense query, when the API
  marks it as low confidence (else not written, and said so);
- ``docs/img/serve/eval.png``: the evaluation page with a query's two top 10s open (1366x768).

By default the index is built here from the sound generator's 24 clips (``GeneratorConfig(seed=0,
n=24, speech=False)``, their first captions, the bundled MiniLM, their WAV files registered) and
the run is ``fortekit eval --beir COLLECTION --systems baseline,formula --direction t2a --no-umap``
on the tests' 40 queries of ``../shared/data/negation/audiocaps_test`` (its first 20 conjunctions and
first 20 exclusions, over its whole corpus: ``some_of_each_kind`` of tests/serve_fixtures.py), about
a minute on a CPU. Usage::

    python scripts/serve_screenshots.py
    python scripts/serve_screenshots.py --index clips.index --eval runs/negation --out docs/img/serve
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

REPO = Path(__file__).resolve().parents[1]
NEGATION_SET = REPO.parent / "shared" / "data" / "negation" / "audiocaps_test"
QUERY = "a dog barking without a siren"
#: A query that matches nothing (the confidence notice).
NONSENSE = "qwzx flurb"
#: The hits shown: few enough that the whole list fits in a screenshot.
K = 5
VIEWPORT = {"width": 1366, "height": 768}
#: The first screen the search page is made for.
FIRST_SCREEN = {"width": 1280, "height": 800}
#: The longest screenshot, in CSS pixels (a full page is clipped here to keep the PNGs small).
MAX_HEIGHT = 2200


def build_index(folder: Path, device: str) -> Path:
    """The generated sound collection (24 clips with WAV files) indexed with the bundled MiniLM."""
    from fortekit.plugins import get_backbone
    from fortekit.plugins.protocols import AudioItem
    from fortekit.search.eval.bench.soundgen.generate import generate
    from fortekit.search.eval.bench.soundgen.scene import GeneratorConfig
    from fortekit.search.index.audio_index import AudioIndex

    collection = folder / "sounds"
    generate(GeneratorConfig(seed=0, n=24, speech=False), collection)
    lines = (collection / "clips.jsonl").read_text(encoding="utf-8").splitlines()
    clips = [json.loads(line) for line in lines if line.strip()]
    items = [AudioItem(path=collection / str(clip["audio"]), text=str(clip["captions"][0]),
                       item_id=str(clip["_id"])) for clip in clips]
    directory = folder / "sounds.index"
    AudioIndex.build(items, get_backbone("minilm", device=device)).save(directory)
    print(f"built {directory} ({len(items)} clips)", file=sys.stderr)
    return directory


def run_eval(folder: Path, beir: Path, device: str) -> Path:
    """A ``fortekit eval --beir`` run (baseline against formula, 20 queries of each kind) into ``folder``."""
    from fortekit.search.cli import main

    if not (beir / "corpus.jsonl").is_file():
        raise SystemExit(f"no BEIR collection at {beir} (give --beir DIR or --eval RUN_DIR)")
    sys.path.insert(0, str(REPO / "tests"))
    from serve_fixtures import some_of_each_kind

    collection = some_of_each_kind(beir, folder / f"{beir.name}_40", per_kind=20)
    out = folder / f"negation_{beir.name}"
    code = main(["eval", "--beir", str(collection), "--systems", "baseline,formula",
                 "--device", device, "--direction", "t2a", "--no-umap", "-o", str(out)])
    if code != 0:
        raise SystemExit(f"fortekit eval failed (exit {code})")
    return out


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on 127.0.0.1 and a free port; yield its URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise SystemExit("uvicorn did not start")
            thread.join(0.05)
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


def warm_up(base: str, query: str) -> None:
    """Run the query's pipelines once, so the pages show a warm server's latency, not its first load."""
    import httpx

    for switches in ({}, {"formula_scoring": "off"}):
        httpx.post(f"{base}/v1/search", json={"query": f"{query} (warm-up)", "k": K, **switches},
                   timeout=120).raise_for_status()
    httpx.get(f"{base}/v1/stage1/tree", params={"query": f"{query} (warm-up)", "format": "json"},
              timeout=120).raise_for_status()


def pick_query(base: str) -> str | None:
    """The evaluation query to open: an exclusion query that formula scoring improves most."""
    import httpx

    rows = httpx.get(f"{base}/v1/eval/queries", params={"system": "formula", "baseline": "baseline"},
                     timeout=60).json()
    if not rows:
        return None
    excluding = [row for row in rows if row.get("excluded")] or rows
    best = max(excluding, key=lambda row: row.get("gain") if row.get("gain") is not None else float("-inf"))
    return str(best["query_id"])


def shoot(page: Any, path: Path, *, full: bool = True) -> None:
    """A full-page PNG of ``page``, clipped to :data:`MAX_HEIGHT` (``full=False``: the first screen)."""
    size = page.viewport_size or VIEWPORT
    height = page.locator("html").evaluate("el => el.scrollHeight") if full else size["height"]
    clip = {"x": 0, "y": 0, "width": size["width"], "height": min(int(height), MAX_HEIGHT)}
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=full, clip=clip, animations="disabled", caret="hide")
    size = f"{path.stat().st_size // 1024} KB, {clip['width']}x{clip['height']}"
    print(f"wrote {path} ({size})", file=sys.stderr)


def screenshots(base: str, out: Path, query: str, chromium: str) -> list[Path]:
    """Open the pages and write the PNGs; return their paths."""
    from playwright.sync_api import expect, sync_playwright

    done = "^([0-9]+ hits?|No hits) in [0-9.]+ ms$"
    written: list[Path] = []
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        context.route("**/*", lambda route: route.continue_()
                      if urlsplit(route.request.url).hostname == "127.0.0.1" else route.abort())
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.set_viewport_size(FIRST_SCREEN)

        def search(text: str, **switches: str) -> None:
            page.goto(f"{base}/?{urlencode({'q': text, **switches})}")
            expect(page.locator("#status")).to_have_text(re.compile(done))
            expect(page.locator("#formula-panel")).to_be_visible()
            page.locator("#query").blur()

        search(query)
        written.append(out / "search.png")
        shoot(page, written[-1], full=False)

        search(query, k=str(K))
        page.locator("#pipeline-summary").click()
        with page.expect_response(lambda r: urlsplit(r.url).path == "/v1/stage1/tree"):
            page.locator("#tree-details > summary").click()
        expect(page.locator("#tree-body ul.tree-root")).to_be_visible()
        if page.locator("#pushed-down").is_visible():
            page.locator("#pushed-down > summary").click()
        page.locator("#hits > li.hit button.details-toggle").first.click()
        expect(page.locator("#hits > li.hit .hit-details dl").first).to_be_visible()
        expect(page.locator("#hits > li.hit .hit-details .detail-caption").first).to_be_visible()
        page.mouse.move(0, 0)
        written.append(out / "search_open.png")
        shoot(page, written[-1])

        search(query, formula_scoring="off")
        written.append(out / "search_formula_off.png")
        shoot(page, written[-1], full=False)

        search(NONSENSE)
        if page.locator("#confidence").is_visible():
            written.append(out / "search_confidence.png")
            shoot(page, written[-1], full=False)
        else:
            print(f"no confidence notice for {NONSENSE!r} (the API sends no low confidence): "
                  "search_confidence.png not written", file=sys.stderr)

        page.set_viewport_size(VIEWPORT)
        chosen = pick_query(base)
        page.goto(f"{base}/eval" + (f"?{urlencode({'query': chosen})}" if chosen else ""))
        expect(page.locator("table#queries tbody tr[data-query-id]").first).to_be_visible()
        if chosen:
            expect(page.locator("#detail section.detail-system li.top-item").first).to_be_visible()
        written.append(out / "eval.png")
        shoot(page, written[-1])
        browser.close()
    finally:
        playwright.stop()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, help="an index to serve (default: build the generated sounds')")
    parser.add_argument("--eval", type=Path, dest="run", help="a `fortekit eval --beir` run folder "
                        "(default: run one on --beir)")
    parser.add_argument("--beir", type=Path, default=NEGATION_SET,
                        help=f"the collection to evaluate on (default {NEGATION_SET})")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "serve", help="where the PNGs go")
    parser.add_argument("--query", default=QUERY, help=f"the search query (default {QUERY!r})")
    parser.add_argument("--device", default="cpu", help="where the models run (default cpu)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium",
                        help="the chromium to drive (Playwright never downloads one)")
    args = parser.parse_args()

    from fortekit.search.serve.app import create_app
    from fortekit.search.serve.eval_run import EvalRun
    from fortekit.search.serve.service import SearchService

    with tempfile.TemporaryDirectory(prefix="serve_screenshots_") as scratch:
        index = args.index or build_index(Path(scratch), args.device)
        run = args.run or run_eval(Path(scratch), args.beir, args.device)
        app = create_app(SearchService.open(index, device=args.device), eval_run=EvalRun.load(run))
        with serve(app) as base:
            warm_up(base, args.query)
            for path in screenshots(base, args.out, args.query, args.chromium):
                print(path)


if __name__ == "__main__":
    main()
