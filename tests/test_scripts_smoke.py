"""Smoke tests of scripts/*.py: they compile, import, answer ``--help``, and call fortekit as it is.

Why: few tests import the scripts, so they rot silently when the package changes under them
(scripts/pipeline_at_scale.py once passed ``Retriever`` keywords it no longer took, and nothing
noticed until someone ran it). These checks are cheap (no model and no data is loaded) and are
parametrized by script name, so a failure names the script:

* ``test_compiles``: the source compiles.
* ``test_imports``: the script imports as a module (``spec_from_file_location`` + ``exec_module``;
  its ``if __name__ == "__main__"`` guard keeps ``main`` from running). A script whose top level
  does work (anything beyond imports, ``def``/``class``, assignments of constant-like values such as
  paths and compiled patterns, its docstring, ``sys.path`` additions and the main guard) is only
  compiled: its import test is skipped and the reason names the statement. Today no script is in
  that case.
* ``test_help``: every script whose argparse parser is reachable (``build_parser()``, ``main(argv)``,
  or ``main()`` reading ``sys.argv``) prints a usage line for ``--help`` in-process, provided its
  ``main`` does nothing but build the parser before parsing (checked on the ast first).
* ``test_fortekit_calls``: statically, with ``ast``: every name a script imports from ``fortekit``
  or from a sibling script (lazily inside functions too) exists, and every call it makes to one of
  them (a function, a class, a classmethod such as ``AudioIndex.from_captions``, or a method of an
  instance it made in the same function, such as ``index.build_faiss`` or ``spec.replace``) binds
  to the callee's ``inspect.signature``: no unknown keyword, no missing required argument, not too
  many positional ones; and an argument the script made itself with a tracked class (``backbone =
  get_backbone(...)``, by its return annotation) is of a class the parameter's annotation allows
  (``Retriever(index, backbone)`` after ``backbone`` became keyword-only). A dataclass's
  ``replace(**changes)`` is held to the dataclass's fields, and so is a ``replace(**changes)`` that
  forwards to one (``FORWARDED_KEYWORDS``: ``Retriever.replace`` takes ``PipelineSpec``'s fields).

A script that needs an optional extra that is not installed (faiss, ray, playwright, fastapi,
laion_clap, ...) is skipped with the reason, never failed. A script found broken is marked in
``KNOWN_BROKEN`` (strict xfail, with the reason) until someone fixes it: the test then fails,
and the mark goes. The file takes about 10 s (most of it importing torch and fortekit once).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import inspect
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS_DIR = REPO / "scripts"
SCRIPTS = {path.stem: path for path in sorted(SCRIPTS_DIR.glob("*.py"))}

#: Top-level modules of optional extras (pyproject's optional-dependencies, and tools some scripts
#: bring themselves): a script or fortekit module that needs one that is missing is skipped.
OPTIONAL_EXTRAS = frozenset({
    "faiss", "ray", "playwright", "fastapi", "fastapi_offline", "uvicorn", "httptools", "uvloop",
    "orjson", "httpx", "laion_clap", "msclap", "umap", "usearch", "schemathesis", "pyarrow", "pandas",
})

#: ``replace(**changes)`` methods that forward their keywords to a dataclass: (module, class) -> the
#: (module, dataclass) whose fields they take.
FORWARDED_KEYWORDS = {
    ("fortekit.search.retriever", "Retriever"): ("fortekit.search.pipeline", "PipelineSpec"),
}

#: (test name, script) -> why: scripts found broken and not yet fixed (strict xfail).
KNOWN_BROKEN: dict[tuple[str, str], str] = {}

#: Calls whose result a top-level assignment may hold without counting as work at import time
#: (the last name of the called expression).
_CONSTANT_CALLS = frozenset({
    "Path", "resolve", "parent", "with_name", "with_suffix", "joinpath", "glob", "compile", "frozenset",
    "set", "tuple", "list", "dict", "sorted", "str", "int", "float", "field", "TypeVar", "getenv", "get",
    "gettempdir", "expanduser", "namedtuple", "NewType", "splitlines", "split",
})
#: What a ``main`` may do before it parses its arguments (the outermost call of each statement).
_PARSER_BUILDING = frozenset({
    "ArgumentParser", "add_argument", "add_argument_group", "add_mutually_exclusive_group",
    "add_subparsers", "add_parser", "set_defaults",
})
_PARSE_CALLS = frozenset({"parse_args", "parse_known_args", "parse_intermixed_args"})


def _params(test: str, scripts: list[str]) -> list[Any]:
    """``scripts`` as pytest params named after the script, KNOWN_BROKEN ones marked xfail(strict)."""
    return [
        pytest.param(name, id=name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[test, name]))
        if (test, name) in KNOWN_BROKEN else pytest.param(name, id=name)
        for name in scripts
    ]


@functools.cache
def _tree(name: str) -> ast.Module:
    return ast.parse(SCRIPTS[name].read_text(encoding="utf-8"), filename=str(SCRIPTS[name]))


def _last_name(func: ast.expr) -> str:
    """``b`` of ``a.b(...)`` or of ``b(...)``; ``""`` for anything else."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


