"""Shared fixtures: the real data in ../shared/data (skipped with a reason when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
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
