"""Evaluation modes and their metrics, the ground-truth diagnostics, and the preflight checklist."""

from __future__ import annotations

import asyncio

import attrs
import pytest

from debate_core.debate.final_answer import choose_answer
from debate_core.plugin import Registry
from debate_core.tasks.graders import build_boxed
from debate_core.testing import build_debate
from debate_core.training.correctness import grade_debate, verifiable_metrics
from debate_core.training.evaluation.evaluator import evaluate_policy
from debate_core.training.preflight import format_checklist, run_checklist
from tests.training.trainer_harness import SERVICES, make_config


def answer(text: str, comparison: str = "N/A") -> str:
    return (
        f"<solution>{text}</solution><evaluation>e</evaluation><comparison>{comparison}</comparison>"
        "<consensus>NO</consensus><consensus_reason>r</consensus_reason>"
    )


HAND_GRADED = [
    answer("\\boxed{7}"),
    answer("\\boxed{8}"),
    answer("\\boxed{8}", "Agent 0 > Agent 1"),
    answer("\\boxed{7}", "Agent 2 > Agent 1"),
    answer("\\boxed{8}", "Agent 2 > Agent 0"),
    answer("\\boxed{7}", "Agent 0 = Agent 1"),
]
"""A 3-agent sequential debate whose grades, votes and answers the two tests below work out by hand."""


def test_grades_pass_avg_cons_and_judge_accuracy_by_hand() -> None:
    # round 1: A0 right, A1 wrong, A2 wrong and votes 0 > 1 (right) ; round 2: A0 votes 2 > 1 (both wrong:
    # not decidable), A1 votes 2 > 0 (wrong: picks the incorrect one), A2 answers right and votes 0 = 1
    # (a tie on a decidable pair: a wrong judgement). Decidable votes 3, right 1.
    record = build_debate(HAND_GRADED, num_agents=3, answer="7")
    graded = grade_debate(record, build_boxed(None))
    assert graded is not None
    assert [g.correct for g in graded.turn_grades] == [True, False, False, True, False, True]
    assert [g.correct for g in graded.final_grades] == [True, False, True]
    assert (graded.pass_at_k, graded.avg_at_k, graded.cons_at_k) == (1.0, pytest.approx(2 / 3), 1.0)
    assert (graded.judge.decidable, graded.judge.agreed, graded.judge.ties) == (3, 1, 1)
    assert (graded.changes.agents, graded.changes.wrong_to_right, graded.changes.right_to_wrong) == (3, 1, 0)
    metrics = verifiable_metrics([graded], "train_x", 3)
    assert metrics["train_x/judge_accuracy"] == pytest.approx(1 / 3)
    assert metrics["train_x/judge_decidable_votes"] == 3 and metrics["train_x/judge_ties"] == 1
    assert metrics["train_x/format"] == 1.0
    assert metrics["train_x/correct"] == pytest.approx(2 / 3)  # the agents' final answers
    assert metrics["train_x/response_correct"] == 0.5  # every response of every round
    assert metrics["train_x/cons@3"] == 1.0  # the debate's final answer, 7 (agents 0 and 2)
    assert metrics["train_x/wrong_to_right"] == pytest.approx(1 / 3) and metrics["train_x/right_to_wrong"] == 0.0
    assert metrics["train_x/round1_disagreement"] == 1.0 and metrics["train_x/round1_disagreement_continued"] == 1.0


def test_every_rule_is_graded_and_the_rule_in_force_is_debate_accuracy_by_hand() -> None:
    """docs/answer-rules.md#in-evaluation: the debate above graded under vote_winner (in force) and
    majority. Final answers 7, 8, 7: majority 7 (right). Votes on the solutions judged: round 1's
    agent 2 judged 0 > 1 (agent 0's 7 scores 1); round 2: agent 0 judged 2 > 1 (agent 2's round-1 8
    scores 1), agent 1 judged 2 > 0 (agent 2's 8 again: 2 in all), agent 2 judged 0 = 1 (agent 0's
    round-2 7 and agent 1's round-2 8, half each). The vote winner is agent 2's round-1 8 (wrong).
    Round 1: 7, 8, 8: majority 8 (wrong), pass@3 right."""
    from debate_core.debate.final_answer import VoteWinnerRule, rules_side_by_side

    record = build_debate(HAND_GRADED, num_agents=3, answer="7")
    rules = rules_side_by_side(VoteWinnerRule())
    assert [name for name, _ in rules] == ["vote_winner", "majority", "answer_votes"]
    graded = grade_debate(record, build_boxed(None), rules=rules)
    assert graded is not None
    assert graded.rules[:2] == (("vote_winner", False), ("majority", True))
    metrics = verifiable_metrics([graded], "e", 3)
    assert metrics["e/answer_correct"] == 0.0 and metrics["e/cons@3"] == 1.0
    assert metrics["e/rule/vote_winner/correct"] == 0.0 and metrics["e/rule/majority/correct"] == 1.0
    assert metrics["e/round1_cons@3"] == 0.0 and metrics["e/round1_pass@3"] == 1.0


