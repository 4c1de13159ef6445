"""errors.py as a catalogue: codes in order, grouped in declared ranges with room left, each one used."""

from __future__ import annotations

import re
from pathlib import Path

import fortekit.errors

REPO = Path(__file__).resolve().parents[1]
SOURCE = (REPO / "errors.py").read_text(encoding="utf-8")
CODES = re.findall(r"^    ([EW]\d{3}) = ", SOURCE, flags=re.MULTILINE)
_RANGE = re.compile(r"^    # --- E(\d{3})-E(\d{3}):", flags=re.MULTILINE)
RANGES = [(int(lo), int(hi)) for lo, hi in _RANGE.findall(SOURCE)]


def _number(code: str) -> int:
    return int(code[1:])


def test_codes_are_unique_and_in_order() -> None:
    errors = [code for code in CODES if code.startswith("E")]
    warnings = [code for code in CODES if code.startswith("W")]
    assert len(set(CODES)) == len(CODES)
    assert errors == sorted(errors, key=_number) and warnings == sorted(warnings, key=_number)
    assert errors + warnings == CODES  # the warnings come last


def test_every_code_lies_in_a_declared_range_with_room_left() -> None:
    assert sorted(RANGES) == RANGES
    for lo, hi in RANGES:
        inside = [code for code in CODES if code.startswith("E") and lo <= _number(code) <= hi]
        assert hi - lo + 1 - len(inside) >= 5, f"E{lo:03d}-E{hi:03d} has {len(inside)} codes: no room left"
    for code in CODES:
        if code.startswith("E"):
            assert any(lo <= _number(code) <= hi for lo, hi in RANGES), f"{code} is in no declared range"


def test_every_code_is_raised_somewhere() -> None:
    sources = "\n".join(
        path.read_text(encoding="utf-8") for path in REPO.rglob("*.py")
        if not {".venv", ".laion-deps", "tests"} & set(path.parts) and path.name != "errors.py"
    )
    unused = [code for code in CODES if not re.search(rf"\b(Errors|Warnings)\.{code}\b", sources)]
    assert not unused, f"codes no code raises: {unused}"


def test_no_comment_points_at_the_issue_tracker() -> None:
    assert not re.search(r"#.*\bissues? \d", SOURCE) and "issue tracker" not in SOURCE


def test_every_message_starts_with_its_code() -> None:
    for code in CODES:
        assert getattr(fortekit.errors.Errors, code).startswith(f"[{code}] ")
