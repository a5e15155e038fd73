"""Contract suites for plugin authors: what every component of a kind must do.

``RewardContract`` and ``ParserContract`` check what every reward (or parser) must do on the
debates coordinators can produce: the right shapes, finite values, determinism, and no
exception on debates with no valid comparison, with every turn failing to parse, with one
agent, or aborted early. The other kinds' suites live in
``debate_core.testing.other_kind_contracts``. ``Installed<Kind>Contract`` runs a kind's suite over
every installed component of that kind, built with its default options (one that cannot be
built so, needing options or a missing package, is skipped with the reason).

Import them from ``debate_core.testing``; this module is not loaded by the pytest plugin, only by
a test module that imports a suite.
"""

from __future__ import annotations

import asyncio
import functools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest

from debate_core.debate import Coordinator
from debate_core.plugin import ParserSpec, RewardSpec
from debate_core.plugin import reward_result_problems as result_problems
from debate_core.records import (
    AgentPolicy,
    Comparison,
    ComparisonOp,
    Dataset,
    DebateRecord,
    Grader,
    HistoryPolicy,
    Judge,
    MetricSink,
    OutputParser,
    ParsedResponse,
    PersonaSet,
    Renderer,
    ResponseContent,
    RewardFunction,
    RewardResult,
    Tokenizer,
    TrainingRound,
    TrainingTimeReward,
)
from debate_core.records.json_values import JsonMapping
from debate_core.tasks.errors import DatasetError
from debate_core.testing.other_kind_contracts import (
    BackendContract,
    CoordinatorContract,
    DatasetContract,
    GraderContract,
    HistoryPolicyContract,
    JudgeContract,
    MetricSinkContract,
    PersonaSetContract,
    RendererContract,
    build_component,
)
from debate_core.testing.synthetic import TurnSpec, random_debate, synthetic_debate

__all__ = [
    "CONTRACT_DEBATES",
    "CONTRACT_RESPONSES",
    "PARSER_TEXTS",
    "InstalledBackendContract",
    "InstalledCoordinatorContract",
    "InstalledDatasetContract",
    "InstalledGraderContract",
    "InstalledHistoryPolicyContract",
    "InstalledJudgeContract",
    "InstalledMetricSinkContract",
    "InstalledParserContract",
    "InstalledPersonaSetContract",
    "InstalledRendererContract",
    "InstalledRewardContract",
    "ParserContract",
    "RewardContract",
    "build_installed",
]


# ---------------------------------------------------------------- the debates every reward must handle


def _votes(*lines: str) -> tuple[tuple[int, ComparisonOp, int], ...]:
    out: list[tuple[int, ComparisonOp, int]] = []
    for line in lines:
        op: ComparisonOp = ">" if ">" in line else "="
        a, b = line.split(op)
        out.append((int(a), op, int(b)))
    return tuple(out)


def _case_debates() -> dict[str, Callable[[], DebateRecord]]:
    spec = TurnSpec
    cases: dict[str, Callable[[], DebateRecord]] = {
        "no_turns": lambda: synthetic_debate(3, []),
        "no_votes": lambda: synthetic_debate(3, [spec() for _ in range(6)]),
        "only_invalid_comparisons": lambda: synthetic_debate(
            3, [spec(comparisons=_votes(f"{k % 3}>{(k + 1) % 3}", "0>0", "7>1"), invalid_lines=2) for k in range(6)]
        ),
        "every_turn_failed": lambda: synthetic_debate(3, [spec(failed=True) for _ in range(3)]),
        "first_turn_failed": lambda: synthetic_debate(3, [spec(failed=True)]),
        "aborted_in_round_two": lambda: synthetic_debate(
            3,
            [spec(), spec(), spec(comparisons=_votes("0>1")), spec(comparisons=_votes("1>2")), spec(failed=True)],
        ),
        "one_agent": lambda: synthetic_debate(1, [spec(grade=1.0), spec(grade=0.0)]),
        "two_agents": lambda: synthetic_debate(2, [spec(), spec(comparisons=_votes("0>1")), spec(), spec()]),
        "unanimous": lambda: synthetic_debate(
            3,
            [spec(comparisons=_votes("1>2")), spec(comparisons=_votes("0>2")), spec(comparisons=_votes("0>1"))] * 2,
            protocol="parallel",
        ),
        "cycle": lambda: synthetic_debate(
            3, [spec(comparisons=_votes("1>2")), spec(comparisons=_votes("2>0")), spec(comparisons=_votes("0>1"))] * 2
        ),
        "all_ties": lambda: synthetic_debate(
            3, [spec(comparisons=_votes(f"{(k + 1) % 3}={(k + 2) % 3}")) for k in range(9)], protocol="parallel"
        ),
        "graded": lambda: synthetic_debate(
            3,
            [spec(comparisons=_votes(f"{(k + 1) % 3}>{(k + 2) % 3}"), grade=float(k % 2)) for k in range(6)],
            answer="42",
        ),
        "empty_solutions": lambda: synthetic_debate(
            4, [spec(solution="", comparisons=_votes(f"{(k + 1) % 4}>{(k + 2) % 4}")) for k in range(8)]
        ),
    }
    for seed in range(8):
        cases[f"random_{seed}"] = functools.partial(_seeded_random_debate, seed)
    return cases


