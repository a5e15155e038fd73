"""One writer per run directory (docs/training.md#one-writer-per-run): a second process is refused
naming the holder, and the lock of a process that is gone is taken over with a notice."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from debate_core.plugin import Registry
from debate_core.rundir.lock import LOCK_NAME, LockHolder, RunLockedError, run_directory_lock
from tests.training.fault_runs import stable, train

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

ROOT = Path(__file__).parents[2]

HOLDER = """
import sys, time
from pathlib import Path
from debate_core.rundir.lock import run_directory_lock
with run_directory_lock(Path({run!r}), print):
    print("held", flush=True)
    while True:  # until killed
        time.sleep(60)
"""

RESUME = """
import sys
sys.path.insert(0, {root!r})
from tests.training.trainer_harness import BASE_OVERRIDES, harness_registry
from debate_core.cli import main
with harness_registry():
    sys.exit(main(["train", "--resume", {run!r}, *BASE_OVERRIDES]))
"""


def _hold(run: Path) -> subprocess.Popen[str]:
    """A second real process that takes the run's lock and keeps it until killed."""
    child = subprocess.Popen([sys.executable, "-c", HOLDER.format(run=str(run))], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def _kill(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


def test_a_second_process_is_refused_naming_the_holder(registry: Registry, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(registry, run)
    before = (run / "metrics.jsonl").read_bytes()
    holder = _hold(run)
    try:
        second = subprocess.run(
            [sys.executable, "-c", RESUME.format(root=str(ROOT), run=str(run))],
            capture_output=True,
            text=True,
            timeout=600,  # a loaded machine: the lock is held until the holder is killed
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
    finally:
        _kill(holder)
    assert second.returncode == 1
    errors = [line for line in second.stderr.splitlines() if line.startswith("debate: error:")]
    assert len(errors) == 1, second.stderr
    assert f"pid {holder.pid} on {socket.gethostname()}, since " in errors[0]
    assert (run / "metrics.jsonl").read_bytes() == before  # the refused process wrote nothing


def test_the_lock_of_a_killed_process_is_taken_over_with_a_notice(
    registry: Registry, tmp_path: Path, uninterrupted: Path
) -> None:
    run = tmp_path / "run"
    holder = _hold(run)
    _kill(holder)
    left = LockHolder.from_text((run / LOCK_NAME).read_text())
    assert left is not None and left.pid == holder.pid  # a killed process leaves its line behind
    messages: list[str] = []
    train(registry, run, messages=messages)
    taken = [m for m in messages if "took over the lock" in m]
    assert len(taken) == 1 and f"pid {holder.pid}" in taken[0] and "its process is gone" in taken[0]
    assert stable(run / "metrics.jsonl") == stable(uninterrupted / "metrics.jsonl")
    assert (run / LOCK_NAME).read_text() == ""  # released when the run ended


def test_the_same_process_cannot_take_the_lock_twice(tmp_path: Path) -> None:
    with run_directory_lock(tmp_path, print) as me:
        assert me.pid == os.getpid()
        with pytest.raises(RunLockedError, match=f"pid {os.getpid()} on "), run_directory_lock(tmp_path, print):
            pass
    with run_directory_lock(tmp_path, print):  # released: free again
        pass


def test_without_kernel_locks_a_live_holder_still_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system that cannot lock: the holder line decides (a live process refuses, a dead
    one is taken over)."""
    import errno
    import fcntl

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    holder = _hold(tmp_path)
    monkeypatch.setattr(fcntl, "flock", no_locks)
    try:
        with pytest.raises(RunLockedError, match=f"pid {holder.pid} "), run_directory_lock(tmp_path, print):
            pass
    finally:
        _kill(holder)
    notices: list[str] = []
    with run_directory_lock(tmp_path, notices.append):
        pass
    assert len(notices) == 1 and f"pid {holder.pid}" in notices[0]


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_refused_writer_names_the_new_holder_not_the_dead_one_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between taking the lock and writing its line, a new holder leaves the dead holder's line in
    the file: the refusal waits for the new line instead of naming the dead process."""
    from debate_core.rundir import lock as run_lock

    root = tmp_path / "run"
    root.mkdir()
    dead = run_lock.LockHolder(_dead_pid(), socket.gethostname(), "2026-01-01T00:00:00Z")
    (root / run_lock.LOCK_NAME).write_text(dead.to_line())
    holder = os.open(root / run_lock.LOCK_NAME, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # taken, line not yet written
    me = run_lock.LockHolder.this_process()
    writer = threading.Timer(0.2, lambda: (root / run_lock.LOCK_NAME).write_text(me.to_line()))
    # the refused writer waits for the line however late a loaded machine runs the writer thread
    monkeypatch.setattr(run_lock, "HOLDER_LINE_WAIT_S", 60.0)
    writer.start()
    try:
        with (
            pytest.raises(run_lock.RunLockedError, match=rf"is being written by pid {me.pid} on "),
            run_lock.run_directory_lock(root, print),
        ):
            pass
        writer.join()
        (root / run_lock.LOCK_NAME).write_text(dead.to_line())  # a holder that never writes its line
        monkeypatch.setattr(run_lock, "HOLDER_LINE_WAIT_S", 0.1)
        with (
            pytest.raises(run_lock.RunLockedError, match=r"by another process \(its holder line is not written"),
            run_lock.run_directory_lock(root, print),
        ):
            pass
    finally:
        writer.cancel()
        os.close(holder)
