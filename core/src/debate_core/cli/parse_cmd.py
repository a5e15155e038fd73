"""``debate parse [FILE|-]``: parse one response against the output contract and print it as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from debate_core.cli.arguments import stdout_is_utf8
from debate_core.errors import DebateError, LimitExceeded
from debate_core.records import OutputParser
from debate_core.records.json_values import JsonObject


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="parse one model response against the output contract and print it as JSON",
        description=(
            "Parse one response (a file, or standard input with '-') and print its fields, its comparisons "
            "as [a, op, b], the character span of each section and the parse error (null when it follows "
            "the contract). Exit status 1 when the response breaks the contract."
        ),
    )
    parser.add_argument("file", nargs="?", default="-", metavar="FILE|-", help="the response text (default: stdin)")
    parser.add_argument(
        "--author", type=int, metavar="K", help="apply the authorship rules as if agent K wrote the response"
    )
    parser.add_argument("--num-agents", metavar="N", help="with --author: ids outside 0..N-1 are malformed")
    parser.add_argument("--parser", default="xml", metavar="NAME", help="output parser plugin (default: xml)")
    parser.set_defaults(handler=run)


def read_text(source: str) -> str:
    """The text of a file, or of standard input for ``-`` (undecodable bytes replaced), read only up
    to the ``input_bytes`` limit; a text past the ``response_chars`` limit is refused (docs/limits.md)."""
    from debate_core.limits import LIMITS, check_limit, how_to_raise, limit_value, read_limited_bytes

    if source == "-":
        most = limit_value("input_bytes")
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read(most + 1) if stream is not None else sys.stdin.read(most + 1).encode("utf-8", "replace")
        if len(data) > most:
            raise LimitExceeded(
                f"standard input: longer than the limit of {most} {LIMITS['input_bytes'].counts} "
                f"{how_to_raise('input_bytes')}"
            )
    else:
        data = read_limited_bytes(Path(source), "response file")
    text = data.decode("utf-8", errors="replace")
    check_limit("response_chars", len(text), "standard input" if source == "-" else source)
    return text


def _parser(name: str) -> OutputParser:
    """The parser plugin ``name``; the built-in ``xml`` parser without loading the plugins."""
    if name == "xml":
        from debate_core.debate.xml_parser import XmlParser

        return XmlParser()
    from debate_core.plugin import get_registry

    parser: OutputParser = get_registry().build("parser", name)
    return parser


def parse_to_json(
    text: str, parser: OutputParser, author: int | None = None, num_agents: int | None = None
) -> JsonObject:
    """What ``debate parse`` prints for one response."""
    from debate_core.records import apply_authorship

    response = parser.parse(text)
    data: JsonObject = {
        "solution": response.solution,
        "evaluation": response.evaluation,
        "comparison": response.comparison,
        "consensus": response.consensus,
        "consensus_reason": response.consensus_reason,
        "comparisons": [[c.a, c.op, c.b] for c in response.comparisons],
        "invalid_comparison_lines": response.invalid_comparison_lines,
        "spans": {s.name: [s.start, s.end] for s in response.spans},
        "error": None if response.error is None else response.error.message,
        "error_code": None if response.error is None else response.error.code,
    }
    if author is not None:
        authored = apply_authorship(response.comparisons, author, num_agents)
        data["comparisons"] = [[c.a, c.op, c.b] for c in authored.valid]
        data["self_comparisons"] = authored.self_comparisons
        data["malformed_comparisons"] = authored.malformed
    return data


def format_json(data: JsonObject) -> str:
    """A JSON object with one key per line and each value on that line."""
    ascii_only = not stdout_is_utf8()
    rows = [f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=ascii_only)}" for key, value in data.items()]
    return "{\n" + ",\n".join(rows) + "\n}"


def run(args: argparse.Namespace) -> int:
    from debate_core.config import option_value

    if args.num_agents is not None:  # checked as debate.num_agents
        args.num_agents = option_value("--num-agents", args.num_agents, "debate.num_agents")
    if args.author is not None and args.author < 0:
        raise DebateError(f"--author must be an agent id (0 or more), got {args.author}")
    if args.author is not None and args.num_agents is not None and args.author >= args.num_agents:
        raise DebateError(f"--author {args.author} is not an agent of a {args.num_agents}-agent debate")
    data = parse_to_json(read_text(args.file), _parser(args.parser), args.author, args.num_agents)
    print(format_json(data))
    return 0 if data["error"] is None else 1
