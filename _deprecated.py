"""Old names that moved: they keep working for one release, with a coded warning (W800).

A module that moved leaves a file at its old path that calls :func:`alias_module`; a name
that was renamed is listed in its package's lazy exports as a :func:`deprecated_name`.
Nothing heavy is imported here.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_moved("fortekit.old_name", "fortekit.new_name")
    >>> str(caught[0].message)[:6], caught[0].category.__name__
    ('[W800]', 'FortekitDeprecationWarning')
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from fortekit.errors import Errors, FortekitDeprecationWarning

__all__ = ["alias_module", "moved_names", "renamed_names", "warn_moved"]


def warn_moved(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn (W800) that ``old`` moved to ``new``.

    Args:
        old: what the user wrote (a dotted name, a module or a command-line spelling).
        new: what to write instead.
        stacklevel: passed to :func:`warnings.warn`, so the warning points at the user's line.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     warn_moved("--online", "--stage1 online")
    """
    warnings.warn(Errors.W800.format(old=old, new=new), FortekitDeprecationWarning,
                  stacklevel=stacklevel)


def alias_module(old: str, new: str) -> None:
    """Make the module ``old`` the module ``new`` (same object), warning once that it moved.

    Called from the file left at the old path, so ``import old`` and ``from old import x``
    (private names too) keep working for one release.

    Args:
        old: the old module's dotted name (the caller's ``__name__``).
        new: where the module lives now.

    Example:
        >>> import sys, warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     alias_module("fortekit._demo_old_json", "json")
        >>> sys.modules["fortekit._demo_old_json"] is sys.modules["json"]
        True
    """
    warn_moved(old, new, stacklevel=4)
    sys.modules[old] = importlib.import_module(new)


def renamed_names(
    module_name: str, renamed: Mapping[str, str], getattr_: Callable[[str], Any] | None = None,
    *, stacklevel: int = 3,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that answers each old name with its new one, warning (W800).

    Args:
        module_name: the module's ``__name__``.
        renamed: each old name and the name it has now (defined in the module, or answered
            by ``getattr_``).
        getattr_: the module's other ``__getattr__`` (lazy exports), asked for every name.
        stacklevel: passed to :func:`warn_moved`; one more for each frame between the user's
            line and the returned function.

    Returns:
        The function to assign to the module's ``__getattr__``.

    Example:
        >>> import warnings
        >>> getattr_ = renamed_names("math", {"square_root": "sqrt"})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     getattr_("square_root")(16.0)
        4.0
    """

    def module_getattr(name: str) -> Any:
        new = renamed.get(name)
        if new is not None:
            warn_moved(f"{module_name}.{name}", f"{module_name}.{new}", stacklevel=stacklevel)
            module = sys.modules.get(module_name) or importlib.import_module(module_name)
            if new in vars(module):
                return vars(module)[new]
            if getattr_ is not None:
                return getattr_(new)
        if getattr_ is not None:
            return getattr_(name)
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    return module_getattr


def moved_names(module_name: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that answers names that moved to other modules, warning (W800).

    The new module is imported only when an old name is asked for, so a module of the logic
    core can point at the command line without importing it.

    Args:
        module_name: the old module's ``__name__``.
        moved: each name and the dotted module that defines it now.

    Returns:
        The function to assign to the old module's ``__getattr__``.

    Example:
        >>> import warnings
        >>> getattr_ = moved_names("fortekit.old_maths", {"sqrt": "math"})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     getattr_("sqrt")(9.0)
        3.0
    """

    def module_getattr(name: str) -> Any:
        module = moved.get(name)
        if module is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        warn_moved(f"{module_name}.{name}", f"{module}.{name}")
        return getattr(importlib.import_module(module), name)

    return module_getattr
