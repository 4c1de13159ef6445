"""Regenerate the example outputs in README.md and docs/*.md from the code, so docs cannot drift.

An example whose output comes from running fortekit has a marker on the line just before
its fenced block::

    <!-- regen: fol-refine examples/queries.txt -o {tmp}/refined.tsv && cut -f1-3 {tmp}/refined.tsv -->
    <!-- regen-slow: fol-refine --query "a person talking" --explain ## keep=1-10,-3 -->
    <!-- regen: python -->
    <!-- regen-slow: python ## setup=queries = ["a dog barking"] -->

Shell markers: the commands (split at `` && ``) run in turn from the repository root, the
project's ``.venv/bin`` first on PATH, offline, ``{tmp}`` a fresh temporary folder. The block
becomes ``$ COMMAND`` (``{tmp}/`` left out) and its stdout and stderr, normalised: wall times
read ``N.N s``/``N.N ms``, the temporary and repository paths are left out, progress bars
dropped. An exit status of 2 or more stops the script. ``## keep=1-10,-3`` keeps lines 1-10
and the last 3 of the last command's output (``...`` in gaps); ``## echo=off`` hides ``$`` lines.

Python markers: the ```python block runs statement by statement in one namespace (``##
setup=CODE`` first, unseen). What a statement prints, and an expression's repr when it is a
plain str/number/bool or a tuple/list of those, is written where the block shows output:
comment lines (``# ...``) right after it, or its trailing comment (after two spaces: a note,
kept). ``-slow`` marks blocks that run Stage 1 (``--skip-slow``, ``--only-slow``).

Not covered here (no output shown, or it needs data outside the repo): docs/retriever.md's
command list and docs/refine.md's offline regime; docs/audio_index.md's ``index
build`` and ``search``, every ``parse-report``, ``vocab``, ``eval`` and benchmark output and
docs/refine.md's "Measured" table (../shared/data); docs/plugins.md's ``pip install``;
docs/retriever.md's Python block (it needs an index). The command lists of README.md and
docs/README.md are parsed, and docs/README.md's quick start is run, by
tests/test_readme_commands.py (with :func:`shell_commands`); docs/dev/README.md says which
test re-runs what.

Usage::

    python scripts/regen_docs.py            # rewrite every marked block
    python scripts/regen_docs.py --check    # exit 1 and print a diff when a block differs
"""

from __future__ import annotations

import argparse
import ast
import difflib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import tokenize
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- regen(?P<slow>-slow)?: (?P<body>.*?) -->\s*$")
PROGRESS = re.compile(r"Loading weights|\d+%\|| it/s\]|s/it\]|^\s*\d+/\d+ \[")


@dataclass
class Block:
    """One marked example: the marker's text and where its fenced block's body lies."""

    path: Path
    body: str  # the marker's text after "regen:"
    slow: bool
    start: int  # index of the first line inside the fence
    end: int  # index of the closing fence

    @property
    def command(self) -> str:
        """The command(s) or ``python``, without the options.

        >>> Block(Path("x.md"), "fortekit plugins ## keep=1-2", False, 0, 0).command
        'fortekit plugins'
        """
        return self.body.split(" ## ")[0].strip()

    def option(self, name: str) -> str | None:
        """The value of the marker's ``## NAME=VALUE`` option, None when absent.

        >>> Block(Path("x.md"), "fortekit plugins ## keep=1-2", False, 0, 0).option("keep")
        '1-2'
        """
        for part in self.body.split(" ## ")[1:]:
            key, _, value = part.partition("=")
            if key.strip() == name:
                return value.strip()
        return None


def find_blocks(path: Path, lines: list[str]) -> list[Block]:
    """The marked blocks of one Markdown file (its lines without line ends).

    >>> find_blocks(Path("x.md"), ["<!-- regen: fortekit plugins -->", "```console", "old", "```"])[0].end
    3
    """
    blocks = []
    for i, line in enumerate(lines):
        match = MARKER.match(line)
        if not match:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            raise SystemExit(f"{path}:{i + 1}: a regen marker must be followed by a fenced block")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise SystemExit(f"{path}:{i + 1}: the fenced block after the marker is not closed")
        blocks.append(Block(path, match["body"], bool(match["slow"]), i + 2, end))
    return blocks