def _seeded_random_debate(seed: int) -> DebateRecord:
    return random_debate(random.Random(seed))


CONTRACT_DEBATES: Mapping[str, Callable[[], DebateRecord]] = _case_debates()
"""Name -> a builder of one debate every reward plugin must score without error."""


# ---------------------------------------------------------------- contract suites


class RewardContract:
    """What every reward plugin must do. Subclass as ``TestXxx`` and set ``reward_name``
    (an installed reward) or ``reward_spec`` (a ``RewardSpec``, no installation needed);
    ``reward_options`` are the raw options, as in a run file."""

    reward_name: ClassVar[str | None] = None
    reward_spec: ClassVar[RewardSpec | None] = None
    reward_options: ClassVar[JsonMapping] = {}

    @pytest.fixture
    def contract_reward(self) -> RewardFunction:
        """The reward under test; override this fixture to build it another way."""
        reward: RewardFunction = build_component("reward", self.reward_name, self.reward_spec, self.reward_options)
        return reward

    @pytest.fixture(params=sorted(CONTRACT_DEBATES))
    def contract_debate(self, request: pytest.FixtureRequest) -> DebateRecord:
        """Each debate of ``CONTRACT_DEBATES`` in turn."""
        return CONTRACT_DEBATES[str(request.param)]()

    def test_returns_a_reward_result(self, contract_reward: RewardFunction, contract_debate: DebateRecord) -> None:
        assert isinstance(contract_reward(contract_debate), RewardResult)

    def test_shapes_and_values_fit_the_debate(
        self, contract_reward: RewardFunction, contract_debate: DebateRecord
    ) -> None:
        for where, result in _scored_every_way(contract_reward, contract_debate):
            problems = result_problems(contract_debate, result)
            assert not problems, f"{where}: " + "; ".join(problems)

    def test_is_deterministic(self, contract_reward: RewardFunction, contract_debate: DebateRecord) -> None:
        first = _scored_every_way(contract_reward, contract_debate)
        again = _scored_every_way(contract_reward, attrs.evolve(contract_debate))
        assert first == again

    def test_streams_are_named_consistently(
        self, contract_reward: RewardFunction, contract_debate: DebateRecord
    ) -> None:
        result = contract_reward(contract_debate)
        for section, stream in result.section_streams.items():
            assert isinstance(section, str) and isinstance(stream, str)
            if result.step_streams:
                assert stream in result.step_streams, f"section '{section}' maps to unknown stream '{stream}'"
        assert all(math.isfinite(w) and w >= 0 for w in result.stream_weights.values())

    def test_advantages_sum_to_zero(self, contract_reward: RewardFunction, contract_debate: DebateRecord) -> None:
        from debate_core.rewards.advantages import compute_advantages

        (advantages,) = compute_advantages([contract_debate], [contract_reward(contract_debate)])
        assert advantages is not None
        assert abs(sum(advantages.agent_advantages)) < 1e-9
        for stream, rows in advantages.step_advantages.items():
            assert abs(sum(x for row in rows for x in row)) < 1e-9, stream


