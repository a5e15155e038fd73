"""Datum assembly against hand-computed sequences (docs/training.md#from-trajectories-to-datums)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tinker import types

from debate_core.records import AgentTrajectory, Transition
from debate_core.training.kernel.datum import build_sequences, supervised_datums, trajectory_datums


class StreamAdvantages:
    """Generator stream for solution/evaluation/untagged tokens, judge stream for comparison tokens."""

    def __init__(self, generator: dict[tuple[int, int], float], judge: dict[tuple[int, int], float]) -> None:
        self.generator = generator
        self.judge = judge
        self.calls: list[tuple[int, int]] = []

    def token_advantages(self, agent: int, step: int, action_sections: Sequence[str | None]) -> list[float]:
        self.calls.append((agent, step))
        return [
            self.judge[(agent, step)] if s == "comparison" else self.generator[(agent, step)] for s in action_sections
        ]


def transition(
    turn: int, step: int, obs: Sequence[int], act: Sequence[int], lps: Sequence[float], sections: Sequence[str | None]
) -> Transition:
    return Transition(turn, step, tuple(obs), tuple(act), tuple(lps), tuple(sections))


def floats(td: types.TensorData) -> list[float]:
    return [pytest.approx(x, abs=1e-6) for x in td.data]


def test_extension_then_split_matches_hand_computation() -> None:
    trajectory = AgentTrajectory(
        agent=1,
        transitions=(
            transition(1, 0, [1, 2, 3], [4, 5], [-0.1, -0.2], ["solution", "comparison"]),
            # extends 1 2 3 4 5: the delta is 6 7
            transition(4, 1, [1, 2, 3, 4, 5, 6, 7], [8], [-0.3], ["solution"]),
            # does not extend 1..8 (history was clipped): a new Datum
            transition(7, 2, [1, 2, 9], [10, 11], [-0.4, -0.5], ["comparison", None]),
        ),
    )
    advantages = StreamAdvantages({(1, 0): 0.5, (1, 1): 0.25, (1, 2): -0.75}, {(1, 0): -1.0, (1, 2): 2.0})
    datums = trajectory_datums(trajectory, advantages, debate_index=3)

    assert len(datums) == 2
    first, second = datums
    assert first.datum.model_input.to_ints() == [1, 2, 3, 4, 5, 6, 7]
    assert first.datum.loss_fn_inputs["target_tokens"].data == [2, 3, 4, 5, 6, 7, 8]
    assert first.datum.loss_fn_inputs["logprobs"].data == floats(
        types.TensorData(data=[0, 0, -0.1, -0.2, 0, 0, -0.3], dtype="float32")
    )
    assert first.datum.loss_fn_inputs["advantages"].data == [0, 0, 0.5, -1.0, 0, 0, 0.25]
    assert first.mask == (0, 0, 1, 1, 0, 0, 1)
    assert set(first.datum.loss_fn_inputs) == {"target_tokens", "logprobs", "advantages"}  # no mask sent

    assert second.datum.model_input.to_ints() == [1, 2, 9, 10]
    assert second.datum.loss_fn_inputs["target_tokens"].data == [2, 9, 10, 11]
    assert second.datum.loss_fn_inputs["logprobs"].data == floats(
        types.TensorData(data=[0, 0, -0.4, -0.5], dtype="float32")
    )
    assert second.datum.loss_fn_inputs["advantages"].data == [0, 0, 2.0, -0.75]
    assert second.mask == (0, 0, 1, 1)
    assert (first.agent, first.debate_index) == (1, 3)
    assert advantages.calls == [(1, 0), (1, 1), (1, 2)]
    assert first.datum.loss_fn_inputs["target_tokens"].dtype == "int64"
    assert first.datum.loss_fn_inputs["advantages"].dtype == "float32"


def test_equal_observation_counts_as_extension() -> None:
    trajectory = AgentTrajectory(
        0,
        (
            transition(0, 0, [5, 6], [7], [-1.0], ["solution"]),
            transition(3, 1, [5, 6, 7], [8], [-2.0], ["solution"]),
        ),
    )
    seqs = build_sequences(trajectory.transitions, lambda t: [1.0] * len(t.action))
    assert [s.tokens for s in seqs] == [(5, 6, 7, 8)]
    assert seqs[0].mask == (0, 0, 1, 1)


def test_supervised_datums_weight_action_tokens_only() -> None:
    trajectory = AgentTrajectory(0, (transition(0, 0, [1, 2], [3, 4], [0.0, 0.0], [None, None]),))
    (datum,) = supervised_datums(trajectory)
    assert datum.datum.loss_fn_inputs["target_tokens"].data == [2, 3, 4]
    assert datum.datum.loss_fn_inputs["weights"].data == [0.0, 1.0, 1.0]


def test_mismatched_lengths_are_reported_with_the_turn() -> None:
    bad = AgentTrajectory(0, (transition(6, 0, [1], [2, 3], [-1.0], ["solution", "solution"]),))
    with pytest.raises(ValueError, match="turn 6"):
        build_sequences(bad.transitions, lambda t: [0.0] * len(t.action))


@st.composite
def trajectories(draw: st.DrawFn) -> tuple[list[Transition], int]:
    """Random trajectories; returns them with the number of non-extending observations."""
    steps = draw(st.integers(1, 6))
    context: list[int] = []
    transitions = []
    splits = 0
    for step in range(steps):
        extend = bool(context) and draw(st.booleans())
        fresh = draw(st.lists(st.integers(0, 50), min_size=1, max_size=5))
        if extend:
            obs = context + fresh
        else:
            obs = [99 + step, *fresh]  # 99+step never occurs in actions: not an extension
            splits += 1 if context else 0
        act = draw(st.lists(st.integers(0, 50), min_size=1, max_size=4))
        lps = [-(i + 1) / 10 for i in range(len(act))]
        transitions.append(transition(step, step, obs, act, lps, ["solution"] * len(act)))
        context = obs + act
    return transitions, splits


@settings(max_examples=60, deadline=None)
@given(trajectories())
def test_action_tokens_reach_the_targets_exactly_once(case: tuple[list[Transition], int]) -> None:
    transitions, splits = case
    advantages = StreamAdvantages({(0, t.step): float(t.step + 1) for t in transitions}, {})
    datums = trajectory_datums(AgentTrajectory(0, tuple(transitions)), advantages)
    assert len(datums) == 1 + splits
    targets = [t for d in datums for t in d.datum.loss_fn_inputs["target_tokens"].data]
    masks = [m for d in datums for m in d.mask]
    advs = [a for d in datums for a in d.datum.loss_fn_inputs["advantages"].data]
    actions = [tok for t in transitions for tok in t.action]
    assert [t for t, m in zip(targets, masks, strict=True) if m == 1.0] == actions
    expected_advs = [float(t.step + 1) for t in transitions for _ in t.action]
    assert [a for a, m in zip(advs, masks, strict=True) if m == 1.0] == expected_advs
    assert all(a == 0.0 for a, m in zip(advs, masks, strict=True) if m == 0.0)
