"""``--ray``: ``fortekit index build --audio`` and ``fol-refine`` as Ray Data jobs (search/distributed).

On one local Ray of 2 CPUs for the module (the commands find it running and keep it), with real
data: the generated sound collection of tests/serve_fixtures.py (24 WAV files at 16 kHz with their
sidecar captions), a tiny random small CLAP and tagger saved with the real classes (8 kHz: the read
stage resamples), and real Clotho captions as queries. Each job's output is compared with the
one-process path's: the same ids, captions, predicate sets, label evidence and ``index.json``,
vectors within 1e-6; the same records in the same order (against one process on one torch thread,
as an actor of one CPU runs), resumed from a one-process output. Then
the coded errors: Ray missing (E820), an unreachable cluster (E821), a stage that failed (E823),
options that do not go together (E822): exit 2 with nothing written, or the output as it was
after its last good batch.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SHARED_DATA, require, run_fol_refine

from fortekit.search.cli import main
from fortekit.search.cli import refine as refine_cli
from fortekit.search.refine.resume import settings_path
from fortekit.search.refine.run import LineRunner

# Ray Data reads its own deprecated settings when it copies a context.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.*")

CLOTHO = SHARED_DATA / "clotho" / "clotho_captions_development.csv"
REFINE = ["--stage1", "offline", "-B", "2", "-D", "1", "--batch-size", "2", "--device", "cpu", "--quiet"]


def run_fortekit(*argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``fortekit`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exc:  # argparse
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


# -- Ray is imported only when a job asks for it ---------------------------------------------------


def test_the_package_and_the_parsers_import_no_ray() -> None:
    import subprocess

    code = (
        "import sys\n"
        "import fortekit.search.distributed, fortekit.search.distributed.options\n"
        "import fortekit.search.cli.ray_options\n"
        "import fortekit.search.distributed.cluster, fortekit.search.distributed.index_build\n"
        "import fortekit.search.distributed.refine\n"
        "from fortekit.search.cli import build_parser, build_refine_parser\n"
        "build_parser().parse_args(['index', 'build', '--audio', 'a', '-o', 'b', '--ray'])\n"
        "build_refine_parser().parse_args(['q.txt', '--ray', '127.0.0.1:6379'])\n"
        "loaded = sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


# -- the options ---------------------------------------------------------------------------------


def test_the_ray_options_parse_and_refuse_what_does_not_go_together(tmp_path: Path) -> None:
    from fortekit.search.cli import build_parser, build_refine_parser
    from fortekit.search.cli.ray_options import settings_from_args
    from fortekit.search.distributed.options import RaySettings

    args = build_parser().parse_args(["index", "build", "--audio", "a", "-o", "b", "--ray", "--ray-cpus", "2",
                                      "--ray-actors", "2", "--ray-actor-cpus", "0.5", "--ray-gpus", "1"])
    assert settings_from_args(args) == RaySettings(address=None, cpus=2, actors=2, actor_cpus=0.5, gpus=1.0)
    args = build_refine_parser().parse_args(["q.txt", "--ray", "ray://10.0.0.5:10001"])
    assert settings_from_args(args) == RaySettings(address="ray://10.0.0.5:10001")
    status, _, err = run_fol_refine("--ray", "q.txt")  # --ray would take the file for an address
    assert status == 2 and "[E822]" in err and "Put --ray after the query file" in err
    status, _, err = run_fol_refine(str(tmp_path / "q.txt"), "--ray", "10.0.0.5:6379", "--ray-cpus", "2")
    assert status == 2 and "[E822] --ray-cpus sizes a local Ray" in err
    status, _, err = run_fol_refine(str(tmp_path / "q.txt"), "--ray-actors", "2")
    assert status == 2 and "[E822] --ray-actors sizes the Ray job of --ray" in err
    status, _, err = run_fol_refine("--query", "a dog barks", "--ray")
    assert status == 2 and "[E822] --ray runs the batches of a query file" in err
    captions = tmp_path / "c.txt"
    captions.write_text("a dog barks\n", encoding="utf-8")
    status, _, err = run_fortekit("index", "build", "--captions", str(captions), "-o", str(tmp_path / "i"),
                                  "--ray")
    assert status == 2 and "[E822] --ray runs the build of audio files" in err
    assert not (tmp_path / "i").exists() and not list(tmp_path.glob("*.jsonl"))


# -- Ray missing, a cluster out of reach ----------------------------------------------------------


def test_without_ray_both_commands_say_which_extra_to_install(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    monkeypatch.setitem(sys.modules, "ray.data", None)
    audio = tmp_path / "audio"
    audio.mkdir()
    status, _, err = run_fortekit("index", "build", "--audio", str(audio), "-o", str(tmp_path / "i"), "--ray")
    assert status == 2 and "[E820]" in err and "pip install 'fortekit[ray]'" in err
    queries = tmp_path / "q.txt"
    queries.write_text("a dog barks\n", encoding="utf-8")
    status, _, err = run_fol_refine(str(queries), "-o", str(tmp_path / "out.jsonl"), "--ray")
    assert status == 2 and "[E820]" in err and "pip install 'fortekit[ray]'" in err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["audio", "q.txt"]  # nothing written


def test_an_unreachable_cluster_is_refused_at_once_with_nothing_written(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    audio = tmp_path / "audio"
    audio.mkdir()
    queries = tmp_path / "q.txt"
    queries.write_text("a dog barks\n", encoding="utf-8")
    started = time.perf_counter()
    status, _, err = run_fortekit("index", "build", "--audio", str(audio), "-o", str(tmp_path / "i"),
                                  "--ray", "127.0.0.1:1")
    assert status == 2 and "[E821] Cannot reach the Ray cluster at 127.0.0.1:1" in err, err
    status, _, err = run_fol_refine(str(queries), "-o", str(tmp_path / "out.jsonl"), "--ray", "127.0.0.1:1")
    assert status == 2 and "[E821]" in err and "ray start --head" in err, err
    assert time.perf_counter() - started < 20
    assert sorted(path.name for path in tmp_path.iterdir()) == ["audio", "q.txt"]


# -- the jobs, on one local Ray for the module ----------------------------------------------------


@pytest.fixture(scope="module")
def local_ray() -> Any:
    ray = pytest.importorskip("ray")
    import logging

    from ray import cloudpickle  # Ray's own copy, the one that pickles the stages

    # The failing stages below live in this module, which Ray's workers cannot import: send them by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    yield ray
    ray.shutdown()
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random small CLAP (8 kHz: the 16 kHz clips are resampled) and tagger, saved by the real code."""
    torch = pytest.importorskip("torch")
    from fortekit.plugins.backbones._small_clap_nets import SmallClap, Tagger
    from fortekit.plugins.backbones.small_clap import SmallClapConfig, save_small_clap
    from fortekit.plugins.captioners.tagger import TagLayout, save_tagger

    config = SmallClapConfig(sample_rate=8000, n_fft=512, hop_length=512, fmax=4000.0, channels=(8, 16),
                             embed_dim=16, audio_hidden=16, text_hidden=16, time_steps=4, profile_channels=4)
    folder = tmp_path_factory.mktemp("tiny-models")
    torch.manual_seed(0)
    save_small_clap(SmallClap(config).eval(), folder)
    layout = TagLayout(("dog", "rain", "bell"), (("loudness", ("loud", "quiet")),))
    save_tagger(Tagger(config, layout.size).eval(), layout, folder)
    return folder


