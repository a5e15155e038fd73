"""The runoff, evaluation mode ``runoff`` (docs/answer-rules.md#the-runoff).

A debate design that spends its samples on candidates and its judging only where they disagree:
the run's debate played under the ``runoff`` coordinator (``evaluation.runoff_candidates``
candidates answering blind, each prompt seated as in the run's debate, and
``evaluation.runoff_judges`` judges in each order of the two most held answers) and answered by
the ``runoff`` rule, one debate per problem. The same design is a run-file setting
(``debate.coordinator = "runoff"``, ``debate.final_answer = "runoff"``) for ``debate run``,
``debate serve`` and training; this mode sets it beside the run's own debate and voting at its
cost.

Nothing reads the ground truth but the grading. The cost is every token the policy sampled: the
candidates' and, where they disagree, the judges' (their own blind answers and their verdicts).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from debate_core.debate.final_answer import (
    NamedAnswerRule,
    RunoffRule,
    final_answer,
    grader_reader,
    judged_votes,
    majority_of,
    runoff_candidates,
)
from debate_core.debate.runoff_protocol import RunoffCoordinator, RunoffOptions
from debate_core.debate.setup import DebateSetup
from debate_core.records import DebateAnswer, DebateEpisode, DebateRecord, Grader, Turn, answer_of
from debate_core.stats import mean, standard_error
from debate_core.training.correctness import JudgeTally, grade_samples
from debate_core.training.evaluation.matched_cost import answer_costs

RUNOFF = RunoffRule.name


def runoff_setup(setup: DebateSetup, candidates: int, judges: int) -> DebateSetup:
    """The run's debate as a runoff: ``candidates`` candidates and ``judges`` judges per order, every
    prompt seated as in the run's debate (its number of agents, at least 3), the ``runoff`` rule."""
    options = RunoffOptions(judges_per_order=judges, seated_as=max(3, setup.num_agents))
    return attrs.evolve(
        setup,
        num_agents=candidates + 2 * judges,
        max_rounds=max(2, setup.max_rounds),
        stop_after_round=None,
        coordinator=RunoffCoordinator(options),
        answer_rule=NamedAnswerRule(RUNOFF, RunoffRule()),
        names={**setup.names, "coordinator": RUNOFF},
    )


@attrs.frozen
class RunoffOutcome:
    """One problem's runoff, read from its record: the candidates (round 1), their answers most
    held first, and the runoff's answer (graded where the problem has one)."""

    candidates: tuple[Turn, ...]
    answer: DebateAnswer
    most_held: str | None

    @property
    def contested(self) -> bool:
        """The candidates hold two or more answers."""
        return len(self.answer.candidates) >= 2

    @property
    def overturned(self) -> bool:
        """The judges chose an answer other than the most held."""
        return self.answer.answer is not None and self.answer.answer != self.most_held


def runoff_outcome(record: DebateRecord, grader: Grader | None) -> RunoffOutcome:
    """The outcome of one runoff debate."""
    candidates = tuple(runoff_candidates(record))
    solutions = {t.agent: t.response.solution for t in candidates if not t.failed}
    ranked = majority_of(solutions, grader_reader(grader)).candidates
    answer = final_answer(record, grader, rule=RunoffRule())
    return RunoffOutcome(candidates, answer, ranked[0].answer if ranked else None)


def finalist_votes(record: DebateRecord, outcome: RunoffOutcome, grader: Grader, truth: str) -> JudgeTally:
    """The judges' votes between the two finalists of ``record`` (its ``outcome``) where exactly one
    is right: how many, how many preferred the right one, how many were ties (wrong)."""
    if not outcome.contested:
        return JudgeTally()
    read = grader_reader(grader)
    finalists = {c.answer: grader.grade(c.solution, truth).correct for c in outcome.answer.candidates[:2]}
    if len(set(finalists.values())) < 2:
        return JudgeTally()
    tally = JudgeTally()
    for vote in judged_votes(record):
        first, second = (answer_of(record.turns[p].response.solution, read)[0] for p in (vote.first, vote.second))
        if first == second or first not in finalists or second not in finalists:
            continue
        tally = tally + JudgeTally(1, int(not vote.tie and finalists[first]), int(vote.tie))
    return tally


def runoff_metrics(
    prefix: str, episodes: Sequence[DebateEpisode], truths: Sequence[str | None], grader: Grader | None
) -> tuple[dict[str, float], list[float] | None]:
    """The runoff's figures (docs/training.md#metrics), one episode per problem, and, with a
    grader, whether each problem's answer is correct (problems without an answer left out), for
    paired changes."""
    records = [e.record for e in episodes]
    outcomes = [runoff_outcome(r, grader) for r in records]
    out = {
        f"{prefix}/candidates": float(max((len(o.candidates) for o in outcomes), default=0)),
        f"{prefix}/contested": mean([float(o.contested) for o in outcomes]),
        f"{prefix}/overturned": mean([float(o.overturned) for o in outcomes]),
        **answer_costs(episodes, len(episodes), prefix),
    }
    if grader is None:
        return out, None
    graded = [(t, r, o) for t, r, o in zip(truths, records, outcomes, strict=True) if t is not None]
    correct = [float(bool(o.answer.correct)) for _, _, o in graded]
    groups = [grade_samples(o.candidates, grader, t) for t, _, o in graded]
    tally = sum((finalist_votes(r, o, grader, t) for t, r, o in graded), JudgeTally())
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