# --- what a script does at import time ------------------------------------------------------------


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _constant_like(expr: ast.expr | None, local_classes: set[str]) -> bool:
    """No call in ``expr`` but to a known cheap constructor or to a class the script defines."""
    if expr is None:
        return True
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and _last_name(node.func) not in _CONSTANT_CALLS | local_classes:
            return False
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
    return True


def _sys_path_edit(node: ast.stmt) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    return ast.unparse(node.value.func) in ("sys.path.insert", "sys.path.append")


def _work_at_import(body: list[ast.stmt], local_classes: set[str]) -> ast.stmt | None:
    """The first statement of ``body`` that does more than define things; None if there is none."""
    for index, node in enumerate(body):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                             ast.Pass)) or _is_main_guard(node) or _sys_path_edit(node):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and (index == 0 or isinstance(
                node.value.value, str)):
            continue  # the docstring, or a string standing as a comment
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and _constant_like(
                node.value, local_classes):
            continue
        if isinstance(node, ast.If) and _constant_like(node.test, local_classes):
            inner = _work_at_import(node.body, local_classes) or _work_at_import(node.orelse, local_classes)
            if inner is None:
                continue
            return inner
        if isinstance(node, ast.Try):
            parts = [node.body, node.orelse, node.finalbody, *(handler.body for handler in node.handlers)]
            inner = next((found for part in parts if (found := _work_at_import(part, local_classes))), None)
            if inner is None:
                continue
            return inner
        return node
    return None


def _import_time_work(name: str) -> str | None:
    """Why ``name`` must not be imported (a line of its top level doing work), or None."""
    tree = _tree(name)
    local_classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    node = _work_at_import(tree.body, local_classes)
    if node is None:
        return None
    source = SCRIPTS[name].read_text(encoding="utf-8").splitlines()[node.lineno - 1].strip()
    return f"line {node.lineno} does work at import time ({source[:80]})"


# --- loading scripts --------------------------------------------------------------------------------


def _missing_extra(error: BaseException) -> str | None:
    """The optional extra whose absence raised ``error``, or None."""
    if isinstance(error, ModuleNotFoundError) and error.name:
        top = error.name.split(".")[0]
        if top in OPTIONAL_EXTRAS:
            return top
    return None


@contextlib.contextmanager
def _script_context() -> Iterator[None]:
    """sys.path as a script sees it (its folder first); sys.path, sys.argv and sibling modules restored."""
    saved_path, saved_argv, saved_modules = list(sys.path), list(sys.argv), set(sys.modules)
    sys.path.insert(0, str(SCRIPTS_DIR))
    try:
        yield
    finally:
        sys.path[:] = saved_path
        sys.argv[:] = saved_argv
        for module in set(sys.modules) - saved_modules:
            if module in SCRIPTS:  # a sibling script a script imported by its plain name
                del sys.modules[module]


_LOADED: dict[str, ModuleType] = {}


def _load(name: str) -> ModuleType:
    """scripts/NAME.py as a module (once a session), under a name no other test uses."""
    if name not in _LOADED:
        module_name = f"_scripts_smoke_{name}"
        spec = importlib.util.spec_from_file_location(module_name, SCRIPTS[name])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses look their module up there
        try:
            with _script_context():
                spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        _LOADED[name] = module
    return _LOADED[name]


def _load_or_skip(name: str) -> ModuleType:
    try:
        return _load(name)
    except ModuleNotFoundError as error:
        extra = _missing_extra(error)
        if extra is None:
            raise
        pytest.skip(f"scripts/{name}.py needs the optional extra {extra!r}, not installed")


