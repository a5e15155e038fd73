"""A plugin's tests run by a pytest of another environment, one without debate-core (the plugin
guide's "Testing a plugin"): the example plugin's conftest says in one line what to install, and
the guide shows that conftest as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TESTS = ROOT / "examples" / "debate-reward-brevity" / "tests"

WITHOUT_DEBATE_CORE = """
import importlib.abc
import sys


class NoDebateCore(importlib.abc.MetaPathFinder):
    '''An environment where debate-core is not installed.'''

    def find_spec(self, name, path=None, target=None):
        if name == "debate_core" or name.startswith("debate_core."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoDebateCore())
import pytest

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "tests"]))
"""

HANG_S = 300
"""A pytest that has not exited by then hangs (it imports nothing heavy; seconds on an idle machine)."""


@pytest.mark.slow  # starts a Python subprocess: not in the quick loop
def test_a_pytest_without_debate_core_says_what_to_install(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE_TESTS, tmp_path / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # the plugin's own root
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # no debate-core, so no entry point of its pytest plugin
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_DEBATE_CORE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    said = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode != 0 and len(said) == 1, said  # one line: no traceback, no import error per module
    assert said[0].startswith(
        "No module named 'debate_core': install debate-core[testing] into the environment that runs pytest"
    )


def test_the_plugin_guide_shows_the_example_conftest() -> None:
    conftest = (EXAMPLE_TESTS / "conftest.py").read_text(encoding="utf-8")
    guide = (ROOT / "docs" / "plugin-guide.md").read_text(encoding="utf-8")
    assert "```python\n# tests/conftest.py\n" + conftest + "```\n" in guide
