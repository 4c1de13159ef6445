"""``fortekit index build --audio DIR --ray``: the build of an audio index as a Ray Data pipeline.

The items go into ``ray.data.from_items`` one row each, in order, and through the stages that
:meth:`AudioIndex.build <fortekit.search.index.audio_index.AudioIndex.build>` runs in one process,
each calling the same per-batch function:

1. captioning (``--captioner``): actors that build the captioner once and call
   :func:`~fortekit.search.index.captioning.caption_audio` (a tagger's label evidence comes back too);
2. reading and resampling: CPU tasks that read each file at the backbone's rate
   (:func:`~fortekit.plugins.audio.load_waveform`); the encoder then resamples nothing;
3. embedding: actors that build the backbone once and call
   :func:`~fortekit.search.index.build.embed_items` (``--ray-actors``, ``--ray-actor-cpus``,
   ``--ray-gpus`` size them);
4. parsing: CPU tasks that call :func:`~fortekit.search.index.parse.caption_predicate_sets`.

The driver takes the rows back in item order and assembles the index with
:func:`~fortekit.search.index.build.assemble_parts`, as the one-process path does: the same ids in
the same order, the same captions, predicate sets and label evidence, vectors within float noise
(1e-6), the same ``index.json``. A coded error inside a stage (an unreadable file, a model that will
not load) comes back and is raised as the one process raises it; anything else is E823.

Example:
    >>> from fortekit.search.index.sources import find_audio_items
    >>> from fortekit.search.distributed.options import RaySettings
    >>> index = build_index_with_ray(find_audio_items("clips/"), "minilm",
    ...                              settings=RaySettings(cpus=2))  # doctest: +SKIP
    >>> index.save("clips.index")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from fortekit.errors import AudioIndexError, DistributedError, Errors, FortekitError
from fortekit.plugins.protocols import AudioItem
from fortekit.search.distributed.cluster import (
    RayCluster,
    configure_dataset,
    error_payload,
    job_failed,
    object_column,
    raise_payload,
    ray_session,
    require_ray,
)
from fortekit.search.distributed.options import RaySettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.from_files import IndexSource
    from fortekit.search.index.projected import ProjectedHead

__all__ = ["BUILD_STATE", "build_index_folder_with_ray", "build_index_with_ray"]

#: What a failed build leaves (the last line of E823).
BUILD_STATE = "Nothing was written: an index already in the output folder is as it was."

Batch = dict[str, Any]


def _items(batch: Batch) -> list[AudioItem]:
    return [pickle.loads(blob) for blob in batch["item"]]  # this job's own rows


def _failed(batch: Batch) -> bool:
    return any(len(blob) for blob in batch["error"])


def _with_error(batch: Batch, exc: BaseException, stage: str) -> Batch:
    """The batch with the error in its first row (a coded error as it is, anything else as E823)."""
    if not isinstance(exc, FortekitError):
        exc = job_failed(exc, stage=stage, state=BUILD_STATE)
    errors = [b""] * len(batch["error"])
    if errors:
        errors[0] = error_payload(exc)
    batch["error"] = object_column(errors)
    return batch


class CaptionStage:
    """Captioning: an actor that builds the captioner once and captions batches of items.

    Example:
        >>> stage = CaptionStage("stored", {})
        >>> batch = {"item": object_column([pickle.dumps(AudioItem(text="a bell rings"))]),
        ...          "error": object_column([b""])}
        >>> pickle.loads(stage(batch)["item"][0]).text, stage(batch)["captioner"][0]
        ('a bell rings', 'stored')
    """

    def __init__(self, name: str, options: Mapping[str, Any]) -> None:
        self.name, self.options = name, dict(options)
        self._captioner: Any = None

    def __call__(self, batch: Batch) -> Batch:
        from fortekit.search.index.captioning import caption_audio, captioner_name

        count = len(batch["item"])
        batch["evidence"] = object_column([b""] * count)
        batch["captioner"] = object_column([""] * count)
        if _failed(batch):
            return batch
        try:
            if self._captioner is None:
                from fortekit.plugins import get_captioner

                self._captioner = get_captioner(self.name, **self.options)
            items = _items(batch)
            captions, evidence = caption_audio(self._captioner, items)
        except Exception as exc:  # sent back to the driver
            return _with_error(batch, exc, "captioning")
        captioned = [replace(item, text=text) for item, text in zip(items, captions, strict=True)]
        batch["item"] = object_column([pickle.dumps(item) for item in captioned])
        if evidence is not None:
            matrix = evidence.matrix.numpy()
            batch["evidence"] = object_column([pickle.dumps((evidence.labels, matrix[row].copy()))
                                         for row in range(count)])
        batch["captioner"] = object_column([captioner_name(self._captioner)] * count)
        return batch


def read_stage(batch: Batch, *, sample_rate: int) -> Batch:
    """Reading and resampling: each item's audio as a mono float32 waveform at ``sample_rate``.

    Example:
        >>> wave = AudioItem(samples=np.zeros(100, dtype=np.float32), sample_rate=100, item_id="a")
        >>> batch = read_stage({"item": object_column([pickle.dumps(wave)]), "error": object_column([b""])},
        ...                    sample_rate=200)
        >>> pickle.loads(batch["item"][0]).samples.shape
        (200,)
    """
    from fortekit.plugins.audio import load_waveform

    if _failed(batch):
        return batch
    try:
        items = _items(batch)
        read = [replace(item, samples=load_waveform(item, sample_rate, index), sample_rate=sample_rate)
                for index, item in enumerate(items)]
    except Exception as exc:  # sent back to the driver
        return _with_error(batch, exc, "reading")
    batch["item"] = object_column([pickle.dumps(item) for item in read])
    return batch


class EmbedStage:
    """Embedding: an actor that builds the backbone once and embeds batches of items.

    Example:
        >>> stage = EmbedStage("minilm", {"device": "cpu"}, batch_size=8)  # doctest: +SKIP
    """

    def __init__(self, name: str, options: Mapping[str, Any], *, batch_size: int) -> None:
        self.name, self.options, self.batch_size = name, dict(options), batch_size
        self._backbone: Any = None

    def __call__(self, batch: Batch) -> Batch:
        from fortekit.search.index.build import embed_items

        count = len(batch["item"])
        batch["embedding"] = object_column([b""] * count)
        batch["backbone"] = object_column([""] * count)
        if _failed(batch):
            return batch
        try:
            if self._backbone is None:
                from fortekit.plugins import get_backbone

                self._backbone = get_backbone(self.name, **self.options)
            items = _items(batch)
            ids = [str(item.item_id) for item in items]
            rows = embed_items(self._backbone, items, ids, self.batch_size, progress=False)
        except Exception as exc:  # sent back to the driver
            return _with_error(batch, exc, "embedding")
        # The waveforms have done their work: only the ids and captions travel on.
        light = [replace(item, samples=None, sample_rate=None) for item in items]
        batch["item"] = object_column([pickle.dumps(item) for item in light])
        batch["embedding"] = object_column([row.tobytes() for row in rows])
        batch["backbone"] = object_column([str(self._backbone.name)] * count)
        return batch


def _caption(item: AudioItem) -> str | None:
    """The stored caption of an item, as AudioIndex.build stores it (blank: None)."""
    return item.text if item.text is not None and item.text.strip() else None


def parse_stage(batch: Batch) -> Batch:
    """Parsing: each item's caption as its predicate set, and whether it had none.

    Example:
        >>> batch = parse_stage({"item": object_column([pickle.dumps(AudioItem(item_id="a"))]),
        ...                      "error": object_column([b""])})
        >>> pickle.loads(batch["predicates"][0]), batch["unparsed"].tolist()
        (frozenset(), [True])
    """
    from fortekit.search.index.parse import caption_predicate_sets

    count = len(batch["item"])
    batch["predicates"] = object_column([b""] * count)
    batch["unparsed"] = np.zeros(count, dtype=bool)
    if _failed(batch):
        return batch
    try:
        report = caption_predicate_sets([_caption(item) for item in _items(batch)])
    except Exception as exc:  # sent back to the driver
        return _with_error(batch, exc, "parsing")
    unparsed = np.zeros(count, dtype=bool)
    unparsed[list(report.failed) + list(report.missing)] = True
    batch["predicates"] = object_column([pickle.dumps(symbols) for symbols in report.sets])
    batch["unparsed"] = unparsed
    return batch


def _absolute(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options whose values name existing files or folders, with those made absolute.

    Example:
        >>> _absolute({"model": ".", "batch_size": 8})["model"] == os.path.abspath(".")
        True
    """
    from pathlib import Path

    return {key: os.path.abspath(os.path.expanduser(value))
            if isinstance(value, str) and value and Path(value).expanduser().exists() else value
            for key, value in options.items()}


