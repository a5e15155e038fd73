"""The README's command blocks, walked in order as a newcomer runs them (issue 55), on a shortened
main job: every command lands on the run it means (the smoke run in ``runs/smoke``, the main job
in ``runs/main``, and after the main job nothing names the smoke run), and the smoke run's whole
terminal output fits in 40 lines of 120 characters.

The install and test commands (a virtual environment, ``pip install``, ``pytest``, ``tox``) are
what this test runs in, so they are recognised and not run; any other command that is not
``debate ...`` fails the test, so a new kind of command gets a check here.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

pytestmark = pytest.mark.slow  # runs the smoke run and a shortened main job end to end

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

MAIN_JOB = ["debate", "train", "examples/arithmetic.toml", "--run-dir", "runs/main"]
SHORTENED = ["training.num_iterations=2", "training.batch_size=2", "evaluation.num_problems=2"]
"""What shortens the main job here: 2 iterations of 2 debates, evaluations of 2 problems."""
MAIN_STEPS = 2

SETUP = ("python3.11 -m venv ", "pip install ", "pytest ")
"""The install and test commands, recognised and not run."""

SMOKE_LINES, SMOKE_WIDTH = 40, 120


@attrs.frozen
class Ran:
    """One README command as run: its words, exit status and output."""

    words: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def readme_commands(text: str) -> list[list[str]]:
    """The commands of the README's ``bash`` blocks in order, each as its words (comments off)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def is_setup(words: list[str]) -> bool:
    line = " ".join(words)
    return line.startswith(SETUP) or line == "pip install tox && tox"


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> list[Ran]:
    """Every ``debate`` command of the README run in order in a fresh directory holding the
    repository's ``examples``, the main job shortened."""
    where = tmp_path_factory.mktemp("readme")
    (where / "examples").symlink_to(ROOT / "examples")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATE_")}
    env.update(OMP_NUM_THREADS="1", COLUMNS="120")
    ran = []
    for words in readme_commands(README.read_text(encoding="utf-8")):
        if is_setup(words):
            continue
        assert words[0] == "debate", f"a README command this test does not know: {' '.join(words)}"
        argv = [*words, *SHORTENED] if words == MAIN_JOB else words
        done = subprocess.run(
            [sys.executable, "-m", "debate_core.cli", *argv[1:]],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        ran.append(Ran(tuple(words), done.returncode, done.stdout, done.stderr))
        assert done.returncode == 0, f"{' '.join(words)} failed: {done.stderr[-2000:]}"
    return ran


def named_runs(words: tuple[str, ...]) -> set[str]:
    """The run directories (``runs/NAME``) a command names."""
    return {m.group(1) for word in words for m in [re.match(r"runs/([^/]+)", word)] if m}


def test_the_readme_walks_from_the_smoke_run_to_the_main_job_and_what_follows(walked: list[Ran]) -> None:
    trains = [r for r in walked if r.words[:2] == ("debate", "train")]
    assert [named_runs(r.words) for r in trains] == [{"smoke"}, {"main"}]
    assert "run directory: runs/smoke" in trains[0].stdout.splitlines()
    assert "run directory: runs/main" in trains[1].stdout.splitlines()
    after = walked[walked.index(trains[1]) + 1 :]
    assert after, "the README says nothing to do after the main job"
    for ran in after:  # nothing after the main job lands on the smoke run
        assert named_runs(ran.words) <= {"main", "debate.json"}, ran.words
    for ran in walked:
        assert "runs/smoke" not in ran.words or ran is trains[0]


def test_each_command_after_the_main_job_works_on_the_main_job(walked: list[Ran]) -> None:
    checked = 0
    for ran in walked:
        if ran.words[:2] == ("debate", "report"):
            assert ran.stdout.strip() == "runs/main/report.html"
            checked += 1
        if ran.words[:2] == ("debate", "run") and "--checkpoint" in ran.words:
            target = ran.words[ran.words.index("--checkpoint") + 1]
            assert target == "runs/main"
            said = [line for line in ran.stderr.splitlines() if line.startswith("debate: checkpoint ")]
            assert said == [said[0]] and said[0].startswith(
                f"debate: checkpoint runs/main: step {MAIN_STEPS} (weights "
            )
            assert "/runs/main/checkpoints/" in said[0]
            checked += 1
        if ran.words[:2] in (("debate", "show"), ("debate", "score")):
            assert ran.words[-1] == "runs/debate.json" and ran.stdout.strip()
            checked += 1
    assert checked == 4


def test_the_smoke_runs_terminal_output_fits_in_40_lines_of_120_characters(walked: list[Ran]) -> None:
    smoke = walked[0]
    assert named_runs(smoke.words) == {"smoke"}
    lines = (smoke.stderr + smoke.stdout).splitlines()
    assert len(lines) <= SMOKE_LINES, "\n".join(lines)
    assert max(len(line) for line in lines) <= SMOKE_WIDTH, max(lines, key=len)
    text = "\n".join(lines)
    assert text.count("too few for a standard error") == 1  # said once, not on every row
    assert text.count("learning: 3 RL iterations are too few to learn anything") == 1
    assert "one answer (direct accuracy)" in text and "the debate's answer" in text
    assert "eval start: judge benchmark" not in text or "pairs in order" in text
