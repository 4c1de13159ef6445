"""``generate()``: a whole collection from a seed, resumable after an interruption.

Steps: check the settings and the output folder; write ``manifest.json`` with
``"complete": false``; draw every scene (cheap, from the seed alone); render each clip whose WAV
is not finished yet and note it in ``.progress.jsonl``; then write ``clips.jsonl``, the caption
CSVs and the BEIR folders, and the manifest again with ``"complete": true``.

A run stopped part-way leaves its finished WAVs and the progress file; the same command
resumes from them (and, run after it finished, does nothing). A folder that holds anything
else needs ``overwrite=True``, which replaces it only if the generator made it: the folder
holds fortekit's marker file (:data:`~fortekit.safe_write.MARKER_FILE`, written when the
generator creates the folder), or it is a collection of an older fortekit, recognised by its
``manifest.json`` and by holding nothing but the generator's own files. Any other folder is
refused (E744) and left as it is. The replacement is generated into a hidden folder beside
it and swapped in at the end, so an interrupted ``overwrite`` leaves the old collection whole.

Example:
    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> out = Path(folder.name) / "gen"
    >>> report = generate(GeneratorConfig(seed=0, n=5, speech=False), out)
    >>> report.clips, report.rendered
    (5, 5)
    >>> print(*sorted(p.name for p in out.iterdir()))
    .fortekit-output audio captions_test.csv captions_train.csv clips.jsonl manifest.json test train
    >>> folder.cleanup()
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fortekit._checks import check_int
from fortekit.errors import Errors, OutputError, SoundGenError
from fortekit.safe_write import (
    MARKER_FILE,
    check_not_symlink,
    create_output_directory,
    is_fortekit_directory,
    output_lock,
    replace_directory,
)
from fortekit.search.eval.bench.soundgen.scene import HELD_OUT_PAIRS, GeneratorConfig, Scene, draw_scene

__all__ = ["GENERATOR_VERSION", "GenerationReplaced", "GenerationReport", "generate", "is_legacy_collection",
           "render_clip"]

#: Bumped whenever the same seed would give other sound or text.
GENERATOR_VERSION = 2
#: The most clips of one collection (clip ids have six digits).
MAX_CLIPS = 1_000_000
MANIFEST = "manifest.json"
PROGRESS = ".progress.jsonl"
_OWN = ("audio", "train", "test", "clips.jsonl", "captions_train.csv", "captions_test.csv", MANIFEST,
        PROGRESS)
# What a collection of an older fortekit (no marker file) may hold, folder by folder: its own
# files and the temporary files of its atomic writes (".NAME.XXXX.part"/".tmp"), nothing else.
_TEMPORARY = r"(\.[^/]+\.(part|tmp))"
_LEGACY_LAYOUT = {
    "": re.compile(rf"({'|'.join(map(re.escape, (*_OWN, MARKER_FILE)))}|{_TEMPORARY})\Z"),
    "audio": re.compile(rf"(clip\d{{6}}\.(wav|txt)|{_TEMPORARY})\Z"),
    "train": re.compile(rf"(corpus\.jsonl|queries\.jsonl|item_concepts\.jsonl|qrels|{_TEMPORARY})\Z"),
    "test": re.compile(rf"(corpus\.jsonl|queries\.jsonl|item_concepts\.jsonl|qrels|{_TEMPORARY})\Z"),
    "train/qrels": re.compile(rf"(train\.tsv|{_TEMPORARY})\Z"),
    "test/qrels": re.compile(rf"(test\.tsv|{_TEMPORARY})\Z"),
}


@dataclass(frozen=True)
class GenerationReport:
    """What :func:`generate` did.

    Attributes:
        out: the output folder.
        clips: clips in the collection.
        rendered: clips rendered by this call (the rest were already there).
        seconds: wall time of this call.
        counts: clips and queries per split, and queries per kind.
    """

    out: Path
    clips: int
    rendered: int
    seconds: float
    counts: dict[str, Any]


def _settings(config: GeneratorConfig) -> dict[str, Any]:
    return {"generator_version": GENERATOR_VERSION, **asdict(config)}


def check_config(config: GeneratorConfig) -> GeneratorConfig:
    """The config if its settings are valid, else SoundGenError (E550).

    Example:
        >>> check_config(GeneratorConfig(n=0))
        Traceback (most recent call last):
        ...
        fortekit.errors.SoundGenError: [E550] The sound generator's setting n must be an int from 1 to 1000000, not 0; see docs/soundgen.md.
    """  # noqa: E501
    check_int(config.n, name="n", error=SoundGenError, message=Errors.E550, high=MAX_CLIPS)
    check_int(config.seed, name="seed", error=SoundGenError, message=Errors.E550, low=0)
    check_int(config.test_every, name="test_every", error=SoundGenError, message=Errors.E550, low=2)
    check_int(config.max_queries_per_kind, name="max_queries_per_kind", error=SoundGenError,
              message=Errors.E550)
    return config


def _holds_anything(out: Path) -> bool:
    """Whether ``out`` holds anything besides fortekit's marker file."""
    return any(entry.name != MARKER_FILE for entry in out.iterdir())


