"""Every reader and every CLI against hostile and random input (issue 15, "Make it stay fixed").

The committed corpus is tests/data/hostile/ (see its README.md); big inputs are generated
here. Each case asserts the documented exit status (docs/refine.md, docs/retriever.md,
docs/audio_index.md, docs/parser.md, docs/evaluation.md), that no Python traceback is printed,
that files which were not to be written are byte-identical afterwards (an input, an `-o`
that is not an output), and that an index which `fortekit index build` reports as built
loads (`fortekit index info`) and answers a query (`fortekit search`).

Most cases run the CLIs in this process (`run_in_process`: an escaping exception counts as a
traceback); a handful run the installed scripts in a subprocess, where a traceback printed by
the interpreter itself would show. `pytest tests/test_fuzz_hostile.py -s` prints how many
hostile inputs the file tries (test_hostile_input_count).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fuzz_fixtures import (
    DEEP_JSON,
    HOSTILE,
    NOT_OUTPUTS,
    Result,
    any_text,
    assert_clean,
    assert_unchanged,
    big_cell_csv,
    csv_file,
    deep_json_line,
    jsonl_file,
    jsonl_records,
    line_file,
    nasty_text,
    nested_terms,
    query_text,
    run_in_process,
    run_subprocess,
    snapshot,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fortekit.errors import AudioIndexError, QueryFileError
from fortekit.search.cli import fol_refine_main, main
from fortekit.search.index.sources import read_caption_file
from fortekit.search.refine.output import ResultWriter, result_record
from fortekit.search.refine.query_io import read_queries
from fortekit.search.refine.resume import settings_path

T = TypeVar("T")
#: A coded message: "[E655] ...".
CODED = re.compile(r"\[E\d{3}\] ")

# --- counting the hostile inputs ------------------------------------------------------------------

#: test name -> the hostile inputs it tries (parametrised cases, hypothesis examples, single cases).
COUNTS: dict[str, int] = {}


def cases(name: str, params: Sequence[T]) -> Sequence[T]:
    """Record `name`'s parametrised cases and hand them to pytest.mark.parametrize."""
    COUNTS[name] = COUNTS.get(name, 0) + len(params)
    return params


#: The same examples on every run (a red test names the same cases); FORTEKIT_FUZZ_RANDOM=1 explores.
DERANDOMIZE = os.environ.get("FORTEKIT_FUZZ_RANDOM", "") != "1"


