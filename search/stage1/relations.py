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

import argparse
import csv
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TextIO

from fortekit.textio import split_text_lines

__all__ = ["RelationTable", "add_relations_commands", "load_relations", "mine_relations"]

_HEADER = (
    "# (event, relation, entity) triples of caption parses: Event(x) ∧ Relation(x, y) ∧ Entity(y).\n"
    "# Built by `fortekit relations build`; see fortekit/search/relations.py.\n"
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


def _cmd_build(args: argparse.Namespace, out: TextIO) -> int:
    from fortekit.errors import FortekitError
    from fortekit.safe_write import atomic_write, check_not_input

    specs = [spec.partition(":") for spec in args.captions]
    try:  # the table must not replace a caption file it is mined from
        check_not_input(args.out, [("caption file", path) for path, _, _ in specs])
    except FortekitError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 2
    captions: list[str] = []
    for path, _, column in specs:
        captions.extend(read_caption_column(path, column or "caption"))
    table = mine_relations(captions, min_count=args.min_count)
    text = format_relations(table)
    try:
        atomic_write(
            Path(args.out), lambda temporary: temporary.write_text(text, encoding="utf-8", newline="\n")
        )
    except FortekitError as exc:
        print(f"fortekit: {exc}", file=sys.stderr)
        return 1
    print(f"{len(captions)} captions -> {len(table.by_event)} events, {args.out}", file=out)
    return 0


def add_relations_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``fortekit relations build``."""
    relations = commands.add_parser("relations", help="mine the (event, relation, entity) table of o_rel")
    sub = relations.add_subparsers(dest="relations_command", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="count relations over the parses of caption CSV files")
    build.add_argument(
        "captions", nargs="+", metavar="CSV[:COLUMN]",
        help="caption files, each with the column to read (default column: caption)",
    )
    build.add_argument("--out", required=True, help="the TSV to write (the shipped one: vocab/relations.tsv)")
    build.add_argument("--min-count", type=int, default=3, help="drop rarer triples (default 3)")
    build.set_defaults(handler=_cmd_build)

