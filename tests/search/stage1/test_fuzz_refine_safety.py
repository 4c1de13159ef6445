"""Issue 31 ("Nothing lost, part two"), the part of fol-refine and `fortekit search -o`.

Cases 3 (an output that is an input), 5 (a planted sidecar link), 9 (a text cache shared by
two models), 10 (two runs on one output), 15 (hostile corpus and anchor-bank folders) and 19
(no cap on the search's work), the gaps of resuming, a crash test (28 in-process crash points
in fol-refine and `fortekit search -o`, plus 8 real SIGKILLs of fol-refine) and a concurrency
test (two real processes on one output). Every case asserts a coded error or the
correct result, no traceback, and that no user file changed.

Most runs answer their queries from a lookup table, so no model is loaded; where a model is
needed, the module's one MiniLM is handed to every run (``shared_minilm``).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from fuzz_fixtures import (
    BIN,
    Result,
    assert_clean,
    assert_unchanged,
    jsonl_records,
    run_in_process,
    snapshot,
)

from fortekit.errors import OutputError, RefineError
from fortekit.safe_write import OutputLock
from fortekit.search.cli import fol_refine_main, main
from fortekit.search.refine.output import ResultWriter, result_record
from fortekit.search.refine.resume import ResumeState, settings_path, write_settings

QUERIES = ["a dog barks", "rain on a roof", "birds chirp in the morning", "a car engine idles",
           "people talk over music", "a door slams shut", "water drips in a cave", "wind in the trees",
           "a baby cries", "thunder rumbles far away", "a cat meows twice", "footsteps on gravel"]
#: The same draws every run; FORTEKIT_FUZZ_RANDOM=1 explores other kill points.
SEED = None if os.environ.get("FORTEKIT_FUZZ_RANDOM", "") == "1" else 31


def refine(*argv: str) -> Result:
    return run_in_process(fol_refine_main, argv)


def search(*argv: str) -> Result:
    return run_in_process(main, ["search", *argv])


def write_lookup(path: Path, queries: list[str]) -> Path:
    with ResultWriter(path) as writer:
        for line, query in enumerate(queries, start=1):
            stored = {"refined_text": query + ", loud", "phi_star": "∃x Dog(x)"}
            writer.write(result_record(line, query, stored))
    return path


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    """q.txt (twelve queries) and lookup.jsonl answering all of them."""
    (tmp_path / "q.txt").write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    write_lookup(tmp_path / "lookup.jsonl", QUERIES)
    return tmp_path


@pytest.fixture(autouse=True)
def shared_minilm(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every run of this test gets the module's MiniLM instead of loading its own."""
    import fortekit.plugins as plugins

    real = plugins.get_backbone

    def get(name: str, **options: Any) -> Any:
        return minilm if name == "minilm" else real(name, **options)

    monkeypatch.setattr(plugins, "get_backbone", get)
    return minilm


def refine_lookup(work: Path, out: str, *extra: str) -> Result:
    return refine(str(work / "q.txt"), "--lookup", str(work / "lookup.jsonl"), "-o", out, "-q", *extra)


def search_file(work: Path, index: Path, out: str, *extra: str) -> Result:
    return search("--index", str(index), "--queries", str(work / "q.txt"), "-o", out, "-k", "2",
                  "--device", "cpu", "--batch-size", "1", "-q", *extra)


def tree(*folders: Path) -> list[Path]:
    """Every file under the folders (for snapshots: nothing in them may change)."""
    return [path for folder in folders for path in sorted(folder.rglob("*")) if path.is_file()]


# --- case 3: the output is an input (checked before anything is opened for writing) ---------------


def _case_corpus_file(work: Path, index: Path) -> tuple[list[str], str]:
    (work / "corpus.txt").write_text("a dog barks\nrain falls\n", encoding="utf-8")
    return ["--corpus", str(work / "corpus.txt"), "-o", str(work / "corpus.txt"), "--overwrite"], "corpus"


def _case_inside_corpus(work: Path, index: Path) -> tuple[list[str], str]:
    (work / "corpus").mkdir()
    (work / "corpus" / "corpus.jsonl").write_text('{"format": 1}\n', encoding="utf-8")
    return ["--corpus", str(work / "corpus"), "-o", str(work / "corpus" / "corpus.jsonl"), "--overwrite"], \
        "inside"


