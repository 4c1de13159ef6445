"""docs/errors.md lists every code, and every message points to a page (issue 46, conventions)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import fortekit.errors
from fortekit.errors import ERRORS_PAGE, Errors

REPO = Path(__file__).resolve().parents[1]
CODES = re.findall(r"^    ([EW]\d{3}) = ", (REPO / "errors.py").read_text("utf-8"), flags=re.MULTILINE)


def test_the_page_is_what_the_script_writes() -> None:
    done = subprocess.run([sys.executable, "scripts/errors_page.py", "--check"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_code_has_its_entry_and_every_section_its_page() -> None:
    page = (REPO / ERRORS_PAGE).read_text("utf-8")
    assert [code for code in CODES if f"### {code}\n" not in page] == []
    sections = page.split("\n## ")[1:]
    assert sections and all("Explained in [docs/" in section for section in sections)
    for linked in re.findall(r"\]\(([a-z_]+\.md)\)", page):
        assert (REPO / "docs" / linked).is_file(), linked


def test_every_message_points_to_a_page() -> None:
    for code in CODES:
        message = getattr(Errors, code)
        assert "docs/" in message, code
        if "docs/errors.md" in message:
            assert message.endswith(f"(See docs/errors.md#{code.lower()}.)"), code


def test_a_message_with_its_own_page_keeps_it() -> None:
    assert "docs/errors.md" not in fortekit.errors.Errors.E001