def _probe(backbone: str, options: Mapping[str, Any]) -> tuple[str, int, int | None]:
    """(name, dim, sample rate) of the backbone, built here on the CPU: the read stage needs the rate,
    and a backbone that cannot be built fails before the job starts, as in one process."""
    from fortekit.plugins import get_backbone

    built = get_backbone(backbone, **{**options, "device": "cpu"})
    rate = getattr(built, "sample_rate", None)
    return str(built.name), int(built.dim), None if rate is None else int(rate)


def build_index_with_ray(
    items: Sequence[AudioItem],
    backbone: str,
    backbone_options: Mapping[str, Any] | None = None,
    *,
    settings: RaySettings | None = None,
    cluster: RayCluster | None = None,
    parse_captions: bool = True,
    batch_size: int = 64,
    recorded_options: Mapping[str, Any] | None = None,
    captioner: str | None = None,
    captioner_options: Mapping[str, Any] | None = None,
    recorded_captioner_options: Mapping[str, Any] | None = None,
    progress: bool = False,
    command: str = "fortekit index build",
) -> AudioIndex:
    """Index audio items as :meth:`AudioIndex.build` does, with the work spread over Ray.

    Args:
        items: the items (ids, paths, sidecar captions), in index order.
        backbone: the registered backbone name; every embedding actor builds it with `backbone_options`.
        backbone_options: the options it is built with (``device`` included).
        settings: where Ray runs and how the model stages are sized (default: a local Ray).
        cluster: a session :func:`~fortekit.search.distributed.cluster.ray_session` opened already
            (the command opens it before it locks the output); None opens one for the build.
        parse_captions: parse the captions into predicate sets.
        batch_size: items per encoder call (and per batch of every stage).
        recorded_options: the backbone options ``index.json`` records (default: `backbone_options`).
        captioner: a registered captioner name whose captions replace the items' text.
        captioner_options: the options the captioner is built with.
        recorded_captioner_options: the captioner options recorded (default: `captioner_options`).
        progress: Ray Data's progress bars on stderr.
        command: the command, for the messages.

    Returns:
        The index, in memory (:meth:`AudioIndex.save` writes it).

    Raises:
        AudioIndexError, FortekitError: what :meth:`AudioIndex.build` raises for the same input.
        DistributedError: Ray missing (E820), unreachable (E821), a stage that failed (E823).

    Example:
        >>> from fortekit.plugins import AudioItem
        >>> items = [AudioItem(path="rain.wav", item_id="rain", text="rain on a roof")]
        >>> build_index_with_ray(items, "minilm", settings=RaySettings(cpus=2))  # doctest: +SKIP
        AudioIndex(count=1, dim=384, backbone='minilm')
    """
    from fortekit._checks import check_int
    from fortekit.search.index.build import item_id_of
    from fortekit.search.index.format import check_options, check_unique_ids

    check_int(batch_size, name="batch_size", error=AudioIndexError, message=Errors.E613)
    items = list(items)
    if not items:
        raise AudioIndexError(Errors.E606.format(what="no items were given"))
    ids = [item_id_of(item, position) for position, item in enumerate(items)]
    check_unique_ids(ids)
    options = dict(backbone_options or {})
    recorded = recorded_captioner_options if recorded_captioner_options is not None else captioner_options
    recorded_captioner = check_options(dict(recorded or {}), "captioner_options")
    _, _, sample_rate = _probe(backbone, options)
    # The stages may run in another folder (a cluster started elsewhere): files by absolute paths.
    plan = _Plan(backbone, _absolute(options), sample_rate, captioner, _absolute(captioner_options or {}),
                 parse_captions, batch_size, progress)
    named = [replace(item, item_id=item_id, path=None if item.path is None else os.path.abspath(item.path))
             for item, item_id in zip(items, ids, strict=True)]
    if cluster is None:
        with ray_session(settings or RaySettings(), command=command) as opened:
            rows = plan.run(named, settings or RaySettings(), opened)
    else:
        rows = plan.run(named, settings or RaySettings(), cluster)
    return _assemble(items, ids, rows, parse_captions, recorded_options if recorded_options is not None
                     else options, captioner, recorded_captioner)


