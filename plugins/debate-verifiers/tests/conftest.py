"""A served checkpoint for the environment's tests: the main job's debate (examples/arithmetic.toml:
3 agents, 2 rounds, blind review, vote_winner, v2 peer votes) on its shipped start, which keeps the
output contract, after one RL iteration of 2 debates (seconds), served by ``debate serve`` in a
subprocess on a free port of 127.0.0.1. Its debates reach round 2 and their peers compare each
other, so the rewards checked against ``debate score`` differ between agents."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

MAIN_JOB = Path(__file__).resolve().parents[3] / "examples" / "arithmetic.toml"
TINY_RUN = [
    "backend.options.num_threads=1",
    "backend.options.max_batch_rows=1",  # one sequence per model call: the same tokens every time
    "training.batch_size=2",
    "training.num_iterations=1",
    "training.max_steps_off_policy=0",
    "evaluation.num_problems=0",
    "evaluation.at_start=false",
    "logging.progress=off",
]


@attrs.frozen
class Served:
    run: Path
    url: str
    model: str


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from debate_core.cli import main

    run = tmp_path_factory.mktemp("run") / "run"
    assert main(["train", str(MAIN_JOB), *TINY_RUN, "--run-dir", str(run)]) == 0
    return run


@pytest.fixture(scope="session")
def served(tiny_run: Path) -> Iterator[Served]:
    """``debate serve RUN --port 0``, stopped with SIGTERM at the end of the session."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "debate_core.cli", "serve", str(tiny_run), "--port", "0", "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    first: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            first.append(line)
            ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(300), "debate serve printed no URL"
        yield Served(tiny_run, first[0].split()[0], tiny_run.name)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
