"""``parse_many`` against bare spaCy ``nlp.pipe``, alternated in one process (docs/dev/parser_speed.md).

The benchmark command (tests/fol/caption/test_caption_bench.py) runs each benchmark's rounds in a block,
so on a shared machine the sides meet different loads. This script alternates them N times
over the same 600 Clotho development captions (every 24th) and prints the minimum and mean
of each, and the ratios of minimums, the measure docs/dev/parser_speed.md calls "alternated":

- ``stock``: bare ``nlp.pipe`` of the stock pipeline as ``spacy.load`` gives it (NER
  excluded, as the parser excludes it): the baseline of issue 17's goal.
- ``own``: bare ``nlp.pipe`` of the parser's own pipeline (the stock one with the attribute
  ruler compiled into a table, fol/caption/attribute_table.py): what the passes run on.
- ``parse_many``: the caption parser, spaCy included.

Run::

    python scripts/parser_speed_alternated.py ../shared/data/clotho/clotho_captions_development.csv 10

With ``--per-pipe`` it times instead each component of the two pipelines (``stock`` and
``own``) over the same captions, the components run one after another over the whole
list of Docs, alternated N times; it prints the minimum of each component, which shows
where the two pipelines differ. With ``--passes`` it times the parser's own passes alone
(``parse_doc`` over the 600 Docs, parsed beforehand), N rounds, and prints the minimum;
run with ``PYTHONPATH`` pointing at an unpacked older tree (``git archive``), it times that
tree's passes with the same script.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import spacy

import fortekit
from fortekit.errors import FortekitError
from fortekit.fol.caption.parser import default_parser
from fortekit.fol.caption.pipeline import DEFAULT_PIPELINE
from fortekit.fol.caption.report import read_clotho


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("captions", type=Path, help="the Clotho development caption CSV")
    parser.add_argument("rounds", nargs="?", type=int, default=10, help="alternations (default 10)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--per-pipe", action="store_true", help="time each pipeline component")
    mode.add_argument("--passes", action="store_true", help="time the parser's passes alone")
    args = parser.parse_args()
    try:
        captions = read_clotho(args.captions)[::24][:600]
    except FortekitError as exc:  # a missing or unreadable CSV: its coded message, no traceback
        parser.exit(2, f"{parser.prog}: {exc}\n")
    caption_parser = default_parser()
    if args.passes:
        docs = list(caption_parser.nlp.pipe(captions, batch_size=256))
        spent = []
        for _ in range(args.rounds + 1):  # the first round warms up
            tick = time.perf_counter()
            for doc in docs:
                caption_parser.parse_doc(doc)
            spent.append(time.perf_counter() - tick)
        print(f"passes alone ({fortekit.__file__}): min {min(spent[1:]) * 1000:.1f} ms")
        return
    stock_nlp = spacy.load(DEFAULT_PIPELINE, exclude=["ner"])
    if args.per_pipe:
        per_pipe({"stock": stock_nlp, "own": caption_parser.nlp}, captions, args.rounds)
        return

    def bare(nlp: spacy.Language) -> Callable[[], None]:
        def run() -> None:
            for _ in nlp.pipe(captions, batch_size=256):
                pass

        return run

    def parse() -> None:
        for _ in caption_parser.parse_many(captions, batch_size=256):
            pass

    sides = {"stock": bare(stock_nlp), "own": bare(caption_parser.nlp), "parse_many": parse}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for run in sides.values():
        run()
    for _ in range(args.rounds):
        for name, run in sides.items():
            tick = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - tick)
    best = {name: min(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"{name:>10}: min {best[name] * 1000:.1f} ms, mean {sum(values) / len(values) * 1000:.1f} ms")
    print(f"parse_many / stock nlp.pipe (ratio of minimums): {best['stock'] / best['parse_many']:.1%}")
    print(f"parse_many / own nlp.pipe (the passes' share): {best['own'] / best['parse_many']:.1%}")


def per_pipe(pipelines: dict[str, spacy.Language], captions: list[str], rounds: int) -> None:
    """Print the minimum time of each component of each pipeline, alternated ``rounds`` times."""
    times: dict[tuple[str, str], list[float]] = {}
    for round_number in range(rounds + 1):  # the first round warms up
        for side, nlp in pipelines.items():
            tick = time.perf_counter()
            docs = [nlp.make_doc(caption) for caption in captions]
            spent = [("tokenizer", time.perf_counter() - tick)]
            for name, component in nlp.pipeline:
                tick = time.perf_counter()
                docs = list(component.pipe(docs, batch_size=256))
                spent.append((name, time.perf_counter() - tick))
            if round_number:
                for name, seconds in spent:
                    times.setdefault((side, name), []).append(seconds)
    names = list(dict.fromkeys(name for _, name in times))
    print(f"{'component':>16} " + " ".join(f"{side + ' min':>12}" for side in pipelines))
    for name in [*names, "total"]:
        cells = []
        for side in pipelines:
            if name == "total":
                best = sum(min(times[side, each]) for each in names if (side, each) in times)
            else:
                best = min(times[side, name]) if (side, name) in times else float("nan")
            cells.append(f"{best * 1000:9.1f} ms")
        print(f"{name:>16} " + " ".join(cells))


if __name__ == "__main__":
    main()
