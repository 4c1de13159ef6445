"""search/ reads like the pipeline, and its parts import one another in one direction only.

DESIGN.md: nothing in ``stage1``, ``index`` or ``projection`` imports ``refine``, ``eval``
or ``cli``; the logic core (``fol``, ``grammars``, ``vocab``, ``verbalise``) imports nothing
from ``search`` or ``plugins``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def imported_modules(path: Path, *, top_level_only: bool = False) -> set[str]:
    """Every module an ``import`` or ``from ... import`` of the file names (lazy ones too, unless
    ``top_level_only``)."""
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in (tree.body if top_level_only else ast.walk(tree)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("path", _files("search/stage1", "search/index", "search/projection"),
                         ids=lambda path: str(path.relative_to(REPO)))
def test_stages_do_not_import_the_tools_around_them(path: Path) -> None:
    forbidden = ("fortekit.search.refine", "fortekit.search.eval", "fortekit.search.cli",
                 "fortekit.search.retriever")
    wrong = sorted(m for m in imported_modules(path) if m.startswith(forbidden))
    assert not wrong, f"{path.relative_to(REPO)} imports {wrong}"


@pytest.mark.parametrize("path", _files("fol", "grammars", "vocab", "verbalise"),
                         ids=lambda path: str(path.relative_to(REPO)))
def test_the_logic_core_imports_no_retrieval_code(path: Path) -> None:
    wrong = sorted(m for m in imported_modules(path) if m.startswith("fortekit.search"))
    # torch only ever lazily (the neural parser plug-in), never when the module loads
    wrong += sorted(m for m in imported_modules(path, top_level_only=True)
                    if m.startswith(("fortekit.plugins", "torch", "transformers")))
    assert not wrong, f"{path.relative_to(REPO)} imports {wrong}"


#: Modules that moved: their old path is a file that aliases the new module (W800), kept one release.
MOVED = {
    "clauses.py": "fortekit.search.formula.clauses",
    "evidence.py": "fortekit.search.formula.evidence",
    "formula_config.py": "fortekit.search.formula.config",
    "formula_scoring.py": "fortekit.search.formula.scoring",
    "fuzzy.py": "fortekit.search.formula.fuzzy",
    "item_captions.py": "fortekit.search.index.item_captions",
    "order_check.py": "fortekit.search.formula.order_check",
}


def test_search_is_organised_by_stage() -> None:
    packages = sorted(p.name for p in (REPO / "search").iterdir() if (p / "__init__.py").is_file())
    assert packages == ["cli", "distributed", "eval", "formula", "index", "projection", "refine", "serve",
                        "stage1"]
    flat = sorted(p.name for p in (REPO / "search").glob("*.py") if p.name not in MOVED)
    assert flat == ["__init__.py", "defaults.py", "hits.py", "query_side.py", "rerank.py", "retriever.py",
                    "stages.py"]


@pytest.mark.parametrize("name", sorted(MOVED))
def test_a_moved_module_is_only_an_alias_that_warns(name: str) -> None:
    import importlib
    import sys

    from fortekit.errors import FortekitDeprecationWarning

    source = (REPO / "search" / name).read_text("utf-8")
    assert f'alias_module(__name__, "{MOVED[name]}")' in source and source.count("\n") <= 6
    old = f"fortekit.search.{name[:-3]}"
    sys.modules.pop(old, None)
    with pytest.warns(FortekitDeprecationWarning, match=r"\[W800\]"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[name])


@pytest.mark.parametrize("path", _files("search/serve"), ids=lambda path: str(path.relative_to(REPO)))
def test_the_server_ranks_through_the_retriever_and_never_imports_the_commands(path: Path) -> None:
    """serve/ may import the Retriever and eval/ (run folders); the commands import it, not the reverse."""
    wrong = sorted(m for m in imported_modules(path) if m.startswith(("fortekit.search.cli",
                                                                       "fortekit.search.refine")))
    assert not wrong, f"{path.relative_to(REPO)} imports {wrong}"


def test_only_the_commands_import_the_server() -> None:
    folders = ("fol", "vocab", "verbalise", "plugins", "search")
    users = sorted(str(path.relative_to(REPO)) for path in _files(*folders)
                   if "serve" not in path.parts and any(m.startswith("fortekit.search.serve")
                                                        for m in imported_modules(path)))
    assert users == ["search/cli/serve.py"], users


@pytest.mark.parametrize("path", _files("search/distributed"), ids=lambda path: str(path.relative_to(REPO)))
def test_the_ray_jobs_import_only_the_parts_they_spread(path: Path) -> None:
    """DESIGN.md: distributed/ may import ``index``, ``stage1`` and ``refine`` (and the core, plug-ins)."""
    allowed = ("fortekit.search.distributed", "fortekit.search.index", "fortekit.search.stage1",
               "fortekit.search.refine")
    wrong = sorted(m for m in imported_modules(path)
                   if m.startswith("fortekit.search") and not m.startswith(allowed))
    assert not wrong, f"{path.relative_to(REPO)} imports {wrong}"
    # Ray only inside functions: importing the package never loads it
    assert not {m for m in imported_modules(path, top_level_only=True) if m.split(".")[0] == "ray"}


def test_only_the_commands_import_the_ray_jobs() -> None:
    folders = ("fol", "vocab", "verbalise", "plugins", "search")
    users = sorted(str(path.relative_to(REPO)) for path in _files(*folders)
                   if "distributed" not in path.parts and any(m.startswith("fortekit.search.distributed")
                                                              for m in imported_modules(path)))
    assert users == ["search/cli/index.py", "search/cli/refine.py", "search/cli/refine_args.py"], users


@pytest.mark.parametrize("path", _files("plugins"), ids=lambda path: str(path.relative_to(REPO)))
def test_plugins_do_not_import_the_retrieval_code(path: Path) -> None:
    """A plug-in implements the protocols of plugins/; what it returns (LabelEvidence) lives there too."""
    wrong = sorted(m for m in imported_modules(path) if m.startswith("fortekit.search"))
    assert not wrong, f"{path.relative_to(REPO)} imports {wrong}"


@pytest.mark.parametrize("path", _files("search/index"), ids=lambda path: str(path.relative_to(REPO)))
def test_the_index_does_not_import_the_flat_search_modules(path: Path) -> None:
    """The index is read by the Retriever, never the other way round; formula scoring is a stage too."""
    allowed = ("fortekit.search.index", "fortekit.search.stage1")
    wrong = sorted(m for m in imported_modules(path)
                   if m.startswith("fortekit.search") and not m.startswith(allowed))
    assert not wrong, f"{path.relative_to(REPO)} imports {wrong}"


def test_every_public_name_of_the_stages_is_reachable_from_fortekit_search() -> None:
    import fortekit.search

    wanted = {"Refiner", "RefineConfig", "make_anchor_source", "AnchorBank", "ProjectionHead",
              "train_projection", "load_projection", "FormulaScorer", "FormulaScoringConfig",
              "split_clauses", "Reranker", "Retriever", "SearchResult", "Hit", "AudioIndex",
              "CaptionCorpus", "CorpusElaborator", "FeedbackAnchors", "make_elaborator"}
    assert wanted <= set(fortekit.search.__all__)
    for name in fortekit.search.__all__:
        assert getattr(fortekit.search, name) is not None, name
