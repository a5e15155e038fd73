"""``debate score``: score a recorded debate with any installed reward, without a model.

Prints one JSON object: ``rewards`` (one per agent), ``advantages`` (one per agent, centred
within the debate), ``streams`` (stream -> agent -> one reward per step; empty for scalar
rewards), ``stream_advantages`` (the same shape, centred and weighted by each stream's
lambda) and ``metrics``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from debate_core.cli.arguments import MAX_INDENT, bounded_int
from debate_core.errors import ConfigError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a saved debate transcript with a reward plugin",
        description="Score a recorded debate (full or minimal transcript form) with an installed reward "
        "and print its rewards, advantages, per-step streams and metrics as JSON.",
    )
    parser.add_argument("transcript", metavar="TRANSCRIPT.json", help="a transcript file")
    parser.add_argument("--reward", required=True, metavar="NAME", help="an installed reward (see `debate plugins`)")
    parser.add_argument(
        "--set",
        dest="options",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a reward option, e.g. --set lambda_judge=0.5 or --set peer.name=win_rate (repeatable)",
    )
    parser.add_argument(
        "--indent",
        type=bounded_int(0, MAX_INDENT),
        default=2,
        help=f"JSON indentation, 0 to {MAX_INDENT} (0: one line)",
    )
    parser.set_defaults(handler=run)


def score(transcript: str, reward_name: str, options: list[str]) -> dict[str, Any]:
    """The JSON object ``debate score`` prints."""
    from debate_core.config import apply_overrides
    from debate_core.debate.transcripts import load_transcript
    from debate_core.plugins import get_registry
    from debate_core.rewards.advantages import compute_advantages
    from debate_core.rewards.result_checks import check_result

    raw_options: dict[str, Any] = {}
    for text in options:
        if "=" not in text:
            raise ConfigError(f"--set {text!r}: expected key=value")
        raw_options = apply_overrides(raw_options, [text])
    record = load_transcript(transcript)
    reward = get_registry().build("reward", reward_name, raw_options, path="reward.options")
    result = reward(record)
    check_result(record, result, f"reward '{reward_name}'")
    (advantages,) = compute_advantages([record], [result])
    assert advantages is not None  # nothing is dropped without drop_uniform
    return {
        "reward": reward_name,
        "debate_id": record.debate_id,
        "num_agents": record.num_agents,
        "rewards": list(result.agent_rewards),
        "advantages": list(advantages.agent_advantages),
        "streams": {name: [list(steps) for steps in rows] for name, rows in result.step_streams.items()},
        "stream_advantages": {
            name: [list(steps) for steps in rows] for name, rows in advantages.step_advantages.items()
        },
        "section_streams": dict(result.section_streams),
        "default_stream": result.default_stream if result.step_streams else None,
        "metrics": dict(sorted(result.metrics.items())),
    }


def run(args: argparse.Namespace) -> int:
    output = score(args.transcript, args.reward, list(args.options))
    print(json.dumps(output, indent=args.indent or None))
    return 0