def test_several_debates_per_problem_are_averaged_within_their_problem_by_hand() -> None:
    """evaluation.debates_per_problem (docs/training.md#evaluation): a problem's figures are the
    mean over its debates, standard errors take problems as the unit, judge votes are pooled."""
    right_vote = [answer("\\boxed{7}"), answer("\\boxed{8}"), answer("\\boxed{7}", "Agent 0 > Agent 1")]
    wrong_vote = [answer("\\boxed{7}"), answer("\\boxed{8}"), answer("\\boxed{8}", "Agent 1 > Agent 0")]
    all_right = [answer("\\boxed{7}")] * 3
    debates = [wrong_vote, all_right, right_vote, right_vote]  # problem 1: debates 1-2; problem 2: 3-4
    graded = [grade_debate(build_debate(t, num_agents=3, answer="7"), build_boxed(None)) for t in debates]
    assert all(g is not None for g in graded)
    metrics = verifiable_metrics([g for g in graded if g is not None], "e", 3, debates_per_problem=2)
    # cons@3 per debate: 0 (8 holds two answers), 1, 1, 1: per problem 0.5 and 1
    assert metrics["e/cons@3"] == 0.75
    assert metrics["e/cons@3_se"] == pytest.approx(0.25)  # sd of (0.5, 1) over sqrt(2)
    # correct per debate 1/3, 1, 2/3, 2/3: per problem 2/3 and 2/3
    assert metrics["e/correct"] == pytest.approx(2 / 3) and metrics["e/correct_se"] == pytest.approx(0.0)
    # three decidable votes, from debates 1, 3 and 4; debate 1's picks the wrong answer
    assert metrics["e/judge_decidable_votes"] == 3 and metrics["e/judge_accuracy"] == pytest.approx(2 / 3)
    one_each = verifiable_metrics([g for g in graded if g is not None], "e", 3)
    assert one_each["e/cons@3"] == 0.75 and one_each["e/cons@3_se"] == pytest.approx(0.25)  # four problems
    with pytest.raises(ValueError, match="groups of 3 debates"):
        verifiable_metrics([g for g in graded if g is not None], "e", 3, debates_per_problem=3)


def test_the_first_of_several_debates_per_problem_is_the_single_debate(registry: Registry) -> None:
    debate_only = 'evaluation.modes=["debate"]'
    asyncio.run(evaluate_policy(make_config(debate_only, "evaluation.num_problems=2"), registry))
    single_seeds = {p.seed for p in SERVICES[-1].sent_sampling}
    three = make_config(debate_only, "evaluation.num_problems=2", "evaluation.debates_per_problem=3")
    several = asyncio.run(evaluate_policy(three, registry))
    several_seeds = {p.seed for p in SERVICES[-1].sent_sampling}
    assert single_seeds < several_seeds  # the first debate of each problem is the one a single debate plays
    prefix = "eval_tiny_sums"
    assert several.metrics[f"{prefix}/num_problems"] == 2.0
    assert len(several.per_problem[f"{prefix}/debate/cons@3"]) == 2  # one value per problem, paired as before
    assert all(v in (0.0, 1 / 3, 2 / 3, 1.0) for v in several.per_problem[f"{prefix}/debate/cons@3"])
    assert several.metrics[f"{prefix}/debate/judge_decidable_votes"] >= 0
    with pytest.raises(Exception, match="debates_per_problem"):
        make_config("evaluation.debates_per_problem=0")


