"""``parse_many`` against bare spaCy ``nlp.pipe``, alternated in one process (docs/parser.md, "Speed").

The benchmark command (tests/test_caption_bench.py) runs each benchmark's rounds in a block,
so on a shared machine the two sides meet different loads. This script alternates them N
times over the same 600 Clotho development captions (every 24th) and the same pipeline
object, and prints the minimum and mean of each and the ratio of minimums, the measure
docs/parser.md calls "alternated"::

    python scripts/parser_speed_alternated.py ../shared/data/clotho/clotho_captions_development.csv 10
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from fortekit.fol.caption.parser import default_parser
from fortekit.fol.caption.report import read_clotho


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("captions", type=Path, help="the Clotho development caption CSV")
    parser.add_argument("rounds", nargs="?", type=int, default=10, help="alternations (default 10)")
    args = parser.parse_args()
    captions = read_clotho(args.captions)[::24][:600]
    caption_parser = default_parser()
    nlp = caption_parser.nlp

    def bare() -> None:
        for _ in nlp.pipe(captions, batch_size=256):
            pass

    def parse() -> None:
        for _ in caption_parser.parse_many(captions, batch_size=256):
            pass

    bare()
    parse()
    spacy_times: list[float] = []
    parser_times: list[float] = []
    for _ in range(args.rounds):
        tick = time.perf_counter()
        bare()
        spacy_times.append(time.perf_counter() - tick)
        tick = time.perf_counter()
        parse()
        parser_times.append(time.perf_counter() - tick)
    spacy_mean = sum(spacy_times) / len(spacy_times)
    parser_mean = sum(parser_times) / len(parser_times)
    print(f"bare min {min(spacy_times) * 1000:.1f} ms, parser min {min(parser_times) * 1000:.1f} ms, "
          f"ratio of mins {min(spacy_times) / min(parser_times):.1%}; means "
          f"{spacy_mean * 1000:.1f} / {parser_mean * 1000:.1f}")


if __name__ == "__main__":
    main()
