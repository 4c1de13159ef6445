"""The package reads like the method, and its rooms import one another in one direction only.

The rules are DESIGN.md's two layout tables, written once as data in ``tests/import_rules.toml``;
every module of the package is held against them, its lazy imports (inside functions) included
and its ``if TYPE_CHECKING:`` imports exempt.
"""

from __future__ import annotations

import ast
import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
RULES: dict[str, Any] = tomllib.loads(Path(__file__).with_name("import_rules.toml").read_text("utf-8"))
ROOMS: dict[str, dict[str, Any]] = RULES["rooms"]
FRONTS: list[str] = RULES["fronts"]["modules"]
LEAVES: list[str] = RULES["leaves"]["modules"]


# -- the package's modules and their imports -----------------------------------------------------

def package_files() -> list[Path]:
    """Every .py file of the package: the root's modules and the packages under it (not tests, scripts)."""
    folders = [p for p in REPO.iterdir() if (p / "__init__.py").is_file() and p.name != "tests"]
    return sorted([*REPO.glob("*.py"), *(path for folder in folders for path in folder.rglob("*.py"))])


def module_name(path: Path) -> str:
    """``search/stage1/beam.py`` -> ``fortekit.search.stage1.beam`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(["fortekit", *parts])


@functools.cache
def known_modules() -> frozenset[str]:
    names = {module_name(path) for path in package_files()}
    return frozenset(names | {name.rpartition(".")[0] for name in names if "." in name})


def _source_path(module: str) -> Path | None:
    base = REPO.joinpath(*module.split(".")[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def lazy_exports(front: str) -> dict[str, str]:
    """A front's lazily re-exported names and the module each comes from (its ``_LAZY`` table)."""
    path = _source_path(front)
    if path is None:
        return {}
    tree = ast.parse(path.read_text("utf-8"))
    tables: dict[str, str] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                and any(isinstance(target, ast.Name) and target.id == "_LAZY" for target in node.targets)):
            tables.update(ast.literal_eval(node.value))
    return {name: target.partition(":")[0] for name, target in tables.items()}


@dataclass(frozen=True)
class Import:
    line: int
    module: str
    lazy: bool  # inside a function: imported when the function runs, not when the module loads
    type_checking: bool  # under ``if TYPE_CHECKING:``


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(source: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = source.split(".") if is_package else source.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _named(module: str, name: str) -> str:
    """What ``from module import name`` imports: a submodule, a front's re-export, else the module."""
    if not module.startswith("fortekit"):
        return module
    if f"{module}.{name}" in known_modules():
        return f"{module}.{name}"
    if module in FRONTS:
        return lazy_exports(module).get(name, module)
    return module


@functools.cache
def imports_of(path: Path) -> tuple[Import, ...]:
    """Every import of a file of the package (see :func:`imports_in`)."""
    return imports_in(path.read_text("utf-8"), module_name(path), is_package=path.name == "__init__.py")


def imports_in(text: str, source: str, *, is_package: bool = False) -> tuple[Import, ...]:
    """Every import of module `source`: top level and inside functions, those under TYPE_CHECKING marked."""
    tree = ast.parse(text)
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool, checking: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(node.lineno, alias.name, lazy, checking) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(source, is_package, node)
            found.extend(Import(node.lineno, _named(module, alias.name), lazy, checking)
                         for alias in node.names)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in {"import_module", "__import__"}))):
            found.append(Import(node.lineno, node.args[0].value, lazy, checking))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, lazy, True)
            for child in node.orelse:
                visit(child, lazy, checking)
            return
        inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner, checking)

    visit(tree, False, False)
    return tuple(found)


# -- the table ------------------------------------------------------------------------------------

def room_of(module: str) -> str | None:
    """The room a module belongs to (its longest matching prefix), ``"fronts"``, ``"leaves"`` or None."""
    if module in FRONTS:
        return "fronts"
    best: tuple[int, str] | None = None
    entries = [("leaves", prefix) for prefix in LEAVES]
    entries += [(room, prefix) for room, spec in ROOMS.items() for prefix in spec["modules"]]
    for room, prefix in entries:
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), room)
    return best[1] if best else None


@functools.cache
def reachable(room: str) -> frozenset[str]:
    """The rooms `room` may import: its ``may_import``, and what those may import, and so on."""
    if room in ("fronts", "leaves"):
        return frozenset({"fronts", "leaves"})
    direct = ROOMS[room]["may_import"]
    if "*" in direct:
        return frozenset({*ROOMS, "fronts", "leaves"})
    rooms = {room, "fronts", "leaves"}
    for other in direct:
        rooms |= reachable(other)
    return frozenset(rooms)


def _path_id(path: Path) -> str:
    return str(path.relative_to(REPO))


def _existing(path: Path) -> Path:
    if not path.is_file():  # removed since collection (the tree is being reorganised)
        pytest.skip(f"{_path_id(path)} no longer exists")
    return path


def _where(path: Path, found: Import) -> str:
    return f"{_path_id(path)}:{found.line} imports {found.module}"


