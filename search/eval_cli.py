"""`fortekit eval` sub-commands (placeholder until they land)."""

from __future__ import annotations

import argparse


def add_eval_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the sub-commands."""