def _case_anchor_bank(work: Path, index: Path) -> tuple[list[str], str]:
    (work / "bank").mkdir()
    (work / "bank" / "anchor_bank.json").write_text("{}", encoding="utf-8")
    return ["--anchors", "bank", "--anchor-bank", str(work / "bank"), "-o",
            str(work / "bank" / "anchor_bank.json"), "--overwrite"], "anchor bank"


def _case_index_file(work: Path, index: Path) -> tuple[list[str], str]:
    return ["--index", str(index), "-o", str(index / "index.json"), "--overwrite"], "index"


def _case_sidecar_is_the_corpus(work: Path, index: Path) -> tuple[list[str], str]:
    (work / "out.jsonl.settings.json").write_text("a dog barks\n", encoding="utf-8")
    return ["--corpus", str(work / "out.jsonl.settings.json"), "-o", str(work / "out.jsonl")], "corpus"


def _case_cache(work: Path, index: Path) -> tuple[list[str], str]:
    (work / "cache").mkdir()
    return ["--cache-dir", str(work / "cache"), "-o", str(work / "cache" / "text_cache.sqlite"),
            "--overwrite"], "text-embedding cache"


REFINE_INPUT_CASES = {
    "--corpus X -o X --overwrite": _case_corpus_file,
    "-o inside --corpus DIR": _case_inside_corpus,
    "-o inside --anchor-bank DIR": _case_anchor_bank,
    "-o a file of --index": _case_index_file,
    "the sidecar is the corpus": _case_sidecar_is_the_corpus,
    "-o the text cache": _case_cache,
}


@pytest.mark.parametrize("name", list(REFINE_INPUT_CASES))
def test_fol_refine_refuses_an_output_that_is_an_input(name: str, work: Path, cafe: Path) -> None:
    argv, what = REFINE_INPUT_CASES[name](work, cafe)
    before = snapshot(*tree(work, cafe), work / "out.jsonl")
    result = refine(str(work / "q.txt"), "--lookup", str(work / "lookup.jsonl"), "-q", *argv)
    assert_clean(result, [2], name)
    assert "[E740]" in result.err and what in result.err, result.show()
    assert_unchanged(before, name)


@pytest.mark.parametrize("target", ["index.json", "a new file inside", "the index folder"])
def test_search_refuses_an_output_inside_the_index(target: str, work: Path, cafe: Path) -> None:
    out = {"index.json": cafe / "index.json", "a new file inside": cafe / "items.jsonl",
           "the index folder": cafe}[target]
    before = snapshot(*tree(work, cafe), cafe / "items.jsonl")
    result = search_file(work, cafe, str(out), "--overwrite")
    assert_clean(result, [2], target)
    assert "[E740]" in result.err and "index" in result.err, result.show()
    assert_unchanged(before, target)


def test_search_refuses_an_output_that_is_the_projection(work: Path, cafe: Path) -> None:
    head = work / "head.safetensors"
    head.write_bytes(b"not really a head")
    before = snapshot(*tree(work))
    result = search_file(work, cafe, str(head), "--projection", str(head), "--overwrite")
    assert_clean(result, [2], "-o the projection")
    assert "[E740]" in result.err and "Stage 2 head" in result.err, result.show()
    assert_unchanged(before, "-o the projection")


# --- case 5: nothing is written through a link -----------------------------------------------------


@pytest.mark.parametrize("cli", ["fol-refine", "search"])
@pytest.mark.parametrize("link", ["sidecar", "output --overwrite", "lock file"])
def test_a_planted_link_never_redirects_a_write(cli: str, link: str, work: Path, cafe: Path) -> None:
    victim = work / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    out = work / "out.jsonl"
    planted = {"sidecar": settings_path(out), "output --overwrite": out,
               "lock file": work / ".out.jsonl.lock"}[link]
    planted.symlink_to(victim)
    before = snapshot(*tree(work))
    extra = ["--overwrite"] if link == "output --overwrite" else []
    result = refine_lookup(work, str(out), *extra) if cli == "fol-refine" else \
        search_file(work, cafe, str(out), *extra)
    assert_clean(result, [2], f"{cli}: {link}")
    assert "[E741]" in result.err, result.show()
    assert_unchanged(before, f"{cli}: {link}")
    assert planted.is_symlink() and victim.read_text() == "precious\n"