# --- 1, 2: compile, import --------------------------------------------------------------------------


@pytest.mark.parametrize("name", _params("test_compiles", list(SCRIPTS)))
def test_compiles(name: str) -> None:
    compile(SCRIPTS[name].read_text(encoding="utf-8"), str(SCRIPTS[name]), "exec")


@pytest.mark.parametrize("name", _params("test_imports", list(SCRIPTS)))
def test_imports(name: str) -> None:
    if reason := _import_time_work(name):
        pytest.skip(f"compile only: scripts/{name}.py {reason}")
    module = _load_or_skip(name)
    assert module.__file__ == str(SCRIPTS[name])


# --- 3: --help --------------------------------------------------------------------------------------


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _parse_statement(function: ast.FunctionDef, functions: dict[str, ast.FunctionDef],
                     seen: frozenset[str] = frozenset()) -> str | None:
    """None when ``function`` only builds a parser before it parses; else what it does first."""
    for node in function.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        calls = [call for call in ast.walk(node) if isinstance(call, ast.Call)]
        if any(_last_name(call.func) in _PARSE_CALLS for call in calls):
            return None
        helpers = [call.func.id for call in calls if isinstance(call.func, ast.Name)
                   and call.func.id in functions and call.func.id not in seen]
        if helpers:  # e.g. ``args = _arguments(argv)``: the helper must only build and parse
            return _parse_statement(functions[helpers[0]], functions, seen | {function.name})
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
        if not (isinstance(value, ast.Call) and _last_name(value.func) in _PARSER_BUILDING):
            return f"line {node.lineno}: {ast.unparse(node).splitlines()[0][:80]}"
    return f"{function.name} never parses arguments"


def _help_entry(name: str) -> tuple[str, str | None] | None:
    """How to reach the parser (``build_parser``, ``main(argv)`` or ``main()``) and why not, or None."""
    tree = _tree(name)
    functions = _functions(tree)
    if "build_parser" in functions:
        return "build_parser", None
    main = functions.get("main")
    if main is None or not any(isinstance(node, ast.Call) and _last_name(node.func) == "ArgumentParser"
                               for node in ast.walk(tree)):
        return None
    kind = "main(argv)" if main.args.args or main.args.vararg else "main()"
    return kind, _parse_statement(main, functions)


HELP_SCRIPTS = [name for name in SCRIPTS if _help_entry(name)]


@pytest.mark.parametrize("name", _params("test_help", HELP_SCRIPTS))
def test_help(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _help_entry(name)
    assert entry is not None
    kind, work = entry
    if work is not None:
        pytest.skip(f"scripts/{name}.py: main does work before parsing its arguments ({work})")
    if reason := _import_time_work(name):
        pytest.skip(f"compile only: scripts/{name}.py {reason}")
    module = _load_or_skip(name)
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stdout(out), _script_context():
        if kind == "build_parser":
            module.build_parser().parse_args(["--help"])
        elif kind == "main(argv)":
            module.main(["--help"])
        else:
            monkeypatch.setattr(sys, "argv", [str(SCRIPTS[name]), "--help"])
            module.main()
    assert exit_info.value.code in (0, None), out.getvalue()
    assert out.getvalue().lstrip().startswith("usage:"), out.getvalue()[:500]


# --- 4: calls to fortekit match its signatures --------------------------------------------------------


class _Unavailable(Exception):
    """A fortekit module needs an optional extra that is not installed."""


@dataclasses.dataclass
class _Instance:
    """A value the script made with a call to ``cls`` (its methods are checked too)."""

    cls: type


@dataclasses.dataclass
class _Scope:
    imports: dict[str, tuple[str, str | None]]  # local name -> (module, attribute; None: the module)
    single: dict[str, ast.expr]  # name -> the value of its one assignment in this scope
    parent: _Scope | None = None

    def lookup(self, name: str) -> tuple[str, str | None] | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.imports:
                return scope.imports[name]
            scope = scope.parent
        return None


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``node``'s scope: nested functions are yielded but not entered."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _own_nodes(child)


def _tracked(module: str) -> bool:
    return module == "fortekit" or module.startswith("fortekit.") or module.split(".")[0] in SCRIPTS


def _make_scope(node: ast.AST, parent: _Scope | None) -> _Scope:
    imports: dict[str, tuple[str, str | None]] = {}
    stores: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = node.args
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg,
                    arguments.kwarg]:
            if arg is not None:
                stores[arg.arg] = stores.get(arg.arg, 0) + 2  # a parameter is never a tracked instance
    for child in _own_nodes(node):
        if isinstance(child, ast.ImportFrom) and child.module and not child.level and _tracked(child.module):
            for alias in child.names:
                imports[alias.asname or alias.name] = (child.module, alias.name)
        elif isinstance(child, ast.Import):
            for alias in child.names:
                if _tracked(alias.name):
                    imports[alias.asname or alias.name.split(".")[0]] = (
                        (alias.name, None) if alias.asname else (alias.name.split(".")[0], None))
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            stores[child.id] = stores.get(child.id, 0) + 1
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and parent is not None:
            stores[child.name] = stores.get(child.name, 0) + 2
        if isinstance(child, ast.Assign) and len(child.targets) == 1:
            target = child.targets[0]
            if isinstance(target, ast.Name):
                values[target.id] = child.value
    # A name this scope assigns hides an import of the same name from outside ("": not tracked).
    imports.update({name: ("", None) for name in stores if name not in imports})
    return _Scope(imports, {name: value for name, value in values.items() if stores.get(name) == 1}, parent)


