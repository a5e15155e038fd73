"""Contract suites for the kinds of component besides rewards and parsers: persona sets, history
policies, datasets, graders, coordinators, renderers, metric sinks, backends and judges.

Subclass one as ``TestXxx`` and set ``component_name`` (an installed component; built with
``component_options``) or ``component_spec`` (a spec, no installation needed); or override the
``contract_component`` fixture. The persona set, history policy, coordinator and renderer suites
run real debates with the component in place (``testing.scripted_debate``), so a component is
checked where the trainer uses it, not only on its own.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from debate_core.debate import Coordinator
from debate_core.plugin import ComponentSpec
from debate_core.records import (
    AgentPolicy,
    Dataset,
    DebateRecord,
    Grade,
    Grader,
    HistoryEntry,
    HistoryPolicy,
    Judge,
    JudgeHost,
    JudgePair,
    Message,
    MetricSink,
    Persona,
    PersonaSet,
    Problem,
    Renderer,
    StopCondition,
    Tokenizer,
    Verdict,
)
from debate_core.records.json_values import JsonMapping

__all__ = [
    "BackendContract",
    "CoordinatorContract",
    "DatasetContract",
    "GraderContract",
    "HistoryPolicyContract",
    "JudgeContract",
    "MetricSinkContract",
    "PersonaSetContract",
    "RendererContract",
    "build_component",
    "sdk_mismatches",
]


def _valid(agent: int, num_agents: int, consensus: bool = False) -> str:
    """A response that follows the contract, comparing the two agents after ``agent`` when there are."""
    others = [a for a in range(num_agents) if a != agent][:2]
    comparison = f"Agent {others[0]} > Agent {others[1]}" if len(others) == 2 else "N/A"
    return (
        f"<solution>Agent {agent} says \\boxed{{42}}.</solution>\n<evaluation>Checked the others.</evaluation>\n"
        f"<comparison>{comparison}</comparison>\n<consensus>{'YES' if consensus else 'NO'}</consensus>\n"
        "<consensus_reason>Because.</consensus_reason>"
    )


def _texts(num_agents: int, rounds: int, consensus_round: int | None = None) -> list[str]:
    return [
        _valid(agent, num_agents, consensus=consensus_round == r)
        for r in range(1, rounds + 1)
        for agent in range(num_agents)
    ]


# Any: the component of kind ``kind`` (a string): each contract's tests name its type
def build_component(kind: str, name: str | None, spec: ComponentSpec[Any] | None, options: JsonMapping) -> Any:
    """A component under test: built from ``spec`` with ``options`` (a spec not installed), or the
    installed component called ``name``, through the process-wide registry."""
    from debate_core.config.structuring import structure
    from debate_core.plugin import BuildContext, get_registry

    if spec is not None:
        where = f"{kind} '{spec.name}' options"
        structured = None if spec.options is None else structure(dict(options), spec.options, where)
        context = BuildContext(kind=spec.kind, name=spec.name, path=where, builder=get_registry())
        return spec.make(structured, context)
    if name is None:
        raise TypeError("set reward_name/parser_name (an installed component) or reward_spec/parser_spec")
    return get_registry().build(kind, name, options)


class ComponentContract:
    """The common part: which component is under test and how it is built."""

    kind: ClassVar[str] = ""
    component_name: ClassVar[str | None] = None
    component_spec: ClassVar[ComponentSpec[Any] | None] = None  # Any: a spec of the class's kind
    component_options: ClassVar[JsonMapping] = {}

    @pytest.fixture
    def contract_component(self) -> Any:  # Any: the component of the class's kind; its tests name the type
        """The component under test; override this fixture to build it another way."""
        return build_component(self.kind, self.component_name, self.component_spec, self.component_options)


# Any: fields of DebateSetup, each of its own type, as attrs.evolve takes them
def _run(setup_changes: Mapping[str, Any], texts: Sequence[str], num_agents: int, rounds: int) -> DebateRecord:
    """A scripted debate with the built-in parts except ``setup_changes``."""
    import attrs

    from debate_core.testing.scripted_debate import scripted_debate, scripted_setup

    setup = attrs.evolve(scripted_setup(num_agents, rounds), **setup_changes)
    return scripted_debate(list(texts), num_agents, max_rounds=rounds, setup=setup)


# ---------------------------------------------------------------- persona sets


class PersonaSetContract(ComponentContract):
    """A persona set gives every agent of any debate size a persona with a system prompt and a
    valid temperature, the same every time, and debates run with it."""

    kind = "persona_set"

    @pytest.mark.parametrize("num_agents", [1, 2, 3, 5, 8])
    def test_every_agent_gets_a_persona(self, contract_component: PersonaSet, num_agents: int) -> None:
        for agent in range(num_agents):
            persona = contract_component.persona(agent, num_agents)
            assert isinstance(persona, Persona)
            assert isinstance(persona.name, str) and isinstance(persona.system_prompt, str)
            assert persona.system_prompt.strip(), f"agent {agent} of {num_agents}: empty system prompt"
            assert persona.temperature is None or (math.isfinite(persona.temperature) and persona.temperature >= 0)
            assert contract_component.persona(agent, num_agents) == persona

    def test_a_debate_runs_with_it(self, contract_component: PersonaSet) -> None:
        record = _run({"persona_set": contract_component}, _texts(3, 2), 3, 2)
        assert len(record.turns) == 6 and not record.aborted
        assert [t.persona for t in record.turns[:3]] == [contract_component.persona(a, 3).name for a in range(3)]


# ---------------------------------------------------------------- history policies


class HistoryPolicyContract(ComponentContract):
    """A history policy shows only turns the agent could see, as ``HistoryEntry`` records, the
    same every time, never raising on the debates coordinators produce."""

    kind = "history_policy"

    @pytest.fixture(params=["sequential", "parallel", "failed_turn"])
    def contract_history_debate(self, request: pytest.FixtureRequest) -> DebateRecord:
        """Debates whose every prefix the policy is asked about."""
        from debate_core.testing.scripted_debate import scripted_debate

        if request.param == "failed_turn":
            return scripted_debate([*_texts(3, 1), "no tags at all"], 3, max_rounds=2)
        return scripted_debate(_texts(3, 3), 3, protocol=request.param)

    def test_entries_are_visible_turns(
        self, contract_component: HistoryPolicy, contract_history_debate: DebateRecord
    ) -> None:
        record = contract_history_debate
        for turn in record.turns:
            visible = record.turns[: turn.visible_turns]
            entries = list(contract_component.select(visible, turn.round))
            assert all(isinstance(e, HistoryEntry) for e in entries)
            allowed = {(t.round, t.agent) for t in visible}
            assert {(e.round, e.agent) for e in entries} <= allowed, f"turn {turn.turn_index} shows unseen turns"
            for e in entries:
                assert isinstance(e.solution, str) and isinstance(e.evaluation, str)
                assert e.comparison is None or isinstance(e.comparison, str)
            assert list(contract_component.select(visible, turn.round)) == entries

    def test_a_debate_runs_with_it(self, contract_component: HistoryPolicy) -> None:
        record = _run({"history_policy": contract_component}, _texts(3, 2), 3, 2)
        assert len(record.turns) == 6 and not record.aborted


# ---------------------------------------------------------------- datasets


class DatasetContract(ComponentContract):
    """A dataset returns ``Problem`` records with unique ids and non-empty questions, in the same
    order every time; ``train`` has problems."""

    kind = "dataset"
    splits: ClassVar[Sequence[str]] = ("train", "test")

    def test_problems_are_well_formed_and_deterministic(self, contract_component: Dataset) -> None:
        for split in self.splits:
            problems = list(contract_component.problems(split))
            assert all(isinstance(p, Problem) for p in problems), split
            ids = [p.id for p in problems]
            assert len(set(ids)) == len(ids), f"split {split}: duplicate problem ids"
            for p in problems:
                assert isinstance(p.question, str) and p.question.strip(), f"{split}/{p.id}: empty question"
                assert p.answer is None or isinstance(p.answer, str), f"{split}/{p.id}: answer is not a string"
            assert list(contract_component.problems(split)) == problems, f"split {split} changes between reads"

    def test_train_has_problems(self, contract_component: Dataset) -> None:
        assert list(contract_component.problems("train"))


# ---------------------------------------------------------------- graders

GRADER_TEXTS: Mapping[str, tuple[str, str]] = {
    "boxed_right": ("so \\boxed{42}", "42"),
    "boxed_wrong": ("so \\boxed{41}", "42"),
    "empty": ("", "42"),
    "prose": ("forty-two", "42"),
    "unbalanced": ("\\boxed{42", "42"),
    "nested": ("\\boxed{\\frac{1}{2}}", "1/2"),
    "unicode": ("\u00fc\u2026\U0001f600\x00 \\boxed{42}", "42"),
    "empty_answer": ("\\boxed{42}", ""),
    "long": ("x " * 20000 + "\\boxed{42}", "42"),
}
"""Name -> ``(solution, answer)`` every grader must grade without raising."""


class GraderContract(ComponentContract):
    """A grader returns a ``Grade`` for any text, never ``correct`` without ``formatted``, the
    same every time."""

    kind = "grader"

    @pytest.mark.parametrize("case", sorted(GRADER_TEXTS))
    def test_grades_any_text(self, contract_component: Grader, case: str) -> None:
        solution, answer = GRADER_TEXTS[case]
        grade = contract_component.grade(solution, answer)
        assert isinstance(grade, Grade)
        assert not (grade.correct and not grade.formatted), "correct but not formatted"
        assert grade.extracted is None or isinstance(grade.extracted, str)
        assert contract_component.grade(solution, answer) == grade


# ---------------------------------------------------------------- coordinators


class CoordinatorContract(ComponentContract):
    """A turn protocol runs real debates by the debate's rules: each agent answers at most once a
    round, within ``max_rounds``; a failed turn ends the debate; a round whose agents all say
    YES ends it; an agent sees only earlier turns; the transcript reads back unchanged."""

    kind = "coordinator"

    def test_names_its_protocol(self, contract_component: Coordinator) -> None:
        assert isinstance(contract_component.protocol_name, str) and contract_component.protocol_name
        assert isinstance(contract_component.hide_comparisons, bool)

    @pytest.mark.parametrize("num_agents", [1, 2, 3])
    def test_a_full_debate(self, contract_component: Coordinator, num_agents: int) -> None:
        record = _run({"coordinator": contract_component}, _texts(num_agents, 3), num_agents, 3)
        assert record.protocol == contract_component.protocol_name
        assert not record.aborted and 1 <= record.rounds_played <= 3
        seen = set()
        for index, turn in enumerate(record.turns):
            assert turn.turn_index == index and 1 <= turn.round <= 3
            assert (turn.round, turn.agent) not in seen, f"agent {turn.agent} answered twice in round {turn.round}"
            seen.add((turn.round, turn.agent))
            assert 0 <= turn.visible_turns <= index
            assert all(t.round <= turn.round for t in record.turns[: turn.visible_turns])
        self._reads_back(record)

    def test_a_failed_turn_ends_the_debate(self, contract_component: Coordinator) -> None:
        # every round-2 text breaks the contract, so the first agent the protocol lets answer fails
        texts = [*_texts(3, 1), *["no tags at all"] * 3, *_texts(3, 1)]
        record = _run({"coordinator": contract_component}, texts, 3, 3)
        assert record.aborted and record.turns[-1].failed
        assert sum(t.failed for t in record.turns) == 1

    def test_consensus_ends_the_debate(self, contract_component: Coordinator) -> None:
        # docs/protocol.md#when-a-debate-ends: by round 2 every agent has seen every other
        # agent's latest solution, so a unanimous YES there counts under the default rule; a
        # protocol that seats only some agents in round 2 (runoff) cannot reach consensus there
        record = _run({"coordinator": contract_component}, _texts(3, 3, consensus_round=2), 3, 3)
        second = [t for t in record.turns if t.round == 2]
        if len(second) == 3:
            assert record.consensus_reached and record.rounds_played == 2
        else:
            assert not record.consensus_reached

    def test_a_unanimous_yes_ends_round_one_under_the_literal_rule(self, contract_component: Coordinator) -> None:
        changes = {"coordinator": contract_component, "consensus_rule": "any"}
        record = _run(changes, _texts(3, 3, consensus_round=1), 3, 3)
        assert record.consensus_reached and record.rounds_played == 1

    @staticmethod
    def _reads_back(record: DebateRecord) -> None:
        from debate_core.debate.transcripts import load_transcript, record_to_json

        assert load_transcript(record_to_json(record)) == record


# ---------------------------------------------------------------- renderers


class RendererContract(ComponentContract):
    """A renderer (a factory of the tokenizer) turns messages into prompt tokens that carry every
    message's text, gives a valid stop condition, and debates run with it. The tokenizer is the
    test kit's byte tokenizer; override ``contract_tokenizer`` for a renderer that needs another."""

    kind = "renderer"

    @pytest.fixture
    def contract_tokenizer(self) -> Tokenizer:
        """The tokenizer the renderer is built for."""
        from debate_core.testing.tokenizer import ByteTokenizer

        return ByteTokenizer()

    @pytest.fixture
    def contract_renderer(
        self, contract_component: Callable[[Tokenizer], Renderer], contract_tokenizer: Tokenizer
    ) -> Renderer:
        """The renderer built for the contract's tokenizer."""
        return contract_component(contract_tokenizer)

    def test_prompts_carry_every_message(self, contract_renderer: Renderer) -> None:
        messages = [
            Message("system", "You are Agent 0."),
            Message("user", "What is 6 * 7?"),
            Message("assistant", "<solution>42</solution>"),
            Message("user", "Now round 2."),
        ]
        tokens = contract_renderer.build_prompt(messages)
        assert tokens and all(isinstance(t, int) for t in tokens)
        text = contract_renderer.decode(tokens)
        for message in messages:
            assert message.content in text, message
        assert contract_renderer.build_prompt(messages) == tokens

    def test_has_a_stop_condition(self, contract_renderer: Renderer) -> None:
        stop = contract_renderer.stop_condition()
        assert isinstance(stop, StopCondition)
        assert stop.token_ids or stop.strings

    def test_a_debate_runs_with_it(self, contract_renderer: Renderer) -> None:
        record = _run({"renderer": contract_renderer}, _texts(2, 2), 2, 2)
        assert len(record.turns) == 4 and not record.aborted


