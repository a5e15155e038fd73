"""Collapse monitors and alarms (docs/training.md#collapse-alarms): the figures follow their
definitions on scripted debates, each alarm fires on a batch of its failure mode and stays quiet
on a healthy one, an alarm is said once per run (or every ``repeat_every`` iterations), and a
training run records them, prints them and keeps its progress line's figures."""

from __future__ import annotations

import asyncio
import io
import tomllib
from collections.abc import Sequence
from pathlib import Path

import pytest
import tomli_w

from debate_core.config import resolved_config_dict, write_resolved_config
from debate_core.config.sections import AlarmSettings
from debate_core.plugin import Registry, get_registry
from debate_core.records import DebateRecord, Problem, RewardFunction
from debate_core.rewards.advantages import compute_advantages
from debate_core.rundir.directory import RunDirectory
from debate_core.tasks.graders import build_boxed
from debate_core.testing.synthetic import TurnSpec, synthetic_debate
from debate_core.training.collapse.alarms import AlarmMonitor
from debate_core.training.collapse.monitor import ground_truth_metrics, label_free_metrics
from debate_core.training.kernel.debate_metrics import debate_metrics, turn_metrics
from debate_core.training.progress import Progress
from debate_core.training.run import resume_differences, run_training
from tests.training.trainer_harness import make_config, read_metrics

GRADER = build_boxed(None)
WIN_RATE: RewardFunction = get_registry().build("reward", "win_rate")
ALARMS = ("degenerate_consensus", "no_signal", "random_noise", "format_collapse", "constant_answer")

Said = str | None
"""What an agent says in a turn: a boxed answer, ``None`` for a solution without one."""


def turn(said: Said, compare: tuple[tuple[int, str, int], ...] = (), right: str | None = None) -> TurnSpec:
    solution = "I cannot say." if said is None else f"so \\boxed{{{said}}}"
    grade = None if right is None else float(said == right)
    return TurnSpec(solution=solution, comparisons=compare, grade=grade)  # type: ignore[arg-type]


def debate(rounds: Sequence[Sequence[Said]], answer: str, compare: str = "prefer") -> DebateRecord:
    """A parallel debate of three agents: ``rounds[r][a]`` is agent ``a``'s answer in round
    ``r + 1``; from round 2 each agent compares the two others: ``prefer`` puts first an agent
    that said the right answer (a judge that can tell), ``tie`` calls them equal, ``none`` writes
    no comparison."""
    specs: list[TurnSpec] = []
    for r, said in enumerate(rounds):
        for agent, answer_of_agent in enumerate(said):
            first, second = sorted((o for o in range(3) if o != agent), key=lambda o: rounds[r - 1][o] != answer)
            votes: tuple[tuple[int, str, int], ...] = ()
            if r and compare != "none":
                votes = ((first, ">" if compare == "prefer" else "=", second),)
            specs.append(turn(answer_of_agent, votes, answer))
    return synthetic_debate(3, specs, answer=answer, protocol="parallel", question=f"q{answer}")


def figures(records: list[DebateRecord]) -> dict[str, float]:
    """What an RL iteration records of a batch: the monitors and the debate diagnostics."""
    problems = [Problem(id=f"p{i}", question=r.question, answer=r.answer) for i, r in enumerate(records)]
    results = [WIN_RATE(r) for r in records]
    advantages = compute_advantages(records, results)
    return {
        **turn_metrics(records),
        **debate_metrics(records),
        **label_free_metrics(records, problems, advantages, GRADER),
        **ground_truth_metrics(records, problems, results, GRADER),
    }


def healthy() -> list[DebateRecord]:
    """Different problems, scattered first answers, judges that tell right from wrong."""
    out = []
    for k in range(8):
        right, wrong = str(20 + k), str(40 + k)
        first = [right, wrong, right] if k % 2 else [wrong, right, str(60 + k)]
        out.append(debate([first, [right, right, first[2]]], right))
    return out


def degenerate() -> list[DebateRecord]:
    """Every agent says the same from round 1 (wrong), and calls the others equal."""
    return [debate([[str(30 + k)] * 3, [str(30 + k)] * 3], str(k), compare="tie") for k in range(8)]


