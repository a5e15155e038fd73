"""The judge benchmark (docs/training.md#the-judge-benchmark) against scripted judges whose
verdicts are known: one that always prefers the first position, one that tells the truth, one
that always says ``=``, one that breaks the contract."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable, Sequence

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.config.sections import EvaluationSettings, JudgeFamily
from debate_core.debate.xml_parser import XML_CONTRACT
from debate_core.records import ResponseContent
from debate_core.tasks.arithmetic import ArithmeticDataset, ArithmeticOptions
from debate_core.tasks.graders import build_boxed
from debate_core.testing.scripted_debate import ScriptedCall, ScriptedPolicy, scripted_setup
from debate_core.testing.tokenizer import ByteTokenizer
from debate_core.training.evaluation.evaluator import Evaluator
from debate_core.training.evaluation.judge_benchmark import Judgement, benchmark_metrics
from debate_core.training.run_components import NamedDataset, RunComponents, debate_runner_factory

JudgeScript = Callable[[ScriptedCall], str]


def _question_answer(prompt: str) -> str:
    a, op, b = re.findall(r"What is (\d+)([+*-])(\d+)\?", prompt)[-1]
    return str(eval(f"{a}{op}{b}"))  # the arithmetic dataset's own questions


def _stated(prompt: str) -> dict[int, str]:
    """Each other agent's latest stated answer in the prompt (the ``Answer:`` lines)."""
    found: dict[int, str] = {}
    for agent, answer in re.findall(r"\[Agent (\d+), round \d+\]\nSolution: [^\n]*\nAnswer: (\S+)", prompt):
        found[int(agent)] = answer
    return found


def _first_round(call: ScriptedCall) -> bool:
    """The evaluator shares one policy between debates: the round is read from the prompt."""
    return re.findall(r"Round (\d+) of", call.prompt_text)[-1] == "1"


_NONCE = itertools.count()


def _response(answer: str, comparison: str) -> str:
    """A response; its evaluation carries a fresh number, so no two responses are alike."""
    content = ResponseContent(
        solution=f"\\boxed{{{answer}}}",
        evaluation=f"Checked {next(_NONCE)}.",
        comparisons=(),
        consensus=False,
        consensus_reason=".",
    )
    text = XML_CONTRACT.render(content).text
    return text.replace("<comparison>N/A</comparison>", f"<comparison>{comparison}</comparison>")


def first_position(call: ScriptedCall) -> str:
    if _first_round(call):
        return _response(_question_answer(call.prompt_text), "N/A")
    return _response(_question_answer(call.prompt_text), "Agent 1 > Agent 2")


def truthful(call: ScriptedCall) -> str:
    right = _question_answer(call.prompt_text)
    if _first_round(call):
        return _response(right, "N/A")
    stated = _stated(call.prompt_text)
    winner, loser = (1, 2) if stated.get(1) == right else (2, 1)
    return _response(right, f"Agent {winner} > Agent {loser}")


def always_tie(call: ScriptedCall) -> str:
    return _response(_question_answer(call.prompt_text), "N/A" if _first_round(call) else "Agent 1 = Agent 2")


def wrong_own_answer_truthful(call: ScriptedCall) -> str:
    """Answers one too many and prefers whichever stated answer equals its own (none does
    unless the flaw is that off-by-one)."""
    mine = str(int(_question_answer(call.prompt_text)) + 1)
    if _first_round(call):
        return _response(mine, "N/A")
    stated = _stated(call.prompt_text)
    if stated.get(1) == mine:
        return _response(mine, "Agent 1 > Agent 2")
    if stated.get(2) == mine:
        return _response(mine, "Agent 2 > Agent 1")
    return _response(mine, "Agent 1 = Agent 2")


def broken(call: ScriptedCall) -> str:
    return "I refuse to use the format."


def scripted_parts(script: JudgeScript) -> RunComponents:
    """The components of a scripted 3-agent parallel debate (blind review, stated answers shown) on
    two-digit arithmetic, every seat of every debate answering by ``script``."""
    grader = build_boxed(None)
    setup = attrs.evolve(scripted_setup(3, 2, protocol="parallel", blind_review=True), show_answers=True)
    dataset = NamedDataset("arithmetic", ArithmeticDataset(ArithmeticOptions(difficulty=2, num_train=50, num_test=40)))
    return RunComponents(
        setup=setup,
        runner_for=debate_runner_factory(grader),
        make_policy=lambda _client: ScriptedPolicy(script),  # type: ignore[arg-type,return-value]
        reward=lambda record: None,  # type: ignore[arg-type,return-value]
        reward_name="unused",
        grader=grader,
        grader_name="boxed",
        stages=[],
        eval_dataset=dataset,
        write_transcript=lambda record, path: None,
        tokenizer=ByteTokenizer(),
    )


def evaluate_judge(
    script: JudgeScript,
    num_problems: int = 12,
    families: Sequence[JudgeFamily] = ("slip",),
    direct_samples: int | None = None,
) -> tuple[dict[str, float], Evaluator]:
    """The judge benchmark (with ``direct_samples``, the direct answers first) of a scripted judge."""
    parts = scripted_parts(script)
    settings = EvaluationSettings(
        num_problems=num_problems,
        modes=("judge",) if direct_samples is None else ("direct", "judge"),
        temperature=0.7,
        judge_families=tuple(families),
        num_samples=direct_samples or 0,
    )
    evaluator = Evaluator(parts, settings, seed=3, max_in_flight=4)
    metrics = asyncio.run(evaluator.evaluate(object()))  # type: ignore[arg-type]
    return {k.removeprefix("eval_arithmetic/judge/"): v for k, v in metrics.items()}, evaluator