# ---------------------------------------------------------------- metric sinks


class MetricSinkContract(ComponentContract):
    """A metric sink (a factory of the run directory) takes records of numbers and strings at
    increasing steps, non-finite values included, and closes."""

    kind = "metric_sink"

    def test_writes_steps_and_closes(self, contract_component: Callable[[Path], MetricSink], tmp_path: Path) -> None:
        sink = contract_component(tmp_path)
        assert isinstance(sink, MetricSink)
        sink.write(1, {"phase": "warmstart", "loss": 1.5, "count": 3})
        sink.write(2, {"phase": "rl", "reward": float("nan"), "big": float("inf"), "eval_x/direct/correct": 0.25})
        sink.write(3, {})
        sink.close()


# ---------------------------------------------------------------- backends


def _parameters(function: Callable[..., object]) -> list[inspect.Parameter]:
    params = list(inspect.signature(function).parameters.values())
    return params[1:] if params and params[0].name == "self" else params


def _same(a: inspect.Parameter, b: inspect.Parameter) -> bool:
    return (a.name, a.kind, a.default) == (b.name, b.kind, b.default)


def sdk_mismatches(implementation: type, sdk_name: str) -> list[str]:
    """How ``implementation`` departs from the Tinker SDK class ``sdk_name`` (``ServiceClient``,
    ``TrainingClient``, ``SamplingClient``) on the backend contract's methods: each must start
    with the contract's parameters, and take only the SDK's, in its order, with its defaults."""
    import tinker

    from debate_core.backends.contract import CONTRACT_METHODS, CONTRACT_PROTOCOLS

    sdk = getattr(tinker, sdk_name)
    protocol = CONTRACT_PROTOCOLS[sdk_name]
    problems: list[str] = []
    for method in CONTRACT_METHODS[sdk_name]:
        if not hasattr(implementation, method):
            problems.append(f"{method}: missing")
            continue
        sdk_params = _parameters(getattr(sdk, method))
        contract = _parameters(getattr(protocol, method))
        mine = _parameters(getattr(implementation, method))
        if [p.name for p in mine[: len(contract)]] != [p.name for p in contract] or not all(
            _same(a, b) for a, b in zip(mine, contract, strict=False)
        ):
            problems.append(
                f"{method}: starts {[str(p) for p in mine]}, the contract needs {[str(p) for p in contract]}"
            )
        by_name = {p.name: (i, p) for i, p in enumerate(sdk_params)}
        last = -1
        for p in mine:
            if p.name not in by_name:
                problems.append(f"{method}: parameter {p.name!r} is not the SDK's")
                continue
            index, theirs = by_name[p.name]
            if not _same(p, theirs):
                problems.append(f"{method}: {p} differs from the SDK's {theirs}")
            if index < last:
                problems.append(f"{method}: parameter {p.name!r} is out of the SDK's order")
            last = index
    return problems


