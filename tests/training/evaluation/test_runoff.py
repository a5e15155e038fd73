"""The runoff (docs/answer-rules.md#the-runoff) on scripted policies whose candidates and verdicts
are known by hand, and its parts on hand-built debates."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

import pytest

from debate_core.config.sections import EvaluationSettings
from debate_core.debate.final_answer import grader_reader
from debate_core.records import DebateEpisode
from debate_core.tasks.graders import build_boxed
from debate_core.testing import build_debate
from debate_core.testing.scripted_debate import ScriptedCall
from debate_core.training.evaluation.evaluator import Evaluator
from debate_core.training.evaluation.runoff import (
    Finalists,
    RunoffResult,
    decide,
    finalists,
    runoff_judge_tally,
    verdict_scores,
)
from tests.training.evaluation.test_evaluation import answer
from tests.training.evaluation.test_judge_benchmark import (
    _first_round,
    _question_answer,
    _response,
    _stated,
    scripted_parts,
)

BOXED = grader_reader(build_boxed(None))


def _samples(*boxed: str):  # type: ignore[no-untyped-def]
    return build_debate([answer(f"\\boxed{{{b}}}") for b in boxed], num_agents=len(boxed), answer="7").turns


def test_finalists_are_the_answers_most_held_ties_to_the_earliest() -> None:
    final = finalists(_samples("8", "7", "7", "8", "9"), BOXED)
    assert [(c.answer, c.agents) for c in final.ranked] == [("8", (0, 3)), ("7", (1, 2)), ("9", (4,))]
    assert final.contested
    assert not finalists(_samples("7", "7", "7"), BOXED).contested


def _judged(comparison: str) -> DebateEpisode:
    """A judging debate whose judge (agent 0) wrote ``comparison`` in round 2."""
    record = build_debate(
        [
            *(answer(f"\\boxed{{{b}}}") for b in ("7", "7", "8")),  # round 1
            answer("\\boxed{7}", comparison),  # the judge's round 2
            *(answer(f"\\boxed{{{b}}}") for b in ("7", "8")),
        ],
        num_agents=3,
        answer="7",
        protocol="parallel",
    )
    return DebateEpisode(record, ())


def test_a_verdict_scores_the_most_held_answer_and_the_runner_up_by_hand() -> None:
    # order a states the most held answer at agent 1, order b at agent 2
    assert verdict_scores(_judged("Agent 1 > Agent 2"), 0) == (1.0, 0.0)
    assert verdict_scores(_judged("Agent 1 > Agent 2"), 1) == (0.0, 1.0)
    assert verdict_scores(_judged("Agent 2 > Agent 1"), 1) == (1.0, 0.0)
    assert verdict_scores(_judged("Agent 1 = Agent 2"), 0) == (0.5, 0.5)
    assert verdict_scores(_judged("N/A"), 0) is None


def test_the_runner_up_wins_only_on_a_higher_score_by_hand() -> None:
    contested = finalists(_samples("8", "8", "7"), BOXED)
    plain = finalists(_samples("7", "7"), BOXED)
    # two judges per order: 8 first in order a; verdicts a, b, a, b
    episodes = [
        _judged("Agent 2 > Agent 1"),
        _judged("Agent 1 > Agent 2"),
        _judged("N/A"),
        _judged("Agent 1 = Agent 2"),
    ]
    results = decide([contested, plain], episodes, judges=2)
    assert results[0].scores == (0.5, 2.5)  # 7 wins twice, one tie, one no verdict
    assert results[0].overturned and results[0].chosen is not None and results[0].chosen.answer == "7"
    assert results[1] == RunoffResult(plain) and results[1].chosen is not None and results[1].chosen.answer == "7"
    tied = decide([contested], [_judged("Agent 1 > Agent 2"), _judged("Agent 1 > Agent 2")], judges=1)[0]
    assert tied.scores == (1.0, 1.0) and not tied.overturned and tied.chosen.answer == "8"  # type: ignore[union-attr]
    assert RunoffResult(Finalists(())).chosen is None
    with pytest.raises(ValueError, match="judging debates"):
        decide([contested], episodes, judges=1)
    # judge accuracy: only where exactly one of the two is right (7 here: the runner-up)
    tally = runoff_judge_tally(results, [(False, True), None])
    assert (tally.decidable, tally.agreed, tally.ties) == (3, 2, 1)


Judge = Callable[[ScriptedCall], str]


def _solver_then(judge: Judge) -> Judge:
    """Blind answers: agent 0 right, agents 1 and 2 one too many; in a judging turn, ``judge``."""

    def script(call: ScriptedCall) -> str:
        right = _question_answer(call.prompt_text)
        if _first_round(call):
            agent = int(re.findall(r"You are Agent (\d+)", call.prompt_text)[-1])
            return _response(right if agent == 0 else str(int(right) + 1), "N/A")
        return judge(call)

    return script


def truthful(call: ScriptedCall) -> str:
    right = _question_answer(call.prompt_text)
    winner, loser = (1, 2) if _stated(call.prompt_text).get(1) == right else (2, 1)
    return _response(right, f"Agent {winner} > Agent {loser}")


def first_position(call: ScriptedCall) -> str:
    return _response(_question_answer(call.prompt_text), "Agent 1 > Agent 2")


def always_tie(call: ScriptedCall) -> str:
    return _response(_question_answer(call.prompt_text), "Agent 1 = Agent 2")


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
    # six candidates: right, wrong, wrong, right, wrong, wrong: the majority (4 of 6) is wrong
    metrics, evaluator = evaluate_runoff(_solver_then(truthful), judges=2)
    assert metrics["runoff/cons@6"] == 0.0 and metrics["runoff/pass@6"] == 1.0
    assert metrics["runoff/contested"] == 1.0 and metrics["runoff/overturned"] == 1.0
    assert metrics["runoff/answer_correct"] == 1.0
    assert metrics["runoff/judge_accuracy"] == 1.0 and metrics["runoff/judge_decidable_votes"] == 5 * 2 * 2
    judging = [e.record.debate_id for e in evaluator.episodes if e.record.debate_id.startswith("eval-runoff-0-")]
    assert judging == ["eval-runoff-0-0a", "eval-runoff-0-0b", "eval-runoff-0-1a", "eval-runoff-0-1b"]


def test_a_judge_of_positions_or_ties_leaves_the_majority() -> None:
    # first position: 1-1 between the two, a tie to the most held; always a tie: ½-½, the same
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
    assert not any(
        e.record.debate_id.startswith("eval-runoff-") and "candidates" not in e.record.debate_id
        for e in evaluator.episodes
    )
    assert "runoff/judge_accuracy" not in metrics and metrics["runoff/judge_decidable_votes"] == 0.0
    contested, _ = evaluate_runoff(_solver_then(truthful))
    assert contested["runoff/sampled_tokens_per_answer"] > metrics["runoff/sampled_tokens_per_answer"]  # the judging


def test_the_candidates_are_direct_evaluations_answers_and_voting_is_matched_to_the_runoffs_cost() -> None:
    alone, _ = evaluate_runoff(_solver_then(truthful), candidates=3)
    metrics, evaluator = evaluate_runoff(_solver_then(truthful), candidates=3, samples=30)
    assert not any("candidates" in e.record.debate_id for e in evaluator.episodes)  # direct's own answers
    for name in ("runoff/answer_correct", "runoff/cons@3", "runoff/sampled_tokens_per_answer"):
        assert metrics[name] == alone[name], name
    k = metrics["runoff/cons_matched_k"]
    assert k * metrics["direct/sampled_tokens_per_sample"] >= metrics["runoff/sampled_tokens_per_answer"]
    assert metrics["runoff_minus_cons_matched"] == pytest.approx(
        metrics["runoff/answer_correct"] - metrics["runoff/cons_matched"]
    )
