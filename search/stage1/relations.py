"""Which relations real captions attach to a sound event: the vocabulary side of o_rel's pool.

``vocab/relations.tsv`` counts, over the parses of a caption collection, each
(event, relation, entity) where the caption says ``Event(x) ∧ Relation(x, y) ∧
Entity(y)``: "a dog barks near a road" gives (Dog, Near, Road) and (Barking, Near, Road).
Only spatial and temporal relations to entities that are not sound sources count:
o_rel says where and when a sound happens, it does not add another source.
The shipped table is mined from the AudioCaps training captions, which no
benchmark of fortekit tests on, with ``fortekit relations build``.

Example:
    >>> table = load_relations()
    >>> ("In", "Room") in table.pairs_for(["Talking"], limit=20)
    True
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from fortekit.textio import split_text_lines

__all__ = ["RelationTable", "load_relations", "mine_relations"]

_HEADER = (
    "# (event, relation, entity) triples of caption parses: Event(x) ∧ Relation(x, y) ∧ Entity(y).\n"
    "# Built by `fortekit relations build`; see fortekit/search/stage1/relations.py.\n"
)
_EVENT_CATEGORIES = frozenset({"sound_event", "negation_target"})
# o_rel places the sound (where, when); a relation to another sound source would add a
# source, which the elaboration prompts forbid.
_RELATION_CATEGORIES = frozenset({"spatial", "temporal"})
# ... and the entity is a place of V_audio (room, street, shore), not "someone" or "speed".
_PLACES = frozenset({"spatial"})


@dataclass(frozen=True, slots=True)
class RelationTable:
    """(relation, entity) pairs by event, most frequent first, and over all events.

    Attributes:
        by_event: event symbol -> ((relation, entity), count) rows.
        overall: ((relation, entity), count) rows over every event.
    """

    by_event: Mapping[str, tuple[tuple[tuple[str, str], int], ...]] = field(default_factory=dict)
    overall: tuple[tuple[tuple[str, str], int], ...] = ()

    def pairs_for(self, events: Iterable[str], limit: int = 6) -> list[tuple[str, str]]:
        """The (relation, entity) pairs most used with ``events``, topped up from the overall list.

        Example:
            >>> RelationTable({"Dog": ((("Near", "Road"), 3),)}).pairs_for(["Dog"])
            [('Near', 'Road')]
        """
        scores: Counter[tuple[str, str]] = Counter()
        for event in events:
            for pair, count in self.by_event.get(event, ()):
                scores[pair] += count
        ranked = [pair for pair, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]
        for pair, _ in self.overall:
            if len(ranked) >= limit:
                break
            if pair not in scores:
                ranked.append(pair)
        return ranked[:limit]


def mine_relations(
    captions: Iterable[str], *, min_count: int = 3, per_event: int = 12, batch_size: int = 512
) -> RelationTable:
    """Count (event, relation, entity) over the parses of ``captions``.

    Args:
        captions: caption texts (empty ones are skipped).
        min_count: drop rarer triples.
        per_event: keep this many pairs per event.
        batch_size: captions per spaCy batch.

    Returns:
        The table.

    Example:
        >>> table = mine_relations(["a dog barks near a road"] * 3)  # doctest: +SKIP
        >>> table.pairs_for(["Dog"])  # doctest: +SKIP
        [('Near', 'Road')]
    """
    from fortekit.fol.caption import parse_captions

    texts = [text.strip() for text in captions if text and text.strip()]
    triples: Counter[tuple[str, str, str]] = Counter()
    for result in parse_captions(texts, batch_size=batch_size):
        events: dict[str, set[str]] = {}
        nouns: dict[str, set[str]] = {}
        relations: list[tuple[str, str, str]] = []
        for record in result.predicates:
            if record.negated:
                continue
            args = record.participants  # 'Pumping(e1, x)' is an event of x, not a relation
            if len(args) == 2 and record.category in _RELATION_CATEGORIES:
                relations.append((record.symbol, args[0], args[1]))
            elif len(args) == 1 and record.category in _EVENT_CATEGORIES:
                events.setdefault(args[0], set()).add(record.symbol)
            elif len(args) == 1 and record.pos in ("NOUN", "PROPN") and record.category in _PLACES:
                nouns.setdefault(args[0], set()).add(record.symbol)
        found: set[tuple[str, str, str]] = set()
        for relation, subject, obj in relations:
            if obj in events:  # the object is another sound source, not a place or a time
                continue
            for event in events.get(subject, ()):
                for entity in nouns.get(obj, ()):
                    found.add((event, relation, entity))
        triples.update(found)
    by_event: dict[str, list[tuple[tuple[str, str], int]]] = {}
    overall: Counter[tuple[str, str]] = Counter()
    for (event, relation, entity), count in triples.items():
        if count >= min_count:
            by_event.setdefault(event, []).append(((relation, entity), count))
            overall[(relation, entity)] += count
    ranked = {
        event: tuple(sorted(rows, key=lambda item: (-item[1], item[0]))[:per_event])
        for event, rows in sorted(by_event.items())
    }
    overall_rows = tuple(sorted(overall.items(), key=lambda item: (-item[1], item[0]))[:50])
    return RelationTable(ranked, overall_rows)


def format_relations(table: RelationTable) -> str:
    """The TSV text of a table; the event ``*`` holds the overall rows."""
    lines = [_HEADER, "event\trelation\tentity\tcount\n"]
    lines.extend(f"*\t{relation}\t{entity}\t{count}\n" for (relation, entity), count in table.overall)
    for event in sorted(table.by_event):
        lines.extend(
            f"{event}\t{relation}\t{entity}\t{count}\n" for (relation, entity), count in table.by_event[event]
        )
    return "".join(lines)


def parse_relations(text: str) -> RelationTable:
    """Read the TSV text of :func:`format_relations`."""
    rows: dict[str, list[tuple[tuple[str, str], int]]] = {}
    for line in split_text_lines(text):  # "\n" only (fortekit.textio)
        if not line or line.startswith("#") or line.startswith("event\t"):
            continue
        event, relation, entity, count = line.split("\t")
        rows.setdefault(event, []).append(((relation, entity), int(count)))
    overall = tuple(rows.pop("*", ()))
    return RelationTable({event: tuple(row) for event, row in rows.items()}, overall)


@cache
def load_relations() -> RelationTable:
    """The shipped table ``vocab/relations.tsv`` (empty if it was not built)."""
    resource = resources.files("fortekit.vocab").joinpath("relations.tsv")
    if not resource.is_file():
        return RelationTable()
    return parse_relations(resource.read_text("utf-8"))


def read_caption_column(path: str | Path, column: str) -> list[str]:
    """The values of one CSV column (undecodable bytes replaced)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return [row.get(column) or "" for row in csv.DictReader(handle)]