class BackendContract(ComponentContract):
    """A backend builds a service client whose methods take the Tinker SDK's parameters (names,
    order, kinds, defaults), so the trainer can drive it exactly as it drives Tinker."""

    kind = "backend"

    def test_the_service_client_has_the_sdk_surface(self, contract_component: object) -> None:
        assert sdk_mismatches(type(contract_component), "ServiceClient") == []


# ---------------------------------------------------------------- judges


class ScriptedJudgeHost:
    """A ``JudgeHost`` without a model: every policy it serves answers ``reply`` (over the byte
    tokenizer and the ``role_colon`` renderer), so a judge that samples a model can be checked."""

    def __init__(self, reply: str = "A > B", judge_dir: Path | None = None) -> None:
        self.reply = reply
        self.judge_dir = judge_dir
        self.requests: list[tuple[str, str | None]] = []

    async def sampling_policy(self, base_model: str, weights: str | None) -> tuple[AgentPolicy, Renderer]:
        from debate_core.debate.rendering import RoleColonRenderer
        from debate_core.testing.scripted_debate import ScriptedPolicy
        from debate_core.testing.tokenizer import ByteTokenizer

        self.requests.append((base_model, weights))
        tokenizer = ByteTokenizer()
        return ScriptedPolicy(lambda call: self.reply, tokenizer), RoleColonRenderer(tokenizer)


