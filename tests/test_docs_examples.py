"""The example outputs in README.md and docs/*.md are the code's own (scripts/regen_docs.py).

Blocks marked ``<!-- regen: ... -->`` (parse, caption, verbalise, formula examples: about
10 s in all) are checked every time. Blocks marked ``<!-- regen-slow: ... -->`` run Stage 1
(fol-refine over examples/queries.txt, ``--explain``, a JSONL record, the Refiner example)
and docs/README.md's explained search (an index of the bundled 3,000 captions): they are
checked too, side by side with the others (under a minute in all on the shared 2-core
machine), unless ``FORTEKIT_SKIP_SLOW_DOCS=1`` is set. The command lists of README.md and
docs/README.md are checked by tests/test_readme_commands.py. A failure prints the diff;
``python scripts/regen_docs.py`` rewrites the blocks from the code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import regen_docs_module

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "regen_docs.py"


regen = regen_docs_module()


def _check(*flags: str) -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check", *flags], cwd=REPO,
                          capture_output=True, text=True, encoding="utf-8")  # fmt: skip
    assert proc.returncode == 0, (
        "a documented example no longer matches the code's output; run "
        f"`python scripts/regen_docs.py` and review the diff:\n{proc.stdout}\n{proc.stderr[-3000:]}"
    )


def test_the_docs_mark_the_examples_that_show_output() -> None:
    blocks = [b for path in regen.DOCS for b in regen.find_blocks(path, path.read_text("utf-8").split("\n"))]
    marked = {(b.path.name, b.command.split()[0], b.slow) for b in blocks}
    marked |= {(b.path.name, " ".join(b.command.split()[:5]), b.slow) for b in blocks}
    assert ("refine.md", "fol-refine", True) in marked
    assert {
        ("fol.md", "python", False),
        ("verbalise.md", "python", False),
        ("parser.md", "python", False),
        ("README.md", "python", False),
        ("refine.md", "python", True),
        ("README.md", "fortekit index build --captions examples/audiocaps_train_sample.csv", True),
    } <= marked
    assert len(blocks) >= 9


def test_doc_examples_match_the_code() -> None:
    """Every marked block at once: the Python blocks share one interpreter, the fol-refine runs
    go beside it (the slow ones stay out with FORTEKIT_SKIP_SLOW_DOCS=1)."""
    _check(*(["--skip-slow"] if os.environ.get("FORTEKIT_SKIP_SLOW_DOCS") == "1" else []))


def test_normalise_hides_what_varies_by_machine() -> None:
    text = ("Loading weights: 100%|██████| 103/103 [00:00<00:00, 9.1 it/s]\n"
            "fol-refine: 12 refined in 37.6 s; results: /tmp/regen-x/refined.tsv\n"
            "stage 12.5 ms\r\n\n")  # fmt: skip
    assert regen.normalise(text, "/tmp/regen-x") == [
        "fol-refine: 12 refined in N.N s; results: refined.tsv",
        "stage N.N ms",
    ]


def test_keep_lines_elides_the_gaps() -> None:
    lines = [str(i) for i in range(1, 11)]
    assert regen.keep_lines(lines, "1-2,5,-2") == ["1", "2", "...", "5", "...", "9", "10"]


def test_python_blocks_get_their_outputs_where_they_showed_them() -> None:
    code = ["x = 'a'", "x * 2      # 'zz'  a note", "x.upper()   # explains, not an output",
            "for c in 'ab':", "    print(c)", "# old", "len(x)"]  # fmt: skip
    results = regen.execute_python("\n".join(code))
    assert regen.rewrite_python(code, results) == [
        "x = 'a'", "x * 2      # 'aa'  a note", "x.upper()   # 'A'",
        "for c in 'ab':", "    print(c)", "# a", "# b", "len(x)"]  # fmt: skip


def test_python_values_that_are_not_plain_are_not_written() -> None:
    code = ["{'a': 1}   # a dict", "object()   # an object"]
    results = regen.execute_python("\n".join(code))
    assert regen.rewrite_python(code, results) == code


def test_a_block_that_drifted_is_rewritten(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("text\n<!-- regen: echo hello && echo in 3.2 s -->\n```console\n$ old\n```\n", "utf-8")
    changed = regen.regenerate([doc])
    assert (
        changed[doc] == "text\n<!-- regen: echo hello && echo in 3.2 s -->\n```console\n"
        "$ echo hello\nhello\n$ echo in 3.2 s\nin N.N s\n```\n"
    )
    doc.write_text(changed[doc], "utf-8")
    assert regen.regenerate([doc]) == {}


def test_float_noise_after_the_fourth_decimal_is_not_drift(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    text = "<!-- regen: echo F=0.5067391 -->\n```console\n$ echo F=0.5067391\nF=0.5067388\n```\n"
    doc.write_text(text, "utf-8")
    assert regen.regenerate([doc]) == {}
    doc.write_text(text.replace("F=0.5067388", "F=0.5068"), "utf-8")
    assert doc in regen.regenerate([doc])


def test_the_script_s_own_examples() -> None:
    import doctest

    assert doctest.testmod(regen).failed == 0
