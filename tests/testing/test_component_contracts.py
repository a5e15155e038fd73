"""The contract suites of debate_core.testing fail on components that break them (a check that
cannot fail would prove nothing), and pass on the built-ins, given by spec as a plugin author would."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from debate_core import (
    CoordinatorSpec,
    Grade,
    GraderSpec,
    HistoryEntry,
    JudgeSpec,
    Persona,
    PersonaSetSpec,
    Problem,
    Turn,
)
from debate_core.debate.coordinators import SequentialCoordinator
from debate_core.debate.personas import DefaultPersonas
from debate_core.tasks import BoxedGrader
from debate_core.testing import (
    CoordinatorContract,
    DatasetContract,
    GraderContract,
    HistoryPolicyContract,
    JudgeContract,
    MetricSinkContract,
    PersonaSetContract,
    sdk_mismatches,
)
from debate_core.testing.other_kind_contracts import ScriptedJudgeHost
from debate_core.testing.scripted_debate import scripted_debate


class EmptyPrompts:
    def persona(self, agent_id: int, num_agents: int) -> Persona:
        return Persona(name=f"p{agent_id}", system_prompt="" if agent_id == 2 else "You are an agent.")


class ShowsTheFuture:
    """Shows every turn of the debate it was built from, seen or not."""

    def __init__(self, everything: Sequence[Turn]) -> None:
        self.everything = everything

    def select(self, visible: Sequence[Turn], current_round: int) -> list[HistoryEntry]:
        return [HistoryEntry(t.round, t.agent, t.response.solution, "", None, "") for t in self.everything]


class DuplicateIds:
    def problems(self, split: str) -> list[Problem]:
        return [Problem(id="same", question="1+1?", answer="2"), Problem(id="same", question="2+2?", answer="4")]


class CorrectWithoutFormat:
    def grade(self, solution: str, answer: str) -> Grade:
        return Grade(formatted=False, correct=True)


class CustomProtocol(SequentialCoordinator):
    """Sequential turns under a protocol name of its own (a third party's coordinator)."""

    protocol_name = "my_protocol"  # type: ignore[assignment]


class ClosedTwice:
    def __init__(self, run_dir: Path) -> None:
        self.closed = False

    def write(self, step: int, metrics: Any) -> None:
        if self.closed:
            raise RuntimeError("written after close")
        if any(isinstance(v, float) and v != v for v in metrics.values()):
            raise ValueError("cannot write NaN")

    def close(self) -> None:
        self.closed = True


def test_a_persona_set_with_an_empty_prompt_fails() -> None:
    with pytest.raises(AssertionError, match="empty system prompt"):
        PersonaSetContract().test_every_agent_gets_a_persona(EmptyPrompts(), 3)


def test_a_history_policy_that_shows_unseen_turns_fails() -> None:
    debate = scripted_debate(
        [
            f"<solution>{k}</solution><evaluation>N/A</evaluation><comparison>N/A</comparison>"
            "<consensus>NO</consensus><consensus_reason>x</consensus_reason>"
            for k in range(6)
        ],
        3,
    )
    with pytest.raises(AssertionError, match="shows unseen turns"):
        HistoryPolicyContract().test_entries_are_visible_turns(ShowsTheFuture(debate.turns), debate)


def test_a_dataset_with_duplicate_ids_fails() -> None:
    with pytest.raises(AssertionError, match="duplicate problem ids"):
        DatasetContract().test_problems_are_well_formed_and_deterministic(DuplicateIds())


def test_a_grader_correct_without_format_fails() -> None:
    with pytest.raises(AssertionError, match="correct but not formatted"):
        GraderContract().test_grades_any_text(CorrectWithoutFormat(), "boxed_right")


def test_a_metric_sink_that_rejects_nan_fails(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="NaN"):
        MetricSinkContract().test_writes_steps_and_closes(ClosedTwice, tmp_path)


class OutOfRange:
    """Verdicts of +2, and one too few."""

    async def compare(self, pairs: Sequence[Any], host: Any) -> list[int]:
        return [2 for _ in pairs][1:]


class Flaky:
    """A different verdict on every call."""

    def __init__(self) -> None:
        self.calls = 0

    async def compare(self, pairs: Sequence[Any], host: Any) -> list[int]:
        self.calls += 1
        return [self.calls % 2 for _ in pairs]


def test_a_judge_with_the_wrong_verdicts_fails() -> None:
    with pytest.raises(AssertionError):
        JudgeContract().test_one_verdict_per_pair(OutOfRange(), ScriptedJudgeHost())
    with pytest.raises(AssertionError):
        JudgeContract().test_the_same_pairs_get_the_same_verdicts(Flaky(), ScriptedJudgeHost())


def test_a_backend_off_the_sdk_surface_fails() -> None:
    class Service:
        def create_sampling_client(self, path: str) -> None: ...

    assert sdk_mismatches(Service, "ServiceClient")


class TestPersonasBySpec(PersonaSetContract):
    component_spec = PersonaSetSpec(name="defaults", description="by spec", build=lambda _: DefaultPersonas())


class TestSequentialBySpec(CoordinatorContract):
    component_spec = CoordinatorSpec(name="seq", description="sequential", build=lambda _: SequentialCoordinator())


class TestACustomProtocolName(CoordinatorContract):
    component_spec = CoordinatorSpec(name="mine", description="renamed", build=lambda _: CustomProtocol())


class TestArithmeticByName(DatasetContract):
    component_name = "arithmetic"
    component_options: ClassVar[Mapping[str, Any]] = {"num_train": 50, "num_test": 10}


class TestJsonlWithOptions(DatasetContract):
    component_name = "jsonl"

    @pytest.fixture
    def contract_component(self, tmp_path: Path) -> Any:
        from debate_core.plugin import get_registry

        path = tmp_path / "q.jsonl"
        path.write_text('{"question": "1+1?", "answer": "2"}\n{"question": "2+2?", "answer": 4}\n')
        return get_registry().build("dataset", "jsonl", {"path": str(path)})

    splits = ("train",)


class TestBoxedGrader(GraderContract):
    component_spec = GraderSpec(name="boxed_again", description="boxed", build=lambda _: BoxedGrader())


class TestJsonlSink(MetricSinkContract):
    component_name = "jsonl"


class TestOracleJudge(JudgeContract):
    component_name = "oracle"


class TestModelJudgeOnAScriptedHost(JudgeContract):
    """The ``model`` judge reads the verdict the host's policy writes."""

    component_name = "model"
    component_options: ClassVar[Mapping[str, Any]] = {"base_model": "embedded:debate-tiny"}


class AlwaysEqual:
    async def compare(self, pairs: Sequence[Any], host: Any) -> list[int]:
        return [0 for _ in pairs]


class TestAJudgeBySpec(JudgeContract):
    component_spec = JudgeSpec(name="ties", description="always equal", build=lambda _: AlwaysEqual())
