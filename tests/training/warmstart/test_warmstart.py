"""Supervised warm-start through the debate's own prompts, and curriculum stages."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.config.sections import WarmstartFlaw, WarmstartSettings
from debate_core.debate.running import run_debate
from debate_core.debate.xml_parser import XML_CONTRACT
from debate_core.plugin import Registry
from debate_core.records import Problem
from debate_core.rundir.directory import RunDirectory
from debate_core.tasks.arithmetic import ArithmeticDataset, ArithmeticOptions
from debate_core.tasks.graders import build_boxed
from debate_core.testing.scripted_debate import scripted_setup
from debate_core.testing.tokenizer import ByteTokenizer
from debate_core.training.correctness import grade_debate
from debate_core.training.kernel.reference_debates import BARE_RIGHT, ReferenceAgent, answer_check, reference_solution
from debate_core.training.kernel.rollouts import DebateJob
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from debate_core.training.run_components import NamedDataset
from debate_core.training.warmstart.data import (
    WarmstartData,
    WarmstartError,
    flawed_first_answers,
    trained_first_answers,
    warmstart_datums,
)
from tests.training.trainer_harness import (
    SERVICES,
    TinySums,
    TinySumsOptions,
    make_config,
    read_metrics,
    train_quietly,
)


def prepare(
    batch_size: int = 2,
    template: str = WarmstartSettings().solution_template,
    *,
    flawed_share: float = 0.5,
    train_on_flawed: bool = False,
    solve_share: float = 1.0,
    dataset: NamedDataset | None = None,
    flaw_kinds: tuple[WarmstartFlaw, ...] = ("slip",),
    bare_right_share: float = 0.0,
) -> WarmstartData:
    settings = WarmstartSettings(
        enabled=True,
        batch_size=batch_size,
        solution_template=template,
        flawed_share=flawed_share,
        solve_share=solve_share,
        train_on_flawed=train_on_flawed,
        flaw_kinds=flaw_kinds,
        bare_right_share=bare_right_share,
    )
    dataset = dataset or NamedDataset("tiny_sums", TinySums(TinySumsOptions()))
    return WarmstartData.prepare(dataset, build_boxed(None), settings, 0, 3, ByteTokenizer(), XML_CONTRACT)


def arithmetic() -> NamedDataset:
    return NamedDataset("arithmetic", ArithmeticDataset(ArithmeticOptions(difficulty=2, num_train=200, num_test=10)))


def run_reference(data: WarmstartData, protocol: str, rounds: int = 2, steps: int = 1) -> tuple[list, list]:
    setup = scripted_setup(3, rounds, protocol=protocol)  # type: ignore[arg-type]
    jobs = [job for step in range(steps) for job in data.jobs(step)]

    async def go() -> list:
        return [
            await run_debate(
                j.problem, setup, list(j.policies), seed=j.seed, debate_id=j.debate_id, grader=build_boxed(None)
            )
            for j in jobs
        ]

    return asyncio.run(go()), jobs


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_reference_debates_judge_wrong_first_answers_correctly(protocol: str) -> None:
    data = prepare(batch_size=8, dataset=arithmetic())
    episodes, jobs = run_reference(data, protocol, steps=2)
    grader = build_boxed(None)
    first_grades: list[float] = []
    for episode, job in zip(episodes, jobs, strict=True):
        record = episode.record
        assert not record.aborted and all(t.response.ok for t in record.turns)
        grades = [grader.grade(t.response.solution, record.answer or "") for t in record.turns]
        for turn, grade in zip(record.turns, grades, strict=True):
            agent = job.policies[turn.agent]
            assert isinstance(agent, ReferenceAgent)
            if turn.step == 0:
                first_grades.append(float(grade.correct))
                # a wrong first answer is exactly the planned flaw, and it is not trained on
                assert (agent.first_answer is not None) == (not grade.correct)
                assert agent.weights[0] == (0.0 if agent.first_answer is not None else 1.0)
            else:  # every later answer is revised to the right one
                assert grade.correct and agent.weights[turn.step] == 1.0
            latest = record.visible_responses(turn)
            others = {a: grades[i] for a, i in latest.items() if a != turn.agent}
            # every pair of visible others is compared: right > wrong, "=" only between equals
            assert len(turn.comparisons) == len(others) * (len(others) - 1) // 2
            for c in turn.comparisons:
                a_right, b_right = others[c.a].correct, others[c.b].correct
                assert (c.op == "=") == (a_right == b_right)
                if c.op == ">":
                    assert a_right and not b_right
            for other, grade in others.items():
                verdict = "is right" if grade.correct else "is wrong"
                assert f"Agent {other}: {grade.extracted} {verdict}" in turn.response.evaluation
            own = grades[record.turns.index(turn)].extracted
            agrees = turn.informed and all(g.extracted == own for g in others.values())
            assert turn.response.consensus == agrees
        graded = grade_debate(record, grader)
        assert graded is not None and graded.judge.agreed == graded.judge.decidable
    assert 0.2 < sum(first_grades) / len(first_grades) < 0.8  # flawed_share 0.5 of first answers
    if protocol == "parallel":
        assert all(not t.comparisons for e in episodes for t in e.record.turns if t.round == 1)


def test_without_flaws_every_debate_agrees_in_round_two() -> None:
    data = prepare(batch_size=4, flawed_share=0.0, dataset=arithmetic())
    episodes, _ = run_reference(data, "parallel", rounds=3)
    for episode in episodes:
        record = episode.record
        assert record.consensus_reached and record.rounds_played == 2
        assert all(c.op == "=" for t in record.turns for c in t.comparisons)


@pytest.mark.parametrize("train_on_flawed", [False, True])
def test_flawed_first_answers_are_weighted_by_the_option(train_on_flawed: bool) -> None:
    data = prepare(batch_size=8, dataset=arithmetic(), train_on_flawed=train_on_flawed)
    episodes, jobs = run_reference(data, "parallel")
    datums = warmstart_datums(episodes, jobs)
    assert len(datums) == 3 * len(jobs)  # each agent's two turns extend into one sequence
    flawed = 0
    for d in datums:
        agent = jobs[d.debate_index].policies[d.agent]
        assert isinstance(agent, ReferenceAgent)
        weights = d.datum.loss_fn_inputs["weights"].data
        assert set(d.datum.loss_fn_inputs) == {"target_tokens", "weights"}
        assert all(w == 0.0 for w, m in zip(weights, d.mask, strict=True) if m == 0)
        if agent.first_answer is not None and not train_on_flawed:
            flawed += 1
            assert 0 < sum(weights) < sum(d.mask)  # the first answer is left out, the revision kept
        else:
            assert weights == list(d.mask)
    assert flawed > 0 or train_on_flawed


@pytest.mark.parametrize("solve_share", [0.0, 0.5])
def test_solve_share_leaves_out_right_first_answers_but_keeps_every_judging_turn(solve_share: float) -> None:
    # docs/training.md#a-task-with-room: below 1, some right first answers are context only
    data = prepare(batch_size=16, dataset=arithmetic(), solve_share=solve_share)
    _, jobs = run_reference(data, "parallel")
    full = prepare(batch_size=16, dataset=arithmetic())
    _, full_jobs = run_reference(full, "parallel")
    right = trained = 0
    for job, full_job in zip(jobs, full_jobs, strict=True):
        for agent, full_agent in zip(job.policies, full_job.policies, strict=True):
            assert isinstance(agent, ReferenceAgent) and isinstance(full_agent, ReferenceAgent)
            # the flaws drawn for a seed do not depend on solve_share
            assert agent.first_answer == full_agent.first_answer
            assert agent.weights[1:] == [1.0] * (len(agent.weights) - 1)  # every later turn is trained
            if agent.first_answer is None:
                right += 1
                trained += agent.weights[0] == 1.0
                assert agent.weights[0] == (1.0 if agent.solve_trained else 0.0)
            else:
                assert agent.weights[0] == 0.0
    assert trained == trained_first_answers(jobs)
    assert right > 10
    if solve_share == 0.0:
        assert trained == 0
    else:
        assert 0.2 < trained / right < 0.8
    assert trained_first_answers(full_jobs) == right


def _first_answers(jobs: list[DebateJob]) -> list[ReferenceAgent]:
    return [a for job in jobs for a in job.policies if isinstance(a, ReferenceAgent)]


def test_the_default_kinds_draw_the_same_reference_debates_as_before_the_options() -> None:
    # flaw_kinds=("slip",) and bare_right_share=0 consume no extra random draws, so runs made
    # before these options existed keep their reference debates: the first answers below are
    # those the code before them drew for step 0 (debate, agent, kind, stated answer)
    jobs = prepare(batch_size=16, dataset=arithmetic()).jobs(0)[:6]
    drawn = [
        (slot, a.agent, a.first_answer.kind, a.first_answer.answer)
        for slot, job in enumerate(jobs)
        for a in _first_answers([job])
        if a.first_answer is not None
    ]
    assert drawn == [
        (0, 0, "dropped_carry", "50"),
        (0, 1, "digit_slip", "61"),
        (0, 2, "digit_slip", "70"),
        (1, 2, "digit_slip", "52"),
        (2, 2, "digit_slip", "74"),
        (4, 0, "digit_slip", "49"),
        (5, 0, "off_by_one", "36"),
        (5, 2, "dropped_carry", "27"),
    ]


@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
def test_each_flaw_kind_is_written_as_its_judge_family_and_judged_wrong(protocol: str) -> None:
    # docs/training.md#warm-start: far = the right working with a final answer 11-39 away,
    # bare = a wrong answer with no working; both judged wrong, compared below a right answer
    data = prepare(batch_size=24, dataset=arithmetic(), flaw_kinds=("far", "bare"))
    episodes, jobs = run_reference(data, protocol)
    grader = build_boxed(None)
    kinds: dict[str, int] = {}
    for episode, job in zip(episodes, jobs, strict=True):
        record = episode.record
        for agent in job.policies:
            assert isinstance(agent, ReferenceAgent)
            flawed = agent.first_answer
            if flawed is None:
                continue
            kinds[flawed.kind] = kinds.get(flawed.kind, 0) + 1
            right = record.answer or ""
            assert not grader.grade(flawed.text, right).correct and agent.weights[0] == 0.0
            if flawed.kind == "far":
                assert 11 <= abs(int(flawed.answer) - int(right)) <= 39
                assert flawed.text.count("\\boxed") == 1 and flawed.text != job.problem.metadata.get("solution")
            else:
                assert flawed.kind == "bare" and flawed.text == f"The answer is \\boxed{{{flawed.answer}}}."
        grades = [grader.grade(t.response.solution, record.answer or "") for t in record.turns]
        for turn in record.turns:
            latest = record.visible_responses(turn)
            others = {a: grades[i] for a, i in latest.items() if a != turn.agent}
            for c in turn.comparisons:
                assert (c.op == "=") == (others[c.a].correct == others[c.b].correct)
    assert kinds.get("far", 0) > 0 and kinds.get("bare", 0) > 0
    assert sum(kinds.values()) == flawed_first_answers(jobs)


def test_bare_right_first_answers_are_judged_equal_to_worked_ones_and_never_trained_on() -> None:
    data = prepare(batch_size=16, dataset=arithmetic(), flawed_share=0.0, bare_right_share=0.5)
    episodes, jobs = run_reference(data, "parallel")
    bare = [a for a in _first_answers(jobs) if a.first_answer is not None]
    assert bare and all(a.first_answer is not None and a.first_answer.kind == BARE_RIGHT for a in bare)
    assert flawed_first_answers(jobs) == 0
    for agent in _first_answers(jobs):
        bare_first = agent.first_answer is not None
        assert agent.weights[0] == (0.0 if bare_first else 1.0) and agent.weights[1:] == [1.0]
    for episode in episodes:
        record = episode.record
        assert record.consensus_reached  # every answer is right: the judges agree in round 2
        assert all(c.op == "=" for t in record.turns for c in t.comparisons)


def test_flaw_kinds_must_be_distinct_and_not_empty() -> None:
    with pytest.raises(ValueError, match="more than once"):
        WarmstartSettings(flaw_kinds=("far", "far"))
    with pytest.raises(ValueError, match="flaw_kinds"):
        WarmstartSettings(flaw_kinds=())


def test_a_dataset_without_worked_solutions_gets_wrong_final_answers() -> None:
    data = prepare(batch_size=10)  # tiny_sums: no worked solutions, template solutions
    episodes, jobs = run_reference(data, "parallel")
    flawed = [a for job in jobs for a in job.policies if isinstance(a, ReferenceAgent) and a.first_answer]
    assert flawed
    for agent in flawed:
        assert agent.first_answer is not None and agent.first_answer.kind == "wrong_answer"
        assert agent.first_answer.text == f"The answer is \\boxed{{{agent.first_answer.answer}}}."
    for episode in episodes:
        for turn in episode.record.turns:
            if turn.round == 2 and "is wrong" in turn.response.evaluation:
                assert f"the answer is {episode.record.answer}" in turn.response.evaluation


def test_a_worked_solution_the_grader_cannot_read_gets_the_template_sentence() -> None:
    problem = Problem("p", "q", "72", {"solution": "48 / 2 = 24 clips in May. 48 + 24 = 72.\n#### 72"})
    solution = reference_solution(problem, WarmstartSettings().solution_template, build_boxed(None))
    assert solution == "48 / 2 = 24 clips in May. 48 + 24 = 72.\n#### 72 The answer is \\boxed{72}."


def test_a_template_the_grader_rejects_is_an_error() -> None:
    with pytest.raises(WarmstartError, match="grader rejected all 10 reference solutions"):
        prepare(template="the answer is {answer}")


def test_the_warmstart_needs_a_grader() -> None:
    settings = WarmstartSettings(enabled=True)
    dataset = NamedDataset("tiny_sums", TinySums(TinySumsOptions()))
    with pytest.raises(WarmstartError, match="needs a grader"):
        WarmstartData.prepare(dataset, None, settings, 0, 3, ByteTokenizer(), XML_CONTRACT)


def test_warmstart_then_rl_in_one_run(registry: Registry, tmp_path: Path) -> None:
    config = make_config(
        "warmstart.enabled=true",
        "warmstart.steps=3",
        "warmstart.batch_size=2",
        "warmstart.learning_rate=0.1",
        "training.num_iterations=2",
        "evaluation.modes=['direct']",
    )
    outcome = asyncio.run(
        run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False)
    )
    records = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["phase"] for r in records] == ["warmstart"] * 3 + ["rl"] * 2
    losses = [r["warmstart/loss_per_token"] for r in records[:3]]
    assert losses[-1] < losses[0]  # cross-entropy on the reference answers goes down
    assert "eval_tiny_sums/direct/correct" in records[2]
    assert set(outcome.evaluations) == {"warmstart", "final"}
    assert {loss for _, loss, _ in SERVICES[-1].sent_batches[:3]} == {"cross_entropy"}
    assert (tmp_path / "run" / "checkpoints" / "step_000003.json").exists()


def test_curriculum_stages_run_in_order(registry: Registry, tmp_path: Path) -> None:
    config = make_config(
        "curriculum=[{dataset={name='tiny_sums'}, iterations=1}, {dataset={name='tiny_sums'}, iterations=2}]",
        "evaluation.num_problems=0",
    )
    outcome = asyncio.run(
        run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False)
    )
    assert outcome.iterations == 3
    assert [r["stage"] for r in read_metrics(tmp_path / "run" / "metrics.jsonl")] == [0, 1, 1]


def test_problem_order_is_seeded_and_covers_each_epoch() -> None:
    from debate_core.training.seeding import batch_indices

    first_epoch = [i for it in range(5) for i in batch_indices(7, 0, it, 2, 10)]
    assert sorted(first_epoch) == list(range(10))
    assert first_epoch == [i for it in range(5) for i in batch_indices(7, 0, it, 2, 10)]
    assert first_epoch != [i for it in range(5) for i in batch_indices(8, 0, it, 2, 10)]


JUDGE_MIX = (
    "reward.name=judge_mix",
    "reward.options={peer={name='v2'}, judge={name='oracle'}, weight=0.8, decay_iterations=2}",
)
JUDGED_RUN = (
    "training.num_iterations=3",
    "evaluation.num_problems=0",
    "debate.coordinator=parallel",
    "debate.max_rounds=2",
)


def test_the_judge_mix_reward_mixes_the_judge_in_and_phases_it_out(registry: Registry, tmp_path: Path) -> None:
    train_quietly(make_config(*JUDGE_MIX, *JUDGED_RUN), registry, tmp_path / "run")
    records = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r.get("judge/weight") for r in records] == [pytest.approx(0.8), pytest.approx(0.4), None]
    assert all("judge/pairs" in r for r in records[:2])


def test_an_unknown_judge_is_a_config_error(registry: Registry) -> None:
    from debate_core.errors import ConfigError

    with pytest.raises(
        ConfigError, match=r"reward\.options\.judge\.name: unknown judge 'oracel'. Did you mean 'oracle'"
    ):
        make_config("reward.name=judge_mix", "reward.options.judge.name=oracel")


def test_judge_mix_wrapped_by_another_reward_is_refused_at_the_start(registry: Registry) -> None:
    """A wrapper would call judge_mix as a plain reward, and its judge would never be asked."""
    from debate_core.errors import ConfigError
    from debate_core.training.run_components import build_run_components

    config = make_config(
        "reward.name=gt_mix", "reward.options.peer={name='judge_mix', options={judge={name='oracle'}}}"
    )
    with pytest.raises(ConfigError, match=r"^reward\.options\.peer: judge_mix must be the run's reward itself"):
        build_run_components(config, registry, ByteTokenizer())


def test_evaluation_records_keep_per_problem_outcomes_and_paired_changes(registry: Registry, tmp_path: Path) -> None:
    config = make_config(
        "training.num_iterations=2",
        "training.eval_every=1",
        "evaluation.num_problems=3",
        "evaluation.at_start=true",
        "debate.coordinator=parallel",
    )
    asyncio.run(
        run_training(config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False)
    )
    from debate_core.rundir.evaluation_records import latest_by_label, read_evaluation_records

    evaluations = RunDirectory(tmp_path / "run").evaluations
    made = read_evaluation_records(evaluations)
    assert [r["label"] for r in made] == ["start", "iteration_1", "final"]  # start and iteration 1 share step 0
    assert list(latest_by_label(evaluations)) == ["start", "iteration_1", "final"]
    first, last = made[0], made[-1]
    assert first["baseline"] is None and last["baseline"] == "start"
    direct = "eval_tiny_sums/direct/correct"
    assert len(first["per_problem"][direct]) == 3
    change = sum(last["per_problem"][direct]) / 3 - sum(first["per_problem"][direct]) / 3
    assert last["metrics"][f"{direct}_change"] == pytest.approx(change)
    assert f"{direct}_change_se" in last["metrics"]
    # debate minus direct is kept per problem (debate accuracy minus direct accuracy), so its change is paired too
    gap, debate = "eval_tiny_sums/debate_minus_direct", "eval_tiny_sums/debate/cons@3"
    for record in made:
        per = record["per_problem"]
        assert per[gap] == pytest.approx([b - a for a, b in zip(per[direct], per[debate], strict=True)])
        assert record["metrics"][gap] == pytest.approx(sum(per[gap]) / 3)
    assert last["metrics"][f"{gap}_change"] == pytest.approx(
        sum(last["per_problem"][gap]) / 3 - sum(first["per_problem"][gap]) / 3
    )
    assert f"{gap}_change_se" in last["metrics"]


@given(
    st.text(alphabet="0123456789-/.", min_size=1, max_size=6), st.text(alphabet="0123456789-/.", min_size=1, max_size=6)
)
def test_an_answer_check_sets_each_character_beside_its_own_and_ends_in_the_verdict(stated: str, own: str) -> None:
    steps, verdict = answer_check(stated, own).split(": ")
    assert verdict == ("right" if stated == own else "wrong")
    width = max(len(stated), len(own))
    pairs = steps.split(", ")
    assert len(pairs) == width
    for step, a, b in zip(pairs, stated.rjust(width, "_"), own.rjust(width, "_"), strict=True):
        assert step == f"{a}-{b} {'same' if a == b else 'differ'}"


def test_the_check_form_of_the_reference_evaluation() -> None:
    data = prepare(batch_size=8, dataset=arithmetic())
    data.settings = attrs.evolve(data.settings, evaluation_form="check")
    episodes, _ = run_reference(data, "parallel", steps=2)
    round2 = [t for e in episodes for t in e.record.turns if t.round == 2]
    assert round2
    for turn in round2:
        own = re.search(r"\\boxed\{(\d+)\}", turn.response.solution)
        assert own is not None
        assert turn.response.evaluation.startswith(f"I say {own.group(1)}. ")
        clauses = re.findall(r"Agent (\d) says (\d+): [^:]*: (right|wrong)\.", turn.response.evaluation)
        assert len(clauses) == 2
        for _agent, stated, verdict in clauses:
            assert verdict == ("right" if stated == own.group(1) else "wrong")
        assert [int(c[0]) for c in clauses] == [a for a in range(3) if a != turn.agent]


def subtraction() -> NamedDataset:
    return NamedDataset("arithmetic", ArithmeticDataset(ArithmeticOptions(difficulty=7, num_train=200, num_test=10)))


def test_the_verify_form_checks_each_stated_answer_by_the_inverse_operation() -> None:
    data = prepare(batch_size=8, dataset=subtraction())
    data.settings = attrs.evolve(data.settings, evaluation_form="verify")
    episodes, _ = run_reference(data, "parallel", steps=2)
    round2 = [(e.record, t) for e in episodes for t in e.record.turns if t.round == 2]
    assert round2
    wrong_seen = 0
    for record, turn in round2:
        a, b = (int(n) for n in re.findall(r"\d+", record.question))
        clause = r"Agent (\d) says (\d+): (\d+)\+(\d+): [^:]*: (right|wrong)\."
        clauses = re.findall(clause, turn.response.evaluation)
        assert len(clauses) == 2, turn.response.evaluation
        assert not turn.response.evaluation.startswith("I say")  # the verdict does not rest on the judge's answer
        for _agent, stated, added, subtrahend, verdict in clauses:
            assert (added, int(subtrahend)) == (stated, b)
            assert verdict == ("right" if int(stated) + b == a else "wrong")
            wrong_seen += verdict == "wrong"
    assert wrong_seen > 0


def test_the_verify_form_needs_a_dataset_that_checks_answers() -> None:
    settings = WarmstartSettings(enabled=True, evaluation_form="verify")
    dataset = NamedDataset("tiny_sums", TinySums(TinySumsOptions()))
    with pytest.raises(WarmstartError, match="'verify' needs a dataset that checks a stated answer"):
        WarmstartData.prepare(dataset, build_boxed(None), settings, 0, 3, ByteTokenizer(), XML_CONTRACT)


def test_revision_answer_shows_worked_solving_only_in_first_answers() -> None:
    data = prepare(batch_size=8, dataset=subtraction())
    data.settings = attrs.evolve(data.settings, evaluation_form="verify", revision="answer")
    episodes, jobs = run_reference(data, "parallel", steps=2)
    for episode, job in zip(episodes, jobs, strict=True):
        for turn in episode.record.turns:
            if turn.round == 1:
                assert ": " in turn.response.solution  # the worked columns (or a planned slip)
            else:
                assert turn.response.solution == f"The answer is \\boxed{{{job.problem.answer}}}."
