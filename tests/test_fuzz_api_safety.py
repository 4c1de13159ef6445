"""Issue 31 ("Nothing lost, part two"): the Python API, plug-ins, eval and bench cases.

Each numbered case of the issue that lives in these parts is a test here: a generated
collection's ``--overwrite`` never deletes a user's folder (4), backbones carry a full
identity for cache keys (9), a str where captions are expected is refused (12), a device
that does not exist is a coded error (13), a code-running pickle in an hf-clap folder is a
coded refusal (16), an absurd BEIR relevance is a coded error naming the line (17), numpy
strings are captions and formula functions refuse what is no formula (18).
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from fortekit.errors import (
    CaptionTypeError,
    EvaluationError,
    FormulaTypeError,
    ModelLoadError,
    OutputError,
    PluginOptionError,
)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- 12 and 18: the caption parser's entry points -------------------------------------------------
@pytest.mark.parametrize("texts", ["dog", b"dog", None, 3])
def test_parse_captions_refuses_one_string_or_no_iterable(texts: object) -> None:
    import fortekit

    with pytest.raises(CaptionTypeError, match=r"\[E315\] parse_captions\(\)"):
        fortekit.parse_captions(texts)  # type: ignore[arg-type]


def test_parse_many_refuses_one_string_when_iterated() -> None:
    from fortekit.fol.caption import default_parser

    with pytest.raises(CaptionTypeError, match=r"\[E315\] parse_many\(\).*parse\(text\)"):
        list(default_parser().parse_many("dog"))  # type: ignore[arg-type]


def test_numpy_strings_are_captions() -> None:
    import fortekit

    plain = str(fortekit.parse_caption("a dog barks").formula)
    assert str(fortekit.parse_caption(np.str_("a dog barks")).formula) == plain
    many = [str(r.formula) for r in fortekit.parse_captions(np.array(["a dog barks", "rain falling"]))]
    assert many[0] == plain and len(many) == 2


def test_encoder_input_check_refuses_a_string_and_takes_numpy_strings() -> None:
    from fortekit.errors import EncoderInputError
    from fortekit.plugins._runtime import check_texts

    with pytest.raises(EncoderInputError, match=r"\[E212\]"):
        check_texts("dog")
    checked = check_texts(np.array(["a", "b"]))
    assert checked == ["a", "b"] and all(type(text) is str for text in checked)


# --- 18: formula functions refuse what is no formula, at the boundary ------------------------------
def _formula_calls() -> list[tuple[str, object]]:
    from fortekit import fol

    pools = fol.CandidatePools(attributes=("Loud",))
    return [
        ("format_formula", lambda phi: fol.format_formula(phi)),
        ("predicates", lambda phi: fol.predicates(phi)),
        ("o_attr", lambda phi: fol.o_attr(phi, "Loud")),
        ("o_rel", lambda phi: fol.o_rel(phi, "Near", "Dog")),
        ("o_neg", lambda phi: fol.o_neg(phi, "Rain")),
        ("entity_variables", lambda phi: fol.entity_variables(phi)),
        ("successors", lambda phi: fol.successors(phi, 1, pools)),
        ("canonical", lambda phi: fol.canonical(phi)),
        ("free_variables", lambda phi: fol.free_variables(phi)),
        ("substitute", lambda phi: fol.substitute(phi, {})),
        ("invariant_predicates", lambda phi: fol.invariant_predicates(phi, [], [])),
    ]


@pytest.mark.parametrize("value", ["Dog(x)", None, 3, ["Dog(x)"]])
def test_formula_functions_refuse_non_formulas_with_e009(value: object) -> None:
    for name, call in _formula_calls():
        with pytest.raises(FormulaTypeError, match=r"\[E009\]") as caught:
            call(value)  # type: ignore[operator]
        assert isinstance(caught.value, TypeError), name
        if isinstance(value, str):
            assert "parse_formula(text)" in str(caught.value), name


def test_formula_functions_still_work_on_formulas() -> None:
    from fortekit import fol

    phi = fol.parse_formula("Dog(x)")
    assert fol.format_formula(phi) == "Dog(x)"
    assert sorted(map(str, fol.predicates(phi))) == ["Dog/1"]
    assert str(fol.o_attr(phi, "Loud")) == "Dog(x) ∧ Loud(x)"


# --- 17: an absurd relevance score in qrels --------------------------------------------------------
def _beir(folder: Path, score: str) -> Path:
    folder.mkdir()
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "a dog barks"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "dog"}\n')
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{score}\n")
    return folder


@pytest.mark.parametrize("score", ["1e300", "-1e300", "99999999999", "1e7"])
def test_an_absurd_relevance_is_e503_naming_the_file_and_line(tmp_path: Path, score: str) -> None:
    from fortekit.search.eval.beir import load_beir

    folder = _beir(tmp_path / "beir", score)
    with pytest.raises(EvaluationError, match=r"\[E503\] .*test\.tsv, line 2: the score .* is outside"):
        load_beir(folder)


def test_an_absurd_relevance_from_the_command_is_one_coded_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.cli.main import main

    folder = _beir(tmp_path / "beir", "1e300")
    status = main(["eval", "--beir", str(folder), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 1 and "[E503]" in err and "Traceback" not in err and "OverflowError" not in err


def test_an_ordinary_graded_relevance_still_loads(tmp_path: Path) -> None:
    from fortekit.search.eval.beir import load_beir

    assert load_beir(_beir(tmp_path / "beir", "3")).qrels == {"q1": {"d1": 3}}


# --- 13: devices --------------------------------------------------------------------------------
def test_with_device_merges_instead_of_a_duplicate_keyword() -> None:
    from fortekit.plugins import with_device

    recorded = {"device": "cpu", "model": "m"}
    assert with_device(recorded, "auto") == {"device": "auto", "model": "m"}
    assert with_device(recorded, None) == recorded and with_device(None, None) == {}
    assert recorded == {"device": "cpu", "model": "m"}  # not changed in place


@pytest.mark.parametrize("device", ["cuda:99", "cuda:x", "tpu", 7])
def test_a_device_that_does_not_exist_is_a_coded_error(device: object) -> None:
    pytest.importorskip("torch")
    from fortekit.plugins import get_backbone

    with pytest.raises(PluginOptionError, match=r"\[E21[78]\]"):
        get_backbone("minilm", device=device)


# --- 16 and 9: hf-clap folders: a code-running pickle; the identity -------------------------------
@pytest.fixture(scope="module")
def tiny_clap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    pytest.importorskip("soundfile")
    from plugin_fixtures import save_tiny_clap

    return save_tiny_clap(tmp_path_factory.mktemp("clap"))


class _RunsCode:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol:UserWarning")  # torch's note on the refused file
def test_a_code_running_pickle_is_refused_with_e209(tiny_clap: Path, tmp_path: Path) -> None:
    import shutil

    from fortekit.plugins import get_backbone

    folder = tmp_path / "evil-clap"
    shutil.copytree(tiny_clap, folder)
    for weights in folder.glob("*.safetensors"):
        weights.unlink()
    ran = tmp_path / "it-ran"
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(_RunsCode(ran)))
    with pytest.raises(ModelLoadError, match=r"\[E209\] The checkpoint .*pytorch_model\.bin holds Python"):
        get_backbone("hf-clap", model=str(folder), device="cpu")
    assert not ran.exists()


def test_a_truncated_weights_file_is_a_coded_error(tiny_clap: Path, tmp_path: Path) -> None:
    import shutil

    from fortekit.plugins import get_backbone

    folder = tmp_path / "cut-clap"
    shutil.copytree(tiny_clap, folder)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(ModelLoadError, match=r"\[E20[89]\]"):
        get_backbone("hf-clap", model=str(folder), device="cpu")


def test_backbones_expose_a_full_identity(tiny_clap: Path, tmp_path: Path) -> None:
    import shutil

    from fortekit.plugins import backbone_identity, get_backbone

    other = tmp_path / "other-clap"
    shutil.copytree(tiny_clap, other)
    first = get_backbone("hf-clap", model=str(tiny_clap), device="cpu")
    second = get_backbone("hf-clap", model=str(other), device="cpu")
    assert isinstance(first.cache_identity, str) and backbone_identity(first) == first.cache_identity
    assert backbone_identity(first) != backbone_identity(second)  # same name, another model
    again = get_backbone("hf-clap", model=str(tiny_clap), device="cpu", batch_size=3)
    assert backbone_identity(again) == backbone_identity(first)  # batch size and device do not count
    weights = other / "model.safetensors"
    before = backbone_identity(second)
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    assert backbone_identity(second) != before  # re-trained in place: a new identity
    record = json.loads(backbone_identity(first))
    assert record["name"] == "hf-clap" and record["options"]["model"] == str(tiny_clap)


def test_a_third_party_backbone_gets_a_derived_identity(tmp_path: Path) -> None:
    from fortekit.plugins import backbone_identity

    class Plugin:
        name, dim, device, sample_rate = "third", 4, "cpu", None

        def __init__(self, model: Path, batch_size: int = 8) -> None:
            self.model, self.batch_size = model, batch_size

    weights = tmp_path / "w.bin"
    weights.write_bytes(b"1")
    one, two = Plugin(weights), Plugin(tmp_path / "other.bin", batch_size=2)
    assert backbone_identity(one) == backbone_identity(Plugin(weights, batch_size=99))
    assert backbone_identity(one) != backbone_identity(two)
    assert "w.bin" in backbone_identity(one)

    class Own(Plugin):
        cache_identity = "own:v1"

    assert backbone_identity(Own(weights)) == "own:v1"


# --- 4: bench generate --overwrite ------------------------------------------------------------
def _generate(out: Path, n: int, **options: object) -> object:
    from fortekit.search.eval.bench.soundgen.generate import generate
    from fortekit.search.eval.bench.soundgen.scene import GeneratorConfig

    return generate(GeneratorConfig(seed=1, n=n, speech=False), out, **options)  # type: ignore[arg-type]


def test_overwrite_never_removes_a_users_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fortekit.search.cli.main import main

    user = tmp_path / "user"
    (user / "audio").mkdir(parents=True)
    (user / "train").mkdir()
    (user / "audio" / "take1.wav").write_bytes(b"RIFF mine")
    (user / "train" / "notes.txt").write_text("mine")
    before = _tree(user)
    argv = ["bench", "generate", "--n", "2", "-o", str(user), "--no-speech", "--quiet", "--overwrite"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "[E744]" in err and "Traceback" not in err
    assert _tree(user) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["user"]  # no temporary folder left


def test_overwrite_replaces_a_collection_the_generator_made(tmp_path: Path) -> None:
    from fortekit.safe_write import MARKER_FILE

    out = tmp_path / "gen"
    _generate(out, 3)
    assert (out / MARKER_FILE).is_file()
    _generate(out, 2, overwrite=True)
    assert len(list((out / "audio").glob("*.wav"))) == 2 and (out / MARKER_FILE).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"]


def test_an_older_collection_is_recognised_but_not_one_holding_user_files(tmp_path: Path) -> None:
    from fortekit.safe_write import MARKER_FILE
    from fortekit.search.eval.bench.soundgen.generate import is_legacy_collection

    out = tmp_path / "old"
    _generate(out, 3)
    (out / MARKER_FILE).unlink()  # as an older fortekit left it
    assert is_legacy_collection(out)
    (out / "audio" / "mine.wav").write_bytes(b"x")
    assert not is_legacy_collection(out)
    with pytest.raises(OutputError, match=r"\[E744\]"):
        _generate(out, 2, overwrite=True)
    assert (out / "audio" / "mine.wav").read_bytes() == b"x"
    (out / "audio" / "mine.wav").unlink()
    _generate(out, 2, overwrite=True)
    assert len(list((out / "audio").glob("*.wav"))) == 2 and (out / MARKER_FILE).is_file()


def test_an_interrupted_overwrite_leaves_the_old_collection(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from fortekit.search.eval.bench.soundgen.generate import GenerationReplaced

    out = tmp_path / "gen"
    _generate(out, 3)
    before = _tree(out)

    def stop(done: int, todo: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(GenerationReplaced):
        _generate(out, 4, overwrite=True, on_clip=stop)
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen"]  # the partial one removed, no lock left

    import fortekit.search.eval.bench.soundgen.generate as module
    from fortekit.search.cli.main import main

    def interrupted(*args: object, **kwargs: object) -> None:
        raise GenerationReplaced(out)

    monkeypatch.setattr(module, "generate", interrupted)
    assert main(["bench", "generate", "--n", "4", "-o", str(out), "--no-speech", "--overwrite"]) == 130
    err = capsys.readouterr().err
    assert "[E557]" in err and "unchanged" in err and "Traceback" not in err


def test_out_as_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OutputError, match=r"\[E741\]"):
        _generate(tmp_path / "link", 2)
    assert list(target.iterdir()) == []


def test_a_second_generator_on_one_folder_is_e742(tmp_path: Path) -> None:
    from fortekit.errors import OutputLockedError
    from fortekit.safe_write import OutputLock

    out = tmp_path / "gen"
    with OutputLock(out), pytest.raises(OutputLockedError, match=r"\[E742\].*pid"):
        _generate(out, 2)
    assert not out.exists()


# --- "What to build" 1: the other writers of these parts go through the safe writer -----------------
def test_a_per_query_file_is_whole_or_the_old_one(tmp_path: Path) -> None:
    from fortekit.search.eval.per_query import write_per_query

    target = write_per_query(tmp_path / "q.jsonl", [{"rank": 1}])
    before = target.read_bytes()
    with pytest.raises(EvaluationError, match=r"\[E493\]"):
        write_per_query(target, [{"rank": 2}, {"rank": object()}])
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl"]  # no temporary file left


def test_eval_reports_never_write_through_a_link(tmp_path: Path) -> None:
    from fortekit.search.eval.report import write_json

    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (tmp_path / "metrics.json").symlink_to(victim)
    with pytest.raises(OutputError, match=r"\[E741\]"):
        write_json(tmp_path / "metrics.json", {"a": 1})
    assert victim.read_text() == "mine"


def test_an_eval_out_folder_is_marked_and_locked(tmp_path: Path) -> None:
    from fortekit.errors import EvaluationError, OutputLockedError
    from fortekit.safe_write import MARKER_FILE
    from fortekit.search.eval.report import open_output_folder

    lock = open_output_folder(tmp_path / "run")
    try:
        assert (tmp_path / "run" / MARKER_FILE).is_file()
        with pytest.raises(OutputLockedError, match=r"\[E742\]"):
            open_output_folder(tmp_path / "run")
    finally:
        lock.release()
    users = tmp_path / "users"
    users.mkdir()
    (users / "notes.txt").write_text("mine")
    with pytest.raises(EvaluationError, match=r"\[E526\].*notes.txt"):  # its files could be replaced
        open_output_folder(users)
    assert sorted(p.name for p in users.iterdir()) == ["notes.txt"]  # never becomes fortekit's


def test_report_and_vocabulary_outputs_never_replace_their_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from fortekit.search.cli.main import main

    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"caption": "a dog barks", "formula": "Dog(x)"}\n')
    csv = tmp_path / "clotho.csv"
    csv.write_text("file_name,caption_1\na.wav,a dog barks\n")
    before = {gold: gold.read_bytes(), csv: csv.read_bytes()}
    assert main(["parse-report", "--gold", str(gold), "-o", str(gold)]) == 2
    assert "[E740]" in capsys.readouterr().err
    assert main(["vocab", "build", "--clotho", str(csv), "--audiocaps", str(csv), "--ontology",
                 str(tmp_path / "o.json"), "-o", str(csv)]) == 2  # refused at dispatch (the output rule)
    assert "[E740]" in capsys.readouterr().err
    assert {path: path.read_bytes() for path in before} == before


def test_the_converter_never_writes_over_its_checkpoint(tmp_path: Path) -> None:
    from fortekit.plugins.backbones.laion_convert import _check_out_dir

    checkpoint = tmp_path / "model.safetensors"
    checkpoint.write_bytes(b"weights")
    with pytest.raises(OutputError, match=r"\[E740\]"):
        _check_out_dir(tmp_path, True, checkpoint)
    _check_out_dir(tmp_path / "new", False, checkpoint)  # another folder: fine
