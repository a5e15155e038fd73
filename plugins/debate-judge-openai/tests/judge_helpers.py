"""Building the ``openai`` judge through its entry point, and pairs to judge."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from debate_core import JudgePair
from debate_core.plugin import get_registry
from debate_core.testing.synthetic import TurnSpec, synthetic_debate

QUICK = {"backoff_s": 0.0, "max_backoff_s": 0.0, "failure_pause_s": 0.0, "timeout_s": 30.0, "max_retries": 3}
"""Options for tests: retries at once, no pause after a failure."""


def build(url: str, **options: Any) -> Any:
    """The ``openai`` judge as a run file would choose it."""
    return get_registry().build("judge", "openai", {"base_url": url, "model": "judge", **QUICK, **options})


class Host:
    """A ``JudgeHost`` naming a run directory's ``judges/`` folder (or none)."""

    def __init__(self, judge_dir: Path | None = None) -> None:
        self.judge_dir = judge_dir

    async def sampling_policy(self, base_model: str, weights: str | None) -> Any:
        raise AssertionError("the openai judge samples no model of the run's backend")


def pairs() -> list[JudgePair]:
    """Right against wrong, wrong against right, right against right, wrong against wrong."""
    record = synthetic_debate(
        3,
        [TurnSpec(solution="so \\boxed{42}"), TurnSpec(solution="so \\boxed{41}"), TurnSpec(solution="\\boxed{40}")],
        answer="42",
    )
    right, wrong, other_wrong = record.turns
    chosen = [(right, wrong), (wrong, right), (right, right), (wrong, other_wrong)]
    return [JudgePair(record.question, record.answer, a, b) for a, b in chosen]


TRUE_VERDICTS = [1, -1, 0, 0]
"""What a truthful judge says of :func:`pairs`."""


def judged(judge: Any, some: Sequence[JudgePair] | None = None, host: Any = None) -> list[int | None]:
    return list(asyncio.run(judge.compare(pairs() if some is None else list(some), host or Host())))
