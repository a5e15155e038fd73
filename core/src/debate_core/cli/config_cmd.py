"""``debate config check|show|reference``: validate a run file, print it resolved, or print the reference."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from debate_core.errors import ConfigError, DebateError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("config", help="check or show a run file")
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION", required=True)
    for name, help_text in (
        (
            "check",
            "validate a run file and its overrides against the schema and the installed plugins, and check "
            "what the run will need: dataset files, metric sinks' packages, the model, init_from, agents",
        ),
        ("show", "print the resolved run file with every default filled in"),
    ):
        sub = actions.add_parser(name, help=help_text)
        sub.add_argument("file", help="run file (TOML)")
        sub.add_argument("overrides", nargs="*", metavar="section.key=value", help="overrides")
        sub.set_defaults(handler=run_check if name == "check" else run_show)
    reference = actions.add_parser("reference", help="print the configuration reference (Markdown)")
    reference.set_defaults(handler=run_reference)


def run_check(args: argparse.Namespace) -> int:
    from debate_core.config import load_run_config
    from debate_core.plugin import get_registry
    from debate_core.runtime.context_guard import check_run_fits_context
    from debate_core.training.run_needs import check_run_needs

    try:
        config = load_run_config(args.file, args.overrides, registry=get_registry())
        check_run_fits_context(config, get_registry())
        try:
            warnings = check_run_needs(config, get_registry())
        except ConfigError as exc:
            raise ConfigError(_prefix_lines(f"{args.file}: ", str(exc))) from None
    except DebateError as exc:
        needs = needs_line(args.file)
        if needs is None:
            raise
        raise ConfigError(f"{exc}\n{args.file}: its first line says what it needs: {needs}") from exc
    for line in warnings:
        print(f"{args.file}: {line}", file=sys.stderr)
    print(f"{args.file}: ok")
    return 0


NEEDS_PREFIX = "# Needs:"
"""How a run file's first line names what it needs besides debate-core (a package to install, a
file to bring): ``debate config check`` repeats it when the check fails (docs/config-reference.md)."""


def needs_line(path: str | Path) -> str | None:
    """What the run file's first line says it needs, or ``None``."""
    try:
        with Path(path).open(encoding="utf-8") as file:
            first = file.readline(1000).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return first[len(NEEDS_PREFIX) :].strip() if first.startswith(NEEDS_PREFIX) else None


def run_show(args: argparse.Namespace) -> int:
    from debate_core.config import load_run_config, resolved_config_toml
    from debate_core.plugin import get_registry

    registry = get_registry()
    config = load_run_config(args.file, args.overrides, registry=registry)
    print(resolved_config_toml(config, registry), end="")
    return 0


def run_reference(args: argparse.Namespace) -> int:
    from debate_core.config.reference import config_reference_markdown

    print(config_reference_markdown(), end="")
    return 0


def _prefix_lines(prefix: str, text: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())
