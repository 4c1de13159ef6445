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


def test_search_is_organised_by_stage() -> None:
    packages = sorted(p.name for p in (REPO / "search").iterdir() if (p / "__init__.py").is_file())
    assert packages == ["cli", "eval", "index", "projection", "refine", "stage1"]
    flat = sorted(p.name for p in (REPO / "search").glob("*.py"))
    assert flat == ["__init__.py", "clauses.py", "evidence.py", "formula_config.py", "formula_scoring.py",
                    "fuzzy.py", "hits.py", "item_captions.py", "order_check.py", "query_side.py", "rerank.py",
                    "retriever.py"]


def test_every_public_name_of_the_stages_is_reachable_from_fortekit_search() -> None:
    import fortekit.search

    wanted = {"Refiner", "SearchConfig", "make_anchor_source", "AnchorBank", "ProjectionHead",
              "train_projection", "load_projection", "FormulaScorer", "FormulaScoringConfig",
              "split_clauses", "Reranker", "Retriever", "SearchResult", "Hit", "AudioIndex",
              "CaptionCorpus", "CorpusElaborator", "FeedbackAnchors", "make_elaborator"}
    assert wanted <= set(fortekit.search.__all__)
    for name in fortekit.search.__all__:
        assert getattr(fortekit.search, name) is not None, name
