"""With every distribution installed together (tox -e contract), `debate plugins --json`
lists each of them with its version. ``DEBATE_EXPECT_DISTRIBUTIONS`` names what tox installed;
without it (the core env) only debate-core is required."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version

import pytest

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop


def test_plugins_json_lists_every_installed_distribution() -> None:
    expected = [d for d in os.environ.get("DEBATE_EXPECT_DISTRIBUTIONS", "debate-core").split(",") if d]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATE_")}
    result = subprocess.run(
        [sys.executable, "-m", "debate_core.cli", "plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    for distribution in expected:
        mine = [r for r in rows if r["distribution"] == distribution]
        assert mine, f"{distribution} provides no component"
        assert all(r["status"] == "active" and r["version"] == version(distribution) for r in mine), mine