def _index_facts(directory: Path) -> dict[str, Any]:
    from fortekit.search.index import AudioIndex

    index = AudioIndex.load(directory)
    evidence = None if index.evidence is None else index.evidence.matrix.numpy().copy()
    return {"ids": index.ids, "captions": index.captions, "paths": index.paths,
            "sets": index.predicate_sets, "embeddings": np.array(index.embeddings), "evidence": evidence,
            "meta": json.loads((directory / "index.json").read_text(encoding="utf-8")),
            "files": sorted(path.name for path in directory.iterdir())}


def test_an_audio_build_on_ray_writes_the_index_of_one_process(
    local_ray: Any, sound_collection: Path, tiny_models: Path, tmp_path: Path,
) -> None:
    common = ["--audio", str(sound_collection / "audio"), "--backbone", "small-clap",
              "--backbone-option", f"model={tiny_models}", "--captioner", "tagger",
              "--captioner-option", f"model={tiny_models}", "--captioner-option", "device=cpu",
              "--device", "cpu", "--batch-size", "8", "--quiet"]
    status, out, err = run_fortekit("index", "build", *common, "-o", str(tmp_path / "one"))
    assert status == 0, err
    status, out_ray, err = run_fortekit("index", "build", *common, "-o", str(tmp_path / "ray"), "--ray")
    assert status == 0, err
    assert out_ray.replace(str(tmp_path / "ray"), "DIR") == out.replace(str(tmp_path / "one"), "DIR")
    one, ray = _index_facts(tmp_path / "one"), _index_facts(tmp_path / "ray")
    assert len(one["ids"]) == 24 and one["meta"]["captioner"] == "tagger" and one["evidence"] is not None
    for key in ("ids", "captions", "paths", "sets", "meta", "files"):
        assert ray[key] == one[key], key
    assert any(one["sets"]) and one["captions"] != [None] * 24
    np.testing.assert_allclose(ray["embeddings"], one["embeddings"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(ray["evidence"], one["evidence"], rtol=0, atol=1e-6)
    assert ray["meta"]["backbone"] == "small-clap" and ray["meta"]["parsed"]  # the same index.json


def test_a_coded_error_inside_a_stage_stops_the_build_as_in_one_process(
    local_ray: Any, sound_collection: Path, tiny_models: Path, tmp_path: Path,
) -> None:
    audio = tmp_path / "audio"
    audio.mkdir()
    for wav in sorted((sound_collection / "audio").glob("*.wav"))[:3]:
        shutil.copy(wav, audio / wav.name)
    (audio / "broken.wav").write_bytes(b"RIFF not a wave file")
    common = ["--audio", str(audio), "--backbone", "small-clap", "--backbone-option", f"model={tiny_models}",
              "--device", "cpu", "--quiet", "--no-parse"]
    status, _, err_one = run_fortekit("index", "build", *common, "-o", str(tmp_path / "one"))
    status_ray, _, err_ray = run_fortekit("index", "build", *common, "-o", str(tmp_path / "ray"), "--ray")
    assert status == status_ray == 2 and "[E214]" in err_one and "broken.wav" in err_one
    ours = [line for line in err_ray.splitlines() if line.startswith("fortekit index build:")]
    assert ours == err_one.splitlines()  # the same coded message (Ray logs its own lines around it)
    assert not (tmp_path / "one").exists() and not (tmp_path / "ray").exists()


def test_a_stage_that_fails_is_e823_and_leaves_the_index_folder_as_it_was(
    local_ray: Any, sound_collection: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fortekit.search.distributed import index_build
    from fortekit.search.index import AudioIndex

    class BrokenEncoder(index_build.EmbedStage):
        def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
            raise RuntimeError("the encoder lost its GPU")

    audio = tmp_path / "audio"
    audio.mkdir()
    for path in sorted((sound_collection / "audio").iterdir())[:8]:  # 4 clips and their captions
        shutil.copy(path, audio / path.name)
    out = tmp_path / "clips.index"
    AudioIndex.from_captions(["a"], ["rain"], "enc", embeddings=[[1.0, 0.0]], parse_captions=False).save(out)
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    monkeypatch.setattr(index_build, "EmbedStage", BrokenEncoder)
    status, _, err = run_fortekit("index", "build", "--audio", str(audio), "-o", str(out), "--quiet",
                                  "--no-parse", "--device", "cpu", "--batch-size", "8", "--overwrite",
                                  "--ray")
    assert status == 2, err
    assert "[E823] The Ray job failed in its index build stage: RuntimeError: the encoder lost its GPU" in err
    assert "Nothing was written" in err and "Traceback" not in err
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


@pytest.fixture(scope="module")
def clotho_queries(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with require(CLOTHO).open(encoding="utf-8") as handle:
        rows = csv.DictReader(handle)
        captions = [next(rows)["caption_1"].strip() for _ in range(6)]
    queries = tmp_path_factory.mktemp("queries") / "clotho6.txt"
    queries.write_text("\n".join(captions) + "\n", encoding="utf-8")
    return queries


def test_fol_refine_on_ray_resumes_a_one_process_output_into_the_same_file(
    local_ray: Any, clotho_queries: Path, tmp_path: Path,
) -> None:
    torch = pytest.importorskip("torch")
    one = tmp_path / "one.jsonl"
    # With the threads of an actor of one CPU (Ray sets OMP_NUM_THREADS=1 there): matrix products on
    # another number of threads may differ in the last float bits, and a rounded score with them.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        status, _, err = run_fol_refine(str(clotho_queries), "-o", str(one), *REFINE)
    finally:
        torch.set_num_threads(threads)
    assert status == 0, err
    lines = one.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 6
    # An output the one process left after its first batch, resumed on Ray: 4 queries, 2 batches, 2 actors.
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_text("".join(lines[:2]), encoding="utf-8")
    shutil.copy(settings_path(one), settings_path(resumed))
    status, _, err = run_fol_refine(str(clotho_queries), "-o", str(resumed), *REFINE[:-1], "--ray")
    assert status == 0, err
    assert "4 refined, 2 already done" in err and "2 refiner actor(s)" in err, err
    assert resumed.read_bytes() == one.read_bytes()  # the same records, in the same order
    assert json.loads(settings_path(resumed).read_text()) == json.loads(settings_path(one).read_text())
    status, _, err = run_fol_refine(str(clotho_queries), "-o", str(resumed), *REFINE[:-1], "--ray")
    assert status == 0 and "0 refined, 6 already done" in err and "no actor started" in err
    assert resumed.read_bytes() == one.read_bytes()


class _EchoRunner(LineRunner):
    """A runner without a model: one record per query; the batch that holds line ``fail_at`` raises."""

    def __init__(self, writer: Any, report: Any, batch_size: int, fail_at: int | None) -> None:
        super().__init__(batch_size=batch_size, report=report)
        self.writer, self.fail_at = writer, fail_at

    def _batch(self, items: list[Any]) -> None:
        if any(item.line == self.fail_at for item in items):
            raise RuntimeError(f"worker lost at line {self.fail_at}")
        for item in items:
            self.writer.write({"line": item.line, "query": item.query, "refined_text": item.query.upper()})
            self.summary.refined += 1


def _echo_factory(fail_at: int | None) -> Any:
    class Echo:
        def __init__(self, args: Any, where: str, index_state: str | None = None) -> None:
            self.batch_size = args.batch_size

        def __call__(self, writer: Any, report: Any) -> LineRunner:
            return _EchoRunner(writer, report, self.batch_size, fail_at)

    return Echo


ECHO = ["--batch-size", "2", "--ray", "--ray-actors", "1"]


def test_a_refinement_that_fails_keeps_the_batches_before_it_and_resumes(
    local_ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"query number {n}\n" for n in range(1, 7)), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    monkeypatch.setattr(refine_cli, "_ActorRunner", _echo_factory(fail_at=3))
    status, _, err = run_fol_refine(str(queries), "-o", str(out), *ECHO)
    assert status == 1, err
    assert "[E669]" in err and "Traceback" not in err
    assert "[E823] The Ray job failed in its refinement stage: RuntimeError: worker lost at line 3" in err
    # the output as it was after its last good batch
    assert [json.loads(line)["line"] for line in out.read_text().splitlines()] == [1, 2]
    monkeypatch.setattr(refine_cli, "_ActorRunner", _echo_factory(fail_at=None))
    status, _, err = run_fol_refine(str(queries), "-o", str(out), *ECHO)
    assert status == 0 and "4 refined, 2 already done" in err and "1 refiner actor(s)" in err, err
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [record["line"] for record in records] == [1, 2, 3, 4, 5, 6]
    assert records[5]["refined_text"] == "QUERY NUMBER 6"
