"""One writer per run directory: the lock a training run holds on ``RUN_DIR/.lock``.

A run that trains, resumes, or evaluates into a run directory holds an exclusive ``flock`` on
``RUN_DIR/.lock`` for as long as it writes there, and keeps its holder (process id, host, start
time) in the file. A second writer (a scheduler's retry, a second terminal) is refused with one
line naming the holder. The kernel drops the lock when its process dies, however it dies; the
next writer then finds the dead holder's line still in the file and says that it takes the lock
over. ``debate report`` and ``debate show`` only read, and never take it.

On a file system that does not lock (``flock`` fails with ENOLCK or EOPNOTSUPP; some FUSE and
old NFS mounts), the holder line alone decides: a holder whose process is alive on this host, or
any holder on another host, refuses; a holder gone from this host is taken over. Two writers
starting at the same instant can then both pass (docs/training.md#one-writer-per-run).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

import attrs

from debate_core.errors import DebateError
from debate_core.files import output_write_errors

LOCK_NAME = ".lock"
"""The lock file inside a run directory."""

_NO_LOCKING = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)
"""``flock`` errors that mean the file system cannot lock at all."""


class RunLockedError(DebateError):
    """Another live process writes the run directory."""


@attrs.frozen
class LockHolder:
    """Who holds (or last held) a run directory's lock."""

    pid: int
    host: str
    started: str
    """When the holder took the lock (UTC, ISO 8601 to the second)."""

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, since {self.started}"

    def to_line(self) -> str:
        return json.dumps({"pid": self.pid, "host": self.host, "started": self.started}) + "\n"

    @classmethod
    def from_text(cls, text: str) -> LockHolder | None:
        """The holder a lock file names; ``None`` for an empty or unreadable one."""
        try:
            data = json.loads(text)
            return cls(pid=int(data["pid"]), host=str(data["host"]), started=str(data["started"]))
        except (ValueError, TypeError, KeyError):
            return None

    @classmethod
    def this_process(cls) -> LockHolder:
        started = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        return cls(pid=os.getpid(), host=socket.gethostname(), started=started)


def process_alive(pid: int) -> bool:
    """True when a process with this id exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def _read_holder(fd: int) -> LockHolder | None:
    os.lseek(fd, 0, os.SEEK_SET)
    return LockHolder.from_text(os.read(fd, 4096).decode("utf-8", errors="replace"))


HOLDER_LINE_WAIT_S = 2.0
"""How long a refused writer waits for the lock's new holder to write its line."""


def _current_holder(fd: int) -> LockHolder | None:
    """The holder of a lock another process holds. Between taking the lock and writing its own line,
    a new holder leaves the file empty or naming the previous holder, whose process is gone: such a
    line is read again until it names a live holder (at most ``HOLDER_LINE_WAIT_S``); ``None`` when
    it never does."""
    deadline = time.monotonic() + HOLDER_LINE_WAIT_S
    while True:
        holder = _read_holder(fd)
        stale = holder is None or (holder.host == socket.gethostname() and not process_alive(holder.pid))
        if not stale:
            return holder
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.02)


def _write_holder(fd: int, holder: LockHolder | None) -> None:
    os.ftruncate(fd, 0)
    if holder is not None:
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, holder.to_line().encode())
        os.fsync(fd)


def _refusal(root: Path, holder: LockHolder | None) -> RunLockedError:
    who = holder.describe() if holder is not None else "another process (its holder line is not written or unreadable)"
    return RunLockedError(
        f"{root} is being written by {who}; wait for it to finish or stop it "
        f"(a process that is gone releases the lock by itself)"
    )


def live_holder(root: Path) -> LockHolder | None:
    """Who holds the writer's lock of ``root`` now (without taking it): a live process, or
    ``None`` when nobody does (no lock file, a free lock, a file system that cannot lock)."""
    path = root / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _current_holder(fd)
            return holder if holder is not None else LockHolder(pid=0, host="?", started="?")
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def held_message(root: Path, holder: LockHolder) -> str:
    """The line that says ``root`` is being written, by whom."""
    return str(_refusal(root, holder if holder.pid else None))


@contextmanager
def run_directory_lock(root: Path, notice: Callable[[str], object]) -> Iterator[LockHolder]:
    """Hold the writer's lock of run directory ``root`` for the block.

    ``notice`` receives the one line said when a dead holder's lock is taken over.

    Raises:
        RunLockedError: a live process holds the lock; the message names it.
        OutputWriteError: the lock file cannot be created (a read-only or full disk).
    """
    path = root / LOCK_NAME
    with output_write_errors(path):
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        kernel_lock = True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _refusal(root, _current_holder(fd)) from None
        except OSError as exc:
            if exc.errno not in _NO_LOCKING:
                raise
            kernel_lock = False
        me = LockHolder.this_process()
        previous = _read_holder(fd)
        if previous is not None and previous.pid != me.pid:
            gone = previous.host == me.host and not process_alive(previous.pid)
            if not kernel_lock and not gone:
                raise _refusal(root, previous)
            why = "its process is gone" if gone or previous.host == me.host else f"its lock on {previous.host} is free"
            notice(f"debate: took over the lock of {root} left by {previous.describe()} ({why})")
        with output_write_errors(path):
            _write_holder(fd, me)
        try:
            yield me
        finally:
            with suppress(OSError):  # a full disk cannot stop the release: the kernel lock goes with the fd
                _write_holder(fd, None)
    finally:
        os.close(fd)
