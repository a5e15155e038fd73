"""A chaos soak (docs/training.md#checkpoints-stops-faults): a run SIGKILLed 20 times at random
points (while it starts, resumes, trains, checkpoints) and resumed after each kill finishes with
the metrics of an uninterrupted run; and two resumes of one run started at once: one trains, the
other is refused naming it (docs/training.md#one-writer-per-run).

Every life of the run is a real process forked from a forkserver that has imported debate-core
once, so a kill costs milliseconds of start-up rather than a second of imports."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import time
from collections.abc import Callable
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from pathlib import Path

import pytest

from debate_core.plugin import Registry
from debate_core.rundir.lock import LOCK_NAME, LockHolder
from tests.training.trainer_harness import BASE_OVERRIDES, make_config, read_metrics, train_quietly, without_timings

pytestmark = pytest.mark.slow

ITERATIONS = 30
RUN = (f"training.num_iterations={ITERATIONS}", "training.save_every=1", "evaluation.num_problems=0")
KILLS = 20
WAIT_S = 120.0
"""The longest one life may take to reach its kill point (a loaded machine)."""


def train_in_child(argv: list[str], log: str) -> None:
    """``debate train ARGV`` with the harness plugins, in a child process; exits with its status."""
    from debate_core.cli import main
    from debate_core.rundir import lock as run_lock
    from tests.training.trainer_harness import harness_registry

    # a refused resume names the winner once the winner has written its line: it waits for that as
    # long as for any progress here, not the trainer's fixed 2 s, which a loaded machine may outlast
    run_lock.HOLDER_LINE_WAIT_S = WAIT_S
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    with harness_registry():
        code = main(argv)
    os._exit(code)


@pytest.fixture(scope="module")
def forkserver() -> ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["debate_core.cli", "tests.training.trainer_harness", __name__])
    return context


def _start(context: ForkServerContext, run: Path, log: Path, *, resume: bool) -> BaseProcess:
    if resume:
        argv = ["train", "--resume", str(run)]
    else:
        run_file = run.parent / "run.toml"
        run_file.write_text("", encoding="utf-8")
        argv = ["train", str(run_file), *BASE_OVERRIDES, *RUN, "--run-dir", str(run)]
    child = context.Process(target=train_in_child, args=(argv, str(log)))
    child.start()
    return child


def _records(run: Path) -> int:
    try:
        return (run / "metrics.jsonl").read_bytes().count(b"\n")
    except OSError:
        return 0


def _holds_lock(run: Path, child: BaseProcess) -> bool:
    try:
        holder = LockHolder.from_text((run / LOCK_NAME).read_text(encoding="utf-8"))
    except OSError:
        return False
    return holder is not None and holder.pid == child.pid


def _wait(condition: Callable[[], bool], child: BaseProcess) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition() and child.is_alive():
        assert time.monotonic() < deadline, "a life of the run made no progress"
        time.sleep(0.002)


def test_a_run_killed_20_times_at_random_resumes_to_the_uninterrupted_run(
    forkserver: ForkServerContext, registry: Registry, tmp_path: Path
) -> None:
    rng = random.Random(22)
    run = tmp_path / "run"
    kills: list[str] = []
    life = 0
    while True:
        child = _start(forkserver, run, tmp_path / f"life_{life:02d}.log", resume=life > 0)
        if len(kills) < KILLS:
            if rng.random() < 0.5:  # while it starts: taking the lock, resuming, opening the backend
                _wait(lambda child=child: _holds_lock(run, child), child)  # type: ignore[misc]
                time.sleep(rng.uniform(0.0, 0.15))
                where = "starting"
            else:  # within a step: sampling, updating, checkpointing, writing its record
                target = _records(run) + 1
                _wait(lambda target=target: _records(run) >= target, child)  # type: ignore[misc]
                time.sleep(rng.uniform(0.0, 0.05))
                where = f"after record {target}"
            assert child.is_alive(), f"life {life} finished before its kill ({where}); lengthen the run"
            child.kill()
            child.join(30)
            assert child.exitcode == -9
            kills.append(where)
        else:
            child.join(WAIT_S * 5)
            log = (tmp_path / f"life_{life:02d}.log").read_text(encoding="utf-8")
            assert child.exitcode == 0, log
            break
        life += 1
    assert len(kills) == KILLS

    straight = tmp_path / "straight"
    train_quietly(make_config(*RUN), registry, straight, handle_signals=False)
    assert without_timings(read_metrics(run / "metrics.jsonl")) == without_timings(
        read_metrics(straight / "metrics.jsonl")
    )
    summary = json.loads((run / "summary.json").read_text())
    assert summary["iterations"] == ITERATIONS and summary["lost_history"] == {"metrics": [], "transcripts": []}


def test_two_resumes_at_once_one_trains_and_the_other_is_refused(
    forkserver: ForkServerContext, registry: Registry, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    first = _start(forkserver, run, tmp_path / "first.log", resume=False)
    _wait(lambda: _records(run) >= 2, first)
    first.kill()
    first.join(30)

    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    children = [_start(forkserver, run, log, resume=True) for log in logs]
    for child in children:
        child.join(WAIT_S * 5)
    codes = [child.exitcode for child in children]
    assert sorted(codes) == [0, 1], codes  # type: ignore[type-var]
    winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
    refusal = [line for line in logs[loser].read_text().splitlines() if line.startswith("debate: error:")]
    assert len(refusal) == 1 and f"is being written by pid {children[winner].pid} on " in refusal[0], refusal

    straight = tmp_path / "straight"
    train_quietly(make_config(*RUN), registry, straight, handle_signals=False)
    assert without_timings(read_metrics(run / "metrics.jsonl")) == without_timings(
        read_metrics(straight / "metrics.jsonl")
    )
