"""Every plugin result is checked where it crosses into debate-core (docs/limits.md#what-a-bad-plugin-gets):
for each kind, a plugin that returns None, returns the wrong type, raises, or returns the right
type with wrong contents ends in one ``ComponentFailure`` line naming the plugin, the hook, the
input it was given, and what it returned or raised. The debate components are driven through a
real debate (``run_debate``), the others through the objects the trainer and ``debate score``
call them by."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from debate_core.errors import ComponentFailure
from debate_core.plugin import PluginCall, Registry, call_async_plugin, check_judge_verdicts
from debate_core.records import Grade, HistoryEntry, ParsedResponse, Persona, Problem, RewardResult, StopCondition
from debate_core.rundir.directory import RunDirectory
from debate_core.testing.scripted_debate import run_scripted_debate, scripted_setup
from debate_core.training.run_components import NamedDataset, NamedGrader
from debate_core.training.sinks import MultiSink, open_sinks
from tests.training.trainer_harness import make_config, train_quietly

GOOD = (
    "<solution>6 * 7 = \\boxed{42}</solution>\n<evaluation>Checked.</evaluation>\n"
    "<comparison>N/A</comparison>\n<consensus>NO</consensus>\n<consensus_reason>First.</consensus_reason>"
)


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("boom")


def _always(value: Any) -> Callable[..., Any]:
    return lambda *args, **kwargs: value


# ---------------------------------------------------------------- the debate's own components


class Parser:
    """The xml parser with ``parse`` replaced."""

    def __init__(self, parse: Callable[[str], Any]) -> None:
        from debate_core.debate.xml_parser import XmlParser

        self.inner = XmlParser()
        self.parse = parse

    @property
    def contract(self) -> Any:
        return self.inner.contract


class Personas:
    def __init__(self, persona: Callable[..., Any]) -> None:
        self.persona = persona


class History:
    def __init__(self, select: Callable[..., Any]) -> None:
        self.select = select


class Renderer:
    """The byte renderer with one method replaced."""

    def __init__(self, **replaced: Callable[..., Any]) -> None:
        from debate_core.debate.rendering import RoleColonRenderer
        from debate_core.testing.tokenizer import ByteTokenizer

        self.inner = RoleColonRenderer(ByteTokenizer())
        self.tokenizer = self.inner.tokenizer
        self.build_prompt = replaced.get("build_prompt", self.inner.build_prompt)
        self.stop_condition = replaced.get("stop_condition", self.inner.stop_condition)
        self.decode = replaced.get("decode", self.inner.decode)


class Coordinator:
    protocol_name = "sequential"
    hide_comparisons = False

    def __init__(self, start: Callable[..., Any]) -> None:
        self.start = start


FOREIGN_TURN = HistoryEntry(round=1, agent=5, solution="x", evaluation="y", comparison=None, consensus_reason=None)

DEBATE_CASES: dict[str, tuple[str, Any, str, str]] = {
    # name: (the setup field, the bad component, the hook named, what the line says it did)
    "parser returns None": ("parser", Parser(_always(None)), "parse", "returned None: not a ParsedResponse"),
    "parser returns a str": ("parser", Parser(_always("ok")), "parse", "returned 'ok': not a ParsedResponse"),
    "parser raises": ("parser", Parser(_boom), "parse", "raised ValueError: boom"),
    "parser fields of the wrong type": (
        "parser",
        Parser(_always(ParsedResponse(solution=None))),  # type: ignore[arg-type]
        "parse",
        "'solution' is None",
    ),
    "personas return None": ("persona_set", Personas(_always(None)), "persona", "returned None: not a Persona"),
    "personas return an int": ("persona_set", Personas(_always(42)), "persona", "returned 42: not a Persona"),
    "personas raise": ("persona_set", Personas(_boom), "persona", "raised ValueError: boom"),
    "persona temperature nan": (
        "persona_set",
        Personas(_always(Persona("a", "You are Agent 0.", float("nan")))),
        "persona",
        "temperature nan is not a finite number",
    ),
    "history returns None": (
        "history_policy",
        History(_always(None)),
        "select",
        "returned None: not a sequence of HistoryEntry",
    ),
    "history returns strings": (
        "history_policy",
        History(_always(["x"])),
        "select",
        "item 0 is 'x', not a HistoryEntry",
    ),
    "history raises": ("history_policy", History(_boom), "select", "raised ValueError: boom"),
    "history shows a turn it cannot see": (
        "history_policy",
        History(_always([FOREIGN_TURN])),
        "select",
        "agent 5's turn of round 1, which it cannot see",
    ),
    "prompt is None": (
        "renderer",
        Renderer(build_prompt=_always(None)),
        "build_prompt",
        "returned None: not a sequence of token ids",
    ),
    "prompt is a str": (
        "renderer",
        Renderer(build_prompt=_always("abc")),
        "build_prompt",
        "returned 'abc': not a sequence of token ids",
    ),
    "prompt raises": ("renderer", Renderer(build_prompt=_boom), "build_prompt", "raised ValueError: boom"),
    "prompt has a negative token": (
        "renderer",
        Renderer(build_prompt=_always([1, -3])),
        "build_prompt",
        "-3 is not a token id",
    ),
    "stop condition is None": (
        "renderer",
        Renderer(stop_condition=_always(None)),
        "stop_condition",
        "returned None: not a StopCondition",
    ),
    "decode returns bytes": ("renderer", Renderer(decode=_always(b"x")), "decode", "returned b'x': not a str"),
    "stop strings empty": (
        "renderer",
        Renderer(stop_condition=_always(StopCondition(strings=("",)))),
        "stop_condition",
        "strings holds a value that is not a non-empty string",
    ),
    "coordinator returns None": ("coordinator", Coordinator(_always(None)), "start", "returned None: not a TurnState"),
    "coordinator returns an int": ("coordinator", Coordinator(_always(7)), "start", "returned 7: not a TurnState"),
    "coordinator raises": ("coordinator", Coordinator(_boom), "start", "raised ValueError: boom"),
}


@pytest.mark.parametrize("case", list(DEBATE_CASES))
def test_a_bad_debate_component_is_named_with_its_hook_and_input(case: str) -> None:
    field, component, hook, outcome = DEBATE_CASES[case]
    setup = scripted_setup(2, 1)
    setup = attrs.evolve(setup, **{field: component}, names={field: "my_plugins:bad"})
    with pytest.raises(ComponentFailure) as caught:
        asyncio.run(run_scripted_debate([GOOD, GOOD], 2, setup=setup, debate_id="p7"))
    line = str(caught.value)
    assert "\n" not in line
    assert f"{field.replace('_', ' ')} plugin 'my_plugins:bad' " in line
    assert f", in {hook}" in line and outcome in line, line
    if hook not in ("stop_condition",):
        assert "problem 'p7'" in line, line  # the input it was given
    if hook in ("select", "build_prompt", "decode", "parse"):
        assert "agent 0's turn in round 1" in line, line


# ---------------------------------------------------------------- datasets, graders, rewards, judges, sinks


class Dataset:
    def __init__(self, problems: Callable[[str], Any]) -> None:
        self.problems = problems


class Grader:
    def __init__(self, grade: Callable[..., Any]) -> None:
        self.grade = grade


PROBLEM = Problem(id="a", question="q?", answer="1")

DATASET_CASES = {
    "returns None": (_always(None), "returned None: not a sequence of Problem"),
    "returns numbers": (_always([7]), "item 0 is 7, not a Problem"),
    "raises": (_boom, "raised ValueError: boom"),
    "repeats an id": (_always([PROBLEM, PROBLEM]), "problem id 'a' appears twice"),
}


@pytest.mark.parametrize("case", list(DATASET_CASES))
def test_a_bad_dataset_is_named(case: str) -> None:
    hook, outcome = DATASET_CASES[case]
    with pytest.raises(ComponentFailure) as caught:
        NamedDataset("my_data", Dataset(hook)).problems("train")  # type: ignore[arg-type]
    line = str(caught.value)
    assert line.startswith("dataset plugin 'my_data' ") and outcome in line and ", in problems on split 'train'" in line


GRADER_CASES = {
    "returns None": (_always(None), "returned None: not a Grade"),
    "returns a bool": (_always(True), "returned True: not a Grade"),
    "raises": (_boom, "raised ValueError: boom"),
    "correct is not a bool": (_always(Grade(formatted=True, correct="yes")), "'correct' is 'yes'"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("case", list(GRADER_CASES))
def test_a_bad_grader_is_named(case: str) -> None:
    hook, outcome = GRADER_CASES[case]
    with pytest.raises(ComponentFailure) as caught:
        NamedGrader("my_grader", Grader(hook)).grade("\\boxed{1}", "1")  # type: ignore[arg-type]
    line = str(caught.value)
    assert line.startswith("grader plugin 'my_grader' ") and outcome in line
    assert ", in grade on answer '1', solution '\\\\boxed{1}'" in line, line


# rewards by import path, as `debate score --reward tests.training.test_bad_plugin_results:NAME` names them
def reward_none(debate: Any) -> Any:
    return None


def reward_str(debate: Any) -> Any:
    return "1.0"


def reward_raises(debate: Any) -> Any:
    raise ValueError("boom")


def reward_short(debate: Any) -> Any:
    return RewardResult(agent_rewards=(1.0,))


def reward_inf(debate: Any) -> Any:
    return RewardResult(agent_rewards=(float("inf"),) * debate.num_agents)


REWARD_CASES = {
    "reward_none": "returned None: not a RewardResult (a NoneType)",
    "reward_str": "returned '1.0': not a RewardResult (a str)",
    "reward_raises": "raised ValueError: boom",
    "reward_short": "1 agent rewards for 2 agents",
    "reward_inf": "agent rewards not finite or beyond ±1e+06 (0: inf, 1: inf)",
}


@pytest.mark.parametrize("name", list(REWARD_CASES))
def test_a_bad_reward_is_named_by_debate_score(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from debate_core.cli import main
    from debate_core.debate.transcripts import save_transcript
    from debate_core.testing.scripted_debate import scripted_debate

    transcript = tmp_path / "debate.json"
    save_transcript(scripted_debate([GOOD, GOOD], 2, debate_id="d9"), transcript)
    path = f"tests.training.test_bad_plugin_results:{name}"
    assert main(["score", str(transcript), "--reward", path]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"debate: error: reward plugin '{path}' ") and REWARD_CASES[name] in err, err
    assert ", in __call__ on debate 'd9'" in err


def test_a_bad_reward_stops_the_trainer_before_any_update_or_checkpoint(registry: Registry, tmp_path: Path) -> None:
    run = tmp_path / "run"
    path = "tests.training.test_bad_plugin_results:reward_none"
    with pytest.raises(ComponentFailure, match=rf"^reward plugin '{path}' returned None: not a RewardResult") as caught:
        train_quietly(make_config(f"reward.name={path}"), registry, run, handle_signals=False)
    assert "debate 'step1-debate" in str(caught.value) and "(problem 'train-" in str(caught.value)
    assert not (run / "metrics.jsonl").read_text()  # no update was recorded ...
    # ... and nothing was trained, so no checkpoint is written: a run that fails before its first
    # step leaves nothing that holds a run (docs/config-reference.md#what-config-check-checks)
    assert not list((run / "checkpoints").glob("step_*.json"))


JUDGE_CASES: dict[str, tuple[Callable[..., Any], str]] = {
    "returns None": (_always(None), "returned None: not a sequence of 2 verdicts"),
    "returns a str": (_always("11"), "returned '11': not a sequence of 2 verdicts"),
    "raises": (_boom, "raised ValueError: boom"),
    "one verdict for two pairs": (_always([1]), "1 verdicts for 2 pairs"),
    "a verdict out of range": (_always([1, 5]), "verdict 5 is not 1, 0, -1 or None"),
}


@pytest.mark.parametrize("case", list(JUDGE_CASES))
def test_a_bad_judge_is_named(case: str) -> None:
    answer, outcome = JUDGE_CASES[case]

    async def compare() -> Any:
        return answer()

    call = PluginCall("judge", "my_judge", "compare", "2 pairs of debate 'd1'")

    async def judged() -> list[int]:
        return check_judge_verdicts(call, await call_async_plugin(call, compare), 2)

    with pytest.raises(ComponentFailure) as caught:
        asyncio.run(judged())
    line = str(caught.value)
    assert line.startswith("judge plugin 'my_judge' ") and outcome in line
    assert line.endswith(", in compare on 2 pairs of debate 'd1'")


class Builder:
    """Builds every metric sink as ``factory``."""

    def __init__(self, factory: Callable[[Path], Any]) -> None:
        self.factory = factory

    def build(self, kind: str, name: str, options: Any = None, path: str = "") -> Any:
        return self.factory


class RaisingSink:
    def write(self, step: int, metrics: Any) -> None:
        raise ValueError("boom")

    def close(self) -> None:
        pass


SINK_CASES: dict[str, tuple[Callable[[Path], Any], str, str]] = {
    "builds None": (_always(None), "build", "returned None: not a metric sink"),
    "builds a str": (_always("sink"), "build", "returned 'sink': not a metric sink"),
    "write raises": (lambda run_dir: RaisingSink(), "write", "raised ValueError: boom"),
    "build raises": (_boom, "build", "raised ValueError: boom"),
}


@pytest.mark.parametrize("case", list(SINK_CASES))
def test_a_bad_metric_sink_is_named(case: str, registry: Registry, tmp_path: Path) -> None:
    factory, hook, outcome = SINK_CASES[case]
    logging = make_config("logging.sinks=[{name='jsonl'}]").logging
    with pytest.raises(ComponentFailure) as caught:
        sinks: MultiSink = open_sinks(logging, Builder(factory), RunDirectory(tmp_path))
        sinks.write(3, {"loss": 1.0})
    line = str(caught.value)
    assert line.startswith("metric sink plugin 'jsonl' ") and outcome in line and f", in {hook}" in line
    if hook == "write":
        assert line.endswith("on step 3")


def test_the_table_in_the_docs_lists_every_kind() -> None:
    """docs/limits.md#what-a-bad-plugin-gets has a row for every kind this file tests."""
    text = (Path(__file__).parents[2] / "docs" / "limits.md").read_text(encoding="utf-8")
    table = text.split("## What a bad plugin gets", 1)[1].split("\n## ", 1)[0]
    kinds = ["reward", "parser", "grader", "dataset", "persona set", "history policy", "coordinator", "renderer"]
    for kind in [*kinds, "judge", "metric sink"]:
        assert f"| {kind} |" in table, kind
