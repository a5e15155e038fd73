"""The one line at the end of ``debate train`` about whether the run could learn
(docs/training.md): too few RL iterations, or a reward that carried almost no signal."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from debate_core.cli.train_cmd import ALMOST_NO_SIGNAL, SHORT_RUN_ITERATIONS, learning_note


def _run(no_signal: list[float]) -> Any:
    records = [{"phase": "rl", "monitor/no_signal": share} for share in no_signal]
    return SimpleNamespace(metric_records=lambda step: [{"phase": "warmstart"}, *records])


def _outcome(iterations: int) -> Any:
    return SimpleNamespace(iterations=iterations, step=iterations)


def test_a_smoke_run_says_it_is_too_short_by_design() -> None:
    note = learning_note(_run([1.0, 1.0, 0.5]), _outcome(3))
    assert note == (
        "learning: 3 RL iterations are too few to learn anything (by design in a smoke run); "
        "83% of debates had no reward signal"
    )


@pytest.mark.parametrize("share", [0.0, 0.55, ALMOST_NO_SIGNAL - 0.01])
def test_a_long_run_whose_reward_carried_signal_says_nothing(share: float) -> None:
    assert learning_note(_run([share] * SHORT_RUN_ITERATIONS), _outcome(SHORT_RUN_ITERATIONS)) is None


def test_a_long_run_whose_reward_carried_almost_no_signal_says_so_with_the_share() -> None:
    note = learning_note(_run([0.95, 1.0] * 5), _outcome(SHORT_RUN_ITERATIONS))
    assert note is not None and note.startswith(
        "learning: almost no reward signal: 98% of debates had no reward signal"
    )


def test_a_run_without_rl_says_nothing() -> None:
    assert learning_note(_run([]), _outcome(0)) is None
