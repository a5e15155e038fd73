"""Offline tools: run by hand or at build time, never imported by a run."""

from __future__ import annotations

import sys
from collections.abc import Callable

from debate_core.errors import DebateError


def run_tool(name: str, work: Callable[[], str]) -> int:
    """A tool's exit status: 0 with what ``work`` returns printed, or 1 with a ``DebateError`` as
    one line on standard error (``NAME: error: ...``)."""
    try:
        said = work()
    except DebateError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 1
    print(said)
    return 0
