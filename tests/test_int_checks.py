"""One integer check (fortekit._checks) behind search/'s settings (issue 14)."""

from __future__ import annotations

import numpy as np
import pytest

from fortekit._checks import check_int, int_range, is_int
from fortekit.errors import AudioIndexError, Errors, EvaluationError, ProjectionError, RefineError


@pytest.mark.parametrize(("value", "low", "high", "ok"), [
    (1, 1, None, True), (0, 1, None, False), (True, 0, None, False), (False, 0, None, False),
    (2.0, 1, None, False), ("3", 1, None, False), (None, 1, None, False),
    (5, 1, 5, True), (6, 1, 5, False), (-4, None, None, True), (0, 0, 0, True),
])
def test_is_int(value: object, low: int | None, high: int | None, ok: bool) -> None:
    assert is_int(value, low, high) is ok


def test_numpy_integers_only_when_asked() -> None:
    assert not is_int(np.int64(3), 1)
    assert is_int(np.int64(3), 1, numpy=True)
    assert not is_int(np.bool_(True), 0, numpy=True)
    value = check_int(np.int32(7), name="k", numpy=True, error=EvaluationError, message=Errors.E480,
                      what="metrics")
    assert value == 7 and type(value) is int


def test_check_int_says_the_range_in_the_caller_s_code() -> None:
    exact = r"^\[E613\] nprobe must be an int from 1 to 4, not 9\. \(See docs/errors\.md#e613\.\)$"
    with pytest.raises(AudioIndexError, match=exact):
        check_int(9, name="nprobe", high=4, error=AudioIndexError, message=Errors.E613)
    with pytest.raises(RefineError, match=r"\[E400\].*batch_size.*an int >= 1.*True"):
        check_int(True, name="batch_size", error=RefineError, message=Errors.E400)
    with pytest.raises(EvaluationError, match=r"\[E480\] The split setting n_train must be an int >= 0"):
        check_int(-1, name="n_train", low=0, error=EvaluationError, message=Errors.E480, what="split")
    assert int_range(2, None) == "an int >= 2"


def test_the_search_settings_refuse_bools() -> None:
    from fortekit.search.eval.metrics import retrieval_metrics
    from fortekit.search.eval.tasks import split_by_clip
    from fortekit.search.formula.config import FormulaScoringConfig
    from fortekit.search.index.search import check_k
    from fortekit.search.projection.head import ProjectionConfig
    from fortekit.search.rerank import Reranker
    from fortekit.search.stage1.config import RefineConfig

    with pytest.raises(AudioIndexError, match=r"\[E613\] k must be an int >= 1, not True"):
        check_k(True)
    with pytest.raises(EvaluationError, match=r"\[E480\].*top_n"):
        Reranker(top_n=True)
    with pytest.raises(EvaluationError, match=r"\[E480\].*k must be an int >= 1"):
        retrieval_metrics([1, 2], ks=(True,))
    assert retrieval_metrics([1, 2], ks=(np.int64(1),))["R@1"] == 0.5
    with pytest.raises(EvaluationError, match=r"\[E480\].*n_train must be an int from 0 to 0"):
        split_by_clip([], 1)
    with pytest.raises(ProjectionError, match=r"\[E460\].*epochs must be an int >= 1"):
        ProjectionConfig(dim=4, epochs=True)
    with pytest.raises(RefineError, match=r"\[E400\]"):
        RefineConfig(beam_width=True)
    with pytest.raises(EvaluationError, match=r"\[E480\].*calibration_sample"):  # True passed before
        FormulaScoringConfig(calibration_sample=True)
    with pytest.raises(EvaluationError, match=r"\[E480\].*max_clauses"):
        FormulaScoringConfig(max_clauses=True)
