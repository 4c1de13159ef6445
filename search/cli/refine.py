"""``fol-refine``: refine a file of text-to-audio search queries with Stage 1.

Reads .txt (one query per line), .jsonl (a ``query`` field, else BEIR's ``text``) or .csv/.tsv
(a named column); writes one JSONL object (or TSV row) per query, line by line, so that an
interrupted run loses nothing and a re-run resumes. Bad lines are reported with
their line number and skipped. See docs/refine.md.

Exit status: 0 every line refined (or already done); 1 some lines were unusable or
failed, or the run stopped early; 2 a usage error or an unusable input, index,
lookup table or option (nothing was written); 130 interrupted (Ctrl-C); 141 ``-o -``
and standard output was closed by its reader (a broken pipe: nothing is printed).

Example:
    $ fol-refine examples/queries.txt -o refined.jsonl
    $ fol-refine clotho_captions_development.csv --text-column caption_1 --stage1 offline -o clotho.jsonl
    $ fol-refine new.txt --lookup clotho.jsonl --index clotho.index -k 10 -o ranked.jsonl
    $ fol-refine clotho.txt --stage1 offline -o clotho.jsonl --ray        # the batches on a local Ray
    $ fol-refine --query "a person talking" --explain
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fortekit.errors import FortekitError, QueryFileError
from fortekit.search.cli.common import pipeline_spec
from fortekit.search.cli.refine_args import build_refine_parser, check_usage
from fortekit.search.refine.job import SetupError, exit_at_next_interrupt, format_lines, stdout_closed
from fortekit.search.refine.query_io import (
    read_queries,
)

if TYPE_CHECKING:
    from fortekit.search.distributed.options import RaySettings
    from fortekit.search.formula.scoring import FormulaScoringConfig
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.refine.job import QueryFileJob
    from fortekit.search.refine.lookup import LookupTable
    from fortekit.search.refine.output import OutputFormat, ResultWriter
    from fortekit.search.refine.run import BatchRunner, RunReport, TargetAnchors
    from fortekit.search.retriever import Retriever
    from fortekit.search.stage1.anchors import AnchorSource
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import RefineConfig
    from fortekit.search.stage1.encoder import EncoderStats

__all__ = ["build_refine_parser", "main"]

#: Command-line flag -> RefineConfig field, for the hyperparameters given explicitly.
_CONFIG_FLAGS = {
    "beam_width": "beam_width", "depth": "max_depth", "tau": "tau", "threshold": "threshold",
    "lam": "lam", "beta": "beta", "complexity_weight": "complexity_weight", "query_vector": "output",
}


def _config(args: argparse.Namespace) -> RefineConfig:
    from fortekit.search.stage1.config import RefineConfig

    base = RefineConfig.offline() if args.stage1 == "offline" else RefineConfig.online()
    given = {field: getattr(args, flag) for flag, field in _CONFIG_FLAGS.items()}
    return base.replace(**{field: value for field, value in given.items() if value is not None})


def _anchors(
    args: argparse.Namespace, index: AudioIndex | None,
) -> tuple[AnchorSource | None, TargetAnchors | None]:
    from fortekit.search.refine.run import TargetAnchors
    from fortekit.search.stage1.anchor_sources import make_anchor_source

    if args.anchors == "oracle" and index is not None:
        targets = TargetAnchors(index)  # fed batch by batch from the query file's target column
        return targets.source, targets
    if args.anchors in ("proxy", "bank"):  # check_usage made sure each has what it needs
        return make_anchor_source(args.anchors, index=index, bank=args.anchor_bank), None
    if args.anchors == "feedback" and index is not None:
        return _LazyFeedback(args, index), None
    return None, None


def _resolve_auto(args: argparse.Namespace, index: AudioIndex | None) -> None:
    """``--elaborator auto`` / ``--anchors auto``: corpus and feedback when the index has captions."""
    from fortekit.search.stage1.anchor_sources import resolve_auto

    args.elaborator, args.anchors = resolve_auto(
        args.elaborator, args.anchors, index=index, corpus_given=args.corpus is not None
    )


def _index_corpus(args: argparse.Namespace, index: AudioIndex) -> Any:
    """The index's item captions as a corpus, parsed once per run (feedback and elaborator share it)."""
    from fortekit.search.stage1.corpus import CaptionCorpus

    if getattr(args, "_index_corpus", None) is None:
        args._index_corpus = CaptionCorpus.from_index(index)
    return args._index_corpus


