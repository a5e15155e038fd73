"""A disk that fills up, for the modules that write a run's files.

:class:`FullDisk` stands in for the ``os`` module of ``debate_core.files`` (every atomic write:
transcripts, reward sidecars, evaluation records, summary.json, manifests, the scripted backend's
saved states) and of ``debate_core.builtin.metric_sinks`` (metrics.jsonl). The disk fills at the
``at``-th write of the file ``target`` (a path relative to the run directory): that write fails
with ``ENOSPC``, as do all later writes while ``stays_full`` (until :meth:`free`).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ENOSPC = "No space left on device"


class FullDisk:
    def __init__(self, run_dir: Path, target: str, at: int = 1, stays_full: bool = True) -> None:
        self.target = (run_dir / target).resolve()
        self.at = at
        self.stays_full = stays_full
        self.seen = 0
        self.full = False
        self.failures: list[Path] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def _write(self, path: Path) -> None:
        """Fail the write of ``path`` when the disk is (or now becomes) full."""
        if not self.full and path.resolve() == self.target:
            self.seen += 1
            self.full = self.seen == self.at
            if self.full:
                self.failures.append(path)
                if not self.stays_full:
                    self.free()
                raise OSError(errno.ENOSPC, ENOSPC)
        if self.full:
            self.failures.append(path)
            raise OSError(errno.ENOSPC, ENOSPC)

    def free(self) -> None:
        self.full = False
        self.at = 0  # no further failure

    # the calls that put a file's bytes in place
    def replace(self, source: Any, target: Any) -> None:
        self._write(Path(target))
        os.replace(source, target)

    def fsync(self, fd: int) -> None:
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        try:
            self._write(path)
        except OSError:
            # the appended line was only partly written when space ran out
            size = os.fstat(fd).st_size
            if path.suffix == ".jsonl" and size:
                os.truncate(fd, max(size - 7, 0))
            raise
        os.fsync(fd)


@contextmanager
def full_disk(monkeypatch: pytest.MonkeyPatch, disk: FullDisk) -> Iterator[FullDisk]:
    """Write the run's files on ``disk`` inside the block."""
    import debate_core.files

    with monkeypatch.context() as patch:
        patch.setattr(debate_core.files, "os", disk)  # atomic files and appended JSON lines alike
        yield disk
