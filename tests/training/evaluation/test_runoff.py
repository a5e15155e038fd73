"""Evaluation mode ``runoff`` (docs/answer-rules.md#the-runoff): the run's debate under the
``runoff`` coordinator on scripted policies whose candidates and verdicts are known by hand, and
the tally of its judges' votes on hand-built runoffs."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

import pytest

from debate_core.config.sections import EvaluationSettings
from debate_core.tasks.graders import build_boxed
from debate_core.testing.scripted_debate import ScriptedCall
from debate_core.training.correctness import JudgeTally
from debate_core.training.evaluation.evaluator import Evaluator
from debate_core.training.evaluation.runoff import finalist_votes, runoff_outcome
from tests.debate.test_runoff import runoff
from tests.training.evaluation.test_judge_benchmark import (
    _first_round,
    _question_answer,
    _response,
    _stated,
    scripted_parts,
)

BOXED = build_boxed(None)


def test_the_judges_votes_count_only_between_finalists_one_of_them_right() -> None:
    """Finalists 41 (agents 0, 1, 4) and 42 (agents 2, 3), the truth 42. Judge 6 prefers 42, judge
    7 calls them equal: two decidable votes, one right, one tie."""
    episode, _ = runoff(["41", "41", "42", "42", "41", "40"], {6: "Agent 2 > Agent 1", 7: "Agent 1 = Agent 2"})
    assert finalist_votes(episode.record, runoff_outcome(episode.record, BOXED), BOXED, "42") == JudgeTally(2, 1, 1)
    # no finalist right (or both): nothing to decide
    assert finalist_votes(episode.record, runoff_outcome(episode.record, BOXED), BOXED, "40") == JudgeTally()
    outcome = runoff_outcome(episode.record, BOXED)
    assert outcome.contested and outcome.most_held == "41" and outcome.answer.answer == "42" and outcome.overturned
    agreed, _ = runoff(["42"] * 6, {})
    assert not runoff_outcome(agreed.record, BOXED).contested
    assert finalist_votes(agreed.record, runoff_outcome(agreed.record, BOXED), BOXED, "42") == JudgeTally()


Judge = Callable[[ScriptedCall], str]


def _solver_then(judge: Judge) -> Judge:
    """Blind answers: seat 0 right, seats 1 and 2 one too many (the runoff seats candidate k at
    k mod 3); in a judging turn, ``judge``."""

    def script(call: ScriptedCall) -> str:
        right = _question_answer(call.prompt_text)
        if _first_round(call):
            agent = int(re.findall(r"You are Agent (\d+)", call.prompt_text)[-1])
            return _response(right if agent == 0 else str(int(right) + 1), "N/A")
        return judge(call)

    return script


def _shown_seats(call: ScriptedCall) -> tuple[tuple[int, str], tuple[int, str]]:
    """The two seats a judge is shown, lower first, with the answers they state."""
    low, high = sorted(_stated(call.prompt_text).items())
    return low, high


def truthful(call: ScriptedCall) -> str:
    right = _question_answer(call.prompt_text)
    (low, said), (high, _) = _shown_seats(call)
    winner, loser = (low, high) if said == right else (high, low)
    return _response(right, f"Agent {winner} > Agent {loser}")


def first_position(call: ScriptedCall) -> str:
    (low, _), (high, _) = _shown_seats(call)
    return _response(_question_answer(call.prompt_text), f"Agent {low} > Agent {high}")


def always_tie(call: ScriptedCall) -> str:
    (low, _), (high, _) = _shown_seats(call)
    return _response(_question_answer(call.prompt_text), f"Agent {low} = Agent {high}")


def evaluate_runoff(
    script: Judge, candidates: int = 6, judges: int = 1, samples: int = 0
) -> tuple[dict[str, float], Evaluator]:
    parts = scripted_parts(script)
    settings = EvaluationSettings(
        num_problems=5,
        modes=("direct", "runoff") if samples else ("runoff",),
        temperature=0.7,
        num_samples=samples,
        runoff_candidates=candidates,
        runoff_judges=judges,
    )
    evaluator = Evaluator(parts, settings, seed=3, max_in_flight=4)
    metrics = asyncio.run(evaluator.evaluate(object()))  # type: ignore[arg-type]
    return {k.removeprefix("eval_arithmetic/"): v for k, v in metrics.items()}, evaluator


def test_truthful_judges_overturn_a_wrong_majority() -> None:
    # six candidates: right, wrong, wrong, right, wrong, wrong: the majority (4 of 6) is wrong;
    # the finalists are candidates 1 (wrong) and 0; agents 6, 7, 8, 9 judge, two per order
    metrics, evaluator = evaluate_runoff(_solver_then(truthful), judges=2)
    assert metrics["runoff/cons@6"] == 0.0 and metrics["runoff/pass@6"] == 1.0
    assert metrics["runoff/contested"] == 1.0 and metrics["runoff/overturned"] == 1.0
    assert metrics["runoff/answer_correct"] == 1.0
    assert metrics["runoff/judge_accuracy"] == 1.0 and metrics["runoff/judge_decidable_votes"] == 5 * 2 * 2
    record = next(e.record for e in evaluator.episodes if e.record.debate_id == "eval-runoff-0")
    assert record.protocol == "runoff"
    assert [(t.agent, t.seats) for t in record.turns if t.round == 2] == [
        (6, (6, 1, 0)),
        (7, (7, 0, 1)),
        (8, (8, 1, 0)),
        (9, (9, 0, 1)),
    ]


def test_a_judge_of_positions_or_ties_leaves_the_majority() -> None:
    # seat 1: 1-1 between the two, a tie to the most held; always a tie: ½-½, the same
    for judge, accuracy in ((first_position, 0.5), (always_tie, 0.0)):
        metrics, _ = evaluate_runoff(_solver_then(judge))
        assert metrics["runoff/overturned"] == 0.0 and metrics["runoff/answer_correct"] == 0.0
        assert metrics["runoff/judge_accuracy"] == accuracy


def test_agreeing_candidates_are_not_judged_and_cost_only_themselves() -> None:
    everyone_right = _solver_then(truthful)
    metrics, evaluator = evaluate_runoff(
        lambda call: (
            everyone_right(call) if not _first_round(call) else _response(_question_answer(call.prompt_text), "N/A")
        )
    )
    assert metrics["runoff/contested"] == 0.0 and metrics["runoff/answer_correct"] == 1.0
    assert all(e.record.rounds_played == 1 for e in evaluator.episodes)
    assert "runoff/judge_accuracy" not in metrics and metrics["runoff/judge_decidable_votes"] == 0.0
    contested, _ = evaluate_runoff(_solver_then(truthful))
    assert contested["runoff/sampled_tokens_per_answer"] > metrics["runoff/sampled_tokens_per_answer"]  # the judging


def test_voting_is_matched_to_the_runoffs_cost() -> None:
    metrics, _ = evaluate_runoff(_solver_then(truthful), candidates=3, samples=30)
    k = metrics["runoff/cons_matched_k"]
    assert k * metrics["direct/sampled_tokens_per_sample"] >= metrics["runoff/sampled_tokens_per_answer"]
    assert (k - 1) * metrics["direct/sampled_tokens_per_sample"] < metrics["runoff/sampled_tokens_per_answer"]
    assert metrics["runoff_minus_cons_matched"] == pytest.approx(
        metrics["runoff/answer_correct"] - metrics["runoff/cons_matched"]
    )
