"""``bradley_terry``: maximum-likelihood Bradley-Terry strengths from every pairwise vote.

Model: ``P(i beats j) = sigmoid(theta_i - theta_j)``. A vote ``a > b`` is a win of ``a`` over
``b``; a tie ``a = b`` is half a win each way. The strengths maximise

    sum_{i,j} W_ij * log sigmoid(theta_i - theta_j)  -  (prior_precision / 2) * sum_i theta_i^2

(a Gaussian prior, i.e. an L2 penalty). The objective is strictly concave, so the maximiser
is unique and finite even for cycles, unanimous votes or a single vote, where the plain MLE
diverges or is not unique. At the optimum ``sum_i theta_i = 0`` (every vote's gradient sums
to zero over agents), so the strengths are centred; the reward of agent ``i`` is ``theta_i``.
With ``leave_one_out`` the reward of ``i`` comes from a fit without the votes ``i`` cast.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
from attrs import validators as v
from numpy.typing import NDArray

from debate_core import AuthoredComparison, DebateRecord, RewardResult, tally_votes

Matrix = NDArray[np.float64]


@attrs.frozen(kw_only=True)
class BradleyTerryOptions:
    """Options of the ``bradley_terry`` reward."""

    prior_precision: float = attrs.field(default=0.5, validator=v.gt(0.0))
    """Weight of the L2 penalty (precision of the Gaussian prior on strengths); larger is flatter."""
    leave_one_out: bool = False
    """Score each agent with a fit that leaves out the votes it cast (as the built-in
    pairwise rewards do, docs/rewards.md#win_rate)."""
    max_iterations: int = attrs.field(default=100, validator=v.ge(1))
    tolerance: float = attrs.field(default=1e-10, validator=v.gt(0.0))


def win_matrix(votes: list[AuthoredComparison], num_agents: int) -> Matrix:
    """``W[i, j]``: wins of ``i`` over ``j``, a tie counting 1/2 each way."""
    wins = np.zeros((num_agents, num_agents))
    for vote in votes:
        if vote.op == ">":
            wins[vote.a, vote.b] += 1.0
        else:
            wins[vote.a, vote.b] += 0.5
            wins[vote.b, vote.a] += 0.5
    return wins


def _objective(theta: Matrix, wins: Matrix, precision: float) -> float:
    diff = theta[:, None] - theta[None, :]
    return float(-(wins * np.logaddexp(0.0, -diff)).sum() - 0.5 * precision * theta @ theta)


def fit_strengths(
    wins: Matrix, prior_precision: float, max_iterations: int = 100, tolerance: float = 1e-10
) -> tuple[Matrix, int]:
    """The penalised maximum-likelihood strengths (centred) and the Newton iterations used."""
    n = wins.shape[0]
    theta = np.zeros(n)
    games = wins + wins.T
    current = _objective(theta, wins, prior_precision)
    for iteration in range(1, max_iterations + 1):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        gradient = (wins - games * p).sum(axis=1) - prior_precision * theta
        curvature = games * p * (1.0 - p)
        negative_hessian = np.diag(curvature.sum(axis=1)) - curvature + prior_precision * np.eye(n)
        step = np.linalg.solve(negative_hessian, gradient)
        scale = 1.0
        while scale > 1e-8:  # backtracking keeps every step an ascent step
            candidate = theta + scale * step
            value = _objective(candidate, wins, prior_precision)
            if value >= current - 1e-15:
                break
            scale /= 2.0
        theta, current = candidate, value
        if float(np.max(np.abs(scale * step), initial=0.0)) < tolerance:
            return theta - theta.mean(), iteration
    return theta - theta.mean(), max_iterations


class BradleyTerryReward:
    """Reward ``theta_i``: the agent's regularised Bradley-Terry strength (log-odds units)."""

    def __init__(self, options: BradleyTerryOptions | None = None) -> None:
        self.options = options or BradleyTerryOptions()

    def _fit(self, votes: list[AuthoredComparison], n: int) -> tuple[Matrix, int]:
        o = self.options
        return fit_strengths(win_matrix(votes, n), o.prior_precision, o.max_iterations, o.tolerance)

    def __call__(self, debate: DebateRecord) -> RewardResult:
        n = debate.num_agents
        tally = tally_votes(debate)
        votes = list(tally.votes)
        theta, iterations = self._fit(votes, n)
        rewards = [float(x) for x in theta]
        if self.options.leave_one_out:
            for i in range(n):
                loo, used = self._fit([vote for vote in votes if vote.author != i], n)
                rewards[i] = float(loo[i])
                iterations = max(iterations, used)
        spread = max(rewards) - min(rewards) if rewards else 0.0
        return RewardResult(
            agent_rewards=tuple(rewards),
            metrics={
                "bradley_terry/votes": float(len(votes)),
                "bradley_terry/spread": spread if math.isfinite(spread) else 0.0,
                "bradley_terry/iterations": float(iterations),
                "bradley_terry/malformed": float(tally.malformed + tally.self_comparisons),
            },
        )

    def __repr__(self) -> str:
        return f"BradleyTerryReward({self.options!r})"