COMMAND_PREFIXES = (".venv/bin/fortekit ", ".venv/bin/fol-refine ", "fortekit ", "fol-refine ")


def shell_commands(text: str, prefixes: tuple[str, ...] = COMMAND_PREFIXES) -> list[tuple[int, str]]:
    """The commands of a Markdown text's ```bash blocks that start with one of PREFIXES.

    Lines ending in a backslash are joined with the next; a comment (`` #`` after a space) is
    dropped. Each command comes with the 1-based line it starts on.

    >>> page = "```bash\\nfortekit plugins   # list\\nfortekit parse x \\\\\\n    --style ascii\\nls\\n```"
    >>> shell_commands(page)
    [(2, 'fortekit plugins'), (3, 'fortekit parse x --style ascii')]
    """
    commands: list[tuple[int, str]] = []
    inside, pending, start = False, "", 0
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            inside, pending = line.strip() == "```bash", ""
            continue
        if not inside:
            continue
        if not pending:
            start = number
        line = _strip_comment(line)
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        command = (pending + line.strip()).strip()
        pending = ""
        if command.startswith(prefixes):
            commands.append((start, command))
    return commands


def _strip_comment(line: str) -> str:
    """LINE without its shell comment (a ``#`` that starts a word, outside quotes).

    >>> _strip_comment('fortekit search "a #1 hit" -k 3   # three')
    'fortekit search "a #1 hit" -k 3'
    """
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def normalise(text: str, tmp: str) -> list[str]:
    """Machine-specific parts of a command's output made stable; progress bars dropped.

    >>> normalise("done in 37.6 s; 12.25 ms each; results: /tmp/x/r.tsv\\n", "/tmp/x")
    ['done in N.N s; N.N ms each; results: r.tsv']
    """
    text = text.replace(tmp + "/", "").replace(tmp, ".").replace(str(REPO) + "/", "")
    text = re.sub(r"\b\d+(?:\.\d+)? ms\b", "N.N ms", text)
    text = re.sub(r"\bin \d+(?:\.\d+)? s\b", "in N.N s", text)
    out = []
    for line in text.replace("\r\n", "\n").split("\n"):
        line = line.split("\r")[-1].rstrip()
        if not PROGRESS.search(line):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return out


def keep_lines(lines: list[str], spec: str) -> list[str]:
    """The lines a ``keep=`` spec names (1-based ranges, negative from the end), ``...`` in gaps.

    >>> keep_lines(["a", "b", "c", "d", "e"], "1-2,-1")
    ['a', 'b', '...', 'e']
    """
    wanted: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if part.startswith("-"):  # the last N lines
            wanted.update(range(max(0, len(lines) + int(part)), len(lines)))
        else:
            first, _, last = part.partition("-")
            wanted.update(range(int(first) - 1, int(last or first)))
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in wanted:
            out.append(line)
        elif not out or out[-1] != "...":
            out.append("...")
    return out


def environment() -> dict[str, str]:
    """The commands' environment: the project's .venv first on PATH, offline, no bars.

    >>> environment()["HF_HUB_OFFLINE"]
    '1'
    """
    env = dict(os.environ)
    env["PATH"] = f"{REPO / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    offline = dict(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TQDM_DISABLE="1", PYTHONHASHSEED="0")
    return {**env, **offline, "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8", "COLUMNS": "120"}


def run_shell(block: Block) -> list[str]:
    """The new body of a shell block: each command after ``$ `` and its normalised output.

    >>> run_shell(Block(Path("x.md"), "echo hi > {tmp}/a && cat {tmp}/a", False, 0, 0))
    ['$ echo hi > a', '$ cat a', 'hi']
    """
    body: list[str] = []
    commands = [c.strip() for c in block.command.split(" && ")]
    with tempfile.TemporaryDirectory(prefix="regen-") as tmp:
        for n, command in enumerate(commands):
            proc = subprocess.run(
                command.replace("{tmp}", tmp), shell=True, cwd=REPO, env=environment(),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8",
            )  # fmt: skip
            if proc.returncode >= 2:
                failed = f"{block.path.name}: `{command}` exited with {proc.returncode}"
                raise SystemExit(f"{failed}:\n{proc.stdout}")
            output = normalise(proc.stdout, tmp)
            if (keep := block.option("keep")) and n == len(commands) - 1:
                output = keep_lines(output, keep)
            if block.option("echo") != "off":
                body.append(f"$ {command.replace('{tmp}/', '').replace('{tmp}', '.')}")
            body += output
    return body


