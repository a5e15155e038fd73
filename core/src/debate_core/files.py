"""Files written so that a crash never leaves half of one, JSON Lines appended a record at a time,
and JSON Lines read with line numbers.

Every file debate-core writes (resolved run files, transcripts, checkpoint manifests, metric
files, saved states of the test backend) goes through :func:`atomic_file`: the content is
written to a temporary file in the same folder, flushed to disk, then renamed over the
target, so the target is always either the old file or the whole new one. Folders written as
one (the local backend's saved states) go through :func:`atomic_directory` the same way.

A write that the system refuses (a full disk, a quota, a read-only or forbidden folder) raises
:class:`~debate_core.errors.OutputWriteError` naming the target and the reason, never a bare
``OSError``: the CLI prints it as one line, and the trainer stops as on a failed component
(docs/training.md#a-full-disk).
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal

from debate_core.errors import DebateError, LimitExceeded, OutputWriteError
from debate_core.limits import loads_json, read_limited_text


def _process_umask() -> int:
    """The process's umask (read once: setting it back at once leaves it as it was)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _process_umask()
FILE_MODE = 0o666 & ~_UMASK
"""What ``open(path, "w")`` would give a new file; temporary files start private (0600)."""
FOLDER_MODE = 0o777 & ~_UMASK

__all__ = [
    "atomic_directory",
    "atomic_file",
    "atomic_write_json",
    "atomic_write_text",
    "output_write_errors",
    "read_jsonl",
    "write_failure",
]


def write_failure(path: Path, error: OSError) -> OutputWriteError:
    """The error for ``error`` met while writing ``path``: ``cannot write PATH: REASON``."""
    reason = error.strerror or (os.strerror(error.errno) if error.errno else "") or str(error)
    return OutputWriteError(f"cannot write {path}: {reason or type(error).__name__}")


@contextmanager
def output_write_errors(path: Path) -> Iterator[None]:
    """Turn an ``OSError`` raised in the block into :class:`OutputWriteError` naming ``path``
    (the file the block writes), so that it ends a command or a run with one line."""
    try:
        yield
    except OSError as exc:
        raise write_failure(path, exc) from exc


@contextmanager
def atomic_file(path: Path, mode: Literal["w", "wb"] = "w") -> Iterator[IO[Any]]:  # Any: str or bytes, as `mode`
    """A handle to write ``path`` through a temporary file, renamed into place when the block ends.

    The folder is created when missing; if the block raises, the temporary file is removed and
    ``path`` is left as it was. An ``OSError`` (the block's included) becomes
    :class:`OutputWriteError` naming ``path``.
    """
    with output_write_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.fchmod(fd, FILE_MODE)
            encoding = None if "b" in mode else "utf-8"
            with open(fd, mode, encoding=encoding) as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


@contextmanager
def atomic_directory(path: Path) -> Iterator[Path]:
    """A staging folder to fill, renamed over ``path`` when the block ends (a folder ``path``
    already there is replaced); if the block raises, the staging folder is removed and ``path``
    is left as it was. An ``OSError`` (the block's included) becomes :class:`OutputWriteError`
    naming ``path``."""
    with output_write_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
        try:
            staging.chmod(FOLDER_MODE)
            yield staging
            for file in staging.iterdir():
                with open(file, "rb") as handle:
                    os.fsync(handle.fileno())
                    # a writer that stages through a private temporary file (safetensors under
                    # save_pretrained) leaves 0600 beside 0644: every file gets open()'s mode
                    if file.is_file() and not stat.S_IMODE(os.fstat(handle.fileno()).st_mode) & 0o111:
                        os.fchmod(handle.fileno(), FILE_MODE)
            if path.exists():
                retired = path.parent / f".{path.name}.old-{os.getpid()}"
                os.replace(path, retired)
                os.replace(staging, path)
                shutil.rmtree(retired, ignore_errors=True)
            else:
                os.replace(staging, path)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_file(path) as handle:
        handle.write(text)


def atomic_write_json(path: Path, data: object, indent: int | None = 1) -> None:
    """Write ``data`` as JSON to ``path`` atomically."""
    with atomic_file(path) as handle:
        json.dump(data, handle, indent=indent)


def read_jsonl(
    path: Path, error: Callable[[str], DebateError] = DebateError, what: str = "file", limit: str = "input_bytes"
) -> Iterator[tuple[str, Any]]:  # Any: a JSON value (records' JsonValue; files sits beside records)
    """The decoded objects of a JSON Lines file, as ``(where, object)``; blank lines are skipped.
    ``where`` is ``FILE:LINE``, for error messages about the object; ``what`` names the file
    in the message for a missing one (``no such dataset file``). The file is read only up to
    ``limit`` (``input_bytes``, or ``dataset_bytes`` for datasets; docs/limits.md), and each
    line's JSON may nest only to the ``nesting`` limit.

    Raises:
        DebateError (or what ``error`` makes of the message): the file cannot be read, is past its
            limit, or a line is not JSON; the message names the file (and the line).
    """
    try:
        text = read_limited_text(path, what, limit)
    except LimitExceeded:
        raise
    except DebateError as exc:
        raise error(str(exc)) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = loads_json(line)
        except ValueError as exc:
            raise error(f"{where}: {exc}") from None
        yield where, record


class JsonLinesAppender:
    """Appends one JSON object a line to ``path``, written unbuffered and fsynced, so that a crash or
    a full disk loses at most the line being written (its reader drops a torn last line). A write
    the system refuses raises ``OutputWriteError`` naming the file; nothing is kept buffered to
    fail again on :meth:`close`. Non-finite floats are written as ``null`` (JSON has none)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with output_write_errors(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = path.open("ab", buffering=0)

    def append(self, record: Mapping[str, object]) -> None:
        """Write ``record`` as one line, then fsync."""
        safe = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in record.items()}
        data = memoryview((json.dumps(safe, sort_keys=False) + "\n").encode("utf-8"))
        with output_write_errors(self.path):
            while data:
                written = self._handle.write(data)
                if not written:  # a regular file takes at least a byte or raises; never spin
                    raise OSError(errno.EIO, "the file took no more bytes")
                data = data[written:]
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


class StepRecords:
    """A metric sink's file of ``{"step": step, ...metrics}`` lines (:class:`JsonLinesAppender`:
    unbuffered, fsynced, non-finite numbers as ``null``): the run's ``metrics.jsonl`` and the
    ``jsonl`` sink's copies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = JsonLinesAppender(path)

    def write(self, step: int, metrics: Mapping[str, object]) -> None:
        self._file.append({"step": step, **metrics})

    def resume(self, step: int) -> str:
        """What the file does on a resume from ``step`` (resuming kept its records up to it)."""
        return f"appends to {self.path} after its record of step {step}"

    def close(self) -> None:
        self._file.close()