def is_legacy_collection(out: Path) -> bool:
    """Whether ``out`` is a collection an older fortekit generated (before the marker file).

    Recognised safely, so that ``overwrite`` may replace it: a ``manifest.json`` of the
    generator (its settings carry ``generator_version``) and nothing in the folder but the
    generator's own files, folders and temporary files, each where the generator puts it
    (:data:`_LEGACY_LAYOUT`); no link anywhere. A single file of the user's (notes, a
    ``.git`` folder, another WAV name) makes it not recognised, and it is left alone.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / MANIFEST).write_text('{"settings": {"generator_version": 2}}')
        >>> is_legacy_collection(folder)
        True
        >>> _ = (folder / "notes.txt").write_text("mine")
        >>> is_legacy_collection(folder)
        False
    """
    manifest = _read_json(out / MANIFEST)
    settings = manifest.get("settings") if manifest is not None else None
    if not isinstance(settings, dict) or not isinstance(settings.get("generator_version"), int):
        return False
    try:
        for folder in [out, *(p for p in out.rglob("*") if p.is_dir() and not p.is_symlink())]:
            where = folder.relative_to(out).as_posix() if folder != out else ""
            pattern = _LEGACY_LAYOUT.get(where)
            if pattern is None:
                return False
            for entry in folder.iterdir():
                is_folder = entry.name in ("audio", "train", "test", "qrels")
                if entry.is_symlink() or pattern.match(entry.name) is None or entry.is_dir() != is_folder:
                    return False
    except OSError:
        return False
    return True


def _mark_legacy(out: Path) -> None:
    """Mark a recognised older collection as fortekit's (the marker file alone, atomically)."""
    from fortekit.safe_write import adopt_directory

    adopt_directory(out)


def _prepare(out: Path, config: GeneratorConfig, overwrite: bool) -> str:
    """Make ``out`` ready: "new", "resume" (an unfinished run of these settings), "done" (finished)
    or "replace" (``overwrite`` of a folder the generator made: build beside it, then swap)."""
    try:
        if out.exists() and not out.is_dir():
            raise SoundGenError(Errors.E554.format(path=out, problem="it is a file, not a folder"))
        if out.is_dir() and _holds_anything(out):
            previous = _read_json(out / MANIFEST)
            same = previous is not None and previous.get("settings") == _settings(config)
            if same and previous is not None and not overwrite:
                return "done" if previous.get("complete") else "resume"
            if not overwrite:
                problem = "holds a collection generated with other settings" if previous else "is not empty"
                raise SoundGenError(Errors.E553.format(path=out, problem=problem))
            if not is_fortekit_directory(out) and is_legacy_collection(out):
                _mark_legacy(out)  # recognised as the generator's: may be replaced
            return "replace"  # replace_directory refuses (E744) a folder that is not ours
        create_output_directory(out)
        (out / "audio").mkdir(exist_ok=True)
        _write_manifest(out, config, complete=False)
    except OSError as exc:
        if isinstance(exc, OutputError):  # the safe writer's own coded errors (E741, E743...)
            raise
        raise SoundGenError(Errors.E554.format(path=out, problem=exc.strerror or exc)) from None
    return "new"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _write_manifest(out: Path, config: GeneratorConfig, *, complete: bool, **extra: Any) -> None:
    from fortekit.search.eval.bench.soundgen.writer import atomic_write

    manifest = {"complete": complete, "settings": _settings(config),
                "held_out_pairs": [list(pair) for pair in HELD_OUT_PAIRS], **extra}
    atomic_write(out / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))


def _finished(out: Path) -> dict[str, dict[str, Any]]:
    """The progress records of clips whose WAV is in place (a torn last line is ignored)."""
    records: dict[str, dict[str, Any]] = {}
    try:
        lines = (out / PROGRESS).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return records
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and (out / "audio" / f"{record.get('id')}.wav").is_file():
            records[str(record["id"])] = record
    return records


def render_clip(scene: Scene, audio_dir: Path) -> dict[str, Any]:
    """Render one scene, write its WAV and caption sidecar; its progress record.

    Example:
        >>> render_clip(draw_scene(0, 0), Path("audio"))  # doctest: +SKIP
        {'id': 'clip000000', 'gain_db': 0.0, 'peak': 0.31}
    """
    from fortekit.search.eval.bench.soundgen.captions import scene_captions
    from fortekit.search.eval.bench.soundgen.render import render_scene
    from fortekit.search.eval.bench.soundgen.writer import atomic_write, write_wav

    clip = render_scene(scene)
    write_wav(audio_dir / f"{scene.clip_id}.wav", clip.samples)
    atomic_write(audio_dir / f"{scene.clip_id}.txt", (scene_captions(scene)[0] + "\n").encode("utf-8"))
    return {"id": scene.clip_id, "gain_db": round(clip.gain_db, 4),
            "peak": round(float(abs(clip.samples).max()), 4)}


