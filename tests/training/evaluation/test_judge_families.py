"""The judge benchmark's families (docs/training.md#the-judge-benchmark) against scripted judges:
what each must score on every family, as ``training.evaluation.judge_benchmark`` defines it, and the
pairs each family builds."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.config import load_run_config
from debate_core.config.sections import EvaluationSettings
from debate_core.errors import ConfigError
from debate_core.records import Problem
from debate_core.tasks.flaws import AnswerFlaws, far_answer
from debate_core.tasks.graders import build_boxed
from debate_core.testing.scripted_debate import ScriptedCall, ScriptedPolicy
from debate_core.training.evaluation.evaluator import Evaluator
from debate_core.training.evaluation.judge_families import JUDGE_FAMILIES, family_case
from debate_core.training.kernel.reference_debates import Lesson
from tests.training.evaluation.test_judge_benchmark import (
    _first_round,
    _question_answer,
    _response,
    _stated,
    evaluate_judge,
    scripted_parts,
)

WRONG_FAMILIES = ("slip", "own", "far", "bare")
NUM_PROBLEMS = 12


def _mine(call: ScriptedCall) -> str:
    """The judge's own answer: in round 1 one too many when the right answer is odd (so the policy
    has wrong answers of its own to be judged on), the right one in round 2."""
    right = _question_answer(call.prompt_text)
    return str(int(right) + 1) if _first_round(call) and int(right) % 2 else right


def first_position(call: ScriptedCall) -> str:
    return _response(_mine(call), "N/A" if _first_round(call) else "Agent 1 > Agent 2")


def truthful(call: ScriptedCall) -> str:
    if _first_round(call):
        return _response(_mine(call), "N/A")
    right = _question_answer(call.prompt_text)
    stated = _stated(call.prompt_text)
    if stated.get(1) == right and stated.get(2) == right:
        return _response(right, "Agent 1 = Agent 2")
    winner, loser = (1, 2) if stated.get(1) == right else (2, 1)
    return _response(right, f"Agent {winner} > Agent {loser}")


def ties_everything(call: ScriptedCall) -> str:
    return _response(_mine(call), "N/A" if _first_round(call) else "Agent 1 = Agent 2")


def swayed(call: ScriptedCall) -> str:
    """Judges truthfully but takes agent 2's stated answer for its own in round 2."""
    text = truthful(call)
    if _first_round(call):
        return text
    right, taken = _question_answer(call.prompt_text), _stated(call.prompt_text)[2]
    return text.replace(f"\\boxed{{{right}}}", f"\\boxed{{{taken}}}")


Judge = Callable[[ScriptedCall], str]


@pytest.fixture(scope="module")
def scores() -> dict[str, dict[str, float]]:
    """Every family's metrics under each scripted judge (one evaluation per judge)."""
    out: dict[str, dict[str, float]] = {}
    for judge in (first_position, truthful, ties_everything, swayed):
        metrics, _ = evaluate_judge(judge, NUM_PROBLEMS, families=JUDGE_FAMILIES)
        out[judge.__name__] = metrics
    return out


def family(metrics: dict[str, float], name: str) -> dict[str, float]:
    """One family's metrics without their prefix (``slip``'s are the benchmark's own names)."""
    if name == "slip":
        return {k: v for k, v in metrics.items() if "/" not in k}
    return {k.removeprefix(f"{name}/"): v for k, v in metrics.items() if k.startswith(f"{name}/")}


# (judge, family kind) -> (accuracy, consistency, tie_rate)
EXPECTED = {
    ("first_position", "wrong"): (0.5, 0.0, 0.0),
    ("first_position", "both_right"): (0.0, 0.0, 0.0),
    ("truthful", "wrong"): (1.0, 1.0, 0.0),
    ("truthful", "both_right"): (1.0, 1.0, 1.0),
    ("ties_everything", "wrong"): (0.0, 1.0, 1.0),
    ("ties_everything", "both_right"): (1.0, 1.0, 1.0),
}