def _import(module: str) -> ModuleType:
    try:
        if module.split(".")[0] in SCRIPTS:
            if _import_time_work(module):
                raise _Unavailable(f"scripts/{module}.py does work at import time")
            return _load(module)
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if (extra := _missing_extra(error)) is not None:
            raise _Unavailable(f"{module} needs the optional extra {extra!r}") from error
        raise


def _attribute(base: Any, attr: str) -> Any:
    """``base.attr``; a not yet imported submodule of a module is imported."""
    try:
        return getattr(base, attr)
    except AttributeError:
        if isinstance(base, ModuleType):
            try:
                return _import(f"{base.__name__}.{attr}")
            except ModuleNotFoundError:
                pass
        raise


class _Checker:
    """Resolve a script's calls to fortekit (and its sibling scripts) and bind them to the signatures."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[str] = []
        self.unavailable: set[str] = set()
        self._memo: dict[int, Any] = {}

    def run(self) -> None:
        self._visit(_tree(self.name), None)

    def _visit(self, node: ast.AST, parent: _Scope | None) -> None:
        scope = _make_scope(node, parent)
        for child in _own_nodes(node):
            if isinstance(child, (ast.ImportFrom, ast.Import)):
                self._check_import(child, scope)
            elif isinstance(child, ast.Call):
                self._check_call(child, scope)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._visit(child, scope)

    def _problem(self, node: ast.AST, text: str) -> None:
        self.problems.append(f"scripts/{self.name}.py:{getattr(node, 'lineno', '?')}: {text}")

    def _check_import(self, node: ast.Import | ast.ImportFrom, scope: _Scope) -> None:
        """Every imported fortekit (or sibling script) module and name exists."""
        if isinstance(node, ast.ImportFrom):
            if not node.module or node.level or not _tracked(node.module):
                return
            pairs = [(node.module, alias.name) for alias in node.names]
        else:
            pairs = [(alias.name, None) for alias in node.names if _tracked(alias.name)]
        for module, attr in pairs:
            try:
                base = _import(module)
                if attr is not None and attr != "*":
                    _attribute(base, attr)
            except _Unavailable as why:
                self.unavailable.add(str(why))
            except (ImportError, AttributeError) as error:
                self._problem(node, f"imports {module}{'.' + attr if attr else ''}, which does not exist "
                                    f"({type(error).__name__}: {error})")

    def _resolve(self, expr: ast.expr, scope: _Scope) -> Any:
        """The object ``expr`` names, an _Instance, or None when it is not something the test tracks."""
        key = id(expr)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # against cycles
        value = self._resolve_uncached(expr, scope)
        self._memo[key] = value
        return value

    def _resolve_uncached(self, expr: ast.expr, scope: _Scope) -> Any:
        if isinstance(expr, ast.Name):
            found = scope.lookup(expr.id)
            if found is not None and found[0]:
                module, attr = found
                return _import(module) if attr is None else _attribute(_import(module), attr)
            single = scope.single.get(expr.id)
            return self._result(single, scope) if single is not None else None
        if isinstance(expr, ast.Attribute):
            base = self._resolve(expr.value, scope)
            if base is None:
                return None
            if isinstance(base, _Instance):
                return _Method(base.cls, expr.attr)
            if isinstance(base, _Method):
                return None
            return _attribute(base, expr.attr)
        return None

    def _result(self, value: ast.expr, scope: _Scope) -> _Instance | None:
        """What an assignment's value holds, when it is made by a tracked class (or IfExp of them)."""
        if isinstance(value, ast.IfExp):
            one, other = self._result(value.body, scope), self._result(value.orelse, scope)
            return one if one is not None and other is not None and one.cls is other.cls else None
        if not isinstance(value, ast.Call):
            return None
        try:
            func = self._resolve(value.func, scope)
        except (_Unavailable, ImportError, AttributeError):
            return None
        if isinstance(func, type):
            return _Instance(func)
        returned = _returned_class(func)
        return _Instance(returned) if returned is not None else None

    def _check_call(self, call: ast.Call, scope: _Scope) -> None:
        try:
            func = self._resolve(call.func, scope)
        except _Unavailable as why:
            self.unavailable.add(str(why))
            return
        except (ImportError, AttributeError) as error:
            self._problem(call, f"{ast.unparse(call.func)}: {type(error).__name__}: {error}")
            return
        if func is None or isinstance(func, (ModuleType, _Instance)):
            return
        what = ast.unparse(call.func)
        if isinstance(func, _Method):
            signature = func.signature()
            if signature is _MISSING:
                self._problem(call, f"{what}(): {func.cls.__qualname__} has no attribute {func.name!r}")
                return
        else:
            signature = _signature(func)
        if signature is None:
            return
        positional = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
        keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg is not None}
        starred = len(positional) < len(call.args) or len(keywords) < len(call.keywords)
        accepted = _kwargs_accepted(func)
        if accepted is not None:
            unknown = sorted(set(keywords) - accepted)
            if unknown:
                self._problem(call, f"{what}(): unknown keyword(s) {unknown}; it takes {sorted(accepted)}")
            return
        bind = signature.bind_partial if starred else signature.bind
        try:
            bound = bind(*positional, **keywords)
        except TypeError as error:
            takes = signature.replace(return_annotation=inspect.Signature.empty)
            self._problem(call, f"{what}(): {error}; it takes {takes}")
            return
        owner = func.cls if isinstance(func, _Method) else func
        for parameter, value in bound.arguments.items():
            if not isinstance(value, ast.expr):
                continue
            try:
                made = self._resolve(value, scope)
            except (_Unavailable, ImportError, AttributeError):
                continue
            annotation = signature.parameters[parameter].annotation
            if isinstance(made, _Instance) and not _may_be(made.cls, annotation, owner):
                self._problem(call, f"{what}(...) passes {ast.unparse(value)} (a {made.cls.__qualname__}) "
                                    f"as {parameter}: {annotation}")


