"""``debate score``: score recorded debates with any installed reward, without a model.

Reads one transcript, a JSON list of them, or the JSON Lines file ``debate run --questions ...
--out`` writes. Prints one JSON object per debate (one line each when there are several):
``rewards`` and ``failure_penalties`` (one per agent), ``advantages`` (one per agent, centred
within the debate), ``streams`` (stream -> agent -> one reward per step; empty for scalar
rewards), ``stream_advantages`` (the same shape, centred and weighted by each stream's lambda)
and ``metrics``: the object the trainer saves beside each logged transcript
(``rundir.reward_sidecars``). ``--reward`` takes an installed reward's name or an import
path, ``module:attribute`` (docs/plugin-guide.md#trying-a-reward-without-packaging-it).
"""

from __future__ import annotations

import argparse
import json
from functools import partial

from debate_core.cli.arguments import MAX_INDENT, bounded_int
from debate_core.errors import ConfigError
from debate_core.records.json_values import JsonObject


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score a saved debate transcript with a reward plugin",
        description="Score recorded debates (a transcript in full or minimal form, or the JSON Lines of "
        "`debate run --questions --out`) with an installed reward, or one named by import path "
        "(module:attribute), and print rewards, advantages, per-step streams and metrics as JSON.",
    )
    parser.add_argument("transcript", metavar="TRANSCRIPT", help="a transcript file (.json) or JSON Lines (.jsonl)")
    parser.add_argument(
        "--reward",
        required=True,
        metavar="NAME",
        help="an installed reward (see `debate plugins`) or an import path, e.g. my_rewards:majority",
    )
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
        help=f"JSON indentation of a single debate, 0 to {MAX_INDENT} (0: one line)",
    )
    parser.set_defaults(handler=run)


def score(transcript: str, reward_name: str, options: list[str]) -> list[JsonObject]:
    """One JSON object per debate of ``transcript``, in file order."""
    from debate_core.config import apply_overrides
    from debate_core.debate.transcripts import load_transcripts
    from debate_core.plugin import PluginCall, checked_reward_result, get_registry
    from debate_core.rewards.advantages import compute_advantages
    from debate_core.rundir.reward_sidecars import reward_summary

    raw_options: JsonObject = {}
    for text in options:
        if "=" not in text:
            raise ConfigError(f"--set {text!r}: expected key=value")
        raw_options = apply_overrides(raw_options, [text])
    records = load_transcripts(transcript)
    reward = get_registry().build("reward", reward_name, raw_options, path="reward.options")
    out = []
    for record in records:
        where = f"debate '{record.debate_id}'" if record.debate_id else f"{transcript}"
        call = PluginCall("reward", reward_name, "__call__", where)
        result = checked_reward_result(call, record, partial(reward, record))
        (advantages,) = compute_advantages([record], [result])
        assert advantages is not None  # nothing is dropped without drop_uniform
        out.append(reward_summary(reward_name, record, result, advantages))
    return out


def run(args: argparse.Namespace) -> int:
    outputs = score(args.transcript, args.reward, list(args.options))
    if len(outputs) == 1:
        print(json.dumps(outputs[0], indent=args.indent or None))
    else:
        print("\n".join(json.dumps(output) for output in outputs))
    return 0