class _LazyFeedback:
    """Feedback anchors whose corpus (the index's parsed captions) is made at the first batch."""

    name = "feedback"

    def __init__(self, args: argparse.Namespace, index: AudioIndex) -> None:
        self.args, self.index = args, index
        self._source: Any = None

    @property
    def settings(self) -> dict[str, object]:
        from fortekit.search.stage1.feedback import DEFAULT_FEEDBACK

        return {**DEFAULT_FEEDBACK, "exclusions": "steer only"}

    def anchor_batch(self, requests: Any) -> Any:
        from fortekit.search.stage1.feedback import FeedbackAnchors

        if self._source is None:
            self._source = FeedbackAnchors(_index_corpus(self.args, self.index))
        return self._source.anchor_batch(requests)


def _corpus(args: argparse.Namespace) -> Any:
    """``--corpus``: a saved corpus, or a function that embeds a caption file with the refiner's backbone."""
    from fortekit.search.stage1.corpus import CaptionCorpus

    if args.corpus is None:
        return None
    path = Path(args.corpus).expanduser()
    if path.is_dir():
        return CaptionCorpus.load(path)
    from fortekit.textio import read_text_lines

    captions = [text.strip() for _, text in read_text_lines(path) if isinstance(text, str) and text.strip()]
    return lambda backbone: CaptionCorpus.from_captions(captions, backbone)


def _refiner(args: argparse.Namespace, anchors: AnchorSource | None, index: AudioIndex | None) -> Refiner:
    """Stage 1 as the Retriever assembles it; fol-refine brings its own anchors and ``--corpus``."""
    from fortekit.search.stage1.assembly import build_refiner

    return build_refiner(
        args.backbone, config=_config(args), elaborator=args.elaborator,
        anchors="none" if anchors is None else anchors, index=index, corpus=_corpus(args),
        index_corpus=(lambda: _index_corpus(args, index)) if index is not None else None,
        device=args.device, cache_dir=args.cache_dir, backbone_options=dict(args.backbone_option) or None,
    )


class _LazyRefiner:
    """Builds the refiner when the run first needs it (a finished run loads no model)."""

    def __init__(
        self, args: argparse.Namespace, anchors: AnchorSource | None, index: AudioIndex | None,
    ) -> None:
        self.args, self.anchors, self.index = args, anchors, index

    def __call__(self) -> Refiner:
        try:
            return _refiner(self.args, self.anchors, self.index)
        except (FortekitError, OSError) as exc:
            raise SetupError(exc) from exc


def _output_of(args: argparse.Namespace, queries: Path) -> tuple[Path | None, OutputFormat]:
    """(output file or None for stdout, output format)."""
    if args.output == "-":
        return None, args.format or "jsonl"
    if args.output is not None:
        output = Path(args.output).expanduser()
        return output, args.format or ("tsv" if output.suffix.lower() == ".tsv" else "jsonl")
    file_format: OutputFormat = args.format or "jsonl"
    return queries.with_name(f"{queries.stem}.refined.{file_format}"), file_format


def _settings(args: argparse.Namespace, file_format: str, index: AudioIndex | None = None) -> dict[str, Any]:
    """What changes the results: a resumed output must have been written with the same (with
    ``--index``, the index's state as loaded: a resume after ``fortekit index add|remove|compact``
    is refused, E638; without, no state is recorded, as before states were)."""
    settings: dict[str, Any] = {
        "backbone": args.backbone, "backbone_options": dict(args.backbone_option),
        "elaborator": args.elaborator, "config": _config(args).to_dict(), "anchors": args.anchors,
        "corpus": args.corpus and str(Path(args.corpus).resolve()),
        "anchor_bank": args.anchor_bank and str(Path(args.anchor_bank).resolve()),
        "index": args.index and str(Path(args.index).resolve()), "top_k": args.top_k if args.index else None,
        "formula_scoring": (_formula_config(args).to_dict() if args.formula_scoring != "off" else "off")
        if args.index else None,
        "stage3": args.stage3 if args.index else None,
        "projection": args.projection if args.index and args.projection in ("auto", "none") else (
            str(Path(args.projection).resolve()) if args.index else None),
        "order_check": args.order_check if args.index else None,
        "format": file_format,
    }
    if index is not None:
        settings["index_state"] = index.state
    return settings


def _inputs(args: argparse.Namespace) -> dict[str, Path | None]:
    """Everything the run reads besides the query file and the lookup table: -o may be none of them.

    Example:
        >>> args = build_refine_parser().parse_args(["q.txt", "--corpus", "c.txt", "--cache-dir", "cache"])
        >>> {what: str(path) for what, path in _inputs(args).items() if path is not None}
        {'corpus': 'c.txt', 'text-embedding cache': 'cache/text_cache.sqlite'}
    """

    def given(value: str | None) -> Path | None:
        return None if value is None else Path(value).expanduser()

    from fortekit.search.cli.options import option_paths

    cache = given(args.cache_dir)
    return {
        "corpus": given(args.corpus), "anchor bank": given(args.anchor_bank), "index": given(args.index),
        "text-embedding cache": None if cache is None else cache / "text_cache.sqlite",
        **option_paths(args.backbone_option),
    }