def _scored_every_way(reward: RewardFunction, debate: DebateRecord) -> list[tuple[str, RewardResult]]:
    """The reward's result as a plain function, and, for a ``TrainingTimeReward``, its results in
    training at the first RL iteration and long after (no models served: one that samples a model
    is skipped, with the reason)."""
    results = [("as a plain reward", reward(debate))]
    if isinstance(reward, TrainingTimeReward):
        for iteration in (0, 1_000_000):
            round = TrainingRound(iteration, _NoModelsServed())
            results.append(
                (f"in training at RL iteration {iteration}", asyncio.run(reward.score_in_training(debate, round)))
            )
    return results


class _NoModelsServed:
    """The ``JudgeHost`` of the contract suite: no backend runs, so a reward that samples a model
    is skipped, with the reason."""

    judge_dir: Path | None = None

    async def sampling_policy(self, base_model: str, weights: str | None) -> tuple[AgentPolicy, Renderer]:
        pytest.skip(f"the reward samples {base_model}: the contract suite serves no models")


_CANONICAL = (
    "<solution>The answer is \\boxed{42}.</solution>\n"
    "<evaluation>Agent 1 made an arithmetic slip.</evaluation>\n"
    "<comparison>Agent 0 > Agent 1\nAgent 2 = Agent 0</comparison>\n"
    "<consensus>NO</consensus>\n"
    "<consensus_reason>Agent 1 disagrees.</consensus_reason>"
)

PARSER_TEXTS: Mapping[str, str] = {
    "empty": "",
    "whitespace": " \n\t ",
    "prose": "I think the answer is 42.",
    "canonical": _CANONICAL,
    "fenced": f"```xml\n{_CANONICAL}\n```",
    "think_wrapped": f"<think>hmm</think>{_CANONICAL}",
    "preamble": f"Sure! Here it is:\n{_CANONICAL}",
    "missing_comparison": _CANONICAL.replace("<comparison>", "").replace("</comparison>", ""),
    "out_of_order": _CANONICAL.split("\n", 1)[1] + "\n" + _CANONICAL.split("\n", 1)[0],
    "unclosed": _CANONICAL[: _CANONICAL.index("</evaluation>")],
    "nested": "<solution><solution>1</solution></solution>" + _CANONICAL,
    "bad_consensus": _CANONICAL.replace("<consensus>NO", "<consensus>MAYBE"),
    "odd_comparisons": _CANONICAL.replace(
        "Agent 0 > Agent 1", "Agent -1 > Agent 99\nAgent 0 >> Agent 1\nagent 1>agent 0"
    ),
    "unicode": "<solution>\u00fc\u2026\U0001f600\x00</solution>" + _CANONICAL,
    "long": _CANONICAL.replace("slip.", "slip. " * 20000),
    "tags_only": "<solution></solution><evaluation></evaluation><comparison></comparison>"
    "<consensus></consensus><consensus_reason></consensus_reason>",
}
"""Name -> a response text every parser must handle without raising."""


CONTRACT_RESPONSES: Mapping[str, ResponseContent] = {
    "first_turn": ResponseContent(solution="The answer is \\boxed{42}.", consensus_reason="Nobody else answered."),
    "judging": ResponseContent(
        solution="6 * 7 = 42",
        evaluation="Agent 1 forgot to carry.",
        comparisons=(Comparison(0, ">", 1), Comparison(2, "=", 0)),
        consensus=True,
        consensus_reason="We agree.",
    ),
    "multiline": ResponseContent(
        solution="Step 1: 6 * 7.\nStep 2: 42.", evaluation="Fine.\nAll good.", consensus_reason="Same answer."
    ),
}
"""Name -> a response's content that every parser must read back from its own contract's rendering."""