def build_index_folder_with_ray(
    out: str | os.PathLike[str], source: IndexSource, settings: RaySettings, *, backbone: str = "minilm",
    options: Mapping[str, Any] | None = None, captioner: str | None = None,
    captioner_options: Mapping[str, Any] | None = None, parse: bool = True, batch_size: int = 64,
    ann: str | None = None, faiss: str | None = None, overwrite: bool = False, progress: bool = False,
    command: str = "fortekit index build",
    projection: Callable[[AudioIndex], ProjectedHead | None] | None = None,
) -> AudioIndex:
    """:func:`~fortekit.search.index.from_files.build_index_folder` of audio files, the build on Ray.

    The output is checked first; Ray is then imported and reached (or started) before the output
    is locked, so that a missing Ray or an unreachable cluster (E820, E821) leaves nothing behind.

    Args:
        out: the index folder to write.
        source: the audio files (a captions file is embedded in one process: E822).
        settings: where Ray runs and how the model stages are sized.
        backbone, options, captioner, captioner_options, parse, batch_size, ann, faiss, overwrite,
            progress, projection: as :func:`~fortekit.search.index.from_files.build_index_folder`.
        command: the command, for the messages.

    Returns:
        The index, as saved.

    Raises:
        DistributedError: a captions file (E822), Ray missing (E820), unreachable (E821), a stage
            that failed (E823).
        AudioIndexError, OutputError: as ``build_index_folder``.

    Example:
        >>> from fortekit.search.index.from_files import IndexSource
        >>> build_index_folder_with_ray("clips.index", IndexSource(audio="clips/"),
        ...                             RaySettings(cpus=2))  # doctest: +SKIP
    """
    from fortekit.search.index.from_files import (
        build_inputs,
        check_build_options,
        read_audio_source,
        recordable_options,
        save_index_folder,
    )
    from fortekit.search.index.writing import check_index_output, index_output_lock

    check_build_options(source, captioner=captioner, captioner_options=captioner_options, ann=ann,
                        faiss=faiss)
    check_index_output(out, overwrite=overwrite, inputs=build_inputs(out, source))
    if source.audio is None:
        raise DistributedError(Errors.E822.format(
            option="--ray", problem="runs the build of audio files (--audio) on Ray, and a captions file "
            "is embedded in one process", fix="Leave it out, or index audio files with --audio DIR --ray.",
        ))
    options = dict(options or {})
    chosen_options = dict(captioner_options or {})
    with ray_session(settings, command=command) as cluster, index_output_lock(out):
        check_index_output(out, overwrite=overwrite)  # as it is now that we hold the lock
        items = read_audio_source(source.audio)  # the id rule before any model loads
        index = build_index_with_ray(
            items, backbone, options, settings=settings, cluster=cluster, parse_captions=parse,
            batch_size=batch_size, recorded_options=recordable_options(options), captioner=captioner,
            captioner_options=chosen_options, recorded_captioner_options=recordable_options(chosen_options),
            progress=progress, command=command,
        )
        return save_index_folder(index, out, ann=ann, faiss=faiss, overwrite=overwrite, projection=projection)


