"""Every command of README.md and docs/*.md runs as written.

Each command of their ```bash blocks that starts with ``.venv/bin/fortekit``,
``.venv/bin/fol-refine``, ``fortekit`` or ``fol-refine`` (found by
``scripts/regen_docs.py``'s ``shell_commands``, beside the example outputs that
tests/test_docs_examples.py checks) must parse with the real argument parsers (a fortekit
warning is an error in the tests). Commands that need files a user brings
(``clips.csv``, ``CLOTHO.csv``) are only parsed.

The quick start of docs/README.md is also run for real, in a temporary folder, on the
first 300 captions of the bundled example file: the index first, then the other commands
side by side (about a minute on a shared 2-core CPU; ``FORTEKIT_SKIP_SLOW_DOCS=1`` leaves it out, as it
leaves out the slow doc examples).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from conftest import regen_docs_module

from fortekit.search.cli import build_parser, build_refine_parser

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]  # not docs/dev/: logs of the past
#: Placeholders a page may use for what the reader supplies, and what the test puts there.
PLACEHOLDERS = {"REPOSITORY_URL": "https://example.org/fortekit.git"}
#: The quick start's commands that exit with 1 on purpose (examples/queries.txt has two bad lines).
EXPECTED_STATUS = {"fol-refine examples/queries.txt": 1}
SAMPLE_ROWS = 300


regen = regen_docs_module()


def _commands() -> list[tuple[str, int, str]]:
    found = []
    for page in PAGES:
        for line, command in regen.shell_commands(page.read_text("utf-8")):
            found.append((page.relative_to(REPO).as_posix(), line, command))
    return found


def _argv(command: str) -> tuple[str, list[str]]:
    """The program (``fortekit`` or ``fol-refine``) and its arguments, placeholders filled in."""
    for placeholder, value in PLACEHOLDERS.items():
        command = command.replace(placeholder, value)
    words = shlex.split(command)
    return Path(words[0]).name, words[1:]


COMMANDS = _commands()


def test_the_pages_have_commands() -> None:
    pages = {page for page, _, _ in COMMANDS}
    assert {"README.md", "docs/README.md"} <= pages
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize(("page", "line", "command"), COMMANDS, ids=[f"{p}:{n}" for p, n, _ in COMMANDS])
def test_every_command_parses(page: str, line: int, command: str) -> None:
    program, argv = _argv(command)
    parser = build_parser() if program == "fortekit" else build_refine_parser()
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"{page}:{line}: `{command}` does not parse (exit {exc.code}):\n{stderr.getvalue()}")
        except Warning as warning:  # fortekit's warnings are errors in the tests
            pytest.fail(f"{page}:{line}: `{command}` warns: {warning}")


def _quick_start() -> tuple[list[str], str]:
    """The shell commands and the Python block of docs/README.md's "Quick start"."""
    text = (REPO / "docs" / "README.md").read_text("utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [command for _, command in regen.shell_commands(section)]
    python = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(python) == 1, "the quick start has one Python block"
    return commands, python[0]


def test_the_quick_start_is_complete() -> None:
    commands, python = _quick_start()
    programs = [" ".join(command.split()[:3]) for command in commands]
    assert ".venv/bin/fortekit index build" in programs
    assert any(c.startswith(".venv/bin/fortekit search") and "--explain" in c for c in commands)
    assert any(c.startswith(".venv/bin/fol-refine") for c in commands)
    assert "fortekit.Retriever" in python
    assert "bash scripts/demo.sh" in (REPO / "docs" / "README.md").read_text("utf-8")


@pytest.mark.skipif(os.environ.get("FORTEKIT_SKIP_SLOW_DOCS") == "1", reason="FORTEKIT_SKIP_SLOW_DOCS=1")
def test_the_quick_start_runs(tmp_path: Path) -> None:
    """The quick start's commands in turn, from a folder laid out like the repository."""
    if not (REPO / ".venv" / "bin" / "fortekit").exists():
        pytest.skip("no .venv/bin/fortekit (run scripts/setup.sh)")
    commands, python = _quick_start()
    (tmp_path / ".venv").symlink_to(REPO / ".venv")
    examples = tmp_path / "examples"
    examples.mkdir()
    lines = (REPO / "examples" / "audiocaps_train_sample.csv").read_text("utf-8").splitlines(keepends=True)
    (examples / "audiocaps_train_sample.csv").write_text("".join(lines[: SAMPLE_ROWS + 1]), "utf-8")
    (examples / "queries.txt").write_text((REPO / "examples" / "queries.txt").read_text("utf-8"), "utf-8")
    env = regen.environment()
    build = [c for c in commands if c.startswith(".venv/bin/fortekit index build")]
    assert len(build) == 1, "the quick start builds one index"
    _finish(build[0], _start(build[0], tmp_path, env))
    assert (tmp_path / "clips.index").is_dir()
    # the rest only read the index: side by side, so the test stays near a minute
    python_file = tmp_path / "quick_start.py"
    python_file.write_text(python, "utf-8")
    rest = [c for c in commands if c not in build] + [f"{REPO / '.venv' / 'bin' / 'python'} {python_file}"]
    running = [(command, _start(command, tmp_path, env)) for command in rest]
    outputs = [_finish(command, proc) for command, proc in running]
    assert (tmp_path / "refined.jsonl").stat().st_size > 0
    assert "Dog(x)" in outputs[-1] and "Bird(x)" in outputs[-1]


def _start(command: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(shlex.split(command), cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8")  # fmt: skip


def _finish(command: str, proc: subprocess.Popen[str]) -> str:
    """Wait for PROC (a guard of 10 minutes against a hang); its stdout, once its status is checked."""
    stdout, stderr = proc.communicate(timeout=600)
    expected = next((status for start, status in EXPECTED_STATUS.items() if start in command), 0)
    assert proc.returncode == expected, f"`{command}` exited {proc.returncode}:\n{stderr[-3000:]}"
    assert "Traceback" not in stderr, stderr[-3000:]
    return stdout


def test_the_start_page_lists_every_page() -> None:
    start = (REPO / "docs" / "README.md").read_text("utf-8")
    linked = set(re.findall(r"\]\(([\w/]+\.md)\)", start))
    pages = {path.name for path in (REPO / "docs").glob("*.md")} - {"README.md"}
    assert pages <= linked, f"docs/README.md does not list {sorted(pages - linked)}"
    assert "dev/README.md" in linked
    assert all((REPO / "docs" / name).exists() for name in linked), "a link of docs/README.md is broken"


def test_the_bundled_captions_read_as_audiocaps_clips_and_an_unknown_header_says_what_to_name(
        tmp_path: Path) -> None:
    from fortekit.errors import AudioIndexError
    from fortekit.search.index.sources import read_caption_file

    sample = REPO / "examples" / "audiocaps_train_sample.csv"
    clips = read_caption_file(sample)  # an AudioCaps CSV: one item per clip, no column options
    table = read_caption_file(sample, id_column="youtube_id", caption_column="caption")
    assert len(table.ids) == 3000 and all(table.captions)
    assert clips.ids == list(dict.fromkeys(table.ids)) and all(clips.captions)
    other = tmp_path / "clips.csv"
    other.write_text("clip,description\na.wav,rain\n", encoding="utf-8")
    with pytest.raises(AudioIndexError, match=r"\[E615\]") as error:
        read_caption_file(other)
    message = str(error.value)
    assert "'_id', 'id', 'file_name'" in message and "neither a Clotho nor an AudioCaps" in message
    assert "--id-column clip --text-column description" in message