class ParserContract:
    """What every output parser must do. Subclass as ``TestXxx`` and set ``parser_name`` or
    ``parser_spec``; ``valid_examples`` are texts the parser must accept (default: the
    canonical XML response). The parser's output contract must be complete, and what it writes
    the parser must read back unchanged."""

    parser_name: ClassVar[str | None] = None
    parser_spec: ClassVar[ParserSpec | None] = None
    parser_options: ClassVar[JsonMapping] = {}
    valid_examples: ClassVar[Sequence[str]] = (_CANONICAL,)

    @pytest.fixture
    def contract_parser(self) -> OutputParser:
        """The parser under test; override this fixture to build it another way."""
        parser: OutputParser = build_component("parser", self.parser_name, self.parser_spec, self.parser_options)
        return parser

    @pytest.fixture(params=sorted(PARSER_TEXTS))
    def contract_text(self, request: pytest.FixtureRequest) -> str:
        """Each text of ``PARSER_TEXTS`` in turn."""
        return PARSER_TEXTS[str(request.param)]

    def test_never_raises(self, contract_parser: OutputParser, contract_text: str) -> None:
        assert isinstance(contract_parser.parse(contract_text), ParsedResponse)

    def test_is_deterministic(self, contract_parser: OutputParser, contract_text: str) -> None:
        assert contract_parser.parse(contract_text) == contract_parser.parse(contract_text)

    def test_spans_lie_inside_the_text_in_order(self, contract_parser: OutputParser, contract_text: str) -> None:
        response: ParsedResponse = contract_parser.parse(contract_text)
        end = 0
        for span in response.spans:
            assert isinstance(span.name, str) and span.name
            assert end <= span.start <= span.end <= len(contract_text), span
            end = span.end

    def test_errors_explain_themselves(self, contract_parser: OutputParser, contract_text: str) -> None:
        response: ParsedResponse = contract_parser.parse(contract_text)
        assert response.invalid_comparison_lines >= 0
        if response.error is not None:
            assert response.error.code and response.error.message

    def test_has_a_complete_output_contract(self, contract_parser: OutputParser) -> None:
        assert isinstance(contract_parser, OutputParser)
        contract = contract_parser.contract
        assert contract.sections and contract.stop_marker and contract.empty_marker
        assert all(contract.label(section) for section in contract.sections)
        assert "7" in contract.instructions_for(7)

    @pytest.mark.parametrize("name", sorted(CONTRACT_RESPONSES))
    def test_reads_back_what_its_contract_writes(self, contract_parser: OutputParser, name: str) -> None:
        content = CONTRACT_RESPONSES[name]
        contract = contract_parser.contract
        rendered = contract.render(content)
        response: ParsedResponse = contract_parser.parse(rendered.text)
        assert response.ok, response.error
        assert rendered.text.endswith(contract.stop_marker)
        assert response.solution == content.solution
        assert response.evaluation == (content.evaluation or contract.empty_marker)
        assert response.comparisons == content.comparisons
        if "consensus" in contract.sections:  # a contract without a consensus section cannot carry one
            assert response.consensus == content.consensus
        if "consensus_reason" in contract.sections:
            assert response.consensus_reason == content.consensus_reason
        assert response.spans == rendered.spans

    def test_accepts_valid_examples(self, contract_parser: OutputParser) -> None:
        for text in self.valid_examples:
            response: ParsedResponse = contract_parser.parse(text)
            assert response.ok, (text[:200], response.error)
            if text == _CANONICAL:
                assert "42" in response.solution
                assert len(response.comparisons) == 2
                assert {s.name for s in response.spans} == set(contract_parser.contract.sections)


# ---------------------------------------------------------------- every installed component of a kind


def build_installed(kind: str, name: str) -> Any:  # Any: the component of kind `kind` (a string)
    """Build an installed component with its default options; skip the test, with the reason,
    when it cannot be built so here (it needs options, a key, or an optional package that is not
    installed, such as torch for the ``local`` backend). Its own bugs fail."""
    from debate_core.errors import DebateError
    from debate_core.plugin import get_registry

    try:
        return get_registry().build(kind, name)
    except DebateError as exc:
        pytest.skip(f"{kind} '{name}' cannot be built with its default options here: {exc}")
    except ImportError as exc:
        pytest.skip(f"{kind} '{name}' needs a package that is not installed here: {type(exc).__name__}: {exc}")