# -- the tests ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", package_files(), ids=_path_id)
def test_every_import_follows_the_table(path: Path) -> None:
    """tests/import_rules.toml: a room imports only itself, the leaves and the rooms it may import."""
    path = _existing(path)
    room = room_of(module_name(path))
    assert room is not None, f"{_path_id(path)} belongs to no room of tests/import_rules.toml: add it there"
    allowed = reachable(room)
    wrong = []
    for found in imports_of(path):
        if found.type_checking or not found.module.startswith("fortekit"):
            continue
        if found.module.split(".")[0] != "fortekit":
            continue
        target = room_of(found.module)
        if target is None or found.module not in known_modules():
            wrong.append(f"{_where(path, found)}, which is no module of the package")
        elif target not in allowed:
            wrong.append(f"{_where(path, found)} ({room} -> {target})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("path", package_files(), ids=_path_id)
def test_heavy_packages_are_imported_only_inside_functions(path: Path) -> None:
    """The logic core never loads torch or transformers, and distributed/ never loads Ray, on import."""
    path = _existing(path)
    heavy = tuple(RULES["lazy_only"].get(room_of(module_name(path)) or "", ()))
    wrong = [_where(path, found) for found in imports_of(path)
             if not found.lazy and not found.type_checking and found.module.split(".")[0] in heavy]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("path", package_files(), ids=_path_id)
def test_argparse_is_imported_only_by_the_commands(path: Path) -> None:
    """Every command lives in search/cli/; a handler forwards plain values, never an argparse.Namespace."""
    path = _existing(path)
    name = module_name(path)
    if any(name == prefix or name.startswith(prefix + ".") for prefix in RULES["argparse"]["modules"]):
        return
    wrong = [_where(path, found) for found in imports_of(path) if found.module.split(".")[0] == "argparse"]
    assert not wrong, "\n".join(wrong)


def test_the_table_reads_in_one_direction() -> None:
    for room, spec in ROOMS.items():
        unknown = set(spec["may_import"]) - {*ROOMS, "*"}
        assert not unknown, f"{room} may import unknown rooms {unknown}"
        assert any(module_name(path) == prefix or module_name(path).startswith(prefix + ".")
                   for prefix in spec["modules"] for path in package_files()), f"{room} has no module"

    def check(room: str, trail: tuple[str, ...]) -> None:
        assert room not in trail, f"the table has a cycle: {' -> '.join((*trail, room))}"
        for other in ROOMS[room]["may_import"]:
            if other != "*":
                check(other, (*trail, room))

    for room in ROOMS:
        check(room, ())


def test_the_table_keeps_the_rules_design_states_in_words() -> None:
    """DESIGN.md's sentences under the tables, so that loosening the table shows here too."""
    core = {"fol", "grammars", "vocab", "verbalise"}
    search = {room for room in ROOMS if room not in {*core, "plugins"}}
    for room in core:  # the logic core imports nothing from search or plugins
        assert not reachable(room) & (search | {"plugins"}), room
    assert not reachable("plugins") & search  # plug-ins never import search
    for room in ("stage1", "index", "projection"):
        assert not reachable(room) & {"refine", "eval", "cli", "serve", "retriever"}, room
    assert not reachable("formula") & {"index", "retriever"}  # never index, never the retriever
    assert "stage1" not in reachable("index")
    assert reachable("rerank") <= core | {"rerank", "fronts", "leaves"}
    assert [room for room in ROOMS if "serve" in reachable(room) and room != "serve"] == ["cli"]
    assert [room for room in ROOMS if "distributed" in reachable(room) and room != "distributed"] == ["cli"]
    for leaf in LEAVES:
        assert room_of(leaf) == "leaves", leaf


def test_search_is_organised_by_stage() -> None:
    packages = sorted(p.name for p in (REPO / "search").iterdir() if (p / "__init__.py").is_file())
    assert packages == ["cli", "distributed", "eval", "formula", "index", "pipeline", "projection", "refine",
                        "serve", "stage1"]
    flat = {p.name for p in (REPO / "search").glob("*.py")}
    # hits, query_side, stages and defaults are moving into search/pipeline/ (issue 44)
    assert {"__init__.py", "rerank.py", "retriever.py"} <= flat
    assert flat <= {"__init__.py", "rerank.py", "retriever.py", "hits.py", "query_side.py", "stages.py",
                    "defaults.py"}


def test_the_collector_sees_lazy_and_type_checking_imports() -> None:
    """The test's own reader: a lazy import counts, a TYPE_CHECKING one is exempt, a front resolves."""
    source = ("from typing import TYPE_CHECKING\n"
              "from fortekit import __version__, Retriever\n"
              "if TYPE_CHECKING:\n    from fortekit.search.index import AudioIndex\n"
              "def f():\n    from fortekit.search.retriever import Retriever\n")
    found = imports_in(source, "fortekit.search.stage1.probe")
    assert [(i.module, i.lazy, i.type_checking) for i in found if i.module.startswith("fortekit")] == [
        ("fortekit", False, False),
        ("fortekit.search.retriever", False, False),
        ("fortekit.search.index", False, True),
        ("fortekit.search.retriever", True, False),
    ]
    assert "retriever" not in reachable("stage1")


def test_every_public_name_of_the_stages_is_reachable_from_fortekit_search() -> None:
    import fortekit.search

    wanted = {"Refiner", "RefineConfig", "make_anchor_source", "AnchorBank", "ProjectionHead",
              "train_projection", "load_projection", "FormulaScorer", "FormulaScoringConfig",
              "split_clauses", "Reranker", "Retriever", "SearchResult", "Hit", "AudioIndex",
              "CaptionCorpus", "CorpusElaborator", "FeedbackAnchors", "make_elaborator"}
    assert wanted <= set(fortekit.search.__all__)
    for name in fortekit.search.__all__:
        assert getattr(fortekit.search, name) is not None, name


def test_the_tests_mirror_the_package() -> None:
    """DESIGN.md: tests/fol/ tests fol/, tests/search/index/ tests search/index/, and so on; the
    project-wide tests (the leaves, the docs, the layout) stay at the top of tests/."""
    tests = REPO / "tests"
    folders = sorted({path.parent.relative_to(tests) for path in tests.rglob("test_*.py")} - {Path(".")})
    assert folders, "no test folder"
    missing = [str(folder) for folder in folders if not (REPO / folder / "__init__.py").is_file()]
    assert not missing, f"test folders without a package folder of the same path: {missing}"