@pytest.mark.parametrize("name", JUDGE_FAMILIES)
@pytest.mark.parametrize("judge", ["first_position", "truthful", "ties_everything"])
def test_each_scripted_judge_scores_what_the_definition_says(
    scores: dict[str, dict[str, float]], judge: str, name: str
) -> None:
    metrics = family(scores[judge], name)
    kind = "both_right" if name == "both_right" else "wrong"
    accuracy, consistency, ties = EXPECTED[(judge, kind)]
    assert metrics["num_pairs"] > 0
    assert (metrics["accuracy"], metrics["consistency"], metrics["tie_rate"]) == (accuracy, consistency, ties)
    assert metrics["flip_rate"] == (1.0 if judge == "first_position" else 0.0)
    assert metrics["no_verdict_rate"] == 0.0
    # its round-2 answer is always right; its round-1 answer wrong exactly on odd answers
    assert metrics["own_correct"] == 1.0
    assert metrics["own_correct_shift"] == pytest.approx(1.0 - metrics["own_correct_round1"])


def test_the_own_family_judges_the_policys_own_wrong_answers_and_counts_the_problems_it_skips(
    scores: dict[str, dict[str, float]],
) -> None:
    metrics = family(scores["truthful"], "own")
    slip = family(scores["truthful"], "slip")
    # wrong answers of its own only on odd answers: every own pair is one, and its round 1 was wrong there
    assert metrics["own_correct_round1"] == 0.0
    assert metrics["num_pairs"] + metrics["all_right_problems"] == NUM_PROBLEMS == slip["num_pairs"]
    assert metrics["no_wrong_answer_problems"] == metrics["all_right_problems"] > 0
    assert 0.0 < slip["own_correct_round1"] < 1.0


def test_reading_the_pair_can_pull_the_judges_own_answer_off(scores: dict[str, dict[str, float]]) -> None:
    for name in WRONG_FAMILIES:
        metrics = family(scores["swayed"], name)
        # agent 2 states the wrong answer in one order of two: the judge takes it there
        assert metrics["own_correct"] == 0.5, name
        assert metrics["accuracy_own_right"] == 1.0 and metrics["accuracy_own_wrong"] == 1.0
    assert family(scores["swayed"], "both_right")["own_correct"] == 1.0


def test_paired_values_are_kept_for_the_families_whose_problems_never_change() -> None:
    _, evaluator = evaluate_judge(truthful, 6, families=JUDGE_FAMILIES)
    kept = {name for name in evaluator.per_problem if "/judge" in name}
    prefix = "eval_arithmetic/judge"
    assert kept == {f"{prefix}/accuracy", f"{prefix}/far/accuracy", f"{prefix}/bare/accuracy"} | {
        f"{prefix}/both_right/accuracy"
    }
    ids = {e.record.debate_id for e in evaluator.episodes}
    assert {"eval-judge-0-a", "eval-judge-far-0-b", "eval-judge-both_right-5-a"} <= ids
    assert any(i.startswith("eval-judge-own-sample-") for i in ids)


def test_only_slip_by_default() -> None:
    metrics, evaluator = evaluate_judge(truthful, 4)
    assert not [name for name in metrics if name.split("/")[0] in JUDGE_FAMILIES]
    assert "own_correct_round1" in metrics
    assert all(re.fullmatch(r"eval-judge-\d+-([ab]|round1)", e.record.debate_id) for e in evaluator.episodes)


def _lesson(answer: str, solution: str) -> Lesson:
    problem = Problem(id="p", question="q", answer=answer)
    return Lesson(problem, solution, answer, build_boxed(None), None)