def _judge_pairs() -> list[JudgePair]:
    """Pairs of graded responses: right against wrong, both ways, and ungraded ones."""
    from debate_core.testing.synthetic import TurnSpec, synthetic_debate

    record = synthetic_debate(
        3,
        [TurnSpec(solution="\\boxed{42}", grade=1.0), TurnSpec(solution="\\boxed{41}", grade=0.0), TurnSpec()],
        answer="42",
    )
    right, wrong, ungraded = record.turns
    pairs = [(right, wrong), (wrong, right), (right, right), (wrong, ungraded)]
    return [JudgePair(record.question, record.answer, first, second) for first, second in pairs]


class JudgeContract(ComponentContract):
    """A judge gives one verdict (+1, -1 or 0, an int: it does not abstain where nothing fails) per
    pair, in order, none for no pairs, and the same verdicts for the same pairs; a judge that counts
    (``CountingJudge``) gives finite numbers by name. The host serves scripted policies
    (``ScriptedJudgeHost``); override ``contract_host`` for a judge that needs another."""

    kind = "judge"

    @pytest.fixture
    def contract_host(self) -> JudgeHost:
        """The ``JudgeHost`` the judge is given."""
        return ScriptedJudgeHost()

    def _compare(self, judge: Judge, pairs: Sequence[JudgePair], host: JudgeHost) -> list[Verdict]:
        import asyncio

        return list(asyncio.run(judge.compare(list(pairs), host)))

    def test_one_verdict_per_pair(self, contract_component: Judge, contract_host: JudgeHost) -> None:
        from debate_core.records import CountingJudge

        pairs = _judge_pairs()
        verdicts = self._compare(contract_component, pairs, contract_host)
        assert len(verdicts) == len(pairs)
        assert all(type(v) is int and v in (-1, 0, 1) for v in verdicts), verdicts
        if isinstance(contract_component, CountingJudge):  # its counts: finite numbers by name
            counts = contract_component.take_counts()
            assert isinstance(counts, Mapping)
            assert all(isinstance(k, str) and type(v) in (int, float) and math.isfinite(v) for k, v in counts.items())

    def test_no_pairs_no_verdicts(self, contract_component: Judge, contract_host: JudgeHost) -> None:
        assert self._compare(contract_component, [], contract_host) == []

    def test_the_same_pairs_get_the_same_verdicts(self, contract_component: Judge, contract_host: JudgeHost) -> None:
        pairs = _judge_pairs()
        first = self._compare(contract_component, pairs, contract_host)
        assert self._compare(contract_component, pairs, contract_host) == first