def _plain(value: object) -> bool:
    items = value if isinstance(value, (tuple, list)) else [value]
    return all(isinstance(v, (str, int, float, bool)) for v in items)


def execute_python(code: str, setup: str = "") -> list[tuple[int, int, list[str]]]:
    """Run CODE statement by statement: (first line, last line, output lines) of each one.

    >>> execute_python("x = 2\\nx + 1\\nprint('a')")
    [(1, 1, []), (2, 2, ['3']), (3, 3, ['a'])]
    """
    namespace: dict[str, object] = {"__name__": "__regen__"}
    exec(compile(setup, "<setup>", "exec"), namespace)
    results = []
    for stmt in ast.parse(code).body:
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            if isinstance(stmt, ast.Expr):
                value = eval(compile(ast.Expression(stmt.value), "<doc>", "eval"), namespace)
                if value is not None and _plain(value):
                    print(repr(value))
            else:
                exec(compile(ast.Module([stmt], []), "<doc>", "exec"), namespace)
        out = buffer.getvalue().rstrip("\n")
        results.append((stmt.lineno, stmt.end_lineno or stmt.lineno, out.split("\n") if out else []))
    return results


def _trailing_comment(line: str) -> int | None:
    """Column where the line's trailing comment starts (None when it has none)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if token.type == tokenize.COMMENT:
                return token.start[1] if line[: token.start[1]].strip() else None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return None


def rewrite_python(code: list[str], results: list[tuple[int, int, list[str]]]) -> list[str]:
    """CODE with each statement's output written where the block already shows output.

    >>> rewrite_python(["1 + 1   # 3  two", "print(1)", "# 0"], [(1, 1, ["2"]), (2, 2, ["1"])])
    ['1 + 1   # 2  two', 'print(1)', '# 1']
    """
    new = list(code)
    replaced: dict[int, list[str]] = {}
    for _first, last, output in results:
        if not output:
            continue
        after = last
        while after < len(code) and code[after].startswith("# "):
            after += 1
        if after > last:
            replaced[last] = [f"# {line}" for line in output]
            for i in range(last, after):
                new[i] = ""
            continue
        column = _trailing_comment(code[last - 1])
        if column is not None and len(output) == 1:
            gap = re.search(r"\s{2,}\S", code[last - 1][column + 1 :].strip())
            text = f"# {output[0]}" + (code[last - 1][column + 1 :].strip()[gap.start() :] if gap else "")
            new[last - 1] = code[last - 1][:column] + text
    out: list[str] = []
    for i, line in enumerate(new):
        if not (line == "" and code[i].startswith("# ")):
            out.append(line)
        out.extend(replaced.get(i + 1, []))
    return out


def run_python_blocks(blocks: list[Block], lines_of: dict[Path, list[str]]) -> dict[int, list[str]]:
    """New bodies of the Python blocks, all run in one fresh interpreter of the project's .venv.

    >>> run_python_blocks([], {})
    {}
    """
    jobs = [{"code": "\n".join(lines_of[b.path][b.start : b.end]), "setup": b.option("setup") or ""}
            for b in blocks]  # fmt: skip
    if not jobs:
        return {}
    python = REPO / ".venv" / "bin" / "python"
    proc = subprocess.run(
        [str(python if python.exists() else sys.executable), __file__, "--exec-python"],
        input=json.dumps(jobs), cwd=REPO, env=environment(), capture_output=True, text=True,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"a Python example failed:\n{proc.stderr[-4000:]}")
    results = json.loads(proc.stdout.splitlines()[-1])
    return {
        i: rewrite_python(lines_of[b.path][b.start : b.end], [tuple(r) for r in res])
        for i, (b, res) in enumerate(zip(blocks, results, strict=True))
    }


def _exec_python_jobs() -> None:
    """The child's side of run_python_blocks: read jobs from stdin, print their results as JSON."""
    jobs = json.loads(sys.stdin.read())
    results = []
    for job in jobs:
        os.chdir(REPO)
        results.append(execute_python(job["code"], job["setup"]))
    sys.stdout.write("\n" + json.dumps(results) + "\n")


def _loose(lines: list[str]) -> list[str]:
    """Decimals cut after the 4th digit: another CPU's float noise is not drift."""
    return [re.sub(r"(\d\.\d{4})\d+", r"\1", line) for line in lines]