def test_paired_difference_and_its_standard_error_by_hand() -> None:
    from debate_core.stats import paired_difference, standard_error

    difference, error = paired_difference([0.0, 1.0, 0.5, 0.5], [1.0, 1.0, 1.0, 0.0])
    # differences 1, 0, 0.5, -0.5: mean 0.25; sample variance (0.75^2 + 0.25^2 + 0.25^2 + 0.75^2) / 3
    assert difference == 0.25
    assert error == pytest.approx((((0.75**2 + 0.25**2 + 0.25**2 + 0.75**2) / 3) ** 0.5) / 2)
    assert standard_error([1.0]) == 0.0


def test_paired_changes_between_evaluations() -> None:
    from debate_core.rundir.evaluation_records import paired_changes

    baseline = {"e/direct/correct": [0.0, 0.5, 1.0], "e/other": [1.0]}
    changes = paired_changes(baseline, {"e/direct/correct": [1.0, 1.0, 1.0], "e/new": [0.0]})
    # differences 1, 0.5, 0: mean 0.5, sample sd 0.5, standard error 0.5 / sqrt(3)
    assert changes["e/direct/correct_change"] == pytest.approx(0.5)
    assert changes["e/direct/correct_change_se"] == pytest.approx(0.5 / 3**0.5)
    assert set(changes) == {"e/direct/correct_change", "e/direct/correct_change_se"}
    assert paired_changes(None, {"e/direct/correct": [1.0]}) == {}


def test_the_final_answer_vote_breaks_ties_by_agent_order() -> None:
    """cons@k is the debate's final answer (docs/protocol.md#the-final-answer): without votes a
    tie goes to the lowest agent id, and an answer the grader cannot read is never correct."""
    grader = build_boxed(None)
    right, wrong = "\\boxed{7}", "\\boxed{8}"
    assert choose_answer({0: wrong, 1: right, 2: right}, grader, "7").correct
    assert not choose_answer({0: wrong, 1: right}, grader, "7").correct
    assert not choose_answer({0: "no boxed answer"}, grader, "7").correct


def test_evaluate_every_mode_against_the_base_model(registry: Registry) -> None:
    config = make_config("evaluation.role_averaged=true", "evaluation.num_problems=2", "evaluation.num_samples=2")
    metrics = asyncio.run(evaluate_policy(config, registry)).metrics
    prefix = "eval_tiny_sums"
    for name in (
        "direct/format",
        "direct/correct",
        "direct/pass@2",
        "direct/avg@2",
        "direct/cons@2",
        "debate/pass@3",
        "debate/cons@3",
        "debate/comparison_rate",
        "debate/parse_error",
        "debate/rounds_played",
        "debate/judge_decidable_votes",
        "role_averaged/correct",
        "role_averaged/opponent_correct",
    ):
        assert f"{prefix}/{name}" in metrics, name
    assert metrics[f"{prefix}/num_problems"] == 2.0
    service = SERVICES[-1]
    assert any(label.startswith("create_sampling_client") for _, label in service.log)  # the fixed opponent
    # direct mode: 2 problems, the blind first round of the 3-agent debate each (the first 2 answers count)
    direct_seeds = {p.seed for p in service.sent_sampling[:6]}
    assert len(direct_seeds) == 6
    assert f"{prefix}/debate_minus_direct" in metrics and f"{prefix}/debate_minus_direct_se" in metrics
    for name in ("answer_correct", "rule/vote_winner/correct", "rule/majority/correct", "round1_pass@3"):
        assert f"{prefix}/debate/{name}" in metrics, name
    for mode in ("direct", "debate"):
        assert metrics[f"{prefix}/{mode}/sampled_tokens_per_answer"] > 0


def test_tokens_per_answer_count_one_answer_per_debate_and_one_per_direct_problem() -> None:
    from types import SimpleNamespace

    from debate_core.training.evaluation.evaluator import answer_costs

    turn = SimpleNamespace(action=(1, 2, 3), observation=(1,) * 10)
    episode = SimpleNamespace(trajectories=[SimpleNamespace(transitions=[turn, turn])])  # 6 sampled, 20 prompt
    four_debates = answer_costs([episode] * 4, 4, "e")  # type: ignore[list-item]
    assert four_debates == {"e/sampled_tokens_per_answer": 6.0, "e/prompt_tokens_per_answer": 20.0}
    two_problems = answer_costs([episode] * 4, 2, "e")  # type: ignore[list-item]  # cons@k over two rounds each
    assert two_problems["e/sampled_tokens_per_answer"] == 12.0


