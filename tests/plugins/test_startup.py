"""Importing debate_core, ``debate --help`` and ``debate plugins`` stay light: no torch,
transformers or datasets (timings live in benchmarks/startup.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

HEAVY = ("torch", "transformers", "datasets", "peft")

PROBE = """
import contextlib, io, sys
import debate_core
from debate_core.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    for argv in (["plugins", "--json"], ["plugins"]):
        main(argv)
    try:
        main(["--help"])
    except SystemExit:
        pass
print(",".join(sorted(m for m in {heavy} if m in sys.modules)))
"""


def test_cli_start_up_imports_no_heavy_library() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