def _formula_config(args: argparse.Namespace) -> FormulaScoringConfig:
    """Formula scoring's settings: the defaults, with ``--gamma`` when given."""
    from fortekit.search.formula.scoring import FormulaScoringConfig

    if args.gamma is None:
        return FormulaScoringConfig()
    try:
        return FormulaScoringConfig(gamma=args.gamma)
    except FortekitError as exc:
        raise QueryFileError(str(exc)) from None


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        print(text, file=sys.stderr)


def _explain(args: argparse.Namespace) -> int:
    from fortekit.search.cli.ray_options import settings_from_args
    from fortekit.search.index.audio_index import AudioIndex

    if settings_from_args(args, command="fol-refine") is not None:
        from fortekit.errors import DistributedError, Errors

        raise DistributedError(Errors.E822.format(
            option="--ray", problem="runs the batches of a query file on Ray, not the one query of --query",
            fix="Leave it out, or give the queries in a file (fol-refine QUERIES --ray).",
        ))

    index = AudioIndex.load(args.index) if args.index else None
    _resolve_auto(args, index)
    anchors, _ = _anchors(args, index)
    result = _refiner(args, anchors, index).refine(args.query)
    if args.explain:
        print(result.explain())
    else:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    return 0


def _batch_runner(
    args: argparse.Namespace, writer: ResultWriter, *, index: AudioIndex | None, lookup: LookupTable | None,
    where: str, resume: Any = None, report: Any = print, progress: Any = None,
) -> BatchRunner:
    """The runner of one process: Stage 1 built on first need, rankings through the Retriever."""
    from fortekit.search.refine.run import BatchRunner

    anchors, targets = _anchors(args, index)

    def make_retriever(refiner: Refiner) -> Retriever:
        from fortekit.search.retriever import Retriever

        assert index is not None  # only called with an index
        # fortekit search's spec; the clauses go through Stage 1's text cache.
        return Retriever(index, pipeline_spec(args, stage1=refiner, lookup=lookup), device=args.device)

    return BatchRunner(
        _LazyRefiner(args, anchors, index), writer, batch_size=args.batch_size, resume=resume,
        lookup=lookup, index=index, top_k=args.top_k, targets=targets, device=args.device,
        where=where, report=report, progress=progress,
        retriever=make_retriever if index is not None else None,
    )


def _absolute_paths(args: argparse.Namespace) -> argparse.Namespace:
    """The options with the files and folders they name made absolute: an actor may run in another
    folder (a cluster started elsewhere)."""

    def absolute(value: Any) -> Any:
        if isinstance(value, str) and value and Path(value).expanduser().exists():
            return str(Path(value).expanduser().absolute())
        return value

    copy = argparse.Namespace(**vars(args))
    for name in ("index", "lookup", "corpus", "anchor_bank", "cache_dir"):  # paths, made or not yet
        value = getattr(args, name, None)
        setattr(copy, name, None if value is None else str(Path(value).expanduser().absolute()))
    copy.backbone_option = [(key, absolute(value)) for key, value in args.backbone_option]
    return copy


class _ActorRunner:
    """``--ray``: builds the runner of one process inside each Ray actor (it pickles: the options, no
    model; the actor loads the index and the lookup table itself)."""

    def __init__(self, args: argparse.Namespace, where: str, index_state: str | None = None) -> None:
        self.args, self.where, self.index_state = _absolute_paths(args), where, index_state

    def __call__(self, writer: ResultWriter, report: Any) -> BatchRunner:
        from fortekit.errors import AudioIndexError, Errors
        from fortekit.search.index.audio_index import AudioIndex
        from fortekit.search.refine.lookup import LookupTable

        index = AudioIndex.load(self.args.index) if self.args.index else None
        if index is not None and self.index_state is not None and index.state != self.index_state:
            # written since the driver loaded it: this actor's rankings would be of another state
            raise AudioIndexError(Errors.E642.format(directory=self.args.index, then=self.index_state,
                                                     now=index.state))
        lookup = LookupTable.load(self.args.lookup) if self.args.lookup else None
        return _batch_runner(self.args, writer, index=index, lookup=lookup, where=self.where, report=report)