def test_direct_answers_are_the_blind_first_round_of_the_same_debate() -> None:
    from debate_core.debate.running import run_debate
    from debate_core.records import Problem
    from debate_core.testing.scripted_debate import ScriptedPolicy, run_sync, scripted_setup
    from debate_core.training.evaluation.evaluator import direct_setup

    setup = scripted_setup(3, 3, protocol="sequential")
    policies = [ScriptedPolicy([answer("\\boxed{7}")] * 3) for _ in range(3)]
    record = run_sync(run_debate(Problem("p", "What is 3+4?", "7"), direct_setup(setup), policies, seed=0)).record
    assert record.rounds_played == 1 and record.protocol == "parallel" and len(record.turns) == 3
    prompts = [policy.calls[0].prompt_text for policy in policies]
    assert all("Round 1 of 3" in p and "Nobody else has answered yet" in p for p in prompts)


def test_evaluation_temperature_samples_every_agent_at_it(registry: Registry) -> None:
    """docs/protocol.md#sampling-temperature: evaluation.temperature overrides the personas' own."""
    valid = "backend.options.valid_only=true"  # no parse error ends a debate before agent 2 speaks
    asyncio.run(evaluate_policy(make_config(valid), registry))
    assert {p.temperature for p in SERVICES[-1].sent_sampling} == {0.6, 1.0, 0.9}  # the default personas'
    asyncio.run(evaluate_policy(make_config(valid, "evaluation.temperature=0.0"), registry))
    assert {p.temperature for p in SERVICES[-1].sent_sampling} == {0.0}


def test_evaluation_is_deterministic(registry: Registry) -> None:
    config = make_config("evaluation.num_problems=2")
    assert asyncio.run(evaluate_policy(config, registry)) == asyncio.run(evaluate_policy(config, registry))


def test_checklist_passes_fails_and_explains() -> None:
    metrics = {
        "eval_d/direct/correct": 0.02,
        "eval_d/debate/comparison_rate": 0.9,
        "eval_d/debate/pass@3": 0.2,
    }
    results = run_checklist(metrics, "d", 3)
    assert [(r.name, r.status) for r in results] == [
        ("direct accuracy", "fail"),
        ("valid comparisons", "pass"),
        ("pass@3", "fail"),
        ("judge accuracy", "n/a"),
    ]
    assert "warm-start" in results[0].advice and "pass@3" in format_checklist(results)
    assert results[1].advice == "" and "no vote compared" in results[3].advice
    assert attrs.asdict(results[0])["value"] == 0.02
    broken = run_checklist({"eval_d/debate/parse_error": 1.0}, "d", 3)
    assert broken[1].status == "fail" and "100% of debate turns broke the output contract" in broken[1].advice


def test_runners_are_never_shared_between_configs_that_reuse_an_id() -> None:
    """Evaluation derives temporary setups (one agent for direct answers, a temperature): a
    runner cache keyed by ``id`` alone handed a freed setup's runner to the next one."""
    import weakref

    from debate_core.training.run_components import RunComponents

    class Config:
        pass

    built: list[int] = []

    def runner_for(config: object) -> object:
        built.append(id(config))
        ref = weakref.ref(config)
        return lambda *a, **k: ref()

    parts = RunComponents(
        setup=Config(),  # type: ignore[arg-type]
        runner_for=runner_for,  # type: ignore[arg-type]
        make_policy=None,  # type: ignore[arg-type]
        reward=None,  # type: ignore[arg-type]
        reward_name="r",
        grader=None,
        grader_name="none",
        stages=[],
        eval_dataset=None,  # type: ignore[arg-type]
        write_transcript=None,  # type: ignore[arg-type]
    )
    seen = []
    for _ in range(50):
        temporary = [Config()]  # freed at the end of each loop: its id is reused
        seen.append(parts.runner(temporary[0])() is temporary[0])
    assert all(seen) and len(built) == 50
    assert parts.runner() is parts.runner() and built[-1] == id(parts.setup)