def test_a_judge_that_always_prefers_the_first_position_scores_half_and_is_never_consistent() -> None:
    metrics, _ = evaluate_judge(first_position)
    assert metrics["num_pairs"] == 12
    assert metrics["accuracy"] == 0.5
    assert metrics["consistency"] == 0.0
    assert metrics["flip_rate"] == 1.0
    assert metrics["tie_rate"] == 0.0


def test_a_truthful_judge_scores_everything() -> None:
    metrics, evaluator = evaluate_judge(truthful)
    assert metrics["accuracy"] == 1.0 and metrics["accuracy_se"] == 0.0
    assert metrics["consistency"] == 1.0 and metrics["flip_rate"] == 0.0
    assert metrics["own_correct"] == 1.0 and metrics["accuracy_own_right"] == 1.0
    assert metrics["own_wrong_judgements"] == 0.0 and "accuracy_own_wrong" not in metrics
    assert evaluator.per_problem["eval_arithmetic/judge/accuracy"] == [1.0] * 12


def test_ties_are_strictly_wrong_but_consistent() -> None:
    metrics, _ = evaluate_judge(always_tie)
    assert metrics["accuracy"] == 0.0
    assert metrics["tie_rate"] == 1.0
    assert metrics["consistency"] == 1.0 and metrics["flip_rate"] == 0.0


def test_a_judge_that_breaks_the_contract_gives_no_verdict() -> None:
    metrics, _ = evaluate_judge(broken)
    assert metrics["accuracy"] == 0.0 and metrics["no_verdict_rate"] == 1.0
    assert metrics["own_correct"] == 0.0


def test_accuracy_is_split_by_whether_the_judges_own_answer_is_right() -> None:
    metrics, _ = evaluate_judge(wrong_own_answer_truthful, num_problems=30)
    assert metrics["own_correct"] == 0.0 and metrics["own_right_judgements"] == 0.0
    assert metrics["own_wrong_judgements"] == 60.0
    # it prefers the wrong solution exactly when the flaw is its own off-by-one: never the correct one
    assert metrics["accuracy_own_wrong"] == 0.0 == metrics["accuracy"]


def test_the_judges_round_one_is_sampled_once_per_problem_and_shared_by_every_pair_and_order() -> None:
    families: tuple[JudgeFamily, ...] = ("slip", "far", "bare", "both_right")
    _, evaluator = evaluate_judge(truthful, num_problems=5, families=families)
    by_problem: dict[str, list[str]] = {}
    for episode in evaluator.episodes:
        judge_round1 = next(t for t in episode.record.turns if t.agent == 0 and t.round == 1)
        problem = next(part for part in episode.record.debate_id.split("-") if part.isdigit())
        by_problem.setdefault(problem, []).append(judge_round1.text)
        if episode.record.debate_id.endswith("-round1"):  # the one that samples it: round 1 only
            assert max(t.round for t in episode.record.turns) == 1
            continue
        pair = {t.agent: t.text for t in episode.record.turns if t.round == 1 and t.agent > 0}
        assert len(pair) == 2 and pair[1] != pair[2]
    assert len(by_problem) == 5
    # one round-1 debate, then each family's pair in both orders
    assert all(len(texts) == 1 + 2 * len(families) and len(set(texts)) == 1 for texts in by_problem.values())
    sampled = [e for e in evaluator.episodes if e.record.debate_id.endswith("-round1")]
    assert len(sampled) == 5


def test_the_own_family_takes_its_samples_from_the_direct_answers_of_the_same_evaluation() -> None:
    """Both are the policy's blind round-1 answers in the same prompts: sampled once."""
    _, evaluator = evaluate_judge(wrong_own_answer_truthful, num_problems=4, families=("own",))
    ids = [e.record.debate_id for e in evaluator.episodes]
    assert any(i.startswith("eval-judge-own-sample") for i in ids)  # no direct mode: sampled here
    _, with_direct = evaluate_judge(wrong_own_answer_truthful, num_problems=4, families=("own",), direct_samples=6)
    ids = [e.record.debate_id for e in with_direct.episodes]
    assert any(i.startswith("eval-direct") for i in ids)
    assert not any(i.startswith("eval-judge-own-sample") for i in ids)


@given(
    st.lists(st.tuples(st.sampled_from(["correct", "wrong", "tie", "none"]), st.booleans()), min_size=2, max_size=40)
)
def test_metrics_follow_their_definitions(flat: list[tuple[str, bool]]) -> None:
    judgements = [Judgement(v, own) for v, own in flat]  # type: ignore[arg-type]
    pairs = list(zip(judgements[0::2], judgements[1::2], strict=False))
    metrics = benchmark_metrics(pairs, "p")
    used = [j for pair in pairs for j in pair]
    assert metrics["p/accuracy"] == pytest.approx(sum(j.verdict == "correct" for j in used) / len(used))
    assert metrics["p/consistency"] == pytest.approx(sum(a.verdict == b.verdict for a, b in pairs) / len(pairs))
    assert metrics["p/flip_rate"] <= 1.0 - metrics["p/consistency"] + 1e-12
    assert metrics["p/tie_rate"] == pytest.approx(sum(j.verdict == "tie" for j in used) / len(used))
    assert metrics["p/own_right_judgements"] + metrics["p/own_wrong_judgements"] == len(used)
