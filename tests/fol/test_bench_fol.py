"""Speed of the formula parser on FOLIO, beside NLTK and unicode-logic-kit in the same run.

Run: ``pytest tests/fol/test_bench_fol.py --benchmark-group-by=group``. Formulas per
second = len(formulas) / mean; the figures are written down in docs/fol.md.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

import pytest
from fol_fixtures import FOLIO_MALFORMED

from fortekit.errors import FreeVariableWarning
from fortekit.fol import parse_formula

nltk_logic = pytest.importorskip("nltk.sem.logic")
ulk = pytest.importorskip("unicode_logic_kit")

_TO_NLTK = str.maketrans({"∧": "&", "∨": "|", "¬": "-", "→": "->", "↔": "<->", "≠": "!="})


def to_nltk_syntax(text: str) -> str:
    """FOLIO's Unicode in NLTK's ASCII syntax (NLTK has no ⊕ and reads '-' in names as ¬)."""
    ascii_text = text.translate(_TO_NLTK).replace("↔", "<->")
    return re.sub(r"([∀∃])\s*(\w+)\s*", lambda m: f"{'all' if m[1] == '∀' else 'exists'} {m[2]}.", ascii_text)


def _readable_by(parse: Callable[[str], object], texts: list[str]) -> list[str]:
    readable = []
    for text in texts:
        try:
            parse(text)
        except Exception:  # each library's own errors
            continue
        readable.append(text)
    return readable


@pytest.fixture(scope="module")
def folio_wellformed(folio_premises: list[str]) -> list[str]:
    return [text for text in folio_premises if text.strip() not in FOLIO_MALFORMED]


@pytest.fixture(scope="module")
def nltk_subset(folio_wellformed: list[str]) -> list[tuple[str, str]]:
    pairs = [(text, to_nltk_syntax(text)) for text in folio_wellformed]
    readable = set(_readable_by(nltk_logic.Expression.fromstring, [p[1] for p in pairs]))
    return [pair for pair in pairs if pair[1] in readable]


@pytest.fixture(scope="module")
def msfl_subset(folio_wellformed: list[str]) -> list[str]:
    return _readable_by(ulk.MSFLParser().parse, folio_wellformed)


def _fortekit_all(texts: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FreeVariableWarning)
        for text in texts:
            parse_formula(text)


def test_coverage_of_each_parser(
    folio_premises: list[str], folio_wellformed: list[str], nltk_subset: list, msfl_subset: list
) -> None:
    # fortekit reads every well-formed premise; the others read a part of FOLIO.
    assert len(folio_wellformed) == len(folio_premises) - 31
    assert 0.85 < len(nltk_subset) / len(folio_premises) < 0.95
    assert 0.93 < len(msfl_subset) / len(folio_premises) < 0.99


@pytest.mark.benchmark(group="folio-all")
def test_bench_fortekit_all_folio(benchmark, folio_wellformed: list[str]) -> None:  # type: ignore[no-untyped-def]
    benchmark.extra_info["formulas"] = len(folio_wellformed)
    benchmark.pedantic(_fortekit_all, args=(folio_wellformed,), rounds=5, warmup_rounds=1)


@pytest.mark.benchmark(group="folio-nltk-subset")
def test_bench_fortekit_on_nltk_subset(benchmark, nltk_subset: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    texts = [original for original, _ in nltk_subset]
    benchmark.extra_info["formulas"] = len(texts)
    benchmark.pedantic(_fortekit_all, args=(texts,), rounds=5, warmup_rounds=1)


@pytest.mark.benchmark(group="folio-nltk-subset")
def test_bench_nltk_on_nltk_subset(benchmark, nltk_subset: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    texts = [converted for _, converted in nltk_subset]
    benchmark.extra_info["formulas"] = len(texts)

    def run() -> None:
        for text in texts:
            nltk_logic.Expression.fromstring(text)

    benchmark.pedantic(run, rounds=5, warmup_rounds=1)


@pytest.mark.benchmark(group="folio-msfl-subset")
def test_bench_fortekit_on_msfl_subset(benchmark, msfl_subset: list[str]) -> None:  # type: ignore[no-untyped-def]
    benchmark.extra_info["formulas"] = len(msfl_subset)
    benchmark.pedantic(_fortekit_all, args=(msfl_subset,), rounds=5, warmup_rounds=1)


@pytest.mark.benchmark(group="folio-msfl-subset")
def test_bench_msfl_on_msfl_subset(benchmark, msfl_subset: list[str]) -> None:  # type: ignore[no-untyped-def]
    parser = ulk.MSFLParser()
    benchmark.extra_info["formulas"] = len(msfl_subset)

    def run() -> None:
        for text in msfl_subset:
            parser.parse(text)

    benchmark.pedantic(run, rounds=3, warmup_rounds=1)