def random_noise() -> list[DebateRecord]:
    """Every agent says something else, to the end."""
    return [debate([[str(k), str(k + 50), str(k + 90)]] * 2, str(k)) for k in range(8)]


def format_collapse() -> list[DebateRecord]:
    """Answers without a boxed answer and no comparisons."""
    return [debate([[None, None, str(k)], [None, None, str(k)]], str(k), compare="none") for k in range(8)]


def constant_answer() -> list[DebateRecord]:
    """The same answer for every problem, with some disagreement to keep the debates going."""
    return [debate([["1", "1", str(k)], ["1", "1", "1"]], str(k + 10)) for k in range(8)]


FAILURES = {
    "degenerate_consensus": degenerate,
    "no_signal": degenerate,
    "random_noise": random_noise,
    "format_collapse": format_collapse,
    "constant_answer": constant_answer,
}


def run_alarms(batches: list[list[DebateRecord]], settings: AlarmSettings) -> tuple[list[dict[str, float]], list[str]]:
    monitor = AlarmMonitor(settings)
    states, lines = [], []
    for iteration, batch in enumerate(batches):
        state, said = monitor.check(iteration, figures(batch))
        states.append(state)
        lines += said
    return states, lines


def test_the_figures_follow_their_definitions() -> None:
    healthy_figures = figures(healthy())
    # per debate: 2 distinct answers of 3 in round 2 for half of them, 3 for the rest... in final answers
    assert healthy_figures["monitor/degenerate_consensus"] == 0.0
    assert healthy_figures["monitor/answer_diversity"] == pytest.approx((4 * 1 / 3 + 4 * 2 / 3) / 8)
    assert healthy_figures["monitor/unreadable_answers"] == 0.0
    assert healthy_figures["monitor/top_answer_share"] == pytest.approx(3 / 24)
    assert healthy_figures["monitor/label_accuracy"] == 1.0
    stuck = figures(degenerate())
    assert stuck["monitor/degenerate_consensus"] == 1.0 and stuck["monitor/answer_diversity"] == pytest.approx(1 / 3)
    assert stuck["monitor/no_signal"] == 1.0  # only ties: win_rate gives every agent 1/2
    assert stuck["monitor/label_accuracy"] == 0.0 and "monitor/reward_accuracy" not in stuck
    broken = figures(format_collapse())
    assert broken["monitor/unreadable_answers"] == pytest.approx(2 / 3)
    assert broken["monitor/top_answer_share"] == pytest.approx(1 / 24)
    assert figures(constant_answer())["monitor/top_answer_share"] == 1.0


def test_reward_accuracy_counts_the_pairs_the_reward_ranks_as_correctness_does() -> None:
    # final answers: agent 0 right, agents 1 and 2 wrong; the decidable pairs are (0, 1) and (0, 2)
    record = debate([["5", "6", "7"], ["5", "6", "7"]], "5", compare="none")
    problems = [Problem(id="p", question=record.question, answer="5")]
    rank = lambda *rewards: type(WIN_RATE(record))(agent_rewards=rewards)  # noqa: E731
    assert ground_truth_metrics([record], problems, [rank(1.0, 0.0, 0.5)], GRADER) == {
        "monitor/reward_accuracy": 1.0,
        "monitor/reward_pairs": 2.0,
        "monitor/label_accuracy": 0.0,  # three answers, one each: no majority
        "monitor/labelled_debates": 1.0,
    }
    assert ground_truth_metrics([record], problems, [rank(0.5, 0.5, 1.0)], GRADER)["monitor/reward_accuracy"] == 0.0


@pytest.mark.parametrize("alarm", ALARMS)
def test_each_alarm_fires_on_its_failure_mode_and_stays_quiet_on_a_healthy_run(alarm: str) -> None:
    settings = AlarmSettings(window=3)
    states, lines = run_alarms([FAILURES[alarm]()] * 3, settings)
    assert states[-1][f"alarm/{alarm}"] == 1.0
    mode = alarm.replace("_", " ")
    said = [line for line in lines if line.startswith(f"alarm: {mode} ")]
    assert len(said) == 1 and "RL iteration 3" in said[0] and "docs/training.md#collapse-alarms" in said[0]
    quiet_states, quiet_lines = run_alarms([healthy()] * 6, settings)
    assert quiet_lines == [] and all(state[f"alarm/{alarm}"] == 0.0 for state in quiet_states)


