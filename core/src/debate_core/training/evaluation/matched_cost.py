"""What an answer costs, and self-consistency at the same cost (docs/answer-rules.md#at-the-same-cost).

A debate spends more sampled tokens on one answer than one direct answer does, so the fair
baseline is not one sample, nor as many samples as the debate has turns, but the majority of as
many direct samples as the debate's sampled tokens buy: ``k = ceil(debate tokens per answer /
direct tokens per sample)``, rounded up so that voting never gets fewer tokens than the debate.
Evaluation then pairs the answer of each mode that costs more than one sample (``debate``,
``runoff``) with the majority of each problem's first ``k`` direct samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from debate_core.records import DebateEpisode, Grader, Turn
from debate_core.stats import mean, paired_difference, standard_error
from debate_core.training.correctness import grade_samples


def samples_at_cost(debate_tokens: float, tokens_per_sample: float) -> int:
    """The fewest direct samples whose sampled tokens reach ``debate_tokens`` (at least 1)."""
    if tokens_per_sample <= 0:
        raise ValueError(f"a direct sample must cost some tokens, got {tokens_per_sample}")
    return max(1, math.ceil(debate_tokens / tokens_per_sample - 1e-9))


@attrs.frozen
class MatchedVoting:
    """The majority of ``k`` direct samples per problem, set beside a mode's answer."""

    k: int
    cons: tuple[float, ...]
    """Per problem: the majority of its first ``k`` samples is correct (1.0) or not."""
    answered: tuple[float, ...]
    """Per problem: the mode's answer is correct (for ``debate``, its mean over the problem's debates)."""

    def metrics(self, prefix: str, mode: str) -> dict[str, float]:
        """``<mode>/cons_matched`` (``_se``, ``_k``) and ``<mode>_minus_cons_matched`` (``_se``)."""
        difference, error = paired_difference(list(self.cons), list(self.answered))
        return {
            f"{prefix}/{mode}/cons_matched": mean(self.cons),
            f"{prefix}/{mode}/cons_matched_se": standard_error(self.cons),
            f"{prefix}/{mode}/cons_matched_k": float(self.k),
            f"{prefix}/{mode}_minus_cons_matched": difference,
            f"{prefix}/{mode}_minus_cons_matched_se": error,
        }

    def per_problem(self, prefix: str, mode: str) -> dict[str, list[float]]:
        """The per-problem values, so that a later evaluation's change is paired."""
        return {
            f"{prefix}/{mode}/cons_matched": list(self.cons),
            f"{prefix}/{mode}_minus_cons_matched": [b - a for a, b in zip(self.cons, self.answered, strict=True)],
        }


def matched_voting(
    samples: Sequence[Sequence[Turn]],
    truths: Sequence[str],
    answered: Sequence[float],
    k: int,
    grader: Grader,
) -> MatchedVoting:
    """The majority of each problem's first ``k`` of ``samples`` (graded against ``truths``, ties
    to the earliest sample as in direct ``cons@k``; fewer where a parse error cut a round of
    direct answers short, as there), beside ``answered``, whether a mode's answer to the same
    problems in the same order is correct."""
    if not len(samples) == len(truths) == len(answered):
        raise ValueError(
            f"{len(samples)} problems of direct samples, {len(truths)} answers and "
            f"{len(answered)} outcomes of the mode do not line up"
        )
    cons = tuple(
        grade_samples(turns[:k], grader, truth).cons_at_k for turns, truth in zip(samples, truths, strict=True)
    )
    return MatchedVoting(k, cons, tuple(answered))


def tokens_per_sample(episodes: Sequence[DebateEpisode]) -> float:
    """Sampled tokens per answer sampled in ``episodes`` (0 for none)."""
    sampled = [t for e in episodes for trajectory in e.trajectories for t in trajectory.transitions]
    return sum(len(t.action) for t in sampled) / len(sampled) if sampled else 0.0


def answer_costs(episodes: Sequence[DebateEpisode], num_answers: int, prefix: str) -> dict[str, float]:
    """Sampled and prompt tokens per answer: what one answer of this mode costs (a debate's answer:
    one per debate; direct evaluation's ``cons@k``: one per problem, over its ``k`` samples)."""
    if not num_answers:
        return {}
    transitions = [t for e in episodes for trajectory in e.trajectories for t in trajectory.transitions]
    return {
        f"{prefix}/sampled_tokens_per_answer": sum(len(t.action) for t in transitions) / num_answers,
        f"{prefix}/prompt_tokens_per_answer": sum(len(t.observation) for t in transitions) / num_answers,
    }
