"""The round-trip report of the verbaliser: how much of Pred(φ) survives Π(G(φ)).

Run: ``python -m fortekit.verbalise.report CLOTHO_CSV`` (any Clotho-format CSV).
It parses every caption with Π, writes each formula back with G, parses that again
and counts the predicates (symbol and polarity) of φ found in Π(G(φ)); it lists the
predicates most often lost.

Example:
    >>> stats = round_trip(["birds chirping in the morning"])
    >>> stats.recovered == stats.total
    True
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fortekit.fol.ast import Formula
from fortekit.fol.predicates import Polarity, predicates
from fortekit.verbalise.realise import verbalise


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


def main(argv: Sequence[str] | None = None) -> int:
    """Print the round-trip figures for a Clotho-format CSV (all caption columns)."""
    parser = argparse.ArgumentParser(prog="python -m fortekit.verbalise.report")
    parser.add_argument("csv", help="a Clotho-format CSV (file_name, caption_1..caption_5)")
    args = parser.parse_args(argv)
    with open(args.csv, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    captions = [row[key] for row in rows for key in row if key.startswith("caption")]
    stats = round_trip(captions)
    print(f"formulas: {stats.formulas}")
    print(f"predicates recovered: {stats.recovered}/{stats.total} = {stats.recovered / stats.total:.2%}")
    print(
        f"negated predicates: {stats.negated}; recovered with polarity: {stats.negated_recovered}; "
        f"flipped to positive: {stats.flipped}"
    )
    print("most often lost: " + ", ".join(f"{name} {n}" for name, n in stats.missed.most_common(20)))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
