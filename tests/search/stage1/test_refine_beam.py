"""Stage 1: the batched beam search, its cache, pools, anchors and explanations (real models, data)."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pytest
import torch
from conftest import SHARED_DATA, require

from fortekit.errors import CaptionTypeError, EmptyCaptionError, RefineError
from fortekit.fol import PredicateSymbol, predicates
from fortekit.fol.caption import parse_caption
from fortekit.search import AnchorBank, NoAnchors, OracleAnchors, RefineConfig, Refiner
from fortekit.search.stage1.anchors import AnchorRequest, parse_symbol
from fortekit.search.stage1.encoder import CachedTextEncoder, TextEmbeddingCache
from fortekit.search.stage1.pools import candidate_pools
from fortekit.search.stage1.relations import load_relations, mine_relations, read_caption_column
from fortekit.verbalise import verbalise

AUDIOCAPS_VAL = SHARED_DATA / "audiocaps" / "val.csv"
AUDIOCAPS_TRAIN = SHARED_DATA / "audiocaps" / "train.csv"
CLOTHO = SHARED_DATA / "clotho" / "clotho_captions_development.csv"


@pytest.fixture(scope="module")
def backbone():
    from fortekit.plugins import get_backbone

    return get_backbone("minilm", device="cpu")


@pytest.fixture(scope="module")
def val_queries() -> list[str]:
    captions = read_caption_column(require(AUDIOCAPS_VAL), "caption")
    return captions[:16:2]


def test_config_defaults_presets_and_validation() -> None:
    online, offline = RefineConfig.online(), RefineConfig.offline()
    assert (online.beam_width, online.max_depth) == (3, 2)
    assert (offline.beam_width, offline.max_depth) == (5, 4)
    assert (online.tau, online.lam, online.beta) == (0.2, 1.0, 0.5)
    assert online.schedule == {1: ("attr",), 2: ("rel",), 3: ("neg",), 4: ("neg",)}
    with pytest.raises(RefineError, match="E400"):
        RefineConfig(beam_width=0)
    with pytest.raises(RefineError, match="E400"):
        RefineConfig(tau=float("nan"))
    with pytest.raises(RefineError, match=r"E402.*beam_width"):
        online.replace(beam=3)
    with pytest.raises(RefineError, match="E401"):
        RefineConfig(schedule={1: ("swap",)})


def test_cache_counts_calls_and_persists(backbone, tmp_path: Path) -> None:
    encoder = CachedTextEncoder(backbone, TextEmbeddingCache(tmp_path, backbone="minilm", dim=384))
    first = encoder.encode(["a dog barks", "rain", "a dog barks"])
    assert (encoder.stats.calls, encoder.stats.texts_encoded, encoder.stats.cache_hits) == (1, 2, 1)
    assert torch.equal(first[0], first[2])
    assert torch.allclose(first, backbone.encode_text(["a dog barks", "rain", "a dog barks"]), atol=1e-5)
    encoder.cache.close()
    again = CachedTextEncoder(backbone, TextEmbeddingCache(tmp_path, backbone="minilm", dim=384))
    second = again.encode(["rain", "a dog barks"])
    assert again.stats.calls == 0 and torch.equal(second[0], first[1])
    again.cache.close()
    with pytest.raises(RefineError, match="E405"):
        TextEmbeddingCache(tmp_path, backbone="hf-clap", dim=512)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "text_cache.sqlite").write_bytes(b"not a database at all" * 10)
    with pytest.raises(RefineError, match="E404"):
        TextEmbeddingCache(tmp_path / "broken", backbone="minilm", dim=384)
    assert sqlite3.sqlite_version  # the cache is plain SQLite: no pickle involved


@pytest.fixture(scope="module")
def refiner(backbone) -> Refiner:
    return Refiner(backbone, "lexical", config=RefineConfig.online())


@pytest.fixture(scope="module")
def val_results(refiner: Refiner, val_queries: list[str]):
    refiner.encoder.stats.reset()
    results = refiner.refine_many(val_queries, batch_size=len(val_queries))
    return results, refiner.encoder.stats.calls


def test_one_encoder_call_per_depth_per_batch(val_results, refiner: Refiner) -> None:
    _, calls = val_results
    # depth 0 (queries, phi0, phi+, phi-) + one call per depth
    assert calls <= 1 + refiner.config.max_depth


def test_every_refinement_keeps_the_invariant_set(val_results) -> None:
    results, _ = val_results
    for result in results:
        assert result.invariant <= predicates(result.phi_star)
        assert result.invariant <= predicates(result.phi0) or not result.invariant
        for node in result.tree:
            assert result.invariant <= predicates(node.formula)


def test_q_star_is_the_query_moved_by_the_refinement(val_results, backbone) -> None:
    results, _ = val_results
    expected = backbone.encode_text([r.refined_text for r in results])
    stacked = torch.stack([r.q_star for r in results])
    residual = [
        torch.nn.functional.normalize(e + own - root, dim=0) if r.phi_star != r.phi0 else own
        for r, e, own, root in zip(
            results, expected, backbone.encode_text([r.query for r in results]),
            backbone.encode_text([r.tree[0].text for r in results]), strict=True,
        )
    ]
    assert torch.allclose(stacked, torch.stack(residual), atol=1e-5)
    paper = Refiner(backbone, "lexical", config=RefineConfig.online(output="verbalised"))
    verbalised = paper.refine_many([r.query for r in results[:3]])
    assert torch.allclose(  # q* = f_T(G(phi*)), G(phi0) too when nothing was refined
        torch.stack([r.q_star for r in verbalised]),
        backbone.encode_text([verbalise(r.phi_star) for r in verbalised]), atol=1e-5,
    )
    # the refined text is G(phi*), or the query itself when phi* = phi0 (issue 46)
    for r in [*results, *verbalised]:
        assert r.refined_text == (r.query if r.phi_star == r.phi0 else verbalise(r.phi_star))
    assert torch.allclose(stacked.norm(dim=-1), torch.ones(len(results)), atol=1e-5)


def test_phi_star_is_the_best_feasible_node(val_results) -> None:
    results, _ = val_results
    for result in results:
        feasible = [node for node in result.tree if node.feasible]
        assert result.terms.objective == min(node.terms.objective for node in feasible)
        assert result.depth <= 2


def test_batched_equals_one_by_one_and_is_deterministic(backbone, val_queries, val_results) -> None:
    results, _ = val_results
    fresh = Refiner(backbone, "lexical")
    single = [fresh.refine(query) for query in val_queries[:5]]
    assert [r.refined_text for r in single] == [r.refined_text for r in results[:5]]
    assert [r.to_dict() for r in single] == [r.to_dict() for r in fresh.refine_many(val_queries[:5])]


def test_complexity_weight_of_the_paper_always_returns_phi0(backbone, val_queries, val_results) -> None:
    """With c in whole predicates (w = 1) and u a few hundredths, phi0 always wins (DESIGN.md)."""
    paper = Refiner(backbone, "lexical", config=RefineConfig.online(complexity_weight=1.0))
    outcomes = [(r.phi_star == r.phi0, r.tree[0].feasible) for r in paper.refine_many(val_queries)]
    # phi0 loses only where the threshold rules it out
    assert all(kept for kept, feasible in outcomes if feasible)
    assert sum(feasible for _, feasible in outcomes) >= len(outcomes) // 2
    free = Refiner(backbone, "lexical", config=RefineConfig.online(complexity_weight=0.0))
    refined = [sum(r.phi_star != r.phi0 for r in each.refine_many(val_queries)) for each in (free, paper)]
    assert refined[0] > refined[1] and refined[0] >= len(val_queries) // 2


def test_thresholds(backbone, val_queries) -> None:
    queries = val_queries[:4]
    everything = Refiner(backbone, "lexical", config=RefineConfig(threshold="absolute", tau=-2.0))
    assert all(node.feasible for r in everything.refine_many(queries) for node in r.tree)
    nothing = Refiner(backbone, "lexical", config=RefineConfig(threshold="absolute", tau=2.0))
    for result in nothing.refine_many(queries):
        assert not result.feasible and result.phi_star == result.phi0 and result.depth == 0
        assert len({node.depth for node in result.tree}) == 2  # early exit after depth 1
    auto = Refiner(backbone, "lexical", config=RefineConfig(tau=2.0))
    assert {r.threshold for r in auto.refine_many(queries)} == {"relative"}
    relative = Refiner(backbone, "lexical", config=RefineConfig(threshold="relative"))
    for result in relative.refine_many(queries):
        root = result.tree[0]
        assert all(node.terms.pivot >= root.terms.pivot for node in result.tree if node.feasible)


def test_offline_regime_searches_deeper(backbone) -> None:
    deep = Refiner(backbone, "lexical", config=RefineConfig.offline(complexity_weight=0.0))
    result = deep.refine("a dog barking")
    assert max(node.depth for node in result.tree) == 4
    assert any(node.edit and node.edit[0] == "neg" for node in result.tree)


def test_bad_queries_get_typed_errors(refiner: Refiner) -> None:
    with pytest.raises(EmptyCaptionError):
        refiner.refine("   ")
    with pytest.raises(CaptionTypeError):
        refiner.check_query(b"bytes")
    with pytest.raises(RefineError, match="E410"):
        refiner.refine_many("a dog barking")  # type: ignore[arg-type]
    with pytest.raises(RefineError, match="E400"):
        refiner.refine_many(["rain"], batch_size=0)
    with pytest.raises(RefineError, match="E410"):
        Refiner(refiner.backbone, config={"beam_width": 3})  # type: ignore[arg-type]


def test_pools_follow_the_elaborations() -> None:
    phi0 = parse_caption("a dog barking")
    loud, quiet = parse_caption("a loud dog barking"), parse_caption("a quiet dog barking")
    pools = candidate_pools(phi0, [loud], [quiet])
    assert pools.attributes[0] == "Loud" and "Quiet" not in pools.attributes
    assert pools.negations[0] == "Quiet" and "Loud" not in pools.negations
    assert not {"Dog", "Barking"} & set(pools.attributes + pools.negations)
    assert all(entity not in ("Dog", "Barking") for _, entity in pools.relations)
    assert len(pools.relations) > 0


def test_relation_table_is_consistent_with_the_captions() -> None:
    """Mining a slice of AudioCaps train finds nothing the shipped table (mined from all of it) lacks."""
    captions = read_caption_column(require(AUDIOCAPS_TRAIN), "caption")[:1500]
    sample = mine_relations(captions, min_count=2)
    shipped = load_relations()
    for event, rows in sample.by_event.items():
        full = dict(shipped.by_event.get(event, ()))
        for pair, count in rows:
            assert pair not in full or full[pair] >= count
    assert ("On", "Surface") in [pair for pair, _ in shipped.overall[:3]]


def _clotho_rows(limit: int) -> list[dict[str, str]]:
    with open(require(CLOTHO), encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))[:limit]


def test_anchor_bank_is_predicate_stratified(backbone, tmp_path: Path) -> None:
    rows = _clotho_rows(300)
    captions = [row["caption_2"] for row in rows]
    from fortekit.fol.caption import parse_captions

    sets = [predicates(result.formula) for result in parse_captions(captions)]
    bank = AnchorBank(backbone.encode_text(captions), sets, per_lookup=8)
    dog = {PredicateSymbol("Dog", 1)}
    with_dog = [i for i, s in enumerate(sets) if PredicateSymbol("Dog", 1) in s]
    if with_dog:
        expected = torch.nn.functional.normalize(bank.embeddings[with_dog[:8]].mean(dim=0), dim=0)
        assert torch.allclose(bank.lookup(dog), expected, atol=1e-6)
    assert torch.equal(bank.lookup({PredicateSymbol("Zzzq", 1)}), bank.centre)
    bank.save(tmp_path / "bank")
    loaded = AnchorBank.load(tmp_path / "bank")
    assert torch.equal(loaded.embeddings, bank.embeddings) and loaded.predicate_sets == bank.predicate_sets
    with pytest.raises(RefineError, match="E408"):
        AnchorBank.load(tmp_path / "missing")
    request = AnchorRequest("a dog", backbone.encode_text(["a dog"])[0], frozenset(dog), (frozenset(dog),))
    [anchors] = bank.anchor_batch([request])
    assert anchors.positive is not None and anchors.negative is not None
    refiner = Refiner(backbone, "lexical", anchors=bank)
    result = refiner.refine("a dog barking in the distance")
    assert result.anchor_source == "bank" and result.terms.sim_pos != 0.0


def test_oracle_and_no_anchors(backbone) -> None:
    target = backbone.encode_text(["a small dog yaps twice"])[0]
    oracle = Refiner(backbone, "lexical", anchors=OracleAnchors({"a dog barking": (target, None)}))
    result = oracle.refine("a dog barking")
    assert result.anchor_source == "oracle" and result.terms.sim_neg == 0.0
    with pytest.raises(RefineError, match="E409"):
        oracle.refine("rain")
    assert NoAnchors().anchor_batch([]) == []
    assert str(parse_symbol("¬Rain/1")) == "¬Rain/1"


def test_explain_shows_the_tree(refiner: Refiner) -> None:
    text = refiner.refine("a person talking").explain()
    assert text.splitlines()[0] == "query  a person talking"
    assert "★" in text and "φ*" in text and "C      {" in text
    assert "Person/1" in text


def test_beam_state_docstring_examples() -> None:
    import doctest

    import fortekit.search.stage1.beam_state as beam_state

    result = doctest.testmod(beam_state)
    assert result.attempted > 0 and result.failed == 0


def test_selection_docstring_examples() -> None:
    import doctest

    import fortekit.search.stage1.selection as selection

    result = doctest.testmod(selection)
    assert result.attempted > 0 and result.failed == 0
