"""A small caption-indexed collection (a cafe, a yard, rain ...) indexed with the bundled MiniLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from fortekit.search.index import AudioIndex

CAFE = ["a dog barks while people are talking", "a dog barks loudly in a quiet yard",
        "people talking in a cafe", "rain falls on a tin roof", "a car engine idles",
        "birds chirp in the morning", "a bell rings twice", "waves crash on the shore"]


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    from fortekit.plugins import get_backbone

    return get_backbone("minilm", device="cpu")


@pytest.fixture(scope="module")
def cafe(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    directory = tmp_path_factory.mktemp("cafe") / "cafe.index"
    AudioIndex.from_captions([f"clip{i}" for i in range(len(CAFE))], CAFE, minilm).save(directory)
    return directory