RECORD_LINES = (("line", "query", "phi0"), ("phi_plus", "phi_minus", "positives", "negatives"),
                ("invariant", "phi_star"), ("refined_text",), ("objective",),
                ("depth", "feasible", "threshold", "anchors", "edits"), ("source",))  # fmt: skip


def format_record(path: Path) -> str:
    """The first record of a fol-refine JSONL output as docs/refine.md shows it (lists elided).

    >>> format_record(Path("refined.jsonl"))  # doctest: +SKIP
    '{"line": 4, "query": "a person talking", ...'
    """
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    elided = {"phi_plus", "phi_minus", "positives", "negatives"}
    named = [key for group in RECORD_LINES for key in group]
    groups = [[k for k in group if k in record] for group in RECORD_LINES]
    groups.append([k for k in record if k not in named])
    parts = []
    for group in (g for g in groups if g):
        cells = [
            f"{json.dumps(k)}: " + ("[...]" if k in elided else json.dumps(record[k], ensure_ascii=False))
            for k in group
        ]
        parts.append(", ".join(cells))
    return "{" + ",\n ".join(parts) + "}"


def regenerate(
    paths: list[Path], skip_slow: bool = False, only_slow: bool = False, workers: int = 3
) -> dict[Path, str]:
    """The new text of each file whose marked blocks changed (files unchanged are left out).

    The Python blocks (one interpreter) and each shell block run side by side, WORKERS at once.
    A block whose new output differs only after a number's 4th decimal is left as it is.

    >>> regenerate([])
    {}
    """
    lines_of = {p: p.read_text(encoding="utf-8").split("\n") for p in paths}
    blocks = [b for p in paths for b in find_blocks(p, lines_of[p])]
    blocks = [b for b in blocks if not (skip_slow and b.slow) and not (only_slow and not b.slow)]
    py = [b for b in blocks if b.command == "python"]
    shell = [b for b in blocks if b.command != "python"]
    with ThreadPoolExecutor(max_workers=workers) as pool:  # each job is a child process
        py_future = pool.submit(run_python_blocks, py, lines_of)
        shell_futures = {id(b): pool.submit(run_shell, b) for b in shell}
        bodies = {id(b): body for b, body in zip(py, py_future.result().values(), strict=True)}
        bodies.update({key: future.result() for key, future in shell_futures.items()})
    changed = {}
    for path in paths:
        lines = list(lines_of[path])
        for block in sorted((b for b in blocks if b.path == path), key=lambda b: -b.start):
            if _loose(bodies[id(block)]) != _loose(lines[block.start : block.end]):
                lines[block.start : block.end] = bodies[id(block)]
        text = "\n".join(lines)
        if text != "\n".join(lines_of[path]):
            changed[path] = text
    return changed


def main(argv: list[str] | None = None) -> int:
    """Rewrite the marked blocks, or with ``--check`` report (diff, exit 1) those that differ.

    >>> main(["--check", "--skip-slow", "docs/fol.md"])  # doctest: +SKIP
    0
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="Markdown files (default: README.md, docs/*.md)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 with a diff on drift")
    parser.add_argument("--skip-slow", action="store_true", help="leave out blocks that run Stage 1")
    parser.add_argument("--only-slow", action="store_true", help="only the blocks that run Stage 1")
    parser.add_argument("--exec-python", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--format-record", type=Path, help="print a fol-refine JSONL record as the docs do")
    args = parser.parse_args(argv)
    if args.exec_python:
        _exec_python_jobs()
        return 0
    if args.format_record:
        print(format_record(args.format_record))
        return 0
    paths = [p.resolve() for p in args.files] or DOCS
    changed = regenerate(paths, skip_slow=args.skip_slow, only_slow=args.only_slow)
    for path, text in changed.items():
        name = os.path.relpath(path, REPO)
        if args.check:
            old = path.read_text(encoding="utf-8").splitlines()
            sys.stdout.writelines(
                line + "\n" for line in difflib.unified_diff(old, text.splitlines(), name, name, lineterm="")
            )
        else:
            path.write_text(text, encoding="utf-8")
            print(f"rewrote {name}")
    if args.check and changed:
        print(f"{len(changed)} file(s) differ from the code's output: run python scripts/regen_docs.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
