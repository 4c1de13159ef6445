"""The violation badges of the evaluation page: the grounded check, as ``fortekit eval --beir`` counts it.

An item of a query's top 10 *violates* the query when its captions hold a sound the query's
formula excludes (:mod:`fortekit.fol.violation`, through
:class:`~fortekit.search.eval.grounded.GroundedMarks`): the one check behind a hit's violated
mark, Stage 3's polarity conflicts and ``violated@10``. :class:`PageMarks` takes each hit's
mark from, in order:

1. the run's own judgement, stored per query (``top_violated``, a run of this version): the
   page shows exactly what ``violated@10`` counted, also for a run whose items a captioner
   captioned;
2. the check itself, for a run of an earlier version: the query text and the items' captions
   (the union over a clip's captions, as the run read them) parsed on first use, a batch per
   query view, and kept per query and per item;
3. the collection's concept annotation (``item_concepts.jsonl``: the item mentions the
   query's concept ``b``), only for an item with no caption the parser read (no asserted
   symbol), which the check cannot judge.

Nothing here imports torch at import time: the parser is loaded by the first run of an earlier
version that needs it.

Example:
    >>> from fortekit.search.eval.beir import BeirItem
    >>> items = {"d1": BeirItem("d1", "a man is speaking", ("a man is speaking", "speech")),
    ...          "d2": BeirItem("d2", "birds chirp", ("birds chirp",)), "d3": BeirItem("d3", "")}
    >>> marks = PageMarks(items, {"d3": {"speech": 1}})
    >>> from fortekit.search.serve.run_files import RunRecord
    >>> record = RunRecord("q1", "a dog barking without people talking", "without", {"b": "speech"},
    ...                    1.0, None, ("d1", "d2", "d3"))
    >>> [(m["violates"], m["judged_by"]) for m in marks.hits(record, "speech", 3)]
    [(True, 'captions'), (False, 'captions'), (True, 'concepts')]
    >>> marks.hits(record, "speech", 1)[0]["violated"]
    ['¬∃y [Person(y) ∧ Talking(y)]']
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fortekit.search.eval.beir import BeirItem
from fortekit.search.serve.run_files import RunRecord

if TYPE_CHECKING:
    from fortekit.fol.ast import Formula
    from fortekit.fol.predicates import PredicateSymbol
    from fortekit.search.eval.grounded import GroundedMarks

__all__ = ["PageMarks", "item_captions"]


def item_captions(item: BeirItem) -> tuple[str, ...]:
    """The texts an item's grounded mark reads: its caption list, else its text (empty: none).

    As :attr:`~fortekit.search.eval.beir_data.BeirData.caption_sets` reads them.

    Example:
        >>> item_captions(BeirItem("d", "rain", ("rain", "heavy rain"))), item_captions(BeirItem("e", " "))
        (('rain', 'heavy rain'), ())
    """
    texts = item.captions or ((item.text,) if item.text else ())
    return tuple(text for text in texts if text and text.strip())


class PageMarks:
    """Each hit's violation mark for the evaluation page, judged once per (query, item).

    Args:
        items: the collection's items by id.
        concepts: ``item_concepts.jsonl`` (item id -> {concept: captions mentioning it}), or None.
    """

    def __init__(self, items: Mapping[str, BeirItem],
                 concepts: Mapping[str, Mapping[str, int]] | None) -> None:
        self._items = items
        self._concepts = concepts or {}
        self._formulas: dict[str, Formula | None] = {}
        self._symbols: dict[str, frozenset[PredicateSymbol] | None] = {}
        self._lock = threading.Lock()
        self._grounded: GroundedMarks | None = None

    def _checked(self) -> GroundedMarks:
        if self._grounded is None:
            from fortekit.search.eval.grounded import GroundedMarks

            self._grounded = GroundedMarks(self._formulas.__getitem__, self._symbols.__getitem__)
        return self._grounded

    def _parse(self, record: RunRecord, items: Sequence[str]) -> None:
        """Parse the query text and the captions of ``items`` not parsed yet, in one batch."""
        with self._lock:
            todo = [item for item in dict.fromkeys(items) if item not in self._symbols]
            if record.query_id in self._formulas and not todo:
                return
            from fortekit.search.index.item_captions import item_formulas_from_captions, predicate_sets

            groups = {item: item_captions(self._items[item]) for item in todo}
            texts = list(dict.fromkeys(text for group in groups.values() for text in group))
            ask = [record.query] if record.query_id not in self._formulas else []
            formulas = item_formulas_from_captions([*ask, *texts])
            if ask:
                self._formulas[record.query_id] = formulas[0]
            parsed = dict(zip(texts, predicate_sets(formulas[len(ask):]), strict=True))
            for item, group in groups.items():
                self._symbols[item] = frozenset().union(*(parsed[t] for t in group))

    def _judged(self, record: RunRecord, items: Sequence[str]) -> list[tuple[str, ...] | None] | None:
        """Per item, the held excluded sounds (None for an item: no caption to judge; None for
        all: the query's formula excludes no sound)."""
        if record.grounded_stored:  # the run judged them: what violated@10 counted
            stored = record.top_marks
            return None if stored is None else list(stored[:len(items)])
        self._parse(record, items)
        check = self._checked()
        return check.marks(record.query_id, items) if check.applies(record.query_id) else None

    def hits(self, record: RunRecord, excluded: str | None, k: int) -> list[dict[str, Any]]:
        """The marks of the first ``k`` items of ``record.top``.

        Args:
            record: the system's record of the query.
            excluded: the concept the query excludes by its metadata (``b``), for the fallback.
            k: how many items.

        Returns:
            Per item ``{"violates": bool, "violated": [excluded sound, ...], "judged_by":
            "captions", "concepts" or None}`` (None: the query excludes nothing the check or the
            annotation can judge).
        """
        items = list(record.top[:k])
        judged = self._judged(record, items)
        out: list[dict[str, Any]] = []
        for position, item in enumerate(items):
            held = None if judged is None else judged[position]
            if judged is None or held is not None:
                out.append({"violates": bool(held), "violated": list(held or ()),
                            "judged_by": None if judged is None else "captions"})
            elif excluded is not None:  # no caption to judge: the dataset's annotation
                mentions = self._concepts.get(item, {}).get(excluded, 0) >= 1
                out.append({"violates": mentions, "violated": [], "judged_by": "concepts"})
            else:
                out.append({"violates": False, "violated": [], "judged_by": None})
        return out