class InstalledRewardContract(RewardContract):
    """``RewardContract`` over every installed reward."""

    @pytest.fixture
    def contract_reward(self, installed_reward: str) -> RewardFunction:
        reward: RewardFunction = build_installed("reward", installed_reward)
        return reward


class InstalledParserContract(ParserContract):
    """``ParserContract`` over every installed parser."""

    @pytest.fixture
    def contract_parser(self, installed_parser: str) -> OutputParser:
        parser: OutputParser = build_installed("parser", installed_parser)
        return parser


class InstalledPersonaSetContract(PersonaSetContract):
    """``PersonaSetContract`` over every installed persona set."""

    @pytest.fixture
    def contract_component(self, installed_persona_set: str) -> PersonaSet:
        component: PersonaSet = build_installed("persona_set", installed_persona_set)
        return component


class InstalledHistoryPolicyContract(HistoryPolicyContract):
    """``HistoryPolicyContract`` over every installed history policy."""

    @pytest.fixture
    def contract_component(self, installed_history_policy: str) -> HistoryPolicy:
        component: HistoryPolicy = build_installed("history_policy", installed_history_policy)
        return component


class InstalledDatasetContract(DatasetContract):
    """``DatasetContract`` over every installed dataset; one whose data cannot be reached with
    its default options (the hub offline, or without the ``datasets`` package) is skipped with
    the reason."""

    @pytest.fixture
    def contract_component(self, installed_dataset: str) -> Dataset:
        dataset: Dataset = build_installed("dataset", installed_dataset)
        try:
            dataset.problems("train")
        except DatasetError as exc:
            pytest.skip(f"dataset '{installed_dataset}' cannot load its data here: {exc}")
        return dataset


class InstalledGraderContract(GraderContract):
    """``GraderContract`` over every installed grader."""

    @pytest.fixture
    def contract_component(self, installed_grader: str) -> Grader:
        component: Grader = build_installed("grader", installed_grader)
        return component


class InstalledCoordinatorContract(CoordinatorContract):
    """``CoordinatorContract`` over every installed coordinator."""

    @pytest.fixture
    def contract_component(self, installed_coordinator: str) -> Coordinator:
        component: Coordinator = build_installed("coordinator", installed_coordinator)
        return component


class InstalledRendererContract(RendererContract):
    """``RendererContract`` over every installed renderer; one that cannot render for the byte
    tokenizer (a chat template needs a real tokenizer) is skipped with the reason."""

    @pytest.fixture
    def contract_component(self, installed_renderer: str) -> Callable[[Tokenizer], Renderer]:
        component: Callable[[Tokenizer], Renderer] = build_installed("renderer", installed_renderer)
        return component

    @pytest.fixture
    def contract_renderer(
        self, contract_component: Callable[[Tokenizer], Renderer], contract_tokenizer: Tokenizer
    ) -> Renderer:
        from debate_core.errors import DebateError

        try:
            return contract_component(contract_tokenizer)
        except (DebateError, TypeError) as exc:  # a chat template needs a real tokenizer
            pytest.skip(f"the renderer cannot render for the test kit's byte tokenizer: {exc}")


class InstalledMetricSinkContract(MetricSinkContract):
    """``MetricSinkContract`` over every installed metric sink."""

    @pytest.fixture
    def contract_component(self, installed_metric_sink: str) -> Callable[[Path], MetricSink]:
        component: Callable[[Path], MetricSink] = build_installed("metric_sink", installed_metric_sink)
        return component


class InstalledBackendContract(BackendContract):
    """``BackendContract`` over every installed backend."""

    @pytest.fixture
    def contract_component(self, installed_backend: str) -> object:
        component: object = build_installed("backend", installed_backend)
        return component


class InstalledJudgeContract(JudgeContract):
    """``JudgeContract`` over every installed judge."""

    @pytest.fixture
    def contract_component(self, installed_judge: str) -> Judge:
        component: Judge = build_installed("judge", installed_judge)
        return component
