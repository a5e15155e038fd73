"""The runoff, evaluation mode ``runoff`` (docs/answer-rules.md#the-runoff).

A debate design that spends its samples on candidates and its judging only where the candidates
disagree. Per problem:

1. **Candidates**: ``evaluation.runoff_candidates`` blind answers of the policy, the blind first
   round of the run's debate (the direct answers, with their seeds: direct evaluation's first
   answers are the same ones).
2. **The two most held answers**: the answers are grouped as every answer rule groups them (what
   the grader reads in a solution, else its text), ranked by how many candidates hold them, ties
   to the earliest (candidates that broke the output contract left out). One answer is the
   result, with no judging; none gives no answer.
3. **The runoff**: otherwise the policy judges the first solution of each of the two answers in
   the debate's own round-2 prompt, seated at agent 0 of a 3-agent debate whose agents 1 and 2
   state the two solutions in round 1 (the prompt the judge benchmark uses; the judge's round 1 is
   its own blind answer), ``evaluation.runoff_judges`` times in each order. Each verdict scores
   the two answers (a win 1, a tie ½ each, no comparison of the two nothing); the higher score
   wins, a tie to the more held answer.

Nothing reads the ground truth but the grading of the result. The cost is what the policy
samples: the candidates and the judges' turns (the stated seats are not sampled).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import attrs

from debate_core.debate.final_answer import majority_of
from debate_core.records import (
    AgentPolicy,
    AnswerReader,
    Candidate,
    DebateEpisode,
    Grader,
    OutputContract,
    Problem,
    ResponseContent,
    SampledAction,
    StopCondition,
    Tokenizer,
    Turn,
    TurnView,
)
from debate_core.stats import mean, standard_error
from debate_core.training.correctness import JudgeTally, grade_samples
from debate_core.training.evaluation.judge_benchmark import JUDGE, judged_comparison
from debate_core.training.kernel.reference_debates import written_action
from debate_core.training.kernel.rollouts import DebateJob
from debate_core.training.seeding import derive_seed


@attrs.frozen
class StatedSolution:
    """A seat that states a given solution in every turn and judges nobody (a ``ViewingPolicy``)."""

    solution: str
    tokenizer: Tokenizer
    contract: OutputContract

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        raise TypeError("a stated solution answers from the turn view (sample_with_view)")

    async def sample_with_view(
        self,
        prompt: Sequence[int],
        view: TurnView,
        *,
        stop: StopCondition,
        temperature: float,
        max_tokens: int,
        seed: int | None,
    ) -> SampledAction:
        """The solution in the output contract, unchanged by what the turn shows."""
        await asyncio.sleep(0)
        text = self.contract.render(ResponseContent(solution=self.solution, consensus_reason="Stated.")).text
        return written_action(text, self.tokenizer, stop, max_tokens)


@attrs.frozen
class Finalists:
    """One problem's candidates ranked by answer (``Candidate.agents``: the samples holding it)."""

    ranked: tuple[Candidate, ...]

    @property
    def contested(self) -> bool:
        """Two or more answers: the runoff is judged."""
        return len(self.ranked) >= 2


def finalists(samples: Sequence[Turn], read_answer: AnswerReader) -> Finalists:
    """The candidates' answers, most held first (ties to the earliest sample); samples that broke
    the output contract are left out."""
    solutions = {i: turn.response.solution for i, turn in enumerate(samples) if not turn.failed}
    return Finalists(majority_of(solutions, read_answer).candidates)


def runoff_jobs(
    contests: Sequence[tuple[int, Problem, Finalists]],
    judge: AgentPolicy,
    judges: int,
    seed: int,
    tokenizer: Tokenizer,
    contract: OutputContract,
) -> list[DebateJob]:
    """For each contested problem (its index, the problem, its finalists), ``judges`` judging
    debates per order: order ``a`` states the most held answer's solution at agent 1, ``b`` at agent 2.
    Ids ``eval-runoff-I-J{a,b}``, in that order per problem."""
    jobs = []
    for index, problem, final in contests:
        first, second = final.ranked[0], final.ranked[1]
        for j in range(judges):
            for order, pair in enumerate(((first, second), (second, first))):
                seats = tuple(StatedSolution(c.solution, tokenizer, contract) for c in pair)
                jobs.append(
                    DebateJob(
                        problem,
                        (judge, *seats),
                        derive_seed(seed, "eval-runoff", index, j, order),
                        f"eval-runoff-{index}-{j}{'ab'[order]}",
                    )
                )
    return jobs


Verdict = tuple[float, float] | None
"""A judging debate's scores for (the most held answer, the runner-up); ``None``: no verdict."""


def verdict_scores(episode: DebateEpisode, order: int) -> Verdict:
    """What one judging debate gives the most held answer and the runner-up: a win 1, a tie ½
    each; ``None`` when its judge compared the two nowhere (or broke the output contract)."""
    comparison = judged_comparison(episode.record)
    if comparison is None:
        return None
    if comparison.op == "=":
        return 0.5, 0.5
    first_seat_won = comparison.a == 1
    most_held_won = first_seat_won if order == 0 else not first_seat_won
    return (1.0, 0.0) if most_held_won else (0.0, 1.0)


