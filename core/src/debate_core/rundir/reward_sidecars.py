"""What a debate was rewarded with: the rewards and advantages beside a logged transcript.

The trainer writes ``debate_KK.rewards.json`` next to each ``debate_KK.json`` it logs, with the
reward plugin's result and the advantages the update actually used (after the run's
normalisation), so that ``debate report`` can show each step's generator and judge rewards and
advantages. ``debate score`` prints the same object for a transcript scored afresh.

Keys: ``reward`` (the plugin's name), ``debate_id``, ``num_agents``, ``rewards`` (one per agent),
``failure_penalties`` (failed turns per agent, each costing 1), ``advantages`` (one per agent;
``null`` when the debate was dropped as uniform), ``streams`` (stream -> agent -> one reward per
step), ``stream_advantages`` (the same shape), ``section_streams``, ``default_stream`` and
``metrics``.
"""

from __future__ import annotations

import json
from pathlib import Path

from debate_core.files import atomic_write_json
from debate_core.records import DebateRecord, RewardResult
from debate_core.records.json_values import JsonObject
from debate_core.rewards.advantages import DebateAdvantages

SIDECAR_SUFFIX = ".rewards.json"
"""Appended to a transcript's stem: ``debate_00.json`` -> ``debate_00.rewards.json``."""


def sidecar_path(transcript: Path) -> Path:
    """The rewards file beside a transcript file."""
    return transcript.with_name(transcript.stem + SIDECAR_SUFFIX)


def failure_penalties(record: DebateRecord) -> list[int]:
    """Failed turns per agent: each is a step reward of -1 (docs/rewards.md#advantages)."""
    counts = [0] * record.num_agents
    for turn in record.turns:
        if turn.failed:
            counts[turn.agent] += 1
    return counts


def reward_summary(
    reward_name: str, record: DebateRecord, result: RewardResult, advantages: DebateAdvantages | None
) -> JsonObject:
    """The JSON object of one scored debate (the sidecar, and what ``debate score`` prints)."""
    return {
        "reward": reward_name,
        "debate_id": record.debate_id,
        "num_agents": record.num_agents,
        "rewards": list(result.agent_rewards),
        "failure_penalties": failure_penalties(record),
        "advantages": None if advantages is None else list(advantages.agent_advantages),
        "streams": {name: [list(steps) for steps in rows] for name, rows in result.step_streams.items()},
        "stream_advantages": {}
        if advantages is None
        else {name: [list(steps) for steps in rows] for name, rows in advantages.step_advantages.items()},
        "section_streams": dict(result.section_streams),
        "default_stream": result.default_stream if result.step_streams else None,
        "metrics": dict(sorted(result.metrics.items())),
    }


def write_sidecar(transcript: Path, summary: JsonObject) -> Path:
    """Write ``summary`` beside ``transcript`` (atomically); returns its path."""
    path = sidecar_path(transcript)
    atomic_write_json(path, summary)
    return path


def read_sidecar(transcript: Path) -> JsonObject | None:
    """The rewards beside a transcript, or ``None`` when there are none or they cannot be read."""
    path = sidecar_path(transcript)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
