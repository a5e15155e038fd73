"""The ``shuffled`` reward (docs/rewards.md#shuffled): another reward with its agents' rewards
permuted at random within each debate, the random-reward floor.

The wrapped reward (option ``inner``) scores the debate; then one permutation ``σ`` of the
agents, drawn from a generator seeded by the option ``seed``, the debate's id and its question,
gives agent ``i`` what the inner reward gave agent ``σ(i)``: its final reward and, for a reward
with step streams, its row of every stream. With step streams ``σ`` only maps agents onto
agents with as many steps (so every row still fits its agent); without them it is any
permutation, uniformly drawn. Each debate keeps the inner reward's multiset of rewards (the
same mean and spread), but which agent gets which no longer depends on what it wrote.
Everything else of the inner result (section streams, weights, metrics) is kept.
"""

from __future__ import annotations

import random

import attrs

from debate_core.config.choices import ComponentChoice, nested_component
from debate_core.plugin import BuildContext
from debate_core.plugin import check_reward_result as check_result
from debate_core.records import DebateRecord, RewardFunction, RewardResult
from debate_core.stats import mean


def _default_inner() -> ComponentChoice:
    return ComponentChoice(name="v2")


@attrs.frozen(kw_only=True)
class ShuffledOptions:
    """Options of the ``shuffled`` reward."""

    inner: ComponentChoice = attrs.field(factory=_default_inner, metadata=nested_component("reward"))
    """The reward whose values are shuffled: ``{ name = "v2" }`` or ``{ name = "gt_mix", options = {...} }``."""
    seed: int = 0
    """Seeds each debate's permutation, together with the debate's id and question."""


def agent_permutation(debate: DebateRecord, seed: int, keep_step_counts: bool) -> list[int]:
    """``σ`` as a list (agent ``i`` gets agent ``σ[i]``'s rewards): uniform over all permutations,
    or over those mapping each agent onto one with as many steps when ``keep_step_counts``."""
    rng = random.Random(f"shuffled|{seed}|{debate.debate_id}|{debate.question}")
    groups: dict[int, list[int]] = {}
    for agent in range(debate.num_agents):
        key = len(debate.turns_of(agent)) if keep_step_counts else 0
        groups.setdefault(key, []).append(agent)
    order = list(range(debate.num_agents))
    for _, agents in sorted(groups.items()):
        drawn = list(agents)
        rng.shuffle(drawn)
        for agent, source in zip(agents, drawn, strict=True):
            order[agent] = source
    return order


class ShuffledReward:
    """The inner reward's values, permuted among the agents of each debate."""

    def __init__(self, inner: RewardFunction, options: ShuffledOptions | None = None) -> None:
        self.inner = inner
        self.options = options or ShuffledOptions()

    def __call__(self, debate: DebateRecord) -> RewardResult:
        result = self.inner(debate)
        check_result(debate, result, f"shuffled inner {self.inner!r}")
        order = agent_permutation(debate, self.options.seed, keep_step_counts=bool(result.step_streams))
        streams = {name: tuple(rows[source] for source in order) for name, rows in result.step_streams.items()}
        metrics = dict(result.metrics)
        metrics["shuffled/moved"] = mean(float(source != agent) for agent, source in enumerate(order))
        return attrs.evolve(
            result,
            agent_rewards=tuple(result.agent_rewards[source] for source in order),
            step_streams=streams,
            metrics=metrics,
        )

    def __repr__(self) -> str:
        return f"ShuffledReward({self.inner!r}, {self.options!r})"


def build_shuffled(options: ShuffledOptions, context: BuildContext) -> ShuffledReward:
    """Build the inner reward through the host's registry (``context``), then the wrapper."""
    inner: RewardFunction = context.build("reward", options.inner, "inner")
    return ShuffledReward(inner, options)
