"""The pytest plugin for plugin authors: its fixtures, and its contract suites catching bad plugins."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest

from debate_core.debate.xml_parser import XML_CONTRACT
from debate_core.plugin import RewardSpec, get_registry, hookimpl
from debate_core.records import DebateRecord, ParsedResponse, RewardResult, SectionSpan
from debate_core.testing import CONTRACT_DEBATES, CONTRACT_RESPONSES, ParserContract, RewardContract, TurnSpec

pytest_plugins = ["pytester"]

XML = (
    "<solution>\\boxed{{{answer}}}</solution><evaluation>ok</evaluation>"
    "<comparison>{comparison}</comparison><consensus>NO</consensus><consensus_reason>r</consensus_reason>"
)


def test_make_debate_from_texts_runs_the_real_protocol(make_debate: Callable[..., DebateRecord]) -> None:
    texts = [
        XML.format(answer=42, comparison="N/A"),
        XML.format(answer=41, comparison="N/A"),
        XML.format(answer=42, comparison="Agent 0 > Agent 1\nAgent 2 > Agent 0"),
    ]
    debate = make_debate(texts, num_agents=3, answer="42", grades=[1.0, 0.0, 1.0])
    assert [t.agent for t in debate.turns] == [0, 1, 2]
    assert [(c.a, c.op, c.b) for c in debate.turns[2].comparisons] == [(0, ">", 1)]
    assert debate.turns[2].self_comparisons == 1
    assert [t.grade for t in debate.turns] == [1.0, 0.0, 1.0]


def test_make_debate_from_specs(make_debate: Callable[..., DebateRecord]) -> None:
    debate = make_debate([TurnSpec(comparisons=((1, ">", 0),)), TurnSpec()], num_agents=2, protocol="parallel")
    assert debate.turns[0].comparisons == ()  # agent 0 named itself: dropped and counted
    assert debate.turns[0].self_comparisons == 1 and debate.turns[0].malformed_comparisons == 0
    assert debate.protocol == "parallel"


def test_registry_plugin_fixture_registers_for_one_test(debate_registry_plugin: Callable[..., object]) -> None:
    plugin = types.SimpleNamespace(
        debate_rewards=hookimpl(
            lambda: [RewardSpec(name="always_one", description="1", build=lambda _: lambda d: None)]
        )
    )
    debate_registry_plugin(plugin)
    assert "always_one" in get_registry().names("reward")


def test_registry_plugin_fixture_cleaned_up() -> None:
    assert "always_one" not in get_registry().names("reward")


def test_contract_debates_cover_the_required_cases() -> None:
    debates = {name: build() for name, build in CONTRACT_DEBATES.items()}
    assert not any(t.comparisons for t in debates["no_votes"].turns)
    assert all(t.failed for t in debates["every_turn_failed"].turns)
    assert debates["one_agent"].num_agents == 1
    assert debates["aborted_in_round_two"].aborted


class TestXmlParserContract(ParserContract):
    parser_name = "xml"


def _good_reward(debate: DebateRecord) -> RewardResult:
    return RewardResult(agent_rewards=[0.0] * debate.num_agents)


class TestAMinimalRewardPasses(RewardContract):
    reward_spec = RewardSpec(name="zeros", description="0", build=lambda _: _good_reward)


BAD_REWARDS: dict[str, Callable[[DebateRecord], Any]] = {
    "wrong_length": lambda d: RewardResult(agent_rewards=[0.0]),
    "nan": lambda d: RewardResult(agent_rewards=[float("nan")] * d.num_agents),
    "raises_without_votes": lambda d: RewardResult(
        agent_rewards=[1.0 / sum(len(t.comparisons) for t in d.turns)] * d.num_agents
    ),
    "nondeterministic": lambda d, counter=iter(range(10**9)): RewardResult(
        agent_rewards=[float(next(counter))] * d.num_agents
    ),
    "bad_stream_shape": lambda d: RewardResult(
        agent_rewards=[0.0] * d.num_agents, step_streams={"generator": [[0.0]] * d.num_agents}
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_REWARDS))
def test_contract_catches_bad_rewards(pytester: pytest.Pytester, name: str) -> None:
    pytester.makeconftest(f"from tests.rewards.test_testing_plugin import BAD_REWARDS\nBAD = BAD_REWARDS[{name!r}]")
    pytester.makepyfile(
        """
        from debate_core.plugin import RewardSpec
        from debate_core.testing import RewardContract
        from conftest import BAD

        class TestBad(RewardContract):
            reward_spec = RewardSpec(name="bad", description="bad", build=lambda _: BAD)
        """
    )
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED


class _SpanOutOfText:
    contract = XML_CONTRACT

    def parse(self, text: str) -> ParsedResponse:
        return ParsedResponse(spans=(SectionSpan("solution", 0, len(text) + 1),))


def test_parser_contract_catches_bad_spans(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("from tests.rewards.test_testing_plugin import _SpanOutOfText as PARSER")
    pytester.makepyfile(
        """
        from debate_core.plugin import ParserSpec
        from debate_core.testing import ParserContract
        from conftest import PARSER

        class TestBad(ParserContract):
            parser_spec = ParserSpec(name="bad", description="bad", build=lambda _: PARSER())
        """
    )
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # every span test fails, and so do the valid examples and every read-back of the contract's own writing
    responses = len(CONTRACT_RESPONSES)
    result.assert_outcomes(failed=len(_parser_texts()) + 1 + responses, passed=len(_parser_texts()) * 3 + 1)


def _parser_texts() -> list[str]:
    from debate_core.testing import PARSER_TEXTS

    return list(PARSER_TEXTS)


@pytest.mark.slow  # starts a Python subprocess: not in the quick loop
def test_the_pytest11_plugin_loads_only_the_authors_fixtures() -> None:
    """What pytest loads in every session of every user: the fixtures module alone, not the
    contract suites, the debate engine or any test double (those are imported on demand)."""
    import importlib.util
    import json
    import subprocess
    import sys
    from importlib.metadata import entry_points

    (plugin,) = [ep for ep in entry_points(group="pytest11") if ep.name == "debate_core"]
    assert plugin.value == "debate_core.testing.fixtures"
    probe = (
        "import json, sys; import debate_core.testing.fixtures as f;"
        "print(json.dumps([sorted(m for m in sys.modules if m.startswith('debate_core.')),"
        " sorted(n for n in dir(f) if not n.startswith('_'))]))"
    )
    loaded, names = json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True).stdout)
    testing_modules = [m for m in loaded if m.startswith("debate_core.testing.")]
    assert testing_modules == ["debate_core.testing.fixtures"]
    assert not [m for m in loaded if m.startswith(("debate_core.debate.", "debate_core.training", "debate_core.cli"))]
    assert {"make_debate", "debate_registry_plugin", "pytest_generate_tests"} <= set(names)
    assert not [n for n in names if n.endswith("Contract")]
    assert importlib.util.find_spec("debate_core.testing.scripted_backend") is None  # lives in tests/doubles


def test_contract_suites_import_from_the_package_on_first_use() -> None:
    import debate_core.testing as kit
    from debate_core.testing.other_kind_contracts import JudgeContract

    assert kit.JudgeContract is JudgeContract
    assert set(kit.__all__) >= {"RewardContract", "JudgeContract", "InstalledJudgeContract", "build_debate"}
    with pytest.raises(AttributeError, match="no attribute 'ScriptedServiceClient'"):
        _ = kit.ScriptedServiceClient
