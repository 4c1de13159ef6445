"""The formula-level order check (search/formula/order_check.py): pure logic, the Retriever's
``order_check`` and ``fortekit search --order-check``, on real captions parsed by Π."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from fortekit.fol import parse_formula  # noqa: E402
from fortekit.search.formula.order_check import OrderCheck, event_orders, order_agreement  # noqa: E402
from fortekit.search.pipeline import PipelineSpec  # noqa: E402

DOG_THEN_BELL = "∃x ∃y [Dog(x) ∧ Barking(x) ∧ Before(x, y) ∧ Bell(y) ∧ Ringing(y)]"
CAPTIONS = ["a bell rings and then a dog barks", "rain falls on a roof", "a dog barks and then a bell rings"]


def test_agreement_reads_the_items_caption_in_both_directions() -> None:
    phi = parse_formula(DOG_THEN_BELL)
    check = OrderCheck([*CAPTIONS, None, ""])
    assert [order_agreement(phi, check.item_formula(row)) for row in range(5)] == [-1.0, 0.0, 1.0, 0.0, 0.0]
    assert check.item_formula(99) is None  # a row outside the captions says nothing


def test_the_head_is_sorted_and_the_scores_keep_their_places() -> None:
    phi = parse_formula(DOG_THEN_BELL)
    check = OrderCheck(CAPTIONS, top_n=2)
    scores, rows = check.apply([phi, None], torch.tensor([[0.9, 0.8, 0.7], [0.9, 0.8, 0.7]]),
                               torch.tensor([[0, 1, 2], [0, 1, 2]]))
    # top_n 2: only rows 0 (reversed) and 1 (unknown) are sorted; row 2 stays third.
    assert rows.tolist() == [[1, 0, 2], [0, 1, 2]]
    assert scores.tolist()[0] == pytest.approx([0.9, 0.8, 0.7])  # still best first
    assert event_orders(None) == [] and event_orders(parse_formula("∃x Dog(x)")) == []


def test_the_retriever_puts_the_stated_order_first(tmp_path: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.cli import main
    from fortekit.search.index import AudioIndex
    from fortekit.search.retriever import Retriever

    index = AudioIndex.from_captions(["swapped", "rain", "same"], CAPTIONS, minilm)
    query = "a dog barks and then a bell rings"
    plain = Retriever(index, PipelineSpec(rerank=None, formula=None), backbone=minilm, device="cpu")
    checked = Retriever(index, PipelineSpec(rerank=None, formula=None, order_check=True), backbone=minilm,
                        device="cpu")
    assert "order_check" in repr(checked) and "order_check" not in repr(plain)
    hits = [hit.item_id for hit in checked.search(query, k=3).hits]
    assert hits.index("same") < hits.index("swapped")
    assert hits.index("rain") < hits.index("swapped")  # reversed order goes last in the head
    index.save(tmp_path / "index")
    assert main(["search", "--index", str(tmp_path / "index"), "--order-check", "--device", "cpu",
                 "-k", "3", query]) == 0
