"""Which acoustic descriptors co-occur with which sound events in real captions.

The lexical elaborator (Stage 1's offline default) enriches a query with the
descriptors that captions most often use with its sound event ("birds" goes with
"distant", "loud", "high-pitched"). The table is built once from the caption
corpora and shipped as ``vocab/cooccurrence.tsv``; the package never reads the
corpora at run time.

Example:
    >>> table = load_cooccurrence()
    >>> "Bird" in table.events
    True
    >>> len(table.descriptors("Bird", limit=3))
    3
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from fortekit.textio import split_text_lines
from fortekit.vocab.grounding import Grounder, get_grounder
from fortekit.vocab.model import Category

#: Categories whose adjectives count as acoustic descriptors.
DESCRIPTOR_CATEGORIES = frozenset({Category.ACOUSTIC_PROPERTY, Category.INTENSITY, Category.TEMPORAL})
_TOKEN = re.compile(r"[a-z][a-z'-]*")
_HEADER = "# Acoustic descriptors (ADJ) co-occurring with sound events in Clotho + AudioCaps captions.\n"


@dataclass(frozen=True, slots=True)
class Cooccurrence:
    """Counts of (sound event, descriptor) pairs within one caption."""

    counts: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)

    @property
    def events(self) -> frozenset[str]:
        return frozenset(self.counts)

    def descriptors(self, event: str, limit: int = 10) -> tuple[str, ...]:
        """The descriptors seen most often with ``event``, most frequent first.

        Example:
            >>> load_cooccurrence().descriptors("NoSuchEvent")
            ()
        """
        return tuple(symbol for symbol, _ in self.counts.get(event, ())[:limit])


def caption_symbols(caption: str, grounder: Grounder) -> tuple[set[str], set[str]]:
    """The sound events and the acoustic descriptors a caption mentions (tiers i-ii only)."""
    events: set[str] = set()
    descriptors: set[str] = set()
    for token in _TOKEN.findall(caption.lower()):
        result = grounder.ground(token)
        entry = result.entry
        if entry is None or result.soft:
            continue
        if entry.category.is_event and entry.pos in ("NOUN", "VERB"):
            events.add(entry.symbol)
        elif entry.category in DESCRIPTOR_CATEGORIES and entry.pos == "ADJ":
            descriptors.add(entry.symbol)
    return events, descriptors


def build_cooccurrence(
    captions: Iterable[str], *, min_count: int = 3, per_event: int = 12, grounder: Grounder | None = None
) -> Cooccurrence:
    """Count descriptor-event pairs over captions.

    Args:
        captions: caption strings (Clotho development and AudioCaps train for the shipped table).
        min_count: pairs seen fewer times are dropped.
        per_event: how many descriptors to keep per event.
        grounder: the grounder (default: the shipped vocabulary's).

    Returns:
        The table, deterministic for a given input (ties broken by symbol).

    Example:
        >>> table = build_cooccurrence(["loud birds chirping"] * 3, min_count=1)
        >>> table.descriptors("Bird")
        ('Loud',)
    """
    grounder = grounder or get_grounder()
    pairs: dict[str, Counter[str]] = {}
    for caption in captions:
        events, descriptors = caption_symbols(caption, grounder)
        for event in events:
            pairs.setdefault(event, Counter()).update(descriptors)
    counts = {
        event: tuple(
            (symbol, count)
            for symbol, count in sorted(counter.items(), key=lambda item: (-item[1], item[0]))
            if count >= min_count
        )[:per_event]
        for event, counter in sorted(pairs.items())
    }
    return Cooccurrence({event: row for event, row in counts.items() if row})


def format_cooccurrence(table: Cooccurrence) -> str:
    """The TSV text of a table: ``event, descriptor, count`` rows, sorted."""
    lines = [_HEADER, "event\tdescriptor\tcount\n"]
    for event in sorted(table.counts):
        lines.extend(f"{event}\t{symbol}\t{count}\n" for symbol, count in table.counts[event])
    return "".join(lines)


def parse_cooccurrence(text: str) -> Cooccurrence:
    """Read the TSV text written by :func:`format_cooccurrence`."""
    rows: dict[str, list[tuple[str, int]]] = {}
    for line in split_text_lines(text):  # "\n" only, as fortekit.textio reads every line file
        if not line or line.startswith("#") or line.startswith("event\t"):
            continue
        event, symbol, count = line.split("\t")
        rows.setdefault(event, []).append((symbol, int(count)))
    return Cooccurrence({event: tuple(row) for event, row in rows.items()})


def write_cooccurrence(table: Cooccurrence, path: str | Path) -> Path:
    """Write the table as TSV (UTF-8, LF)."""
    from fortekit.safe_write import atomic_write

    text = format_cooccurrence(table)
    return atomic_write(Path(path), lambda temporary: temporary.write_text(text, encoding="utf-8",
                                                                           newline="\n"))


@cache
def load_cooccurrence() -> Cooccurrence:
    """The shipped table ``vocab/cooccurrence.tsv`` (empty if it was not built)."""
    resource = resources.files("fortekit.vocab").joinpath("cooccurrence.tsv")
    if not resource.is_file():
        return Cooccurrence({})
    return parse_cooccurrence(resource.read_text("utf-8"))
