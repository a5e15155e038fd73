"""The ``debate`` command: a thin dispatcher over one module per subcommand.

Each subcommand module (``debate_core.cli.<name>_cmd``) defines ``register(subparsers)``,
which adds its parser and sets ``handler`` to a function ``(args) -> int``. Subcommand
modules must import nothing heavy at module level, so ``debate --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import TextIO

from debate_core.config.environment import env_flag
from debate_core.errors import DebateError

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
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="debate",
        description="Train a language model by multi-agent debate self-play.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(f"debate_core.cli.{module_name}").register(subparsers)
    return parser


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``debate`` script."""
    if not debug_enabled():
        warnings.showwarning = _show_warning
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except DebateError as exc:
        if debug_enabled():
            traceback.print_exc()
        print(f"debate: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("debate: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