def examples(name: str, count: int, explicit: int = 0) -> settings:
    """Hypothesis settings of `count` examples (plus `explicit` @example cases), recorded under `name`."""
    COUNTS[name] = COUNTS.get(name, 0) + count + explicit
    return settings(max_examples=count, deadline=None, database=None, derandomize=DERANDOMIZE,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def single(name: str, count: int = 1) -> None:
    """Record the hostile inputs of a test that is not parametrised."""
    COUNTS[name] = COUNTS.get(name, 0) + count


# --- shared fixtures: MiniLM once, one small caption index, a lookup table ------------------------

QUERIES = ["a dog barks", "rain on a roof", "birds chirp"]
CAPTIONS = ["a dog barks loudly", "rain falls on a tin roof", "birds chirp in the morning",
            "a car engine idles", "people talk over music"]
#: Every valid query of the hostile query files: fol-refine answers them from the lookup table.
KNOWN = [*QUERIES, "a dog\u2028barks", "rain\u2029on a roof", "birds\x85chirp in the morning",
         "a car engine idles", "rain\ron a roof", "rain\non a roof", "rain on a roof without thunder",
         "a dog barks twice"]


@pytest.fixture(scope="module")
def minilm() -> Any:
    from fortekit.plugins import get_backbone

    return get_backbone("minilm", device="cpu")


@pytest.fixture(scope="module")
def index_dir(minilm: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fortekit.search.index import AudioIndex

    directory = tmp_path_factory.mktemp("index") / "cafe.index"
    AudioIndex.from_captions([f"clip{i}.wav" for i in range(len(CAPTIONS))], CAPTIONS, minilm).save(directory)
    return directory


@pytest.fixture(scope="module")
def lookup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fol-refine output answering every KNOWN query: those runs load no model."""
    path = tmp_path_factory.mktemp("lookup") / "lookup.jsonl"
    with ResultWriter(path) as writer:
        for line, query in enumerate(KNOWN, start=1):
            stored = {"refined_text": query + ", loud", "phi_star": "∃x Dog(x)"}
            writer.write(result_record(line, query, stored))
    return path


def fortekit(*argv: str) -> Result:
    return run_in_process(main, argv)


def refine(*argv: str) -> Result:
    return run_in_process(fol_refine_main, argv)


def hostile(name: str, folder: Path, as_name: str | None = None) -> Path:
    """A copy of a corpus file in `folder` (so that no test can change the corpus)."""
    target = folder / (as_name or name)
    shutil.copyfile(HOSTILE / name, target)
    return target


def write_queries(folder: Path) -> Path:
    path = folder / "q.txt"
    path.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    return path


#: The two query-file commands: how each runs QUERIES into OUT, and its status for an unusable one.
CLIS = ("fol-refine", "search")


def run_file(cli: str, queries: Path, out: str, lookup: Path, index_dir: Path, *extra: str) -> Result:
    if cli == "fol-refine":
        return refine(str(queries), "-o", out, "--lookup", str(lookup), "-B", "1", "-D", "1",
                      "--device", "cpu", "--no-progress", *extra)
    return fortekit("search", "--index", str(index_dir), "--queries", str(queries), "-o", out, "-k", "2",
                    "--device", "cpu", "--no-progress", *extra)


def unusable(cli: str) -> int:
    """Exit status of an unusable input or output: 2, as for every command (README, "Exit codes")."""
    return 2


def check_built(directory: Path, what: str) -> None:
    """An index that `fortekit index build` reported as built loads and answers a query."""
    info = fortekit("index", "info", "--index", str(directory))
    assert_clean(info, [0], f"{what}: index info")
    query = fortekit("search", "--index", str(directory), "a dog barks", "-k", "2", "--device", "cpu")
    assert_clean(query, [0], f"{what}: search")
    assert "query:" in query.out, query.show()


# --- output safety: a file that is not an output is never touched ---------------------------------

NOT_OUTPUT_CASES = cases("not_an_output", [(cli, name) for cli in CLIS for name in NOT_OUTPUTS])


@pytest.mark.parametrize(("cli", "name"), NOT_OUTPUT_CASES)
def test_a_file_that_is_not_an_output_is_refused_byte_identical(
    cli: str, name: str, tmp_path: Path, lookup: Path, index_dir: Path,
) -> None:
    queries = write_queries(tmp_path)
    target = hostile(name, tmp_path)
    before = snapshot(queries, target, settings_path(target))
    result = run_file(cli, queries, str(target), lookup, index_dir)
    assert_clean(result, [unusable(cli)], f"{cli} -o {name}")
    assert "[E662]" in result.err, result.show()
    assert_unchanged(before, f"{cli} -o {name}")


LINK_CASES = cases("output_is_the_input", [(cli, link) for cli in CLIS for link in ("hard", "symbolic")])


@pytest.mark.parametrize(("cli", "link"), LINK_CASES)
def test_an_output_linked_to_the_input_is_refused(
    cli: str, link: str, tmp_path: Path, lookup: Path, index_dir: Path,
) -> None:
    queries = write_queries(tmp_path)
    alias = tmp_path / "alias.jsonl"
    (os.link if link == "hard" else os.symlink)(queries, alias)
    before = snapshot(queries, settings_path(alias))
    result = run_file(cli, queries, str(alias), lookup, index_dir)
    assert_clean(result, [unusable(cli)], f"{cli} -o {link} link")
    # a symbolic link meets the one output rule at dispatch, which names the input it is (E740)
    assert ("[E664]" if link == "hard" else "[E740]") in result.err, result.show()
    assert_unchanged(before, f"{cli} -o {link} link")


RESUME_CASES = cases("resume_without_settings", list(CLIS))


@pytest.mark.parametrize("cli", RESUME_CASES)
def test_resuming_after_the_settings_file_was_deleted_is_refused(
    cli: str, tmp_path: Path, lookup: Path, index_dir: Path,
) -> None:
    queries = write_queries(tmp_path)
    out = tmp_path / "out.jsonl"
    assert_clean(run_file(cli, queries, str(out), lookup, index_dir), [0], f"{cli} first run")
    settings_path(out).unlink()
    before = snapshot(queries, out, settings_path(out))
    again = run_file(cli, queries, str(out), lookup, index_dir)
    assert_clean(again, [unusable(cli)], f"{cli} resumed without settings")
    assert "[E663]" in again.err, again.show()
    assert_unchanged(before, f"{cli} resumed without settings")


DISK_FULL_CASES = cases("disk_full", list(CLIS))


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("cli", DISK_FULL_CASES)
def test_a_full_disk_is_a_coded_error_with_the_summary(
    cli: str, tmp_path: Path, lookup: Path, index_dir: Path,
) -> None:
    queries = write_queries(tmp_path)
    before = snapshot(queries)
    result = run_file(cli, queries, "/dev/full", lookup, index_dir)
    assert_clean(result, [1], f"{cli} -o /dev/full")
    assert "[E661]" in result.err or "[E669]" in result.err, result.show()
    assert "results: /dev/full" in result.err, f"no summary\n{result.show()}"
    assert_unchanged(before, f"{cli} -o /dev/full")
    assert not Path("/dev/full.settings.json").exists()


# --- hostile query files through fol-refine and fortekit search -o --------------------------------


def _big_cell_queries(folder: Path) -> Path:
    path = folder / "big.csv"
    path.write_text(f"query\na dog barks\n\"{'x' * 131_082}\"\nrain on a roof\n", encoding="utf-8")
    return path


def _deep_queries(folder: Path) -> Path:
    path = folder / "deep.jsonl"
    lines = ['{"query": "a dog barks"}', deep_json_line(), '{"query": "rain on a roof"}']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _runs_queries(folder: Path) -> Path:
    """Runs of 10,000 '(' and '!' (searched with --max-chars 20000: they must just finish)."""
    path = folder / "runs.txt"
    lines = ["(" * 10_000, "!" * 10_000, "a dog barks " + "(!" * 5_000]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _corpus(name: str) -> Callable[[Path], Path]:
    return lambda folder: hostile(name, folder)


#: name -> (make the file, the line numbers that must be written, the bad ones, exit status 0/1 or "unusable")
QUERY_FILES: dict[str, tuple[Callable[[Path], Path], list[int], list[int], int | str]] = {
    "undecodable": (_corpus("queries_undecodable.txt"), [1, 5], [2, 3, 4, 6], 1),
    "utf16": (_corpus("queries_utf16.txt"), [], [], "unusable"),
    "separators_jsonl": (_corpus("queries_separators.jsonl"), [1, 2, 3, 4], [], 0),
    "cr_only_csv": (_corpus("queries_cr.csv"), [2, 3, 5], [], 0),
    "big_cell_csv": (_big_cell_queries, [2, 4], [3], 1),
    "deep_jsonl": (_deep_queries, [1, 3], [2], 1),
    "runs_of_parens_and_bangs": (_runs_queries, [1, 2, 3], [], 0),
}
QUERY_FILE_OPTIONS = {"runs_of_parens_and_bangs": ["--max-chars", "20000"]}
QUERY_FILE_CASES = cases("hostile_query_files", [(cli, name) for cli in CLIS for name in QUERY_FILES])


@pytest.mark.parametrize(("cli", "name"), QUERY_FILE_CASES)
def test_hostile_query_files_write_every_valid_line(
    cli: str, name: str, tmp_path: Path, lookup: Path, index_dir: Path,
) -> None:
    make, good, bad, status = QUERY_FILES[name]
    queries = make(tmp_path)
    out = tmp_path / "out.jsonl"
    before = snapshot(queries)
    result = run_file(cli, queries, str(out), lookup, index_dir, *QUERY_FILE_OPTIONS.get(name, []))
    expected = unusable(cli) if status == "unusable" else int(status)
    assert_clean(result, [expected], f"{cli} {name}")
    assert_unchanged(before, f"{cli} {name}")
    if status == "unusable":
        assert "[E654]" in result.err, result.show()
        return
    written = sorted(int(str(record["line"])) for record in jsonl_records(out.read_text(encoding="utf-8")))
    assert written == good, f"{cli} {name}: lines written {written}, expected {good}\n{result.show()}"
    for number in bad:
        assert f"{queries}:{number}:" in result.err, f"line {number} not reported\n{result.show()}"


# --- hostile caption files through fortekit index build -------------------------------------------


def _big_cell_captions(folder: Path) -> Path:
    return big_cell_csv(folder / "big.csv", "id,caption", "a.wav,a dog barks", "c.wav,rain on a roof")


def _deep_captions(folder: Path) -> Path:
    path = folder / "deep.jsonl"
    lines = ['{"id": "a.wav", "caption": "a dog barks"}', '{"id": "b.wav", "caption": '
             + "[" * DEEP_JSON + "]" * DEEP_JSON + "}", '{"id": "c.wav", "caption": "rain on a roof"}']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: name -> (make the file, the ids a built index must hold (None: any), exit status(es) allowed)
CAPTION_FILES: dict[str, tuple[Callable[[Path], Path], list[str] | None, tuple[int, ...]]] = {
    # an id holding a line break could never be removed again (`index remove --ids`): E640
    "separators_jsonl": (_corpus("captions_separators.jsonl"), None, (2,)),
    "separators_csv": (_corpus("captions_separators.csv"), None, (2,)),
    "cr_only_csv": (_corpus("captions_cr.csv"), ["a.wav", "b.wav", "c.wav"], (0,)),
    "big_cell_csv": (_big_cell_captions, ["a.wav", "c.wav"], (0, 2)),
    "deep_jsonl": (_deep_captions, ["a.wav", "c.wav"], (0, 2)),
    "urandom_txt": (lambda folder: hostile("urandom.bin", folder, "urandom.txt"), None, (0, 2)),
    "urandom_csv": (lambda folder: hostile("urandom.bin", folder, "urandom.csv"), None, (0, 2)),
    "latin1_txt": (_corpus("captions_latin1.txt"), None, (0, 2)),
    "utf16_txt": (_corpus("captions_utf16.txt"), None, (2,)),
    "picture_csv": (lambda folder: hostile("picture.png", folder, "picture.csv"), None, (2,)),
    "ansi_txt": (_corpus("captions_ansi.txt"), None, (0, 2)),
}


def _empty_and_long_captions(folder: Path) -> Path:
    path = folder / "lengths.csv"
    long = ("a dog barks " * 9_000)[:100_000]
    path.write_text(f"id,caption\na.wav,\nb.wav,{long}\nc.wav,\x1b[31mrain\u202e on a roof\nd.wav,   \n",
                    encoding="utf-8")
    return path


CAPTION_FILES["empty_and_100_kB_captions"] = (_empty_and_long_captions, None, (0, 2))


def _index_ids(directory: Path) -> list[str]:
    from fortekit.search.index import AudioIndex

    return list(AudioIndex.load(directory).ids)


@pytest.mark.parametrize("name", cases("hostile_caption_files", list(CAPTION_FILES)))
def test_hostile_caption_files_build_an_index_that_answers(name: str, tmp_path: Path, minilm: Any) -> None:
    make, ids, allowed = CAPTION_FILES[name]
    captions = make(tmp_path)
    out = tmp_path / "built.index"
    before = snapshot(captions)
    result = fortekit("index", "build", "--captions", str(captions), "-o", str(out), "--quiet",
                      "--device", "cpu")
    assert_clean(result, allowed, f"index build {name}")
    assert_unchanged(before, f"index build {name}")
    if result.status == 0:
        check_built(out, name)
        held = _index_ids(out)
        if ids is not None:
            assert all(i in held for i in ids), f"{name}: index holds {held}, expected {ids}"
    else:
        assert "[E" in result.err, f"no coded error\n{result.show()}"


# --- hostile index directories: what `fortekit index info/query` and `fortekit search` load --------


def _replace(name: str, content: Callable[[Path], bytes]) -> Callable[[Path], None]:
    def mutate(directory: Path) -> None:
        (directory / name).write_bytes(content(directory / name))
    return mutate


def _drop_last_item(directory: Path) -> None:
    lines = (directory / "items.jsonl").read_bytes().splitlines(keepends=True)
    (directory / "items.jsonl").write_bytes(b"".join(lines[:-1]))


def _deep_second_item(directory: Path) -> None:
    lines = (directory / "items.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = deep_json_line().encode("utf-8") + b"\n"
    (directory / "items.jsonl").write_bytes(b"".join(lines))


#: name -> how the copy of the small index is damaged
BROKEN_INDEXES: dict[str, Callable[[Path], None]] = {
    "index_json_picture": _replace("index.json", lambda _: (HOSTILE / "picture.png").read_bytes()),
    "index_json_deep": _replace("index.json", lambda _: ("[" * DEEP_JSON + "]" * DEEP_JSON).encode()),
    "index_json_empty": _replace("index.json", lambda _: b""),
    "items_deep_line": _deep_second_item,
    "items_urandom": _replace("items.jsonl", lambda _: (HOSTILE / "urandom.bin").read_bytes()),
    "items_one_short": _drop_last_item,
    "items_missing": lambda directory: (directory / "items.jsonl").unlink(),
    "embeddings_urandom": _replace("embeddings.npy", lambda _: (HOSTILE / "urandom.bin").read_bytes()),
    "embeddings_truncated": _replace("embeddings.npy", lambda path: path.read_bytes()[:200]),
}


def _index_commands(directory: Path) -> list[list[str]]:
    return [["index", "info", "--index", str(directory)],
            ["search", "--index", str(directory), "-k", "2", "--device", "cpu", "a dog barks"]]


@pytest.mark.parametrize("name", cases("hostile_index_dirs", list(BROKEN_INDEXES)))
def test_a_damaged_index_is_a_coded_error_and_is_not_touched(
    name: str, tmp_path: Path, index_dir: Path,
) -> None:
    directory = tmp_path / "damaged.index"
    shutil.copytree(index_dir, directory)
    BROKEN_INDEXES[name](directory)
    before = snapshot(*sorted(directory.iterdir()))
    for argv in _index_commands(directory):
        result = fortekit(*argv)
        # fortekit search: an unusable index is bad input (2); the index commands still exit with 1
        assert_clean(result, [2], f"{name}: {' '.join(argv[:2])}")
        assert "[E6" in result.err, f"no coded error\n{result.show()}"
    assert_unchanged(before, name)


def test_an_index_of_separator_captions_round_trips_and_separator_ids_are_refused(
    tmp_path: Path, minilm: Any,
) -> None:
    """Captions with U+2028, U+2029, U+0085, ANSI and U+202E: saved, loaded, queried; ids holding
    them are refused (E640), since `index remove --ids` could never name them again."""
    from fortekit.errors import AudioIndexError
    from fortekit.search.index import AudioIndex

    captions = ["a dog\u2028barks", "rain\u2029on a roof", "birds\x85chirp", "a car engine idles",
                "\x1b[31mthunder\x1b[0m rumbles", "people\u202etalk"]
    for bad in ("b\u2029.wav", "c\x85.wav", "e\u2028.wav", "f\x1b[31m.wav"):
        with pytest.raises(AudioIndexError, match="E640"):
            AudioIndex.from_captions(["a.wav", bad], captions[:2], minilm)
    ids = [f"{name}\u202e.wav" if name == "f" else f"{name}.wav" for name in "abcdef"]
    directory = tmp_path / "separators.index"
    AudioIndex.from_captions(ids, captions, minilm).save(directory)
    before = snapshot(*sorted(directory.iterdir()))
    for argv in _index_commands(directory):
        assert_clean(fortekit(*argv), [0], " ".join(argv[:2]))
    assert _index_ids(directory) == ids
    assert_unchanged(before, "separator index")


single("an_index_of_separator_ids_round_trips")


# --- audio that is read: a 0-sample WAV, another sample rate --------------------------------------


@pytest.fixture(scope="module")
def tiny_clap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    pytest.importorskip("soundfile")
    from plugin_fixtures import save_tiny_clap

    return save_tiny_clap(tmp_path_factory.mktemp("clap"))


#: name -> (the corpus WAVs in the folder, the exit status)
AUDIO_CASES = cases("hostile_audio", [("zero_samples", ("silence_0_samples.wav",), 2),
                                     ("other_rate", ("tone_8khz.wav",), 0),
                                     ("both", ("tone_8khz.wav", "silence_0_samples.wav"), 2)])


@pytest.mark.parametrize(("name", "wavs", "status"), AUDIO_CASES)
def test_audio_files_are_read_or_refused_with_a_code(
    name: str, wavs: tuple[str, ...], status: int, tmp_path: Path, tiny_clap: Path,
) -> None:
    folder = tmp_path / "audio"
    folder.mkdir()
    copies = [hostile(wav, folder) for wav in wavs]
    before = snapshot(*copies)
    out = tmp_path / "audio.index"
    result = fortekit("index", "build", "--audio", str(folder), "-o", str(out), "--backbone", "hf-clap",
                      "--backbone-option", f"model={tiny_clap}", "--device", "cpu", "--quiet")
    assert_clean(result, [status], f"index build --audio {name}")
    assert_unchanged(before, f"index build --audio {name}")
    if status == 0:
        check_built(out, f"audio {name}")
    else:
        assert "[E215]" in result.err and "silence_0_samples.wav" in result.err, result.show()


# --- fortekit parse and fortekit caption ----------------------------------------------------------

PARSE_CASES = cases("hostile_formulas", [
    ("nested_terms", [nested_terms()], "[E003]"),
    ("open_parens", ["(" * 10_000], "[E0"),
    ("bangs", ["!" * 10_000], "[E0"),
    ("bangs_then_atom", ["!" * 10_000 + "P(x)"], None),
    ("malformed_file", ["--file", "formulas_malformed.txt"], "[E0"),
    ("urandom_file", ["--file", "urandom.bin"], None),
    ("ansi_bidi", ["\x1b[31mP(x)\u202e ∧"], "[E0"),
    ("empty", [""], None),
])


@pytest.mark.parametrize(("name", "argv", "code"), PARSE_CASES)
def test_fortekit_parse_hostile(name: str, argv: list[str], code: str | None, tmp_path: Path) -> None:
    for corpus in ("formulas_malformed.txt", "urandom.bin"):
        hostile(corpus, tmp_path)
    argv = [str(tmp_path / a) if a in ("formulas_malformed.txt", "urandom.bin") else a for a in argv]
    result = fortekit("parse", *argv)
    assert_clean(result, [0, 1] if code is None else [1], f"parse {name}")
    if code is not None:
        assert code in result.err, result.show()
    assert "\x1b" not in result.err and "\u202e" not in result.err, f"raw escape echoed\n{result.show()}"


CAPTION_CASES = cases("hostile_captions", [
    ("urandom_file", ["--file", "urandom.bin"], (1,), None),
    ("latin1_file", ["--file", "captions_latin1.txt"], (1,), "[E656]"),
    ("utf16_file", ["--file", "captions_utf16.txt"], (1,), "[E311]"),
    ("ansi_file", ["--file", "captions_ansi.txt"], (0, 1), None),
    ("ansi_file_json", ["--json", "--file", "captions_ansi.txt"], (0, 1), None),
    ("ansi_arg", ["\x1b[31mbarking dog\x1b[0m"], (0,), None),
    ("bidi_arg", ["dog\u202ebarking"], (0,), None),
    ("only_controls", ["\x1b[2J\u202e\u200b"], (1,), "[E300]"),
    ("empty", [""], (1,), "[E300]"),
    ("blank", ["   \t  "], (1,), "[E300]"),
    ("100_kB", [("a dog barks " * 9_000)[:100_000]], (0,), None),
    ("over_100_kB", ["a" * 100_001], (1,), "[E301]"),
    ("open_parens", ["(" * 10_000], (0, 1), None),
    ("bangs", ["!" * 10_000], (0, 1), None),
    ("separators", ["a dog\u2028barks\u2029in the\x85rain"], (0,), None),
])


@pytest.mark.parametrize(("name", "argv", "allowed", "code"), CAPTION_CASES)
def test_fortekit_caption_hostile(
    name: str, argv: list[str], allowed: tuple[int, ...], code: str | None, tmp_path: Path,
) -> None:
    files = ("urandom.bin", "captions_latin1.txt", "captions_utf16.txt", "captions_ansi.txt")
    copies = [hostile(corpus, tmp_path) for corpus in files]
    before = snapshot(*copies)
    argv = [str(tmp_path / a) if a in files else a for a in argv]
    result = fortekit("caption", *argv)
    assert_clean(result, allowed, f"caption {name}")
    if code is not None:
        assert code in result.err, f"{code} not on stderr\n{result.show()}"
    assert "\x1b" not in result.err and "\u202e" not in result.err, f"raw escape echoed\n{result.show()}"
    if "--json" in argv:
        jsonl_records(result.out)
    assert_unchanged(before, f"caption {name}")


# --- fortekit search with hostile query text ------------------------------------------------------

QUERY_TEXT_CASES = cases("hostile_query_texts", [
    "", "   ", "\x1b[31ma dog barks\x1b[0m", "dog\u202ebarking", "a dog\u2028barks", "(" * 10_000,
    "!" * 10_000, "not not not not not rain", "a" * 100_001, "rain without without without",
    "\x00\x01\x02", "∀x (P(x) ∧",
])


@pytest.mark.parametrize("text", QUERY_TEXT_CASES, ids=range(len(QUERY_TEXT_CASES)))
def test_search_with_hostile_text(text: str, index_dir: Path) -> None:
    result = fortekit("search", "--index", str(index_dir), "-k", "2", "--device", "cpu", "--", text)
    assert_clean(result, [0, 1], "search")
    if result.status:
        assert "[E" in result.err, f"no coded error\n{result.show()}"


# --- fortekit eval --beir on a tiny folder with hostile text --------------------------------------


def _beir(folder: Path, corpus_extra: str = "", queries_extra: bytes = b"") -> Path:
    from beir_fixtures import CORPUS, QUERIES, make_beir

    corpus = [dict(row, text=row["text"] + corpus_extra) for row in CORPUS]
    queries = [dict(row, text=row["text"] + corpus_extra) for row in QUERIES]
    make_beir(folder, corpus=corpus, queries=queries)
    if queries_extra:
        with (folder / "queries.jsonl").open("ab") as handle:
            handle.write(queries_extra)
    return folder


BEIR_CASES = cases("hostile_beir", [
    ("separators", "\u2028\u2029\x85 \x1b[31m\u202e", b"", (0,)),
    ("deep_query_line", "", (deep_json_line(DEEP_JSON) + "\n").encode(), (1,)),
    ("undecodable_query_line", "", b'{"_id": "q9", "text": "\xff\xfe"}\n', (0, 1)),
])


@pytest.mark.parametrize(("name", "extra", "line", "allowed"), BEIR_CASES, ids=[c[0] for c in BEIR_CASES])
def test_eval_beir_with_hostile_text(
    name: str, extra: str, line: bytes, allowed: tuple[int, ...], tmp_path: Path, minilm: Any,
) -> None:
    folder = _beir(tmp_path / "beir", extra, line)
    inputs = sorted(p for p in folder.rglob("*") if p.is_file())
    before = snapshot(*inputs)
    out = tmp_path / "out"
    result = fortekit("eval", "--beir", str(folder), "-o", str(out), "--device", "cpu", "--systems",
                      "baseline", "--no-umap")
    assert_clean(result, allowed, f"eval --beir {name}")
    assert_unchanged(before, f"eval --beir {name}")
    if result.status == 0:
        assert json.loads((out / "metrics.json").read_text(encoding="utf-8"))["systems"]["baseline"]
    else:
        assert "[E" in result.err, f"no coded error\n{result.show()}"


# --- hostile option values ------------------------------------------------------------------------

#: (command, its options, allowed exit statuses); QUERIES is q.txt, INDEX the small index, OUT the output.
OPTION_CASES = cases("hostile_options", [
    ("fol-refine", ["--elaborator", "file"], (1, 2)),  # no traceback; 2 (unusable plug-in) or 1 (failed)
    ("fol-refine", ["--backbone", "nope"], (2,)),
    ("fol-refine", ["--backbone-option", "model"], (2,)),
    ("fol-refine", ["--device", "bogus"], (2,)),
    ("fol-refine", ["--max-chars", "0"], (2,)),
    ("fol-refine", ["--tau", "nan"], (2,)),
    ("fol-refine", ["--anchors", "proxy"], (2,)),
    ("fol-refine", ["--cache-dir", "/dev/full/x"], (2,)),
    ("fol-refine", ["--lookup", "picture.png"], (2,)),
    ("search", ["-k", "0"], (2,)),
    ("search", ["--device", "bogus"], (2,)),
    ("search", ["--projection", "/nonexistent/head"], (1,)),  # loaded with the first query: it fails
    ("search", ["--lookup", "picture.png"], (2,)),
    ("search", ["--text-column", "nope"], (2,)),
    ("search", ["--input-format", "xml"], (2,)),
    ("index build", ["--batch-size", "0"], (2,)),
    ("index build", ["--backbone-option", "model"], (2,)),
    ("index build", ["--id-column", "nope"], (2,)),
    ("index build", ["--faiss", "ivf"], (0, 1)),
])


@pytest.mark.parametrize(("command", "options", "allowed"), OPTION_CASES,
                         ids=[f"{c[0]} {' '.join(c[1])}" for c in OPTION_CASES])
def test_hostile_option_values_are_coded_errors(
    command: str, options: list[str], allowed: tuple[int, ...], tmp_path: Path, index_dir: Path,
) -> None:
    queries = write_queries(tmp_path)
    picture = hostile("picture.png", tmp_path)
    captions = tmp_path / "captions.csv"
    captions.write_text("id,caption\na.wav,a dog barks\nb.wav,rain on a roof\n", encoding="utf-8")
    options = [str(picture) if option == "picture.png" else option for option in options]
    out = tmp_path / "out.jsonl"
    before = snapshot(queries, picture, captions)
    common = ["--device", "cpu"] if "--device" not in options else []
    if command == "fol-refine":
        result = refine(str(queries), "-o", str(out), "-B", "1", "-D", "1", "--no-progress",
                        *common, *options)
    elif command == "search":
        result = fortekit("search", "--index", str(index_dir), "--queries", str(queries), "-o", str(out),
                          "--no-progress", *common, *options)
    else:
        out = tmp_path / "built.index"
        result = fortekit("index", "build", "--captions", str(captions), "-o", str(out), "--quiet",
                          *common, *options)
    assert_clean(result, allowed, f"{command} {options}")
    if result.status:
        assert "[E" in result.err or "usage:" in result.err, f"no coded error\n{result.show()}"
    assert_unchanged(before, f"{command} {options}")
    if command == "index build" and result.status == 0:
        check_built(out, f"index build {options}")
    elif command in ("fol-refine", "search"):  # nothing was searched: no record written
        assert not out.exists() or out.stat().st_size == 0, out.read_bytes()[:200]


# --- a handful in a subprocess: tracebacks printed by the interpreter itself ----------------------

#: What a subprocess case gives back: its result, the snapshot of its inputs, the status and a code to see.
SubRun = tuple[Result, dict[Path, bytes | None], int, str]


def _sub_refine_picture(folder: Path) -> SubRun:
    queries = write_queries(folder)
    target = hostile("picture.png", folder)
    before = snapshot(queries, target)
    result = run_subprocess("fol-refine", [str(queries), "-o", str(target), "-q"], cwd=folder)
    return result, before, 2, "[E662]"


def _sub_parse_nested(folder: Path) -> SubRun:
    path = folder / "nested.txt"
    path.write_text(nested_terms() + "\n" + "(" * 10_000 + "\n" + "!" * 10_000 + "\n", encoding="utf-8")
    before = snapshot(path)
    result = run_subprocess("fortekit", ["parse", nested_terms(), "--file", str(path)], cwd=folder)
    return result, before, 1, "[E003]"


def _sub_caption_urandom(folder: Path) -> SubRun:
    path = hostile("urandom.bin", folder)
    before = snapshot(path)
    return run_subprocess("fortekit", ["caption", "--file", str(path)], cwd=folder), before, 1, "[E656]"


def _small_lookup(folder: Path) -> Path:
    """A lookup table answering QUERIES, so that a subprocess loads no model."""
    lookup_file = folder / "lookup.jsonl"
    with ResultWriter(lookup_file) as writer:
        for line, query in enumerate(QUERIES, start=1):
            writer.write(result_record(line, query, {"refined_text": query, "phi_star": "∃x Dog(x)"}))
    return lookup_file


def _sub_refine_dev_full(folder: Path) -> SubRun:
    queries = write_queries(folder)
    lookup_file = _small_lookup(folder)
    before = snapshot(queries, lookup_file)
    argv = [str(queries), "-o", "/dev/full", "--lookup", str(lookup_file)]
    return run_subprocess("fol-refine", argv, cwd=folder), before, 1, "[E661]"


def _sub_index_deep(folder: Path) -> SubRun:
    path = folder / "deep.jsonl"
    path.write_text('{"id": "a", "caption": ' + "[" * DEEP_JSON + "]" * DEEP_JSON + "}\n", encoding="utf-8")
    before = snapshot(path)
    argv = ["index", "build", "--captions", str(path), "-o", str(folder / "x.index"), "--quiet"]
    return run_subprocess("fortekit", argv, cwd=folder), before, 2, "[E"


def _sub_search_file(folder: Path, index_dir: Path) -> SubRun:
    queries = hostile("queries_undecodable.txt", folder)
    before = snapshot(queries)
    argv = ["search", "--index", str(index_dir), "--queries", str(queries), "-o", str(folder / "out.jsonl"),
            "--device", "cpu"]
    return run_subprocess("fortekit", argv, cwd=folder), before, 1, "[E656]"


def _sub_stdout_full(command: str, *argv: str) -> Callable[[Path], SubRun]:
    """`command argv > /dev/full`: standard output on a full disk."""
    def run(folder: Path) -> SubRun:
        queries = write_queries(folder)
        names = {"q.txt": str(queries), "lookup.jsonl": str(_small_lookup(folder))}
        args = [names.get(arg, arg) for arg in argv]
        result = run_subprocess(command, args, cwd=folder, stdout="/dev/full")
        return result, snapshot(queries), 1, "No space left"
    return run


SUBPROCESS: dict[str, Callable[[Path], SubRun]] = {
    "fol-refine -o picture.png": _sub_refine_picture,
    "parse 10,000 nested terms": _sub_parse_nested,
    "caption --file urandom": _sub_caption_urandom,
    "fol-refine -o /dev/full": _sub_refine_dev_full,
    "index build deep jsonl": _sub_index_deep,
    "parse > /dev/full": _sub_stdout_full("fortekit", "parse", "P(x)", "--file", "q.txt"),
    "fol-refine -o - > /dev/full": _sub_stdout_full("fol-refine", "q.txt", "-o", "-",
                                                    "--lookup", "lookup.jsonl"),
}
SUBPROCESS_CASES = cases("subprocess", [*SUBPROCESS, "search -o undecodable"])


@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_in_a_subprocess_no_traceback(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if "dev/full" in name and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    if name == "search -o undecodable":
        result, before, status, code = _sub_search_file(tmp_path, request.getfixturevalue("index_dir"))
    else:
        result, before, status, code = SUBPROCESS[name](tmp_path)
    assert_clean(result, [status], name)
    assert code in result.err, f"{code} not on stderr\n{result.show()}"
    assert_unchanged(before, name)


# --- random input (hypothesis) ------------------------------------------------------------------

FORMATS = ("txt", "jsonl", "csv", "tsv")


@st.composite
def query_file(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(FORMATS))
    if kind == "jsonl":
        return kind, draw(jsonl_file())
    if kind in ("csv", "tsv"):
        content = draw(csv_file(["query", "other"]))
        return kind, content.replace(b",", b"\t") if kind == "tsv" else content
    return kind, draw(line_file())


@examples("read_queries_random", 40, explicit=2)
@given(case=query_file())
@example(case=("csv", b"query,other\ra\r"))  # CR-only line ends
@example(case=("jsonl", b'{"query": "a\xe2\x80\xa8b"}\n'))  # U+2028 in a record
def test_read_queries_reports_every_random_line(case: tuple[str, bytes]) -> None:
    import tempfile

    kind, content = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"q.{kind}"
        path.write_bytes(content)
        try:
            lines = list(read_queries(path))
        except QueryFileError as exc:  # an unusable file: coded
            assert CODED.match(str(exc)), str(exc)
            return
        numbers = [line.line for line in lines]
        assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers), numbers
        for line in lines:
            assert (line.query is None) == (line.problem is not None), line
            assert line.problem is None or CODED.match(line.problem), line.problem
            assert line.query is None or (isinstance(line.query, str) and line.query), line
        assert path.read_bytes() == content


@st.composite
def caption_file(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(("txt", "jsonl", "csv", "decodable txt")))
    if kind == "decodable txt":  # UTF-8 throughout, so that an index is built more often than not
        lines = draw(st.lists(query_text | nasty_text, min_size=1, max_size=5))
        return "txt", "\n".join(lines).encode("utf-8")
    if kind == "jsonl":
        return kind, draw(jsonl_file(key="caption"))
    if kind == "csv":
        return kind, draw(csv_file(["id", "caption"]))
    return kind, draw(line_file())


@examples("read_caption_file_random", 40, explicit=2)
@given(case=caption_file())
@example(case=("csv", b"id,caption\ra,b\r"))  # CR-only line ends
@example(case=("jsonl", b'{"id": "a\xc2\x85", "caption": "a\xe2\x80\xa9b"}\n'))  # U+0085, U+2029
def test_read_caption_file_reads_or_refuses_with_a_code(case: tuple[str, bytes]) -> None:
    import tempfile

    kind, content = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"captions.{kind}"
        path.write_bytes(content)
        try:
            table = read_caption_file(path)
        except AudioIndexError as exc:
            assert CODED.match(str(exc)), str(exc)
            return
        assert len(table.ids) == len(table.captions) > 0
        assert all(isinstance(i, str) and i for i in table.ids), table.ids


@examples("index_build_random", 8)
@given(case=caption_file())
def test_index_build_random_files_are_built_whole_or_refused(
    case: tuple[str, bytes], tmp_path_factory: pytest.TempPathFactory, minilm: Any,
) -> None:
    kind, content = case
    folder = tmp_path_factory.mktemp("build")
    path = folder / f"captions.{kind}"
    path.write_bytes(content)
    out = folder / "random.index"
    result = fortekit("index", "build", "--captions", str(path), "-o", str(out), "--quiet",
                      "--device", "cpu")
    assert_clean(result, [0, 2], f"index build random .{kind}")
    assert path.read_bytes() == content
    if result.status == 0:
        check_built(out, f"random .{kind}")


@examples("search_file_random", 20, explicit=1)
@given(case=query_file())
@example(case=("csv", b"query,other\n\r\x00\n"))  # a bare CR, then NUL
def test_fortekit_search_random_query_files(
    case: tuple[str, bytes], tmp_path_factory: pytest.TempPathFactory, index_dir: Path,
) -> None:
    kind, content = case
    folder = tmp_path_factory.mktemp("search")
    path = folder / f"q.{kind}"
    path.write_bytes(content)
    out = folder / "out.jsonl"
    result = fortekit("search", "--index", str(index_dir), "--queries", str(path), "-o", str(out), "-k", "2",
                      "--device", "cpu", "--no-progress")
    assert_clean(result, [0, 1], f"search -o, random .{kind}")
    assert path.read_bytes() == content
    if out.exists():
        records = jsonl_records(out.read_text(encoding="utf-8"))
        assert all(isinstance(r.get("line"), int) for r in records), records


@examples("fol_refine_random", 5)
@given(kind=st.sampled_from(["txt", "jsonl"]), first=query_text, rest=line_file(max_lines=2))
def test_fol_refine_random_query_files(
    kind: str, first: str, rest: bytes, tmp_path_factory: pytest.TempPathFactory, lookup: Path,
) -> None:
    """A query that is searched (-B 1 -D 1), then random lines, some of them searched too."""
    line = json.dumps({"query": first}) if kind == "jsonl" else first
    content = line.encode("utf-8") + b"\n" + rest
    folder = tmp_path_factory.mktemp("refine")
    path = folder / f"q.{kind}"
    path.write_bytes(content)
    out = folder / "out.jsonl"
    result = refine(str(path), "-o", str(out), "--lookup", str(lookup), "-B", "1", "-D", "1",
                    "--device", "cpu", "--no-progress")
    assert_clean(result, [0, 1], f"fol-refine random .{kind}")
    assert path.read_bytes() == content
    if out.exists():
        jsonl_records(out.read_text(encoding="utf-8"))


@examples("caption_random", 30)
@given(texts=st.lists(nasty_text | any_text | query_text, min_size=1, max_size=3), content=line_file())
def test_fortekit_caption_random_texts_and_files(
    texts: list[str], content: bytes, tmp_path_factory: pytest.TempPathFactory,
) -> None:
    path = tmp_path_factory.mktemp("caption") / "captions.txt"
    path.write_bytes(content)
    result = fortekit("caption", "--file", str(path), "--", *texts)
    assert_clean(result, [0, 1], "caption random")
    assert "\x1b" not in result.err, f"raw escape echoed\n{result.show()}"
    assert path.read_bytes() == content


formula_text = st.lists(st.sampled_from([*"PQxy(),.∀∃¬∧∨→↔-&|>!~= ", "all ", "exists ", "Bird", "A("]),
                        max_size=30).map("".join)


@examples("parse_random", 40)
@given(texts=st.lists(formula_text | nasty_text, min_size=1, max_size=3))
def test_fortekit_parse_random_formulas(texts: list[str]) -> None:
    result = fortekit("parse", "--", *texts)
    assert_clean(result, [0, 1], "parse random")
    assert "\x1b" not in result.err, f"raw escape echoed\n{result.show()}"


@examples("query_text_random", 8)
@given(text=nasty_text | any_text | query_text)
def test_search_random_text(text: str, index_dir: Path) -> None:
    argv = ["search", "--index", str(index_dir), "-k", "2", "--device", "cpu", "--", text]
    assert_clean(fortekit(*argv), [0, 1], "search")


# --- the count --------------------------------------------------------------------------------------

def test_hostile_input_count() -> None:
    """Print how many hostile inputs this file tries (parametrised cases + hypothesis examples)."""
    total = sum(COUNTS.values())
    detail = ", ".join(f"{name} {count}" for name, count in COUNTS.items())
    print(f"\nhostile inputs tried by tests/test_fuzz_hostile.py: {total} ({detail})")
    assert total == sum(COUNTS.values()) > 0
