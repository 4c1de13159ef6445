"""Shared fixtures: the real data in ../shared/data (skipped with a reason when absent)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest

# The `minilm` and `cafe` fixtures (a small caption index), shared by the Retriever's tests.
# `trained_clap`: a 200-clip generated collection and the small CLAP trained on it, once a session.
pytest_plugins = ["cafe_fixtures", "soundclap_fixtures", "serve_fixtures"]

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def regen_docs_module():  # type: ignore[no-untyped-def]
    """scripts/regen_docs.py as a module (loaded once), for the tests of the docs' examples."""
    if "regen_docs" not in sys.modules:
        spec = importlib.util.spec_from_file_location("regen_docs", REPO / "scripts" / "regen_docs.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["regen_docs"] = module
        spec.loader.exec_module(module)
    return sys.modules["regen_docs"]
FOLIO_TRAIN = SHARED_DATA / "folio" / "folio-train.jsonl"


def require(path: Path) -> Path:
    """Skip the calling test, with the reason, when a shared data file is missing."""
    if not path.exists():
        pytest.skip(f"real data not available: {path} (the ../shared/data checkout is absent)")
    return path


def load_folio_premises() -> list[str]:
    """Every string of the `premises-FOL` lists of FOLIO train, in file order, repeats kept."""
    formulas: list[str] = []
    with require(FOLIO_TRAIN).open(encoding="utf-8") as handle:
        for line in handle:
            formulas.extend(json.loads(line)["premises-FOL"])
    return formulas


@pytest.fixture(scope="session")
def folio_premises() -> list[str]:
    return load_folio_premises()


def _hypothesis_profiles() -> None:
    """CI runs the same examples every time (derandomized), so a red run is reproducible."""
    import os

    from hypothesis import settings

    settings.register_profile("ci", derandomize=True, print_blob=True)
    if os.environ.get("CI"):
        settings.load_profile("ci")


_hypothesis_profiles()


def run_fol_refine(*argv: str, stdout: io.StringIO | None = None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of fol-refine run in this process."""
    from fortekit.search.cli import fol_refine_main

    out, err = stdout or io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = fol_refine_main(list(argv))
        except SystemExit as exc:  # argparse
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()