def test_write_settings_refuses_a_linked_sidecar(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    settings_path(tmp_path / "out.jsonl").symlink_to(victim)
    with pytest.raises(OutputError, match=r"\[E741\]"):
        write_settings(tmp_path / "out.jsonl", {"k": 1})
    assert victim.read_text() == "precious\n"


# --- case 10: one writer per output; a resume refuses a file two runs wrote -----------------------


@pytest.fixture(scope="module")
def finished(
    cafe: Path, minilm: Any, tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[bytes, bytes]]:
    """A finished output and its settings file of each command over q.txt (made once per module)."""
    import fortekit.plugins as plugins

    folder = tmp_path_factory.mktemp("finished")
    (folder / "q.txt").write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    write_lookup(folder / "lookup.jsonl", QUERIES)
    made: dict[str, tuple[bytes, bytes]] = {}
    with pytest.MonkeyPatch.context() as patch:
        real = plugins.get_backbone
        patch.setattr(plugins, "get_backbone",
                      lambda name, **options: minilm if name == "minilm" else real(name, **options))
        for cli in ("fol-refine", "search"):
            out = folder / f"{cli}.jsonl"
            result = refine_lookup(folder, str(out)) if cli == "fol-refine" else \
                search_file(folder, cafe, str(out))
            assert_clean(result, [0], f"{cli}: a finished run")
            made[cli] = (out.read_bytes(), settings_path(out).read_bytes())
    return made


def _finished_output(work: Path, finished: dict[str, tuple[bytes, bytes]], cli: str) -> Path:
    """work/out.jsonl: the finished output of `cli` over work/q.txt, with its settings file."""
    out = work / "out.jsonl"
    records, settings = finished[cli]
    out.write_bytes(records)
    settings_path(out).write_bytes(settings)  # neither command records the query file's path
    return out


@pytest.mark.parametrize("cli", ["fol-refine", "search"])
@pytest.mark.parametrize("locked", ["output", "sidecar"])
def test_a_second_run_on_a_locked_output_stops_with_the_pid(
    cli: str, locked: str, work: Path, cafe: Path, finished: dict[str, tuple[bytes, bytes]],
) -> None:
    out = _finished_output(work, finished, cli)
    before = snapshot(*tree(work))
    with OutputLock(out if locked == "output" else settings_path(out)):
        result = refine_lookup(work, str(out), "--overwrite") if cli == "fol-refine" else \
            search_file(work, cafe, str(out), "--overwrite")
    assert_clean(result, [2], f"{cli}: {locked} locked")
    assert "[E742]" in result.err and f"pid {os.getpid()}" in result.err, result.show()
    assert_unchanged(before, f"{cli}: {locked} locked")


@pytest.mark.parametrize("cli", ["fol-refine", "search"])
def test_a_file_two_runs_wrote_is_not_resumed(
    cli: str, work: Path, cafe: Path, finished: dict[str, tuple[bytes, bytes]],
) -> None:
    out = _finished_output(work, finished, cli)
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:5] + lines[:5] + lines[5:]), encoding="utf-8")  # two writers, mixed
    before = snapshot(*tree(work))
    again = refine_lookup(work, str(out)) if cli == "fol-refine" else search_file(work, cafe, str(out))
    assert_clean(again, [2], f"{cli}: duplicates")
    assert "[E670]" in again.err and "--overwrite" in again.err, again.show()
    assert_unchanged(before, f"{cli}: duplicates")
    with pytest.raises(Exception, match=r"\[E670\] .* line 6 holds a second record of the query of line 1"):
        ResumeState.read(out)


def _big_job(folder: Path, count: int = 6_000) -> list[str]:
    """A query file and a lookup table of `count` queries: a run that writes for about a second."""
    queries = [f"a dog barks number {i}" for i in range(count)]
    (folder / "big.txt").write_text("\n".join(queries) + "\n", encoding="utf-8")
    write_lookup(folder / "big_lookup.jsonl", queries)
    return [str(folder / "big.txt"), "--lookup", str(folder / "big_lookup.jsonl"), "--no-progress", "-q"]


