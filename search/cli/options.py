"""``KEY=VALUE`` command-line options (``--backbone-option``), read one way by every command.

The value grammar, the same for ``fol-refine``, ``fortekit index build`` and ``index add``:

* ``true`` / ``false`` (any case) are booleans;
* ``none`` / ``null`` (any case) is None;
* an integer (``8``, ``-3``) is an int; a decimal number (``0.5``, ``1e-3``, ``.5``) a float;
* anything else is the string as typed, spaces included (``model=/models/my clap``);
  ``nan`` and ``inf`` stay strings, and so do quotes and brackets (no JSON).

The key is stripped and its ``-`` become ``_`` (``batch-size=8`` is ``batch_size``); it must
then be a Python identifier, since it becomes a keyword argument of ``get_backbone``.

Example:
    >>> parse_options(["model=/models/clap", "batch-size=8", "allow_download=true", "seed=none"])
    {'model': '/models/clap', 'batch_size': 8, 'allow_download': True, 'seed': None}
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from fortekit.errors import Errors, QueryFileError

__all__ = ["option_type", "parse_option", "parse_option_value", "parse_options"]

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_WORDS: dict[str, Any] = {"true": True, "false": False, "none": None, "null": None}


def parse_option_value(text: str) -> Any:
    """One option value: bool, None, int, float, else the text itself (see the module's grammar).

    Example:
        >>> [parse_option_value(t) for t in ["8", "-0.5", "1e3", "True", "null", "inf", "/m", '"q"']]
        [8, -0.5, 1000.0, True, None, 'inf', '/m', '"q"']
    """
    word = text.strip()
    if word.lower() in _WORDS:
        return _WORDS[word.lower()]
    if _INT.fullmatch(word):
        return int(word)
    if _FLOAT.fullmatch(word):
        return float(word)
    return text


def parse_option(text: str, *, option: str = "--backbone-option") -> tuple[str, Any]:
    """``KEY=VALUE`` as ``(key, value)``, the key with ``-`` made ``_``.

    Args:
        text: the argument as given.
        option: the option's name, for the message.

    Raises:
        QueryFileError: no ``=``, or a key that is not an identifier (E668).

    Example:
        >>> parse_option("batch-size=16")
        ('batch_size', 16)
        >>> parse_option("model")
        Traceback (most recent call last):
        ...
        fortekit.errors.QueryFileError: [E668] --backbone-option takes KEY=VALUE, not 'model' (for example --backbone-option model=/models/clap-htsat). (See docs/errors.md#e668.)
    """  # noqa: E501
    key, sep, value = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key.isidentifier():
        raise QueryFileError(Errors.E668.format(
            option=option, expected="KEY=VALUE", value=text,
            hint=f" (for example {option} model=/models/clap-htsat)",
        ))
    return key, parse_option_value(value)


def parse_options(pairs: Iterable[str], *, option: str = "--backbone-option") -> dict[str, Any]:
    """Several ``KEY=VALUE`` strings as keyword arguments; a later key wins.

    Example:
        >>> parse_options(["seed=1", "seed=2", "name=two words"])
        {'seed': 2, 'name': 'two words'}
    """
    return dict(parse_option(pair, option=option) for pair in pairs)


def option_type(option: str = "--backbone-option") -> Callable[[str], tuple[str, Any]]:
    """:func:`parse_option` as an argparse ``type=``: a bad pair is a usage error (exit code 2).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> _ = parser.add_argument("--opt", type=option_type("--opt"), action="append", default=[])
        >>> dict(parser.parse_args(["--opt", "k=1", "--opt", "path=/a b"]).opt)
        {'k': 1, 'path': '/a b'}
    """

    def parse(text: str) -> tuple[str, Any]:
        try:
            return parse_option(text, option=option)
        except QueryFileError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = option.lstrip("-").replace("-", "_")  # argparse names it in some messages
    return parse


def option_paths(options: Iterable[tuple[str, Any]] | None) -> dict[str, Path]:
    """The options whose value names an existing file or folder (a model): inputs of the run.

    An output may not replace them (``fortekit.safe_write.check_not_input``).

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> list(option_paths([("model", folder), ("fusion", True), ("layer", "nowhere")]))
        ['backbone option model']
    """
    found: dict[str, Path] = {}
    for key, value in options or ():
        if isinstance(value, str) and value and Path(value).expanduser().exists():
            found[f"backbone option {key}"] = Path(value).expanduser()
    return found
