"""The packages' lazy re-exports (fortekit._lazy) and the root's verbalise_formula (issue 14)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import fortekit
from fortekit._lazy import lazy_exports
from fortekit.errors import FormulaTypeError
from fortekit.fol import parse_formula

PACKAGES = ("fortekit", "fortekit.search", "fortekit.fol.caption")


def test_verbalise_formula_works_twice_in_one_process() -> None:
    phi = parse_formula("Dog(x) ∧ Barking(x)")
    assert fortekit.verbalise_formula(phi) == "a dog barking"
    importlib.import_module("fortekit.verbalise")  # the subpackage, now an attribute of fortekit
    assert fortekit.verbalise_formula(phi) == "a dog barking"
    assert fortekit.verbalise.verbalise(phi) == "a dog barking"


def test_verbalise_formula_works_twice_in_a_fresh_process() -> None:
    code = (
        "import fortekit\n"
        "phi = fortekit.parse_formula('Dog(x) ∧ Barking(x)')\n"
        "print(fortekit.verbalise_formula(phi))\n"
        "import fortekit.verbalise\n"
        "print(fortekit.verbalise_formula(phi))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          encoding="utf-8", check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["a dog barking", "a dog barking"]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_lazy_export_is_named_like_a_submodule(package: str) -> None:
    module = importlib.import_module(package)
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    clashes = sorted(set(module._LAZY) & submodules)
    assert not clashes, f"{package} exports {clashes}, which are also its submodules"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_lazy_export_resolves_and_is_listed(package: str) -> None:
    module = importlib.import_module(package)
    listed = dir(module)
    for name in module._LAZY:
        if name in ("Retriever",) or package == "fortekit.search":
            continue  # these import torch; resolving them is the search tests' job
        assert getattr(module, name) is not None
        assert name in listed
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        module.nope  # noqa: B018


def test_lazy_exports_renames_with_a_colon_and_lists_own_names() -> None:
    own = {"x": 1}
    getattr_, dir_ = lazy_exports("pkg", {"root": "math:sqrt", "pi": "math"}, names=own)
    assert getattr_("root")(16.0) == 4.0
    own["later"] = 2  # the names are read when dir() runs, as globals() would be
    assert dir_() == ["later", "pi", "root", "x"]


@pytest.mark.parametrize("bad", [None, "Dog(x) ∧ Barking(x)", 3])
def test_verbalise_rejects_what_is_not_a_formula(bad: object) -> None:
    from fortekit.verbalise import templates_used, verbalise

    with pytest.raises(FormulaTypeError, match=r"\[E009\] verbalise\(\) takes a formula") as info:
        verbalise(bad)  # type: ignore[arg-type]
    assert isinstance(info.value, TypeError)
    with pytest.raises(TypeError, match=r"\[E009\] templates_used\(\)"):
        templates_used(bad)  # type: ignore[arg-type]
    with pytest.raises(FormulaTypeError):
        fortekit.verbalise_formula(bad)
