"""``debate plugins``: every installed component with its kind, distribution, version, status and
one-line description."""

from __future__ import annotations

import argparse
import json

from debate_core.plugin import KINDS
from debate_core.terminal import visible


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("plugins", help="list installed plugins and their components")
    parser.add_argument("--json", action="store_true", help="print a JSON list of objects")
    parser.add_argument("--kind", choices=KINDS, help="only components of this kind")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from debate_core.plugin import get_registry

    rows = get_registry().listing(args.kind)
    if args.json:
        print(json.dumps([row.as_json() for row in rows], indent=2))
        return 0
    headers = ("KIND", "NAME", "DISTRIBUTION", "VERSION", "STATUS")
    table = [(r.kind, r.name, r.distribution, r.version, r.status) for r in rows]
    widths = [max(len(h), *(len(row[i]) for row in table)) if table else len(h) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + "  DESCRIPTION")
    for r, row in zip(rows, table, strict=True):
        line = "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
        print(f"{line}  {_last_column(r.description, r.reason)}".rstrip())
    return 0


def _last_column(description: str, reason: str | None) -> str:
    """A component's one-line description, then why it is not active when it is not."""
    description = visible(" ".join(description.split()))  # a plugin's words, shown not obeyed
    if not reason:
        return description
    return f"{description} ({reason})" if description else reason