def _spawn(command: str, argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.Popen([str(BIN / command), *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)


def test_two_writers_at_once_one_runs_the_other_gets_e742(tmp_path: Path) -> None:
    argv = _big_job(tmp_path)
    reference = run_in_process(fol_refine_main, [*argv, "-o", str(tmp_path / "reference.jsonl")])
    assert_clean(reference, [0], "reference")
    # While another run holds the output, a writer is refused with the holder's pid ...
    with OutputLock(tmp_path / "out.jsonl"):
        refused = _spawn("fol-refine", [*argv, "-o", "out.jsonl"], tmp_path)
        _, err = refused.communicate(timeout=120)
    text = err.decode("utf-8", "replace")
    assert refused.returncode == 2 and "[E742]" in text and f"pid {os.getpid()}" in text, text
    assert "Traceback" not in text and not (tmp_path / "out.jsonl").exists()
    # ... and two writers started together never mix: one runs, the other is refused (or, if
    # the first finished before the second began, the second resumes a complete file).
    first, second = (_spawn("fol-refine", [*argv, "-o", "out.jsonl"], tmp_path) for _ in range(2))
    results = {}
    for process in (first, second):
        _, err = process.communicate(timeout=120)
        results[process.pid] = (process.returncode, err.decode("utf-8", "replace"))
    statuses = sorted(status for status, _ in results.values())
    assert statuses in ([0, 2], [0, 0]), results
    if statuses == [0, 2]:
        winner = next(pid for pid, (status, _) in results.items() if status == 0)
        loser_err = next(err for status, err in results.values() if status == 2)
        assert "[E742]" in loser_err and f"pid {winner}" in loser_err, loser_err
    assert all("Traceback" not in err for _, err in results.values())
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
    assert not (tmp_path / ".out.jsonl.lock").exists()  # released by the run that held it


# --- case 19: caps on the work --------------------------------------------------------------------

CAP_CASES = {
    "-D 1000000": (["-D", "1000000"], "[E400]"),
    "-B 1000000": (["-B", "1000000"], "[E400]"),
    "-B 64 -D 16": (["-B", "64", "-D", "16"], "[E400]"),
    "--batch-size 10**9": (["--batch-size", "1000000000"], "[E668]"),
}


@pytest.mark.parametrize("name", list(CAP_CASES))
def test_the_work_of_fol_refine_is_capped(name: str, work: Path) -> None:
    argv, code = CAP_CASES[name]
    result = refine(str(work / "q.txt"), "-o", str(work / "out.jsonl"), "-q", *argv)
    assert_clean(result, [2], name)  # refused before any work: nothing written
    assert code in result.err, result.show()
    assert not (work / "out.jsonl").exists()
    explained = refine("--query", "a dog barks", "--explain", *argv)
    assert_clean(explained, [2], f"--explain {name}")
    assert code in explained.err


def test_the_batch_size_of_search_is_capped(work: Path, cafe: Path) -> None:
    result = search_file(work, cafe, str(work / "out.jsonl"), "--batch-size", "1000000000")
    assert_clean(result, [2], "search --batch-size")
    assert "[E668]" in result.err and not (work / "out.jsonl").exists()


def test_the_caps_hold_in_python() -> None:
    from fortekit.search.stage1.config import LIMITS, MAX_SCORED_PER_QUERY, RefineConfig

    for name, (cap, _) in LIMITS.items():
        with pytest.raises(RefineError, match=rf"\[E400\] Search option {name} must be at most {cap}, "):
            RefineConfig(**{name: cap + 1})
    with pytest.raises(RefineError, match=r"\[E400\] Search option beam_width x max_depth"):
        RefineConfig(beam_width=64, max_depth=16, max_attributes=256)
    assert RefineConfig.offline().beam_width * RefineConfig.offline().max_depth * 20 <= MAX_SCORED_PER_QUERY


# --- case 9: the text cache keys rows by the model's identity ---------------------------------------


def _perturb(folder: Path, seed: int) -> None:
    """Retrain a saved model in place, as far as its files can tell: new weights, same names."""
    from safetensors.torch import load_file, save_file

    generator = torch.Generator().manual_seed(seed)
    for path in folder.glob("*.safetensors"):
        tensors = {
            key: value + 0.5 * torch.randn(value.shape, generator=generator)
            if value.is_floating_point() else value
            for key, value in load_file(path).items()
        }
        save_file(tensors, str(path), metadata={"format": "pt"})


def test_two_models_sharing_a_cache_dir_never_get_each_others_vectors(tmp_path: Path) -> None:
    """Two Hugging Face CLAP folders (tiny, randomly initialised, the real classes) share --cache-dir."""
    pytest.importorskip("transformers")
    from plugin_fixtures import save_tiny_clap

    from fortekit.plugins import get_backbone
    from fortekit.search.stage1.encoder import CachedTextEncoder, TextEmbeddingCache, backbone_identity

    cache = tmp_path / "cache"
    save_tiny_clap(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    _perturb(tmp_path / "b", seed=7)
    texts = ["rain on a roof", "a dog barks"]

    def encode(model: Path, batch_size: int = 99) -> tuple[torch.Tensor, int, torch.Tensor]:
        # the batch size is not part of the identity
        backbone = get_backbone("hf-clap", model=str(model), device="cpu", batch_size=batch_size)
        encoder = CachedTextEncoder(backbone, TextEmbeddingCache(cache, backbone="hf-clap", dim=backbone.dim))
        rows = encoder.encode(texts)
        encoder.cache.close()
        return rows, encoder.stats.calls, backbone.encode_text(texts)

    first, calls, own = encode(tmp_path / "a")
    assert calls == 1 and torch.allclose(first, own)
    second, calls, own = encode(tmp_path / "b")  # the second model: its own vectors, not a's
    assert calls == 1 and torch.allclose(second, own) and not torch.allclose(second, first)
    again, calls, _ = encode(tmp_path / "a", batch_size=3)  # each model's rows are still served to it
    assert calls == 0 and torch.equal(again, first)
    _perturb(tmp_path / "a", seed=3)  # retrained in place: a new identity
    later = time.time() + 5
    for path in (tmp_path / "a").glob("*.safetensors"):
        os.utime(path, (later, later))
    retrained, calls, own = encode(tmp_path / "a")
    assert calls == 1 and torch.allclose(retrained, own) and not torch.allclose(retrained, first)
    a, b = (get_backbone("hf-clap", model=str(tmp_path / n), device="cpu") for n in ("a", "b"))
    small_batches = get_backbone("hf-clap", model=str(tmp_path / "a"), device="cpu", batch_size=1)
    assert backbone_identity(a) != backbone_identity(b)  # the key the cache uses
    assert backbone_identity(a) == backbone_identity(small_batches)


# --- case 15: hostile corpus and anchor-bank folders ------------------------------------------------


@pytest.fixture(scope="module")
def parses() -> list[Any]:
    from fortekit.search.stage1.corpus import parse_captions_once

    return parse_captions_once(["a dog barks", "rain falls on a roof"])


def _save_corpus(folder: Path, parses: list[Any], rows: torch.Tensor | None = None) -> Path:
    from fortekit.search.stage1.corpus import CaptionCorpus

    corpus = CaptionCorpus(torch.eye(2, 4), ["a dog barks", "rain falls on a roof"], parses)
    corpus.save(folder)
    if rows is not None:
        from safetensors.torch import save_file

        save_file({"embeddings": rows}, str(folder / "corpus.safetensors"))
    return folder


def _save_bank(folder: Path, rows: torch.Tensor | None = None) -> Path:
    from fortekit.fol import PredicateSymbol
    from fortekit.search.stage1.anchors import AnchorBank

    sets = [frozenset({PredicateSymbol("Dog", 1)}), frozenset({PredicateSymbol("Rain", 1)})]
    AnchorBank(torch.eye(2, 4), sets).save(folder)
    if rows is not None:
        from safetensors.torch import save_file

        save_file({"embeddings": rows}, str(folder / "anchor_bank.safetensors"))
    return folder


def _other_tensor(folder: Path, name: str, tensors: dict[str, torch.Tensor]) -> None:
    from safetensors.torch import save_file

    save_file(tensors, str(folder / name))


NAN_ROWS = torch.tensor([[1.0, 0.0, 0.0, 0.0], [float("nan"), 0.0, 0.0, 0.0]])

#: name -> how to spoil a saved corpus folder, and the code its loading must give.
CORPUS_CASES: dict[str, tuple[Callable[[Path], object], str]] = {
    "random safetensors": (lambda d: (d / "corpus.safetensors").write_bytes(os.urandom(300)), "[E412]"),
    "huge header length": (lambda d: (d / "corpus.safetensors").write_bytes(b"\xff" * 8 + b"{}"), "[E412]"),
    "missing key": (lambda d: _other_tensor(d, "corpus.safetensors", {"rows": torch.eye(2)}), "[E412]"),
    "integer rows": (lambda d: _other_tensor(d, "corpus.safetensors", {"embeddings": torch.ones(2, 4,
                                                                       dtype=torch.int64)}), "[E412]"),
    "a vector": (lambda d: _other_tensor(d, "corpus.safetensors", {"embeddings": torch.ones(8)}), "[E412]"),
    "no safetensors": (lambda d: (d / "corpus.safetensors").unlink(), "[E412]"),
    "deep JSON line": (lambda d: (d / "corpus.jsonl").write_text('{"format": 1}\n' + "[" * 100_000 + "\n"),
                       "[E412]"),
    "deep header": (lambda d: (d / "corpus.jsonl").write_text("[" * 100_000 + "\n"), "[E412]"),
    "a row without caption": (lambda d: (d / "corpus.jsonl").write_text('{"format": 1}\n{"parse": null}\n'),
                              "[E412]"),
    "a parse without keys": (lambda d: (d / "corpus.jsonl").write_text(
        '{"format": 1}\n{"caption": "x", "parse": {"text": "x"}}\n'), "[E412]"),
    "a parse of the wrong type": (lambda d: (d / "corpus.jsonl").write_text(
        '{"format": 1}\n{"caption": "x", "parse": [1, 2]}\n'), "[E412]"),
    "not UTF-8": (lambda d: (d / "corpus.jsonl").write_bytes(b'{"format": 1}\n\xff\xfe\n'), "[E412]"),
    "NaN rows": (lambda d: _other_tensor(d, "corpus.safetensors", {"embeddings": NAN_ROWS}), "[E411]"),
    "three rows for two captions": (lambda d: _other_tensor(d, "corpus.safetensors",
                                                            {"embeddings": torch.eye(3, 4)}), "[E411]"),
}


@pytest.mark.parametrize("name", list(CORPUS_CASES))
def test_a_hostile_corpus_folder_is_a_coded_error(name: str, tmp_path: Path, parses: list[Any]) -> None:
    from fortekit.search.stage1.corpus import CaptionCorpus

    folder = _save_corpus(tmp_path / "corpus", parses)
    spoil, code = CORPUS_CASES[name]
    spoil(folder)
    with pytest.raises(RefineError) as caught:
        CaptionCorpus.load(folder)
    assert str(caught.value).startswith(code), str(caught.value)


def test_a_corpus_of_another_width_is_e407(tmp_path: Path, parses: list[Any]) -> None:
    from fortekit.search.stage1.corpus import CaptionCorpus

    corpus = CaptionCorpus.load(_save_corpus(tmp_path / "corpus", parses))
    with pytest.raises(RefineError, match=r"\[E407\] The caption corpus has dimension 4.* have 384"):
        corpus.neighbours(torch.ones(1, 384), k=1)
    unnormalised = CaptionCorpus.load(_save_corpus(tmp_path / "big", parses, rows=torch.eye(2, 4) * 100))
    assert torch.allclose(unnormalised.embeddings.norm(dim=-1), torch.ones(2))  # hand-made rows normalised


BANK_CASES: dict[str, tuple[Callable[[Path], object], str]] = {
    "random safetensors": (lambda d: (d / "anchor_bank.safetensors").write_bytes(os.urandom(300)), "[E408]"),
    "missing key": (lambda d: _other_tensor(d, "anchor_bank.safetensors", {"x": torch.eye(2)}), "[E408]"),
    "deep JSON": (lambda d: (d / "anchor_bank.json").write_text("[" * 100_000), "[E408]"),
    "a JSON list": (lambda d: (d / "anchor_bank.json").write_text("[1, 2]"), "[E408]"),
    "predicates not lists": (lambda d: (d / "anchor_bank.json").write_text('{"predicates": [1, 2]}'),
                             "[E408]"),
    "a bad symbol": (lambda d: (d / "anchor_bank.json").write_text('{"predicates": [["Dog"], ["Rain/1"]]}'),
                     "[E408]"),
    "per_lookup -1": (lambda d: (d / "anchor_bank.json").write_text(
        '{"predicates": [["Dog/1"], ["Rain/1"]], "per_lookup": -1}'), "[E408]"),
    "NaN rows": (lambda d: _other_tensor(d, "anchor_bank.safetensors", {"embeddings": NAN_ROWS}), "[E408]"),
    "three rows for two items": (lambda d: _other_tensor(d, "anchor_bank.safetensors",
                                                         {"embeddings": torch.eye(3, 4)}), "[E408]"),
    "an empty folder": (lambda d: [path.unlink() for path in d.iterdir()], "[E408]"),
}


@pytest.mark.parametrize("name", list(BANK_CASES))
def test_a_hostile_anchor_bank_is_a_coded_error(name: str, tmp_path: Path) -> None:
    from fortekit.search.stage1.anchors import AnchorBank

    folder = _save_bank(tmp_path / "bank")
    spoil, code = BANK_CASES[name]
    spoil(folder)
    with pytest.raises(RefineError) as caught:
        AnchorBank.load(folder)
    assert str(caught.value).startswith(code), str(caught.value)


def test_hostile_folders_through_fol_refine(work: Path, parses: list[Any], shared_minilm: Any) -> None:
    (work / "new.txt").write_text("a new query nobody refined\n", encoding="utf-8")
    random_corpus = _save_corpus(work / "random", parses)
    (random_corpus / "corpus.safetensors").write_bytes(os.urandom(256))
    narrow_corpus = _save_corpus(work / "narrow", parses)
    nan_bank = _save_bank(work / "bank", rows=NAN_ROWS)
    narrow_bank = _save_bank(work / "narrow_bank")
    for name, argv, code in [
        ("random corpus", ["--corpus", str(random_corpus)], "[E412]"),
        ("corpus of another width", ["--corpus", str(narrow_corpus)], "[E407]"),
        ("NaN anchor bank", ["--anchors", "bank", "--anchor-bank", str(nan_bank)], "[E408]"),
        ("bank of another width", ["--anchors", "bank", "--anchor-bank", str(narrow_bank)], "[E407]"),
    ]:
        before = snapshot(*tree(work))
        result = refine(str(work / "new.txt"), "-o", str(work / f"{name}.jsonl"), "-q", "-B", "1", "-D", "1",
                        "--device", "cpu", *argv)
        assert_clean(result, [2], name)
        assert code in result.err, result.show()
        assert_unchanged(before, name)


# --- the crash test: in-process crash points, then real SIGKILLs -----------------------------------


class _Crash(BaseException):
    """Stands for SIGKILL: no ``except Exception`` of fortekit stops it."""


def _crash_at_write(monkeypatch: pytest.MonkeyPatch, count: int, torn: bool) -> None:
    """The `count`-th line written is cut after half its bytes (`torn`) or not begun, and the run dies."""
    real = ResultWriter._emit
    calls = [0]

    def emit(self: ResultWriter, text: str) -> None:
        calls[0] += 1
        if calls[0] == count:
            real(self, text[: len(text) // 2] if torn else "")
            raise _Crash
        real(self, text)

    monkeypatch.setattr(ResultWriter, "_emit", emit)


def _crash_at_sidecar(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run dies while its settings sidecar is renamed into place (leaving its temporary file,
    as a SIGKILL would: the next run removes it)."""
    import fortekit.safe_write as safe_write

    real = safe_write.os.replace

    def replace(source: Any, target: Any) -> None:
        if str(target).endswith(".settings.json"):
            shutil.copyfile(source, Path(str(source) + ".kept"))  # what the kill would leave
            raise _Crash
        real(source, target)

    monkeypatch.setattr(safe_write.os, "replace", replace)


def _assert_loads(out: Path, what: str) -> None:
    """What a killed run left is a readable output: whole records, at most one torn last line."""
    if not out.exists():
        return
    lines = out.read_bytes().split(b"\n")
    jsonl_records(b"\n".join(lines[:-1]).decode("utf-8"))  # every complete line is a record
    copy = out.with_name("copy_" + out.name)
    shutil.copyfile(out, copy)
    try:
        ResumeState.read(copy)  # no E662 or E670: a resume would take it (cutting a torn last line)
    except Exception as exc:  # pragma: no cover - a failure message
        raise AssertionError(f"{what}: the output no longer loads: {exc}") from exc
    finally:
        copy.unlink()


def _crash_points(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Result], out: Path, reference: bytes,
                  points: list[tuple[str, int, bool]]) -> None:
    for kind, count, torn in points:
        what = f"crash at {kind} {count}{' (torn)' if torn else ''}"
        with monkeypatch.context() as patch:
            if kind == "sidecar":
                _crash_at_sidecar(patch)
            else:
                _crash_at_write(patch, count, torn)
            crashed = run()
        assert crashed.status == 99 and "_Crash" in crashed.err, f"{what}: the crash did not happen\n" \
            f"{crashed.show()}"
        _assert_loads(out, what)
        for kept in out.parent.glob(f".{out.name}*.tmp.kept"):  # a killed sidecar write's temporary file
            kept.rename(kept.with_suffix(""))
        resumed = run()
        assert_clean(resumed, [0], f"{what}: the resume")
        assert out.read_bytes() == reference, f"{what}: the resumed output differs from an uninterrupted run"
        assert not list(out.parent.glob(f".{out.name}*.tmp")), f"{what}: a temporary file was left"
        out.unlink()


def test_crash_points_in_fol_refine(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fol-refine answered from the lookup table: a crash at every write of the twelve lines, torn or not."""
    out = work / "out.jsonl"
    assert_clean(refine_lookup(work, str(work / "reference.jsonl"), "--batch-size", "1"), [0], "reference")
    reference = (work / "reference.jsonl").read_bytes()
    points = [("write", count, torn) for count in range(1, 13) for torn in (True, False)]
    points.append(("sidecar", 0, False))
    _crash_points(monkeypatch, lambda: refine_lookup(work, str(out), "--batch-size", "1"), out, reference,
                  points)


def test_crash_points_with_a_real_search(work: Path, cafe: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fol-refine's beam search (B = D = 1) and ``fortekit search -o`` through the Retriever."""
    (work / "few.txt").write_text("\n".join(QUERIES[:3]) + "\n", encoding="utf-8")
    out = work / "out.jsonl"

    def searched(target: Path) -> Result:
        return refine(str(work / "few.txt"), "-o", str(target), "-q", "-B", "1", "-D", "1",
                      "--device", "cpu", "--elaborator", "lexical", "--anchors", "none", "--batch-size", "1")

    assert_clean(searched(work / "searched_reference.jsonl"), [0], "searched reference")
    reference = (work / "searched_reference.jsonl").read_bytes()
    _crash_points(monkeypatch, lambda: searched(out), out, reference, [("write", 2, True)])

    def ranked(target: Path) -> Result:
        return search("--index", str(cafe), "--queries", str(work / "few.txt"), "-o", str(target), "-k", "2",
                      "--device", "cpu", "--batch-size", "1", "-q")

    assert_clean(ranked(work / "ranked_reference.jsonl"), [0], "search reference")
    reference = (work / "ranked_reference.jsonl").read_bytes()
    _crash_points(monkeypatch, lambda: ranked(out), out, reference,
                  [("write", 2, True), ("sidecar", 0, False)])


def _kill_chain(command: str, argv: list[str], cwd: Path, out: Path, plan: list[tuple[str, float]]) -> int:
    """Start the command again and again, SIGKILLing each run by `plan`; the number of real kills.

    A step ("seconds", s) kills the run s seconds after it starts; ("bytes", n) kills it once the
    output has grown by n bytes. After each kill what is left must load.
    """
    kills = 0
    for kind, value in plan:
        start_size = out.stat().st_size if out.exists() else 0
        process = _spawn(command, argv, cwd)
        started = time.perf_counter()
        while process.poll() is None:
            grown = (out.stat().st_size if out.exists() else 0) - start_size
            late = time.perf_counter() - started >= value if kind == "seconds" else grown >= value
            if late:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.001)
        process.wait(timeout=120)
        stderr = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
        assert "Traceback" not in stderr, stderr
        kills += process.returncode == -signal.SIGKILL
        _assert_loads(out, f"{command} killed at {kind} {value}")
    return kills


def test_sigkill_at_random_points_then_resume(tmp_path: Path) -> None:
    """fol-refine over 6,000 queries from a lookup table, killed (SIGKILL) eight times: during
    start-up, while resuming (reading and cutting the output) and while writing; each kill is
    resumed by the next start, and the last resume must equal an uninterrupted run byte for byte.

    ``fortekit search -o`` shares this file handling (QueryFileJob, ResultWriter, ResumeState);
    its own writes are crashed in-process above, since each of its processes loads a model.
    """
    draw = random.Random(SEED)
    argv = _big_job(tmp_path)
    reference = run_in_process(fol_refine_main, [*argv, "-o", str(tmp_path / "reference.jsonl")])
    assert_clean(reference, [0], "reference")
    plan = [("seconds", draw.uniform(0.05, 0.6)) for _ in range(2)]
    plan += [("bytes", draw.randint(1, 60_000)) for _ in range(6)]
    out = tmp_path / "out.jsonl"
    kills = _kill_chain("fol-refine", [*argv, "-o", str(out)], tmp_path, out, plan)
    assert_clean(run_in_process(fol_refine_main, [*argv, "-o", str(out)]), [0], "the last resume")
    assert out.read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
    assert kills == len(plan), f"only {kills} of {len(plan)} runs were killed before they finished"


@pytest.fixture(autouse=True)
def _no_stray_lock(tmp_path: Path) -> Iterator[None]:
    yield
    left = [path for path in tmp_path.rglob(".*.lock") if not path.is_symlink()]
    assert not left, f"lock files left by runs that ended normally: {left}"
