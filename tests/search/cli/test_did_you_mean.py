""""Did you mean": every mistyped option and sub-command of every fortekit command and of fol-refine
gets the command's own usage and the nearest spelling (E762, E763), never the top-level usage."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from fortekit.search.cli.main import build_parser, build_refine_parser, main
from fortekit.search.cli.output_options import walk_parsers
from fortekit.search.cli.suggest import SuggestingParser, doc_page


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as caught:
        parser.parse_args(argv)
    return int(caught.value.code or 0), err.getvalue()


def _commands() -> list[tuple[str, tuple[str, ...], argparse.ArgumentParser]]:
    found = [("fortekit", path, sub) for path, sub in walk_parsers(build_parser())]
    return found + [("fol-refine", path, sub) for path, sub in walk_parsers(build_refine_parser())]


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings
            if option.startswith("--") and option not in ("--help", "--version")]


def test_every_parser_suggests() -> None:
    for _, _, parser in _commands():
        assert isinstance(parser, SuggestingParser), parser.prog


def _prog(value: object) -> str | None:
    return getattr(value, "prog", None)


@pytest.mark.parametrize(("root", "path", "parser"), _commands(), ids=_prog)
def test_a_mistyped_option_names_the_nearest_one(root: str, path: tuple[str, ...],
                                                 parser: argparse.ArgumentParser) -> None:
    top = build_parser() if root == "fortekit" else build_refine_parser()
    for option in _long_options(parser):
        typo = option + option[-1]  # --explain -> --explainn: a prefix of no option
        status, err = _parse(top, [*path, typo])
        assert status == 2, (parser.prog, typo)
        expected = f"{parser.prog}: error: [E762] unrecognized argument {typo}: did you mean {option}?"
        assert expected in err, err
        assert f"usage: {parser.prog}" in err and f"`{parser.prog} --help`" in err


def _transposed(name: str) -> str:
    """``name`` with its last two different neighbouring letters swapped: a typo of it."""
    for k in range(len(name) - 1, 0, -1):
        if name[k] != name[k - 1]:
            return name[: k - 1] + name[k] + name[k - 1] + name[k + 1 :]
    return name + name[-1]


@pytest.mark.parametrize(("root", "path", "parser"), [
    command for command in _commands() if any(isinstance(action, argparse._SubParsersAction)
                                              for action in command[2]._actions)
], ids=_prog)
def test_a_mistyped_sub_command_names_the_nearest_one(root: str, path: tuple[str, ...],
                                                      parser: argparse.ArgumentParser) -> None:
    top = build_parser()
    action = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    for name in action.choices:
        if len(name) < 4:
            continue
        typo = _transposed(name)  # search -> searhc, build-ann -> build-nan
        status, err = _parse(top, [*path, typo])
        assert status == 2 and f"[E763] invalid choice '{typo}': did you mean '{name}'?" in err, err
        assert f"usage: {parser.prog}" in err


def test_the_friction_cases_of_the_issue(capsys: pytest.CaptureFixture[str]) -> None:
    # `fortekit search --explian`: the search usage and --explain, even without the required --index
    with pytest.raises(SystemExit) as caught:
        main(["search", "--explian", "a dog"])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "usage: fortekit search" in err and "usage: fortekit [" not in err
    assert "did you mean --explain?" in err and "docs/retriever.md" in err
    with pytest.raises(SystemExit):
        main(["search", "--index", "clips.index", "--explian", "a dog"])
    err = capsys.readouterr().err
    assert "fortekit search: error: [E762] unrecognized argument --explian: did you mean --explain?" in err
    with pytest.raises(SystemExit):
        main(["serch", "--index", "clips.index"])
    assert "did you mean 'search'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["search", "--index", "i", "--format", "jsn", "q"])  # a choice of an option
    assert "did you mean 'jsonl'?" in capsys.readouterr().err


def test_fol_refine_suggests() -> None:
    status, err = _parse(build_refine_parser(), ["q.txt", "--explian"])
    assert status == 2
    assert "fol-refine: error: [E762] unrecognized argument --explian: did you mean --explain?" in err
    assert "docs/refine.md" in err
    status, err = _parse(build_refine_parser(), ["q.txt", "--stage1", "ofline"])
    assert status == 2 and "did you mean 'offline'?" in err


def test_unknown_arguments_without_a_near_option() -> None:
    status, err = _parse(build_parser(), ["index", "info", "--index", "i", "--zzzzzzzz", "stray"])
    assert status == 2
    assert "[E762] unrecognized arguments --zzzzzzzz stray. `fortekit index info --help`" in err


def test_values_are_not_taken_for_options() -> None:
    parser = build_parser()
    args = parser.parse_args(["search", "--index", "i", "-k5", "--top=3", "--", "--not-an-option"])
    assert args.top_k == 3 and args.queries == ["--not-an-option"]
    assert doc_page("fortekit search") == "docs/retriever.md" and doc_page("fortekit") is None
