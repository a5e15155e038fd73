"""The ``debate`` command: a thin dispatcher over one module per subcommand.

Each subcommand module (``debate_core.cli.<name>_cmd``) defines ``register(subparsers)``,
which adds its parser and sets ``handler`` to a function ``(args) -> int``. Subcommand
modules must import nothing heavy at module level, so ``debate --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from debate_core.config.environment import env_flag
from debate_core.errors import DebateError
from debate_core.runtime.interrupts import Terminated, terminate_like_interrupt
from debate_core.terminal import visible

COMMAND_MODULES: tuple[str, ...] = (
    "plugins_cmd",
    "config_cmd",
    "parse_cmd",
    "run_cmd",
    "score_cmd",
    "show_cmd",
    "train_cmd",
    "eval_cmd",
    "preflight_cmd",
    "report_cmd",
    "compare_cmd",
    "export_cmd",
    "serve_cmd",
)


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (``debate score: error: ...``), not the
    usage block; subcommand parsers are of the same class."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = OneLineErrorParser(
        prog="debate",
        description="Train a language model by multi-agent debate self-play.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(f"debate_core.cli.{module_name}").register(subparsers)
    return parser


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed command line, with overrides and options in any order.

    argparse takes a command's ``section.key=value`` overrides only before its first option, so
    ``debate eval CONFIG --checkpoint RUN evaluation.num_problems=10`` would leave the last word
    unrecognized; such words are the command's overrides too, in the order given. Anything else
    left over is a usage error, as before.
    """
    args, extra = parser.parse_known_args(argv)
    overrides = getattr(args, "overrides", None)
    if extra and isinstance(overrides, list) and all(_looks_like_override(word) for word in extra):
        args.overrides = [*overrides, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _looks_like_override(word: str) -> bool:
    """``section.key=value``: a word that is not an option and sets a key."""
    key, sep, _ = word.partition("=")
    return bool(sep) and bool(key) and not word.startswith("-")


def debug_enabled() -> bool:
    """True when ``DEBATE_DEBUG=1``: errors keep their traceback."""
    return env_flag("DEBATE_DEBUG")


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Plugin warnings as one plain line each (full details with ``DEBATE_DEBUG=1``)."""
    print(f"debate: warning: {message}", file=file or sys.stderr)


def _safe_output() -> None:
    """Let characters the terminal cannot encode (``LANG=C``, ``PYTHONIOENCODING=ascii``) print as
    escapes instead of raising ``UnicodeEncodeError``."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that output still buffered when writing failed
    (a full device, a closed pipe) is not flushed again, and fails again, at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def _error_line(exc: BaseException, command: str) -> str:
    """The one line printed for an exception that is not a ``DebateError``."""
    if isinstance(exc, MemoryError):
        return f"{command}: out of memory: an input is too large for this machine (see docs/limits.md)"
    if isinstance(exc, RecursionError):
        return f"{command}: an input is nested too deeply to read (see docs/limits.md)"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{command}: {where}{exc.strerror or type(exc).__name__}"
    text = " ".join(str(exc).split())
    text = text if len(text) <= 200 else text[:199] + "\u2026"
    return (
        f"{command}: internal error: {type(exc).__name__}: {text} "
        "(a bug in debate-core or a plugin: rerun with DEBATE_DEBUG=1 for the traceback and report it)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``debate`` script.

    Every failure ends with one line on standard error and a non-zero status: ``DebateError``
    messages as they are, a failed write of the output (a full device) with the file and the
    reason, ``MemoryError`` and ``RecursionError`` as such, anything else as an internal error.
    ``DEBATE_DEBUG=1`` prints the traceback before that line. SIGTERM stops a command as Ctrl-C
    does (``debate: terminated``, status 143; Ctrl-C: ``debate: interrupted``, 130).
    """
    _safe_output()
    if not debug_enabled():
        warnings.showwarning = _show_warning
    parser = build_parser()
    args = parse_arguments(parser, argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    with terminate_like_interrupt():
        return _run_handler(handler, args, f"debate {args.command}")


def _run_handler(handler: Callable[[argparse.Namespace], int | None], args: argparse.Namespace, command: str) -> int:
    """The subcommand's status, or the one line and status of its failure (see :func:`main`)."""
    try:
        status = int(handler(args) or 0)
        sys.stdout.flush()
        return status
    except DebateError as exc:
        if debug_enabled():
            traceback.print_exc()
        print(f"debate: error: {visible(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, Terminated)
        print(f"debate: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 128 + int(signal.SIGTERM if terminated else signal.SIGINT)
    except BrokenPipeError:  # the reader went away (``debate plugins | head``): nothing more to say
        _silence_stdout()
        return 141
    except (Exception, RecursionError, MemoryError) as exc:
        if isinstance(exc, OSError):
            _silence_stdout()
        if debug_enabled():
            traceback.print_exc()
        print(f"debate: error: {visible(_error_line(exc, command))}", file=sys.stderr)
        return 1


def run() -> NoReturn:
    """The ``debate`` script (and ``python -m debate_core.cli``): ``main``, then the end of the
    process without the interpreter's teardown once output and exit handlers are done
    (``process_exit``; seconds saved per command). Call ``main`` to stay in-process."""
    from debate_core.cli.process_exit import exit_process, status_of

    try:
        status = main()
    except SystemExit as request:  # --help, usage errors
        status = status_of(request)
    exit_process(status)


if __name__ == "__main__":
    run()
