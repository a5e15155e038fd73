"""Ending the ``debate`` process without the interpreter's teardown.

Once a command has run, everything it wrote is flushed and every exit handler has run (the
local backend's worker threads closed and joined, temporary directories removed, logging
flushed), nothing is left for the interpreter to do but free objects one by one: with torch
and transformers loaded that garbage collection and module teardown took 4 s on an idle
2-core machine and 9 to 17 s under load, after the command's last line. ``exit_process`` does
what a normal exit does that matters (threads, exit handlers, closing every file object still
open, so that what was written to it reaches its file, flushing standard output and error), then
ends the process at once with ``os._exit``.

Only the real entry points (the ``debate`` script and ``python -m debate_core.cli``) exit this
way; ``main`` itself returns its status, so tests and tools that call it in-process keep their
interpreter.
"""

from __future__ import annotations

import atexit
import gc
import io
import os
import sys
import threading
from typing import NoReturn

FLUSH_FAILED = 120
"""The status CPython exits with when flushing standard output fails at exit."""


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


def _join_foreground_threads() -> None:
    """What the interpreter does before its exit handlers: run ``threading``'s own exit hooks
    (they stop idle thread pools) and wait for every thread that is not a daemon."""
    shutdown = getattr(threading, "_shutdown", None)
    if callable(shutdown):
        shutdown()
        return
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join()


_FILE_LAYERS: tuple[tuple[type, ...], ...] = (
    (io.TextIOWrapper,),
    (io.BufferedWriter, io.BufferedRandom, io.BufferedRWPair),
    (io.FileIO,),
)


def _close_open_files() -> None:
    """Close every file object still open but the standard streams, text layers before the
    binary buffers under them (closing a text file flushes its pending text into its buffer), as
    the interpreter's teardown would have when it freed them; errors are ignored, as there.
    Objects are matched by their exact type's ancestry (``type(obj)``), never ``isinstance``,
    which would ask every object its ``__class__`` (torch's deprecated aliases warn then)."""
    streams = (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)
    standard = {id(s) for s in streams} | {id(getattr(s, "buffer", None)) for s in streams}
    standard |= {id(getattr(getattr(s, "buffer", None), "raw", None)) for s in streams}
    layer_of: dict[type, int] = {}
    found: list[list[object]] = [[] for _ in _FILE_LAYERS]
    for obj in gc.get_objects():
        kind = type(obj)
        layer = layer_of.get(kind)
        if layer is None:
            layer = layer_of[kind] = next((i for i, t in enumerate(_FILE_LAYERS) if issubclass(kind, t)), -1)
        if layer >= 0 and id(obj) not in standard:
            found[layer].append(obj)
    for files in found:
        for f in files:
            try:
                if not f.closed:  # type: ignore[attr-defined]
                    f.close()  # type: ignore[attr-defined]
            except Exception:  # what cannot be written is lost, as in the teardown
                pass


def _flushed(status: int) -> int:
    """Flush standard output and error; a failed flush of standard output makes the status 120."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            if stream is sys.stdout and status == 0:
                status = FLUSH_FAILED
    return status


def exit_process(status: int) -> NoReturn:
    """End the process with ``status`` once threads, exit handlers and output are done."""
    _join_foreground_threads()
    atexit._run_exitfuncs()
    _close_open_files()
    os._exit(_flushed(status))