def test_an_alarm_waits_for_its_window_and_one_bad_iteration_does_not_trip_it() -> None:
    states, lines = run_alarms([healthy(), random_noise(), healthy(), healthy()], AlarmSettings(window=3))
    assert lines == [] and states[0] == {f"alarm/{a}": 0.0 for a in ALARMS}
    early, _ = run_alarms([random_noise()] * 2, AlarmSettings(window=3))
    assert all(state["alarm/random_noise"] == 0.0 for state in early)


def test_an_alarm_is_said_once_per_run_or_every_repeat_every_iterations() -> None:
    _, once = run_alarms([random_noise()] * 8, AlarmSettings(window=1))
    assert [line.split(" at ")[0] for line in once] == ["alarm: random noise"]
    _, repeated = run_alarms([random_noise()] * 8, AlarmSettings(window=1, repeat_every=3))
    assert [int(line.split("RL iteration ")[1].split(":")[0]) for line in repeated] == [1, 4, 7]


def test_a_threshold_at_its_bound_turns_the_alarm_off_and_disabled_alarms_say_nothing() -> None:
    states, lines = run_alarms([random_noise()] * 3, AlarmSettings(max_answer_diversity=1.0))
    assert lines == [] and states[-1]["alarm/random_noise"] == 0.0
    assert run_alarms([random_noise()] * 3, AlarmSettings(enabled=False)) == ([{}, {}, {}], [])


def test_a_training_run_records_says_and_shows_its_collapse_figures(registry: Registry, tmp_path: Path) -> None:
    stream = io.StringIO()
    config = make_config("alarms.window=1", "alarms.max_top_answer_share=0.0", "alarms.repeat_every=2")
    run = tmp_path / "run"
    asyncio.run(run_training(config, registry, RunDirectory(run), progress=Progress("lines", stream)))
    records = [r for r in read_metrics(run / "metrics.jsonl") if r.get("phase") == "rl"]
    assert len(records) == 4
    for record in records:
        assert record["alarm/constant_answer"] == 1.0
        for name in ("answer_diversity", "degenerate_consensus", "no_signal", "top_answer_share", "reward_pairs"):
            assert f"monitor/{name}" in record
    text = stream.getvalue()
    said = [line for line in text.splitlines() if line.startswith("alarm: constant answer")]
    assert [line.split(":")[1] for line in said] == [
        " constant answer at RL iteration 1",
        " constant answer at RL iteration 3",
    ]
    finish = next(line for line in text.splitlines() if line.startswith("step 1/4"))
    assert f"no_signal {records[0]['monitor/no_signal']:.3g}" in finish
    assert f"agree_r1 {records[0]['monitor/degenerate_consensus']:.3g}" in finish
    assert "diversity" not in finish  # the other monitors are in the record and the report


def test_a_run_made_before_a_setting_existed_resumes_without_a_config_change(
    registry: Registry, tmp_path: Path
) -> None:
    """A run directory whose config.toml predates ``[alarms]`` and ``evaluation.judge_families``
    resumes under their defaults as the same configuration (no new segment); a real change is one."""
    config = make_config()
    run_dir = RunDirectory(tmp_path / "run")
    run_dir.root.mkdir()
    write_resolved_config(config, run_dir.config_path, registry)
    older = tomllib.loads(run_dir.config_path.read_text())
    del older["alarms"], older["evaluation"]["judge_families"]
    run_dir.config_path.write_text(tomli_w.dumps(older))
    new = resolved_config_dict(config, registry)
    assert resume_differences(run_dir, new) == ["alarms", "evaluation.judge_families"]  # read as written
    assert resume_differences(run_dir, new, registry) == []
    changed = resolved_config_dict(make_config("alarms.window=5", "training.batch_size=7"), registry)
    assert resume_differences(run_dir, changed, registry) == ["alarms.window", "training.batch_size"]
