"""The docs ship figures and the commands that made them, never run outputs.

Every link and embedded image of README.md and docs/ points at a file of the repository; the
plots that pages show live in docs/img/; no run output (metrics.json, config.json, a per-run
results.md) sits under docs/; docs/results.md states the commands of its runs and has them
write to the git-ignored runs/ folder.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
LINK = re.compile(r"(!?)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.S)


def _links(page: Path) -> list[tuple[bool, str]]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [(bang == "!", target) for bang, target in LINK.findall(text)]


def test_every_relative_link_and_image_resolves() -> None:
    broken = [
        f"{page.relative_to(REPO)}: {target}"
        for page in PAGES
        for _image, target in _links(page)
        if not re.match(r"[a-z]+:", target)
        and target.split("#")[0]
        and not (page.parent / target.split("#")[0]).exists()
    ]
    assert not broken


def test_embedded_plots_live_in_docs_img() -> None:
    images = [
        (page, target) for page in PAGES for image, target in _links(page)
        if image and not re.match(r"[a-z]+:", target)
    ]
    assert images, "the pages embed plots (docs/results.md at least)"
    for page, target in images:
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(REPO / "docs" / "img"), (page, target)


def test_no_run_output_under_docs() -> None:
    outputs = [path.relative_to(REPO) for name in ("metrics.json", "config.json", "times.txt")
               for path in (REPO / "docs").rglob(name)]
    assert not outputs
    assert not (REPO / "docs" / "results").exists()
    assert not [path for path in (REPO / "docs").rglob("results.md") if path.parent != REPO / "docs"]


def test_results_page_states_commands_that_write_to_runs() -> None:
    page = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    outputs = re.findall(r"(?:-o|--out|--output)\s+(\S+)", page)
    assert len(outputs) >= 10
    assert all(out.strip("`").startswith("runs/") for out in outputs), outputs
    for run in ("clotho_mean", "clotho_single", "audiocaps_mean", "clotho_mean_stage1_feedback",
                "negation_audiocaps_test", "clotho_mean_defaults"):
        assert f"-o runs/{run}" in page.replace("\n", " "), run
    assert "scripts/audio_bench.sh" in page and "scripts/issue42_bench.sh" in page
    assert "runs/" in (REPO / ".gitignore").read_text(encoding="utf-8").split()