def test_each_family_writes_the_pair_it_names() -> None:
    lesson = _lesson("65", "57+8: 7+8=15, 5+0+1=6. The answer is \\boxed{65}.")
    template, flaws = "The answer is \\boxed{{answer}}.", AnswerFlaws(("65", "70"))
    far = family_case("far", 3, lesson, flaws, 0, template)
    assert far is not None and far.expected == ">"
    assert far.other.text.startswith("57+8: 7+8=15, 5+0+1=6. The answer is \\boxed{")
    assert 11 <= abs(int(far.other.answer) - 65) <= 39
    bare = family_case("bare", 3, lesson, flaws, 0, template)
    assert bare is not None and bare.other.text == f"The answer is \\boxed{{{bare.other.answer}}}."
    assert bare.other.answer != "65"
    both = family_case("both_right", 3, lesson, flaws, 0, template)
    assert both is not None and both.expected == "=" and both.other.text == "The answer is \\boxed{65}."
    assert family_case("far", 3, _lesson("3/4", "So \\boxed{3/4}."), flaws, 0, template) is None
    assert family_case("far", 3, lesson, flaws, 0, template) == far  # the same pair every evaluation


@given(st.integers(-500, 500), st.randoms(use_true_random=False))
def test_a_far_answer_is_11_to_39_away_and_keeps_a_non_negative_answer_non_negative(
    value: int, rng: random.Random
) -> None:
    far = far_answer(str(value), rng)
    assert far is not None and 11 <= abs(int(far) - value) <= 39
    assert value < 0 or int(far) >= 0
    assert far_answer("2.5", rng) is None and far_answer("x", rng) is None


def test_families_are_chosen_by_an_evaluation_option(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('[evaluation]\njudge_families = ["slip", "far", "both_right"]\n')
    assert load_run_config(path, registry=None).evaluation.judge_families == ("slip", "far", "both_right")
    path.write_text('[evaluation]\njudge_families = ["slip", "slip"]\n')
    with pytest.raises(ConfigError, match="more than once"):
        load_run_config(path, registry=None)
    path.write_text('[evaluation]\njudge_families = ["nearby"]\n')
    with pytest.raises(ConfigError, match="judge_families"):
        load_run_config(path, registry=None)


def never_wrong(call: ScriptedCall) -> str:
    """A truthful judge whose own round-1 answer is always right: it has no wrong answers to give."""
    return _response(_question_answer(call.prompt_text), "N/A") if _first_round(call) else truthful(call)


@pytest.mark.parametrize("whose", ["policy", "opponent"])
def test_the_own_family_judges_the_fixed_opponents_answers_when_asked(whose: Literal["policy", "opponent"]) -> None:
    """``judge_own_answers = "opponent"``: the own family pairs the fixed opponent's wrong answers
    (``truthful``'s, wrong on odd answers) with the reference, judged by the evaluated policy, and
    keeps their per-problem accuracy (the same pairs at every evaluation); by default the policy's
    own answers, here never wrong, give it no pair at all."""
    parts = scripted_parts(never_wrong)

    def make_policy(client: object) -> ScriptedPolicy:
        return ScriptedPolicy(truthful if client == "opponent" else never_wrong)

    parts = attrs.evolve(parts, make_policy=make_policy)
    settings = EvaluationSettings(
        num_problems=NUM_PROBLEMS, modes=("judge",), temperature=0.7, judge_families=("own",), judge_own_answers=whose
    )
    assert settings.uses_opponent == (whose == "opponent")

    async def opponent() -> object:
        return "opponent"

    evaluator = Evaluator(parts, settings, seed=3, max_in_flight=4)
    metrics = asyncio.run(evaluator.evaluate("policy", opponent))  # type: ignore[arg-type]
    own = family({k.removeprefix("eval_arithmetic/judge/"): v for k, v in metrics.items()}, "own")
    kept = evaluator.per_problem.get("eval_arithmetic/judge/own/accuracy")
    if whose == "policy":
        assert own["num_pairs"] == 0 and own["all_right_problems"] == NUM_PROBLEMS and kept is None
    else:
        assert own["num_pairs"] == NUM_PROBLEMS - own["all_right_problems"] > 0
        assert own["accuracy"] == 1.0 and kept == [1.0] * int(own["num_pairs"])