def verdicts_by_problem(
    finals: Sequence[Finalists], episodes: Sequence[DebateEpisode], judges: int
) -> list[tuple[Verdict, ...]]:
    """Each problem's verdicts from the judging debates of :func:`runoff_jobs` (built from the
    contested ones of ``finals``, in order); none for an uncontested problem."""
    out: list[tuple[Verdict, ...]] = []
    position = 0
    for final in finals:
        if not final.contested:
            out.append(())
            continue
        mine = episodes[position : position + 2 * judges]
        position += 2 * judges
        out.append(tuple(verdict_scores(episode, k % 2) for k, episode in enumerate(mine)))
    if position != len(episodes):
        raise ValueError(f"{len(episodes)} judging debates for {position} expected")
    return out


@attrs.frozen
class RunoffResult:
    """One problem's runoff: the finalists and the verdicts on the two most held answers."""

    final: Finalists
    verdicts: tuple[Verdict, ...] = ()

    @property
    def scores(self) -> tuple[float, float]:
        """The summed scores of the most held answer and the runner-up."""
        given = [v for v in self.verdicts if v is not None]
        return sum(v[0] for v in given), sum(v[1] for v in given)

    @property
    def overturned(self) -> bool:
        """The judges chose the runner-up over the most held answer."""
        most, runner_up = self.scores
        return self.final.contested and runner_up > most

    @property
    def chosen(self) -> Candidate | None:
        """The answer: the higher score of the two, a tie to the most held; ``None`` without any."""
        if not self.final.ranked:
            return None
        return self.final.ranked[1] if self.overturned else self.final.ranked[0]


def decide(finals: Sequence[Finalists], episodes: Sequence[DebateEpisode], judges: int) -> list[RunoffResult]:
    """Each problem's result."""
    return [
        RunoffResult(final, verdicts)
        for final, verdicts in zip(finals, verdicts_by_problem(finals, episodes, judges), strict=True)
    ]


def runoff_judge_tally(results: Sequence[RunoffResult], right: Sequence[tuple[bool, bool] | None]) -> JudgeTally:
    """Verdicts on decidable runoffs (exactly one of the two answers right, ``right`` giving
    whether the most held and the runner-up are, per problem): how many, how many preferred the
    right one, how many were ties (wrong)."""
    tally = JudgeTally()
    for result, pair in zip(results, right, strict=True):
        if pair is None or pair[0] == pair[1]:
            continue
        for verdict in result.verdicts:
            if verdict is None:
                continue
            tie = verdict == (0.5, 0.5)
            agreed = not tie and (verdict[0] > verdict[1]) == pair[0]
            tally = tally + JudgeTally(1, int(agreed), int(tie))
    return tally


def judge_seat_tokens(episodes: Sequence[DebateEpisode]) -> tuple[int, int]:
    """Sampled and prompt tokens of the judging seat (agent 0) in ``episodes``: what the runoff's
    judging costs (the stated seats are not sampled)."""
    sampled = prompt = 0
    for episode in episodes:
        for trajectory in episode.trajectories:
            if trajectory.agent != JUDGE:
                continue
            for transition in trajectory.transitions:
                sampled += len(transition.action)
                prompt += len(transition.observation)
    return sampled, prompt


@attrs.frozen
class RunoffCost:
    """What the runoff sampled over all problems: the candidates' and judges' sampled tokens, and
    the judges' prompt tokens."""

    sampled: float
    judge_prompt: float


def runoff_metrics(
    prefix: str,
    samples: Sequence[Sequence[Turn]],
    results: Sequence[RunoffResult],
    truths: Sequence[str | None],
    grader: Grader | None,
    cost: RunoffCost,
) -> tuple[dict[str, float], list[float] | None]:
    """The runoff's figures (docs/training.md#metrics) and, with a grader, whether each problem's
    answer is correct (problems without an answer left out), for paired changes."""
    problems = len(results)
    out = {
        f"{prefix}/candidates": float(max((len(turns) for turns in samples), default=0)),
        f"{prefix}/contested": mean([float(r.final.contested) for r in results]),
        f"{prefix}/overturned": mean([float(r.overturned) for r in results]),
        f"{prefix}/sampled_tokens_per_answer": cost.sampled / problems if problems else 0.0,
        f"{prefix}/judge_prompt_tokens_per_answer": cost.judge_prompt / problems if problems else 0.0,
    }
    if grader is None:
        return out, None
    graded = [(t, turns, r) for t, turns, r in zip(truths, samples, results, strict=True) if t is not None]

    def right(candidate: Candidate | None, truth: str) -> bool:
        return candidate is not None and grader.grade(candidate.solution, truth).correct

    correct = [float(right(r.chosen, truth)) for truth, _, r in graded]
    pairs = [
        (right(r.final.ranked[0], truth), right(r.final.ranked[1], truth)) if r.final.contested else None
        for truth, _, r in graded
    ]
    tally = runoff_judge_tally([r for _, _, r in graded], pairs)
    groups = [grade_samples(turns, grader, truth) for truth, turns, _ in graded]
    k = int(out[f"{prefix}/candidates"])
    out.update(
        {
            f"{prefix}/answer_correct": mean(correct),
            f"{prefix}/answer_correct_se": standard_error(correct),
            f"{prefix}/cons@{k}": mean([g.cons_at_k for g in groups]),
            f"{prefix}/pass@{k}": mean([g.pass_at_k for g in groups]),
            **tally.metrics(prefix),
        }
    )
    return out, correct
