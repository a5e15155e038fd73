"""Ending the ``debate`` process without the interpreter's teardown.

Once a command has run and the interpreter's own exit has done what matters (waited for every
foreground thread, stopped idle thread pools, run every exit handler: the local backend's worker
threads closed and joined, temporary directories removed), nothing is left but freeing objects
one by one and tearing modules down: with torch and transformers loaded that took 4 s on an idle
2-core machine and 9 to 17 s under load, after the command's last line.

``exit_process`` therefore exits as usual (``sys.exit``), and the exit handler that this module
registered when it was imported, before any handler of a command, runs last: it closes
``logging``'s files, flushes standard output and error, and ends the process at once with
``os._exit``. Only public interfaces are used: ``atexit`` runs handlers last-registered first.
A file a command leaves open is not closed for it, as at any ``os._exit``: the commands close
what they open (``with``, atomic writes).

Only the real entry points (the ``debate`` script and ``python -m debate_core.cli``) exit this
way; ``main`` itself returns its status, so tests and tools that call it in-process keep their
interpreter and its teardown (the handler does nothing unless ``exit_process`` asked for it).
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

FLUSH_FAILED = 120
"""The status CPython exits with when flushing standard output fails at exit."""

_requested: list[int] = []
"""The status ``exit_process`` was asked to end with (empty: a normal exit, teardown included)."""


def status_of(exit_request: SystemExit) -> int:
    """The process status a ``SystemExit`` asks for, as the interpreter would set it (a
    message is printed to standard error and gives status 1)."""
    code = exit_request.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _flushed(status: int) -> int:
    """Flush standard output and error; a failed flush of standard output makes the status 120."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            if stream is sys.stdout and status == 0:
                status = FLUSH_FAILED
    return status


def _end_before_teardown() -> None:
    """The last exit handler: after every other one, end the process that ``exit_process`` ends."""
    if not _requested:
        return
    if "logging" in sys.modules:  # its own handler was registered before this one: it would not run
        sys.modules["logging"].shutdown()
    os._exit(_flushed(_requested[-1]))


atexit.register(_end_before_teardown)


def exit_process(status: int) -> NoReturn:
    """End the process with ``status`` once threads, exit handlers and output are done, before the
    interpreter frees its objects."""
    _requested.append(status)
    sys.exit(status)