class _Plan:
    """The stages of one build, and the run that takes their rows back in item order."""

    def __init__(
        self, backbone: str, options: dict[str, Any], sample_rate: int | None, captioner: str | None,
        captioner_options: dict[str, Any], parse: bool, batch_size: int, progress: bool,
    ) -> None:
        self.backbone, self.options, self.sample_rate = backbone, options, sample_rate
        self.captioner, self.captioner_options = captioner, captioner_options
        self.parse, self.batch_size, self.progress = parse, batch_size, progress

    def run(self, items: list[AudioItem], settings: RaySettings, cluster: RayCluster) -> list[dict[str, Any]]:
        ray = require_ray("fortekit index build")
        cluster.check_fits(settings)  # E822: an actor that fits on no node would be waited for forever
        stages = 1 + (self.captioner is not None)
        actors = settings.actors or 1
        model = {"compute": ray.data.ActorPoolStrategy(size=actors),
                 "num_cpus": cluster.actor_cpus(settings, actors * stages), "num_gpus": settings.gpus or None,
                 "batch_size": self.batch_size, "batch_format": "numpy"}
        tasks = {"num_cpus": 1, "batch_size": self.batch_size, "batch_format": "numpy"}
        rows = [{"position": position, "item": pickle.dumps(item), "error": b""}
                for position, item in enumerate(items)]
        blocks = max(1, min(len(rows), -(-len(rows) // self.batch_size)))
        dataset = configure_dataset(ray.data.from_items(rows, override_num_blocks=blocks),
                                    progress=self.progress)
        if self.captioner is not None:
            dataset = dataset.map_batches(CaptionStage, fn_constructor_args=(self.captioner,
                                                                            self.captioner_options), **model)
        if self.sample_rate is not None:
            dataset = dataset.map_batches(read_stage, fn_kwargs={"sample_rate": self.sample_rate}, **tasks)
        dataset = dataset.map_batches(EmbedStage, fn_constructor_args=(self.backbone, self.options),
                                      fn_constructor_kwargs={"batch_size": self.batch_size}, **model)
        if self.parse:
            dataset = dataset.map_batches(parse_stage, **tasks)
        out: list[dict[str, Any]] = []
        try:
            for row in dataset.iter_rows():
                if len(row["error"]):
                    raise_payload(row["error"], stage="index build", state=BUILD_STATE)
                out.append(row)
        except FortekitError:
            raise
        except Exception as exc:  # Ray's own: a lost actor, a worker that died
            raise job_failed(exc, stage="index build", state=BUILD_STATE) from None
        out.sort(key=lambda row: int(row["position"]))
        if [int(row["position"]) for row in out] != list(range(len(items))):
            raise DistributedError(Errors.E823.format(
                stage="index build", problem=f"{len(out)} rows came back for {len(items)} items",
                state=BUILD_STATE,
            ))
        return out


def _assemble(
    items: list[AudioItem], ids: list[str], rows: list[dict[str, Any]], parse: bool,
    recorded_options: Mapping[str, Any], captioner: str | None, captioner_options: dict[str, Any],
) -> AudioIndex:
    """The index from the rows, through the code of the one-process build (assemble_parts)."""
    from fortekit.search.index.audio_index import AudioIndex
    from fortekit.search.index.build import assemble_parts

    final = [pickle.loads(row["item"]) for row in rows]  # this job's own rows
    name = str(rows[0]["backbone"])
    embeddings = np.stack([np.frombuffer(row["embedding"], dtype=np.float32) for row in rows])
    captions = [_caption(item) for item in final]
    paths = [os.fspath(item.path) if item.path is not None else None for item in items]
    sets = [pickle.loads(row["predicates"]) for row in rows] if parse else None
    array, records, meta = assemble_parts(embeddings, ids, captions, paths, name, normalise=True, parse=parse,
                                          predicate_sets=sets, options=recorded_options)
    meta = replace(meta, parsed=parse, unparsed=sum(bool(row["unparsed"]) for row in rows) if parse else 0)
    index = AudioIndex(array, records, meta)
    if captioner is None:
        return index
    index.meta = replace(index.meta, captioner=str(rows[0]["captioner"]), captioner_options=captioner_options)
    evidence = [pickle.loads(row["evidence"]) for row in rows if len(row["evidence"])]
    if not evidence:
        return index
    return index.with_evidence(_evidence(evidence, len(rows), str(rows[0]["captioner"])))


def _evidence(parts: list[tuple[tuple[str, ...], np.ndarray]], count: int, name: str) -> Any:
    """The label evidence of every item, one row each, as caption_audio joins it (E622 as it checks)."""
    from fortekit.plugins.evidence import LabelEvidence

    labels = parts[0][0]
    if len(parts) != count:
        problem = f"label_evidence() returned {len(parts)} rows for {count} items"
    elif any(part[0] != labels for part in parts):
        problem = "label_evidence() returned other labels for a later batch of items"
    else:
        return LabelEvidence(labels, np.stack([part[1] for part in parts]))
    raise AudioIndexError(Errors.E622.format(name=name, problem=problem))
