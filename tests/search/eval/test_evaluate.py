"""`fortekit eval`: the end-to-end benchmark on real Clotho rows with the real MiniLM, and its parts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SHARED_DATA, require

from fortekit.errors import EvaluationError
from fortekit.fol import PredicateSymbol
from fortekit.search.cli import main
from fortekit.search.eval.data import file_sha256, split_collections
from fortekit.search.eval.evaluate import parse_sweep
from fortekit.search.eval.metrics import hits_at, paired_t_test, ranks_from_indices
from fortekit.search.eval.per_query import read_per_query
from fortekit.search.eval.report import METRIC_NAMES, markdown_table, system_row
from fortekit.search.eval.stage1 import oracle_negatives, parse_anchors
from fortekit.search.eval.systems import ablation_systems, rank_through
from fortekit.search.rerank import Reranker

COMBINATIONS = ["baseline", "S1", "S2", "S3", "S1+S2", "S1+S3", "S2+S3", "S1+S2+S3"]
N_TEST = 40
QUICK = ["--n-train", "60", "--limit-test", str(N_TEST), "--epochs", "1", "--beam-width", "2"]


def clotho() -> Path:
    return require(SHARED_DATA / "clotho" / "clotho_captions_development.csv")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One small run of every system, both directions, an alpha sweep and the UMAP plot."""
    out = tmp_path_factory.mktemp("eval") / "run"
    code = main(["eval", "--test", str(clotho()), *QUICK, "--anchors", "bank,none,proxy,oracle",
                 "--elaborator", "lexical", "--sweep", "alpha=0,0.5", "-o", str(out)])
    assert code == 0
    return out, json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def test_metrics_have_every_combination_with_five_metrics_and_p_values(quick_run: tuple[Path, dict]) -> None:
    _, metrics = quick_run
    for direction in ("t2a", "a2t"):
        systems = metrics[direction]["systems"]
        assert metrics[direction]["queries"] == N_TEST
        assert list(systems)[:8] == COMBINATIONS
        assert {"S1@none", "S1@proxy", "S1@oracle", "S1+S2+S3-polarity"} <= set(systems)
        for row in systems.values():
            assert all(0.0 <= row[metric] <= 1.0 for metric in METRIC_NAMES)
            assert 0.0 <= row["p_value"] <= 1.0
            assert row["ms_per_query"] > 0 and row["s_per_1000_items"] > 0
        assert systems["baseline"]["p_value"] == 1.0
        assert systems["S1+S2+S3"] | {"S1": True, "S2": True, "S3": "paper"} == systems["S1+S2+S3"]
    assert metrics["stage1"]["test-bank"]["queries"] == N_TEST
    assert metrics["stage1"]["train-bank"]["queries"] == 60
    assert metrics["stage2"]["train_items"] == 60


def test_the_default_row_is_marked_when_the_shipped_head_saw_its_clips(quick_run: tuple[Path, dict]) -> None:
    out, metrics = quick_run  # Clotho development clips 61-80: inside the shipped head's clips 1-2,000
    assert metrics["shipped_head"]["test_clips_seen_in_training"] == N_TEST
    assert "default" in metrics["t2a"]["systems"] and "default-S2" in metrics["t2a"]["systems"]
    results = (out / "results.md").read_text(encoding="utf-8")
    assert "[W850]" in results and "is not a held-out figure" in results