def _refine_file(args: argparse.Namespace) -> int:
    from fortekit.search.cli.ray_options import settings_from_args
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.refine.job import QueryFileJob
    from fortekit.search.refine.lookup import LookupTable

    ray_settings = settings_from_args(args, command="fol-refine")  # E822 before anything is read
    queries = Path(args.queries).expanduser()
    output, file_format = _output_of(args, queries)
    index = AudioIndex.load(args.index) if args.index else None
    _resolve_auto(args, index)
    job = QueryFileJob(
        "fol-refine", queries, output, file_format=file_format, settings=_settings(args, file_format, index),
        ranking=index is not None, overwrite=args.overwrite, input_format=args.input_format,
        quiet=args.quiet, progress=args.progress,
        other_inputs=[Path(args.lookup).expanduser() if args.lookup else None], inputs=_inputs(args),
    )
    lines = read_queries(
        queries, file_format=args.input_format, column=args.column, field=args.column,
        max_chars=args.max_chars, target=args.target_column,
    )
    lookup = LookupTable.load(args.lookup) if args.lookup else None
    if ray_settings is not None:
        return _refine_on_ray(args, job, lines, ray_settings, with_lookup=lookup is not None)

    def make_runner(writer: ResultWriter, resume: Any, report: Any, progress: Any) -> BatchRunner:
        return _batch_runner(args, writer, index=index, lookup=lookup, where=str(queries), resume=resume,
                             report=report, progress=progress)

    def summary(report: RunReport, runner: Any) -> str:
        stats = runner.refiner.encoder.stats if runner.refiner_built else None
        return _summary(report, stats, job.where, lookup is not None)

    return job.run(lines, make_runner, summary)


def _refine_on_ray(
    args: argparse.Namespace, job: QueryFileJob, lines: Any, settings: RaySettings, *, with_lookup: bool,
) -> int:
    """``--ray``: the batches refined by actors of a Ray Data job (search/distributed), written here in order.

    Ray is imported and started (or reached) before the output is opened: a missing Ray (E820) or an
    unreachable cluster (E821) writes nothing.
    """
    from fortekit.search.distributed.cluster import ray_session
    from fortekit.search.distributed.refine import RayRefineRunner

    where = str(job.queries)
    with ray_session(settings, command="fol-refine") as cluster:
        def make_runner(writer: ResultWriter, resume: Any, report: Any, progress: Any) -> RayRefineRunner:
            actor_runner = _ActorRunner(args, where, job.settings.get("index_state"))
            return RayRefineRunner(actor_runner, writer, cluster=cluster, settings=settings,
                                   batch_size=args.batch_size, resume=resume, report=report,
                                   progress=progress, where=where)

        def summary(report: RunReport, runner: Any) -> str:
            actors = f"{runner.actors} refiner actor(s)" if runner.actors else "no actor started"
            return _summary(report, f"on {cluster.where}, {actors}", job.where, with_lookup)

        return job.run(lines, make_runner, summary)


def _summary(report: RunReport, stats: EncoderStats | str | None, where: str, with_lookup: bool) -> str:
    parts = [f"{report.refined} refined"]
    if with_lookup:
        parts.append(f"{report.from_lookup} from the lookup table")
    parts.append(f"{report.already_done} already done")
    for label, numbers in (("bad lines", report.bad), ("failed", report.failed)):
        parts.append(f"{len(numbers)} {label}" + (f" (lines {format_lines(numbers)})" if numbers else ""))
    encoder = "no model loaded" if stats is None else stats if isinstance(stats, str) else (
        f"encoder: {stats.calls} calls, {stats.texts_encoded} texts encoded, "
        f"{stats.cache_hits} from the cache"
    )
    return f"fol-refine: {', '.join(parts)} in {report.seconds:.1f} s; {encoder}; results: {where}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fol-refine`` (returns the exit status; see the module docstring).

    Example:
        >>> main(["examples/queries.txt", "-o", "refined.jsonl", "--quiet"])  # doctest: +SKIP
        1
    """
    parser = build_refine_parser()
    args = parser.parse_args(argv)
    if args.list_plugins:
        from fortekit.plugins.cli import format_plugins

        sys.stdout.write(format_plugins())
        return 0
    check_usage(parser, args)
    from fortekit.search.cli.main import refuse_outputs

    refused = refuse_outputs(parser, args)  # the one output rule, as for every fortekit command
    if refused is not None:
        return refused
    from fortekit.search.cli.common import apply_thread_option

    problem = apply_thread_option(args)  # the one thread policy, as for every fortekit command
    if problem is not None:
        print(f"fol-refine: {problem}", file=sys.stderr)
        return 2
    try:
        status = _explain(args) if args.query is not None else _refine_file(args)
    except BrokenPipeError:
        return stdout_closed()
    except KeyboardInterrupt:
        print("fol-refine: interrupted", file=sys.stderr)
        status = 130
    except (FortekitError, OSError) as exc:
        print(f"fol-refine: {exc}", file=sys.stderr)
        return 2
    if status == 130 and argv is None:  # the command itself (not a call from Python) is shutting down
        exit_at_next_interrupt()
    return status