_MISSING: Any = object()


@dataclasses.dataclass
class _Method:
    """A method looked up on an _Instance's class."""

    cls: type
    name: str

    def signature(self) -> inspect.Signature | None:
        """The method's signature as an instance calls it; _MISSING if the class has no such attribute."""
        try:
            static = inspect.getattr_static(self.cls, self.name)
        except AttributeError:
            hinted = any(self.name in getattr(klass, "__annotations__", {}) for klass in self.cls.__mro__)
            if hinted or hasattr(self.cls, "__getattr__"):
                return None  # an instance attribute, or answered dynamically
            return _MISSING
        if isinstance(static, (staticmethod, classmethod)):
            return _signature(getattr(self.cls, self.name))
        if inspect.isfunction(static):
            signature = _signature(static)
            if signature is None:
                return None
            return signature.replace(parameters=list(signature.parameters.values())[1:])
        return None  # a property, a slot, another descriptor: not a method the test can check


def _signature(func: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


def _returned_class(func: Any) -> type | None:
    """The class a function or classmethod is annotated to return (a plain name, or Self), else None."""
    if isinstance(func, _Method):
        owner: type | None = func.cls
        target = getattr(func.cls, func.name, None)
    else:
        owner = getattr(func, "__self__", None) if inspect.ismethod(func) else None
        target = func
    signature = _signature(target) if target is not None else None
    if signature is None or signature.return_annotation is inspect.Signature.empty:
        return None
    annotation = signature.return_annotation
    if isinstance(annotation, str):
        annotation = annotation.strip("'\"")
        if annotation == "Self" and isinstance(owner, type):
            return owner
        if isinstance(owner, type) and annotation == owner.__name__:
            return owner
        found = getattr(inspect.unwrap(target), "__globals__", {}).get(annotation)
        return found if isinstance(found, type) else None
    return annotation if isinstance(annotation, type) else None


def _kwargs_accepted(func: Any) -> set[str] | None:
    """The keywords a ``replace(**changes)`` takes: its dataclass's fields, or those of the class it
    forwards to (``FORWARDED_KEYWORDS``); None for any other callable."""
    if not isinstance(func, _Method) or func.name != "replace":
        return None
    signature = func.signature()
    if signature is None or signature is _MISSING:
        return None
    if [parameter.kind for parameter in signature.parameters.values()] != [inspect.Parameter.VAR_KEYWORD]:
        return None
    target: Any = func.cls
    for klass in func.cls.__mro__:
        if (klass.__module__, klass.__qualname__) in FORWARDED_KEYWORDS:
            module, attr = FORWARDED_KEYWORDS[klass.__module__, klass.__qualname__]
            target = getattr(importlib.import_module(module), attr)
            break
    if not dataclasses.is_dataclass(target):
        return None
    return {field.name for field in dataclasses.fields(target) if field.init}


def _annotation_types(annotation: Any, owner: Any) -> list[type] | None:
    """The classes of a parameter's annotation (``"A | B | None"``), or None when one is not a plain
    class the test can resolve (``Any``, a ``Literal``, a name imported only for type checking)."""
    if annotation is inspect.Parameter.empty:
        return None
    if isinstance(annotation, type):
        return [annotation]
    if not isinstance(annotation, str):
        return None
    module = sys.modules.get(getattr(owner, "__module__", ""), None)
    namespace = {**vars(builtins), **(vars(module) if module else {})}
    types: list[type] = []
    for part in annotation.strip("'\"").split("|"):
        words = part.strip().split("[")[0].split(".")
        if words == ["None"]:
            types.append(type(None))
            continue
        found: Any = namespace.get(words[0])
        for word in words[1:]:
            found = getattr(found, word, None)
        if not isinstance(found, type) or found is Any or getattr(found, "_is_protocol", False):
            return None  # not a class, or a Protocol (structural: any class may match it)
        types.append(found)
    return types


def _may_be(cls: type, annotation: Any, owner: Any) -> bool:
    """Whether an instance of ``cls`` may stand where ``annotation`` is asked (related classes, or an
    annotation the test cannot read). ``cls`` may be a Protocol (what ``get_backbone`` returns): a
    class then may be one if it has the protocol's methods."""
    types = _annotation_types(annotation, owner)
    if types is None:
        return True
    for kind in types:
        try:
            if issubclass(cls, kind) or issubclass(kind, cls):
                return True
        except TypeError:  # a Protocol with data members refuses issubclass
            methods = [name for name, member in vars(cls).items()
                       if not name.startswith("_") and inspect.isfunction(member)]
            if all(hasattr(kind, name) for name in methods):
                return True
    return False


@pytest.mark.parametrize("name", _params("test_fortekit_calls", list(SCRIPTS)))
def test_fortekit_calls(name: str) -> None:
    checker = _Checker(name)
    with _script_context():
        checker.run()
    assert not checker.problems, "\n".join(checker.problems)
    if checker.unavailable:
        unchecked = "; ".join(sorted(checker.unavailable))
        pytest.skip(f"scripts/{name}.py: the rest checked; unchecked: {unchecked}")


@pytest.mark.parametrize("owner", [f"{module}.{name}" for module, name in FORWARDED_KEYWORDS])
def test_forwarded_keywords_still_forward(owner: str) -> None:
    """Each FORWARDED_KEYWORDS entry still names a ``replace(**changes)`` and a dataclass."""
    module, name = owner.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), name)
    parameters = list(inspect.signature(cls.replace).parameters.values())[1:]
    assert [parameter.kind for parameter in parameters] == [inspect.Parameter.VAR_KEYWORD]
    target_module, target = FORWARDED_KEYWORDS[module, name]
    assert dataclasses.is_dataclass(getattr(importlib.import_module(target_module), target))
