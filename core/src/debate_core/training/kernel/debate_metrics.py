"""The metrics of one training iteration (docs/training.md#metrics).

* per-turn env metrics, averaged over every turn: ``consensus_reached``, ``round``, ``parse_error``;
* reward metrics, averaged over debates, under the reward plugin's own names
  (``pairwise_reward``, ``pairwise_total_votes``, ``v2/total_votes``, ``reward/gen/mean``, ...);
* aggregates: ``env/all/ac_tokens_per_turn``, ``env/all/ob_tokens_per_turn``,
  ``env/all/turns_per_episode``, ``env/all/total_episodes``, ``env/all/total_turns``,
  ``env/all/reward/total``, ``env/all/by_group/frac_mixed``;
* optimisation diagnostics over action tokens only (mask = 1): ``optim/kl_sample_train_v1``
  = mean(q - p), ``optim/kl_sample_train_v2`` = mean((q - p)^2) / 2 and ``optim/entropy``
  = -mean(q), where q are the sampler's and p the trainer's logprobs of the sampled tokens;
* verifiable datasets: ``train_{dataset}/format``, ``correct``, ``pass@k``, ``avg@k``,
  ``cons@k`` and ``judge_accuracy`` (see ``training.correctness``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from tinker import types

from debate_core.records import DebateEpisode, DebateRecord, RewardResult
from debate_core.stats import mean
from debate_core.training.kernel.datum import AssembledDatum


def total_returns(record: DebateRecord, result: RewardResult) -> list[float]:
    """``R_{p,i} = sum_t r^step_{p,i,t} + r_{p,i}`` with ``r^step = -1`` for a failed turn
    (docs/rewards.md#advantages)."""
    failures = [0] * record.num_agents
    for turn in record.turns:
        if turn.failed:
            failures[turn.agent] += 1
    return [float(result.agent_rewards[i]) - failures[i] for i in range(record.num_agents)]


def turn_metrics(records: Sequence[DebateRecord]) -> dict[str, float]:
    """``consensus_reached``, ``round`` and ``parse_error``, averaged over every turn.

    ``consensus_reached`` of a turn is 1 when its debate reached consensus at the end of that
    turn's round (which is then the last round), as the coordinator's flag reads after the step.
    """
    consensus: list[float] = []
    rounds: list[float] = []
    errors: list[float] = []
    for record in records:
        last_round = record.rounds_played
        for turn in record.turns:
            consensus.append(float(record.consensus_reached and turn.round == last_round))
            rounds.append(float(turn.round))
            errors.append(float(turn.failed))
    return {"consensus_reached": mean(consensus), "round": mean(rounds), "parse_error": mean(errors)}


def debate_metrics(records: Sequence[DebateRecord]) -> dict[str, float]:
    """Debate diagnostics: rounds played, how debates ended, dropped comparisons, comparison rate.

    ``debate/comparison_rate`` is the share of turns expected to compare (at least two other
    agents had answered before them) that gave at least one valid comparison whose two sides
    the turn could see (docs/training.md#metrics; the preflight checklist asks for more than 80%).
    """
    expected = made = 0
    for record in records:
        for turn in record.turns:
            seen = {t.agent for t in record.turns[: turn.visible_turns]}
            if len(seen - {turn.agent}) >= 2:
                expected += 1
                made += int(any(c.a in seen and c.b in seen for c in turn.comparisons))
    out = {
        "debate/num_debates": float(len(records)),
        "debate/rounds_played": mean([float(r.rounds_played) for r in records]),
        "debate/ended_by_consensus": mean([float(r.consensus_reached) for r in records]),
        "debate/aborted": mean([float(r.aborted) for r in records]),
        "debate/self_comparisons": mean([float(r.self_comparisons) for r in records]),
        "debate/malformed_comparisons": mean([float(r.malformed_comparisons) for r in records]),
        "debate/invalid_comparison_lines": mean(
            [float(sum(t.response.invalid_comparison_lines for t in r.turns)) for r in records]
        ),
        "debate/turns_expected_to_compare": float(expected),
    }
    if expected:
        out["debate/comparison_rate"] = made / expected
    return out


def episode_metrics(episodes: Sequence[DebateEpisode], returns: Sequence[Sequence[float]]) -> dict[str, float]:
    """The ``env/all/*`` aggregates over every trajectory of the batch."""
    trajectories = [t for e in episodes for t in e.trajectories]
    transitions = [tr for t in trajectories for tr in t.transitions]
    total_episodes = len(trajectories)
    total_turns = len(transitions)
    flat_returns = [r for group in returns for r in group]
    mixed = [float(len(set(group)) > 1) for group in returns]
    return {
        "env/all/total_episodes": float(total_episodes),
        "env/all/total_turns": float(total_turns),
        "env/all/turns_per_episode": total_turns / total_episodes if total_episodes else 0.0,
        "env/all/ac_tokens_per_turn": mean([float(len(tr.action)) for tr in transitions]),
        "env/all/ob_tokens_per_turn": mean([float(len(tr.observation)) for tr in transitions]),
        "env/all/reward/total": mean(flat_returns),
        "env/all/by_group/frac_mixed": mean(mixed),
    }


def reward_metrics(results: Sequence[RewardResult]) -> dict[str, float]:
    """Every metric of the reward plugin, averaged over debates, under its own name."""
    sums: dict[str, list[float]] = defaultdict(list)
    for result in results:
        for name, value in result.metrics.items():
            sums[name].append(float(value))
    return {name: mean(values) for name, values in sorted(sums.items())}


def sample_train_metrics(
    datums: Sequence[AssembledDatum], outputs: Sequence[types.ForwardBackwardOutput]
) -> dict[str, float]:
    """KL between sampler and trainer, and the sampler's entropy estimate, over action tokens.

    ``outputs`` are the ``forward_backward`` results of consecutive chunks of ``datums``.
    """
    train = [out["logprobs"] for o in outputs for out in o.loss_fn_outputs]
    if len(train) != len(datums):
        raise ValueError(f"{len(datums)} datums were trained but {len(train)} logprob outputs came back")
    diffs: list[np.ndarray] = []
    sampled: list[np.ndarray] = []
    for datum, train_logprobs in zip(datums, train, strict=True):
        mask = np.asarray(datum.mask) > 0
        q = np.asarray(datum.datum.loss_fn_inputs["logprobs"].data, dtype=np.float64)[mask]
        p = np.asarray(train_logprobs.data, dtype=np.float64).reshape(-1)[mask]
        diffs.append(q - p)
        sampled.append(q)
    if not diffs or not sum(len(d) for d in diffs):
        return {}
    diff = np.concatenate(diffs)
    q_all = np.concatenate(sampled)
    return {
        "optim/kl_sample_train_v1": float(diff.mean()),
        "optim/kl_sample_train_v2": float(0.5 * (diff**2).mean()),
        "optim/entropy": float(-q_all.mean()),
    }


def backend_metrics(outputs: Sequence[types.ForwardBackwardOutput], prefix: str = "optim") -> dict[str, float]:
    """The backend's own metrics (``loss:sum``, ...) summed over chunks, as ``optim/<name>``."""
    sums: dict[str, float] = defaultdict(float)
    for output in outputs:
        for name, value in output.metrics.items():
            sums[name] += float(value)
    return {f"{prefix}/{name}": value for name, value in sorted(sums.items())}