def _render_one(job: tuple[Scene, Path]) -> dict[str, Any]:
    return render_clip(*job)


def _render_all(scenes: list[Scene], out: Path, workers: int) -> Iterator[dict[str, Any]]:
    jobs = [(scene, out / "audio") for scene in scenes]
    if workers <= 1 or len(jobs) < 2:
        yield from map(_render_one, jobs)
        return
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with context.Pool(workers) as pool:
        yield from pool.imap(_render_one, jobs, chunksize=4)


def generate(config: GeneratorConfig, out: str | Path, *, overwrite: bool = False, workers: int = 1,
             on_clip: Callable[[int, int], None] | None = None) -> GenerationReport:
    """Generate (or finish generating) a collection of ``config.n`` clips in ``out``.

    Args:
        config: seed, size and the other settings.
        out: the output folder (created, with fortekit's marker file; must be empty, or a
            stopped run of the same settings).
        overwrite: replace a collection the generator made in ``out`` (any other folder: E744).
        workers: processes rendering clips (the output does not depend on it).
        on_clip: called with (clips done, clips to do) after each rendered clip.

    Raises:
        SoundGenError: bad settings (E550), espeak-ng missing (E551) or failing (E552), a
            non-empty folder (E553), an unwritable one (E554), a bad data file (E555).
        OutputError: ``overwrite`` of a folder the generator did not make (E744), ``out`` a
            symbolic link (E741), another run generating into it (E742), a failed write (E743).
        GenerationReplaced: (a ``KeyboardInterrupt``) an interrupted ``overwrite``; the old
            collection is unchanged.
    """
    started = time.perf_counter()
    check_config(config)
    check_int(workers, name="workers", error=SoundGenError, message=Errors.E550)
    from fortekit.search.eval.bench.soundgen.templates import load_templates

    load_templates()  # a bad data file fails before anything is written
    if config.speech:
        from fortekit.search.eval.bench.soundgen.speech import espeak_program

        espeak_program()
    out = Path(out)
    check_not_symlink(out)  # E741: --out a link to elsewhere is never followed, nor replaced
    try:
        out.absolute().parent.mkdir(parents=True, exist_ok=True)  # for the lock file beside ``out``
    except OSError as exc:
        raise SoundGenError(Errors.E554.format(path=out, problem=exc.strerror or exc)) from None
    with output_lock(out.absolute()):  # E742: a second generator on the same folder
        state = _prepare(out, config, overwrite)
        if state == "done":  # the same command, run again after it finished: nothing to do
            previous = _read_json(out / MANIFEST) or {}
            return GenerationReport(out, config.n, 0, time.perf_counter() - started,
                                    previous.get("counts", {}))
        if state == "replace":
            done: list[tuple[int, dict[str, Any]]] = []

            def build(folder: Path) -> None:
                done.append(_fill(folder, config, "new", workers, on_clip))

            try:
                replace_directory(out, build, overwrite=True)
            except KeyboardInterrupt:
                raise GenerationReplaced(out) from None
            rendered, counts = done[0]
        else:
            rendered, counts = _fill(out, config, state, workers, on_clip)
    return GenerationReport(out, config.n, rendered, time.perf_counter() - started, counts)


class GenerationReplaced(KeyboardInterrupt):
    """An ``overwrite`` stopped part-way: the old collection is unchanged, the partial one removed."""

    def __init__(self, out: Path) -> None:
        super().__init__(str(out))
        self.out = out


def _fill(out: Path, config: GeneratorConfig, state: str, workers: int,
          on_clip: Callable[[int, int], None] | None) -> tuple[int, dict[str, Any]]:
    """Render the clips ``out`` lacks and write the text files: (clips rendered, counts)."""
    if state == "new" and not (out / MANIFEST).exists():  # a fresh temporary folder of "replace"
        try:
            (out / "audio").mkdir(exist_ok=True)
            _write_manifest(out, config, complete=False)
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise SoundGenError(Errors.E554.format(path=out, problem=exc.strerror or exc)) from None
    scenes = [draw_scene(config.seed, index, config=config) for index in range(config.n)]
    finished = _finished(out) if state == "resume" else {}
    todo = [scene for scene in scenes if scene.clip_id not in finished]
    try:
        with (out / PROGRESS).open("a", encoding="utf-8") as progress:
            for done, record in enumerate(_render_all(todo, out, workers), start=1):
                progress.write(json.dumps(record) + "\n")
                progress.flush()
                finished[record["id"]] = record
                if on_clip is not None:
                    on_clip(done, len(todo))
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise SoundGenError(Errors.E554.format(path=out, problem=exc.strerror or exc)) from None
    from fortekit.search.eval.bench.soundgen.collection import write_collection

    try:
        counts = write_collection(out, config, scenes, finished)
        _write_manifest(out, config, complete=True, counts=counts)
        (out / PROGRESS).unlink(missing_ok=True)
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise SoundGenError(Errors.E554.format(path=out, problem=exc.strerror or exc)) from None
    return len(todo), counts
