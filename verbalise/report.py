"""The round-trip report of the verbaliser: how much of Pred(φ) survives Π(G(φ)).

It parses every caption with Π, writes each formula back with G, parses that again
and counts the predicates (symbol and polarity) of φ found in Π(G(φ)); it lists the
predicates most often lost. The command is
``python -m fortekit.search.cli.verbalise_report CAPTION_CSV``
(:mod:`fortekit.search.cli.verbalise_report`).

Example:
    >>> stats = round_trip(["birds chirping in the morning"])
    >>> stats.recovered == stats.total
    True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fortekit.fol.ast import Formula
from fortekit.fol.predicates import Polarity, predicates
from fortekit.verbalise.realise import verbalise

__all__ = ["RoundTrip", "format_round_trip", "read_captions", "round_trip", "round_trip_formulas"]


@dataclass(slots=True)
class RoundTrip:
    """Counts of one round trip."""

    formulas: int = 0
    total: int = 0
    recovered: int = 0
    negated: int = 0
    negated_recovered: int = 0
    flipped: int = 0  # denied in φ, asserted (and not denied) in Π(G(φ))
    missed: Counter[str] = field(default_factory=Counter)


def round_trip_formulas(formulas: Sequence[Formula]) -> RoundTrip:
    """Round-trip formulas: G, then Π, then compare Pred."""
    from fortekit.fol.caption import parse_captions

    stats = RoundTrip(formulas=len(formulas))
    again = [result.formula for result in parse_captions(verbalise(phi) for phi in formulas)]
    for phi, back in zip(formulas, again, strict=True):
        got = {(p.name, p.polarity) for p in predicates(back)}
        said = predicates(phi)
        asserted = {p.name for p in said if p.polarity is Polarity.POSITIVE}
        for symbol in said:
            stats.total += 1
            found = (symbol.name, symbol.polarity) in got
            stats.recovered += found
            if not found:
                stats.missed[symbol.name] += 1
            if symbol.polarity is Polarity.NEGATIVE:
                stats.negated += 1
                stats.negated_recovered += found
                stats.flipped += (
                    (symbol.name, Polarity.POSITIVE) in got
                    and (symbol.name, Polarity.NEGATIVE) not in got
                    and symbol.name not in asserted
                )
    return stats


def round_trip(captions: Iterable[str]) -> RoundTrip:
    """Parse captions with Π, then round-trip their formulas."""
    from fortekit.fol.caption import parse_captions

    return round_trip_formulas([result.formula for result in parse_captions(captions)])


def read_captions(path: str | Path) -> list[str]:
    """Every non-empty caption of a caption CSV (Clotho: all caption columns; AudioCaps), in file order.

    Read by :mod:`fortekit.collection_reader`, the one reader of collections.

    Raises:
        DataFileError: an unreadable line (E114), neither layout (E109).
        OSError: the file cannot be opened.

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "clotho.csv"
        >>> _ = path.write_text("file_name,caption_1,caption_2\\na.wav,rain falls,wind blows\\n")
        >>> read_captions(path)
        ['rain falls', 'wind blows']
    """
    from fortekit.collection_reader import check_caption_csv, read_caption_csv

    return check_caption_csv(read_caption_csv(Path(path)), what="a caption CSV").captions()


def format_round_trip(stats: RoundTrip) -> str:
    """The round-trip figures as the report prints them, one per line.

    Example:
        >>> stats = RoundTrip(formulas=1, total=2, recovered=1, missed=Counter({"While": 1}))
        >>> print(format_round_trip(stats))
        formulas: 1
        predicates recovered: 1/2 = 50.00%
        negated predicates: 0; recovered with polarity: 0; flipped to positive: 0
        most often lost: While 1
    """
    share = stats.recovered / stats.total if stats.total else 0.0
    return "\n".join([
        f"formulas: {stats.formulas}",
        f"predicates recovered: {stats.recovered}/{stats.total} = {share:.2%}",
        f"negated predicates: {stats.negated}; recovered with polarity: {stats.negated_recovered}; "
        f"flipped to positive: {stats.flipped}",
        "most often lost: " + ", ".join(f"{name} {n}" for name, n in stats.missed.most_common(20)),
    ])
