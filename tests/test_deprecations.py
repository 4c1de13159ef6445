"""No deprecation shims: fortekit has not been released, so a renamed name is gone, not aliased.

The renames are listed once, in CHANGELOG.md ("Renamed"); the old names raise as any unknown
name does, and no module of the package keeps an alias or a warning for them.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: (module, old name): names renamed before 0.2.0.
RENAMED = [
    ("fortekit.search", "SearchConfig"),
    ("fortekit.search.stage1.config", "SearchConfig"),
    ("fortekit.errors", "SearchError"),
    ("fortekit.errors", "FortekitDeprecationWarning"),
    ("fortekit.search", "search_index"),
    ("fortekit.search.formula.scoring", "search_index"),
    ("fortekit.plugins.cli", "add_plugin_commands"),
    ("fortekit.fol.caption", "add_parse_report_command"),
    ("fortekit.fol.caption.report", "add_parse_report_command"),
    ("fortekit.search.stage1.relations", "add_relations_commands"),
]
#: Modules that moved before 0.2.0: their old paths import nothing.
MOVED = ["fortekit._deprecated", "fortekit.search.clauses", "fortekit.search.evidence",
         "fortekit.search.formula_config", "fortekit.search.formula_scoring", "fortekit.search.fuzzy",
         "fortekit.search.item_captions", "fortekit.search.order_check", "fortekit.vocab.cli",
         "fortekit.plugins.convert_cli"]


@pytest.mark.parametrize(("module", "old"), RENAMED)
def test_an_old_name_is_an_attribute_error(module: str, old: str) -> None:
    with pytest.raises(AttributeError, match=old):
        getattr(importlib.import_module(module), old)


@pytest.mark.parametrize("module", MOVED)
def test_an_old_module_path_is_gone(module: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


def test_no_module_keeps_a_shim_and_the_changelog_lists_the_renames() -> None:
    shims = re.compile(r"\b(W800|warn_moved|alias_module|moved_names|renamed_names|"
                       r"FortekitDeprecationWarning)\b")
    found = [
        str(path.relative_to(REPO)) for path in REPO.rglob("*.py")
        if not {".venv", ".laion-deps", "tests", "scripts"} & set(path.relative_to(REPO).parts)
        and shims.search(path.read_text(encoding="utf-8"))
    ]
    assert not found, f"deprecation shims in {found}"
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    for _, old in RENAMED:
        assert f"`{old}`" in changelog or old in changelog, old
    assert "fortekit index query" in changelog and "fortekit search --index" in changelog
