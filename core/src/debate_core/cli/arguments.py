"""Argument types and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

MAX_INDENT = 16
"""The widest ``--indent`` a command accepts (a bigger one would only make the output huge)."""


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number from ``low`` to ``high``; anything else is a usage error."""

    def parse(text: str) -> int:
        stripped = text.strip()
        digits = stripped.removeprefix("-").removeprefix("+")
        if not digits.isdigit() or len(digits) > 18 or not low <= int(stripped) <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, got {text[:40]!r}")
        return int(stripped)

    parse.__name__ = "whole number"
    return parse


def stdout_is_utf8() -> bool:
    """True when standard output encodes every character (``ensure_ascii`` is then not needed for JSON)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    return encoding in ("utf8", "utf8sig")