def test_writes_the_table_the_figures_and_a_reproducible_config(quick_run: tuple[Path, dict]) -> None:
    out, metrics = quick_run
    for name in ("ablation.png", "ablation_a2t.png", "modality_gap.png", "sweep_alpha.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    results = (out / "results.md").read_text(encoding="utf-8")
    assert "| System | S1 | S2 | S3 | R@1 | R@5 | R@10 | R@50 | mAP@10 |" in results
    assert "## Audio to text" in results and "| S1+S2+S3 |" in results
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["data"]["test"]["sha256"] == file_sha256(clotho())
    assert config["settings"]["n_train"] == 60 and config["settings"]["refine"]["beam_width"] == 2
    assert config["environment"]["fortekit"] == metrics["fortekit_version"]
    sweep = json.loads((out / "sweep_alpha.json").read_text(encoding="utf-8"))
    assert sweep["values"] == [0.0, 0.5] and len(sweep["systems"]["S1+S2+S3"]["R@1"]) == 2
    # alpha = 0 keeps the first-pass order: S3 then scores like the baseline.
    assert sweep["systems"]["S3"]["R@1"][0] == metrics["t2a"]["systems"]["baseline"]["R@1"]
    assert set(metrics["modality_gap"]) >= {"before: f_T(q) and e_a"}


def test_per_query_files_have_one_line_per_query(quick_run: tuple[Path, dict]) -> None:
    out, metrics = quick_run
    for folder, direction in (("per_query", "t2a"), ("per_query_a2t", "a2t")):
        for system, row in metrics[direction]["systems"].items():
            records = read_per_query(out / folder / f"{system}.jsonl")
            assert len(records) == N_TEST
            assert np.mean([r["R@1"] for r in records]) == pytest.approx(row["R@1"])
            assert all(len(r["top"]) == 10 for r in records)
    s1 = read_per_query(out / "per_query" / "S1.jsonl")
    assert all(isinstance(r["refined"], str) and r["refined"] for r in s1)


def test_a_system_against_itself_has_p_1(quick_run: tuple[Path, dict]) -> None:
    out, _ = quick_run
    hits = [r["R@1"] for r in read_per_query(out / "per_query" / "S1+S3.jsonl")]
    assert paired_t_test(hits, hits) == (0.0, 1.0)
    assert system_row(np.array([1, 3, 1]), np.array([1, 3, 1]), timing={}, system={})["p_value"] == 1.0


def test_a_rerun_reads_stage1_from_the_cache(
    quick_run: tuple[Path, dict], tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out, metrics = quick_run
    rerun = tmp_path / "rerun"
    shutil.copytree(out / "stage1", rerun / "stage1")
    cached = next((rerun / "stage1").glob("test-bank-*.jsonl"))
    with cached.open("a", encoding="utf-8") as handle:
        handle.write('{"i": 3, "query": "torn')  # an interrupted write: ignored
    capsys.readouterr()
    code = main(["eval", "--test", str(clotho()), *QUICK, "--anchors", "bank", "--elaborator", "lexical",
                 "--direction", "t2a", "--no-umap", "-o", str(rerun)])
    log = capsys.readouterr().out
    assert code == 0
    assert f"stage 1 [test-bank]: {N_TEST} queries, {N_TEST} from the cache" in log
    assert "stage 1 [train-bank]: 60 queries, 60 from the cache" in log
    again = json.loads((rerun / "metrics.json").read_text(encoding="utf-8"))
    for system in COMBINATIONS:
        assert again["t2a"]["systems"][system]["R@1"] == metrics["t2a"]["systems"][system]["R@1"]
    assert "a2t" not in again and not (rerun / "modality_gap.png").exists()


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        (["--test", "/nonexistent/clotho.csv", "--n-train", "5"], "[E487]"),
        (["--n-train", "5000"], "[E520]"),
        (["--n-train", "0"], "[E520]"),
        (["--n-train", "10", "--sweep", "gamma=1,2"], "[E521]"),
        (["--n-train", "10", "--sweep", "alpha=0,2"], "[E521]"),
        (["--n-train", "10", "--anchors", "bank,psychic"], "[E522]"),
        (["--n-train", "10", "--train", "/nonexistent/train.csv"], "[E520]"),
        ([], "[E520]"),
    ],
)
def test_bad_arguments_give_a_coded_error_without_traceback(
    arguments: list[str], code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    test = [] if "--test" in arguments else ["--test", str(clotho())]
    status = main(["eval", *test, *arguments, "-o", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert status == 1
    assert code in captured.err and "Traceback" not in captured.err


def test_the_same_file_as_train_and_test_needs_a_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["eval", "--test", str(clotho()), "--train", str(clotho()), "-o", str(tmp_path)])
    assert status == 1 and "[E520]" in capsys.readouterr().err


# -- the parts ----------------------------------------------------------------------------------


def test_parse_sweep_and_anchors() -> None:
    assert parse_sweep("lambda=0, 0.5,1") == ("lambda", (0.0, 0.5, 1.0))
    for bad in ("alpha", "alpha=", "alpha=x", "mu=1", "beta=nan"):
        with pytest.raises(EvaluationError, match="E521"):
            parse_sweep(bad)
    assert parse_anchors("oracle,bank,oracle") == ["oracle", "bank"]
    with pytest.raises(EvaluationError, match="E522"):
        parse_anchors(" , ")


def test_ablation_systems_cover_the_eight_combinations_once() -> None:
    systems = ablation_systems("proxy", ["proxy", "none", "bank"])
    names = [system.name for system in systems]
    assert names[:8] == COMBINATIONS and len(set(names)) == len(names) == 8 + 4 + 2 + 3 + 4
    switches = {(s.s1, s.s2, s.s3) for s in systems[:8]}
    assert len(switches) == 8
    assert all(s.anchors == "proxy" for s in systems[:12])
    assert [s.anchors for s in systems[12:14]] == ["none", "bank"]
    formula = {s.name: s for s in systems[14:]}
    # shipped_head left False: the default has no Stage 2, so no default-S2 row
    assert list(formula) == ["formula", "S1+formula", "S3-default", "default", "default-S1",
                             "default-formula", "default-S3"]
    assert formula["default"].formula and formula["default"].alpha == 0.03 and formula["default"].s1
    assert formula["default"].anchors == "default" and not formula["default"].s2
    assert not formula["S3-default"].formula and formula["S3-default"].s3 == "polarity"


class _TableBackbone:
    """A text encoder that looks clause texts up in a table: the ranking arithmetic, by hand."""

    name, dim, device = "table", 3, "cpu"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def encode_text(self, texts: list[str]) -> torch.Tensor:
        return torch.tensor([self.table[text] for text in texts])


def _retriever(items: torch.Tensor, item_sets=None, **stages):  # type: ignore[no-untyped-def]
    from fortekit.search.index import AudioIndex
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.retriever import Retriever

    index = AudioIndex.from_captions([f"i{row}" for row in range(len(items))], [None] * len(items), "table",
                                     embeddings=items, parse_captions=False, predicate_sets=item_sets)
    backbone = _TableBackbone({"a dog barking": [1.0, 0.0, 0.0], "a person talking": [0.0, 1.0, 0.0]})
    return Retriever(index, PipelineSpec(**stages), backbone=backbone, device="cpu")  # type: ignore[arg-type]


def test_rank_through_with_formula_scoring_changes_only_what_the_formula_scores() -> None:
    from fortekit.fol import parse_formula
    from fortekit.search.formula.scoring import FormulaScoringConfig

    rows = [[0.8, 0.6, 0.0], [0.9, 0.0, 0.44], [0.0, 0.0, 1.0]]
    items = torch.nn.functional.normalize(torch.tensor(rows), dim=1)
    queries = torch.nn.functional.normalize(torch.tensor([[0.7, 0.6, 0.0], [0.0, 0.1, 1.0]]), dim=1)
    formulas = [parse_formula("∃x [Dog(x) ∧ Barking(x) ∧ ¬∃y [Person(y) ∧ Talking(y)]]"), None]
    plain = rank_through(_retriever(items, formula=None, rerank=None), queries, [1, 2], formulas=formulas)
    scorer = _retriever(items, formula=FormulaScoringConfig(calibration="none", gamma=1.0), rerank=None)
    scored = rank_through(scorer, queries, [1, 2], formulas=formulas)
    assert plain.ranks.tolist() == [2, 1] and scored.ranks.tolist() == [1, 1]


def test_rank_through_in_chunks_matches_the_reranker_on_the_full_matrix() -> None:
    generator = torch.Generator().manual_seed(0)
    queries = torch.nn.functional.normalize(torch.randn(23, 3, generator=generator), dim=1)
    items = torch.nn.functional.normalize(torch.randn(30, 3, generator=generator), dim=1)
    targets = list(range(23))
    names = ["Dog", "Rain", "Wind", "Bird"]
    item_sets = [frozenset({PredicateSymbol(names[i % 4], 1)}) for i in range(30)]
    query_sets = [frozenset({PredicateSymbol(names[i % 3], 1)}) for i in range(23)]
    stage3 = _retriever(items, item_sets, formula=None, rerank=Reranker(alpha=0.5, top_n=7), candidates=5)
    run = rank_through(stage3, queries, targets, query_predicates=query_sets, chunk_rows=5)
    _, order = Reranker(alpha=0.5, top_n=7).rerank(queries @ stage3.items.T,
                                         query_sets, item_sets)
    assert run.ranks.tolist() == ranks_from_indices(order, targets).tolist()
    assert run.top.tolist() == order[:, :10].tolist()
    plain = rank_through(stage3.replace(rerank=None), queries, targets, chunk_rows=4)
    first_pass = torch.argsort(-(queries @ stage3.items.T), dim=1, stable=True)
    assert plain.ranks.tolist() == ranks_from_indices(first_pass, targets).tolist()
    assert hits_at(plain.ranks, 1).shape == (23,)


def test_oracle_negatives_skip_the_target() -> None:
    scores = torch.tensor([[0.9, 0.95, 0.1], [0.5, 0.4, 0.45]])
    assert oracle_negatives(scores, [1, 0]) == [0, 2]


def test_split_collections_never_shares_a_clip() -> None:
    from fortekit.search.eval.datasets import Clip

    clips = [Clip(str(i), ("query", "item")) for i in range(10)]
    split = split_collections(clips, None, n_train=6, limit_test=3, limit_train=4)
    assert [c.clip_id for c in split.train] == ["0", "1", "2", "3"]
    assert [c.clip_id for c in split.test] == ["6", "7", "8"]
    with pytest.raises(EvaluationError, match="E520"):
        split_collections(clips, None, n_train=10, limit_test=None, limit_train=None)
    with pytest.raises(EvaluationError, match="E520"):
        split_collections(clips, None, n_train=None, limit_test=None, limit_train=None)


def test_markdown_table_marks_the_switches() -> None:
    row = {"R@1": 0.25, "R@5": 0.5, "R@10": 0.75, "R@50": 1.0, "mAP@10": 0.4, "p_value": 0.0004,
           "ms_per_query": 12.0, "s_per_1000_items": 3.0, "S1": True, "S2": True, "S3": "polarity",
           "anchors": "bank"}
    line = markdown_table({"S1+S2+S3-polarity": row}).splitlines()[2]
    assert line == ("| S1+S2+S3-polarity | bank | ✓ | polarity | 25.00 | 50.00 | 75.00 | 100.00 | 40.00 "
                    "| <0.001 | 12.0 | 3.00 |")
