"""The thread policy (fortekit._threads): one rule for every command that encodes and the Retriever."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from fortekit import _threads  # noqa: E402
from fortekit.errors import ThreadsError  # noqa: E402
from fortekit.search.cli import main  # noqa: E402
from fortekit.search.cli.main import build_parser  # noqa: E402
from fortekit.search.cli.refine_args import build_refine_parser  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(autouse=True)
def _restore_threads() -> Iterator[None]:
    before = torch.get_num_threads()
    applied = list(_threads._applied)
    yield
    torch.set_num_threads(before)
    _threads._applied[:] = applied


def test_the_policy_never_asks_for_more_threads_than_the_process_may_use() -> None:
    cores = _threads.physical_cores()
    assert 1 <= cores <= _threads.available_cores()
    assert _threads.policy_threads("batch") == cores
    assert _threads.policy_threads("service", workers=cores) == 1
    assert _threads.policy_threads("service", workers=cores * 4) == 1  # never 0


@pytest.mark.parametrize("value", [0, -1, 1.5, "two", True, "", 10**12, "99999999"])
def test_a_bad_thread_count_is_e830_naming_the_valid_ones(value: object) -> None:
    with pytest.raises(ThreadsError, match=r"\[E830\].*whole number from 1 to \d+ .* or 'auto'"):
        _threads.check_threads(value)


def test_every_command_that_encodes_takes_threads() -> None:
    parser = build_parser()
    for argv in (["search", "--index", "I", "q"], ["serve", "--index", "I"], ["eval", "--test", "t.csv"],
                 ["index", "build", "--captions", "c.csv", "-o", "I"], ["index", "add", "--index", "I",
                 "--captions", "c.csv"], ["train-projection", "--train", "t.safetensors", "-o", "H"]):
        args = parser.parse_args([*argv, "--threads", "1"])
        assert args.threads == "1", argv
    assert parser.parse_args(["serve", "--index", "I"]).thread_role == "service"
    assert build_refine_parser().parse_args(["q.txt", "--threads", "1"]).threads == "1"


def test_threads_on_the_command_line_is_what_torch_uses(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "sample.index"
    captions = tmp_path / "sample.csv"  # the first 300 clips of the bundled AudioCaps sample
    rows = (EXAMPLES / "audiocaps_train_sample.csv").read_text(encoding="utf-8").splitlines()[:301]
    captions.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main(["index", "build", "--captions", str(captions), "-o", str(index), "--device", "cpu",
                 "--threads", "1", "--no-parse"]) == 0
    assert torch.get_num_threads() == 1
    capsys.readouterr()
    assert main(["search", "--index", str(index), "a dog", "--json", "--stage1", "off", "--device", "cpu",
                 "--threads", "auto"]) == 0
    assert torch.get_num_threads() == _threads.physical_cores()
    assert "dog" in json.loads(capsys.readouterr().out.splitlines()[0])["hits"][0]["caption"].lower()
    assert main(["search", "--index", str(index), "a dog", "--threads", "0"]) == 2
    assert "[E830]" in capsys.readouterr().err


def test_the_retriever_keeps_a_commands_choice_and_takes_its_own(minilm) -> None:  # type: ignore[no-untyped-def]
    from fortekit.search.index import AudioIndex
    from fortekit.search.pipeline import PipelineSpec
    from fortekit.search.retriever import Retriever

    index = AudioIndex.from_captions(["a", "b"], ["rain falls on a roof", "a dog barks"], minilm)
    spec = PipelineSpec(stage1=None)
    _threads.apply_threads(1)  # what a command's --threads 1 does
    assert Retriever(index, spec, backbone=minilm).threads == 1 and torch.get_num_threads() == 1
    assert Retriever(index, spec, backbone=minilm, threads="auto").threads == _threads.physical_cores()
    assert Retriever(index, spec, backbone=minilm, threads=1).threads == 1
    with pytest.raises(ThreadsError, match=r"\[E830\]"):
        Retriever(index, spec, backbone=minilm, threads=0)
