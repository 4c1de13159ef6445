"""Names that moved keep working for one release, each with a coded warning (W800)."""

from __future__ import annotations

import importlib

import pytest

from fortekit.errors import FortekitDeprecationWarning

RENAMED = [
    ("fortekit.search", "SearchConfig", "RefineConfig"),
    ("fortekit.search.stage1.config", "SearchConfig", "RefineConfig"),
    ("fortekit.errors", "SearchError", "RefineError"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED)
def test_an_old_name_is_the_new_object_with_a_coded_warning(module: str, old: str, new: str) -> None:
    imported = importlib.import_module(module)
    with pytest.warns(FortekitDeprecationWarning, match=rf"\[W800\] {module}\.{old} .* {module}\.{new}"):
        value = getattr(imported, old)
    assert value is getattr(imported, new)


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import fortekit.errors

    with pytest.raises(AttributeError, match="NoSuchError"):
        fortekit.errors.NoSuchError  # noqa: B018


def test_the_warning_is_a_future_warning_so_python_shows_it_to_users() -> None:
    assert issubclass(FortekitDeprecationWarning, FutureWarning)
