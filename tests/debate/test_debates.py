"""Whole debates without a model, under both turn protocols (docs/protocol.md#turn-protocols)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import attrs
import pytest

from debate_core.debate.history_policies import AllRounds, HistoryOptions
from debate_core.debate.personas import PlainPersonas
from debate_core.debate.rendering import sampling_stop
from debate_core.debate.running import run_debate
from debate_core.debate.setup import sampling_temperature, turn_seed
from debate_core.debate.xml_parser import SECTION_NAMES
from debate_core.records import DebateRecord, Grade, Persona, Problem
from debate_core.testing.scripted_debate import ScriptedPolicy, run_scripted_debate, run_sync, scripted_setup
from debate_core.testing.tokenizer import ByteTokenizer

from .helpers import RecordingPolicy, response

PROTOCOLS = ("sequential", "parallel")
TOK = ByteTokenizer()


def solution_of(round_: int, agent: int) -> str:
    return f"sol-r{round_}-a{agent}"


def debate_texts(num_agents: int, rounds: int) -> list[str]:
    """Commit-order texts: one valid peer comparison (when N >= 3), one self-comparison, one
    comparison that is malformed (or a self-comparison for agent 0)."""
    texts = []
    for r in range(1, rounds + 1):
        for i in range(num_agents):
            lines = [
                f"Agent {(i + 1) % num_agents} > Agent {(i + 2) % num_agents}",
                f"Agent {i} > Agent {(i + 1) % num_agents}",
                "Agent 9 = Agent 0",
            ]
            texts.append(response(solution_of(r, i), lines))
    return texts


def run_texts(texts: Sequence[str], num_agents: int, protocol: str, **kwargs: object) -> DebateRecord:
    return run_sync(run_scripted_debate(texts, num_agents, protocol=protocol, **kwargs)).record  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("rounds", [1, 3])
@pytest.mark.parametrize("num_agents", [2, 3, 5])
def test_scripted_debate_follows_the_protocol(num_agents: int, rounds: int, protocol: str) -> None:
    texts = debate_texts(num_agents, rounds)
    episode = run_sync(run_scripted_debate(texts, num_agents, protocol=protocol))  # type: ignore[arg-type]
    record = episode.record
    assert (record.num_agents, record.max_rounds, record.protocol) == (num_agents, rounds, protocol)
    assert not record.aborted and not record.consensus_reached and record.abort_reason is None
    assert len(record.turns) == num_agents * rounds
    for k, turn in enumerate(record.turns):
        assert (turn.round, turn.agent) == (k // num_agents + 1, k % num_agents)
        assert (turn.turn_index, turn.step) == (k, turn.round - 1)
        expected_visible = k if protocol == "sequential" else (turn.round - 1) * num_agents
        assert turn.visible_turns == expected_visible
        assert turn.response.ok and turn.response.solution == solution_of(turn.round, turn.agent)
        assert turn.persona
        # authorship: the peer comparison is valid with three or more agents (with two it names the author)
        i = turn.agent
        peer_valid = num_agents >= 3
        assert len(turn.comparisons) == (1 if peer_valid else 0)
        assert turn.self_comparisons == (1 if peer_valid else 2) + (1 if i == 0 else 0)
        assert turn.malformed_comparisons == (0 if i == 0 else 1)
        for vote in turn.votes():
            assert vote.author == i and i not in (vote.a, vote.b)

    assert len(episode.trajectories) == num_agents
    for trajectory in episode.trajectories:
        turns = record.turns_of(trajectory.agent)
        assert [t.turn_index for t in trajectory.transitions] == [t.turn_index for t in turns]
        for transition, turn in zip(trajectory.transitions, turns, strict=True):
            assert TOK.decode(transition.action) == turn.text
            assert len(transition.logprobs) == len(transition.action) == len(transition.action_sections)
            assert set(transition.action_sections) <= {*SECTION_NAMES, None}
            solution_tokens = [
                t for t, s in zip(transition.action, transition.action_sections, strict=True) if s == "solution"
            ]
            assert TOK.decode(solution_tokens) == turn.response.solution
            prompt = TOK.decode(transition.observation)
            # exactly the turns the protocol lets this agent see, nothing later
            for other in record.turns:
                shown = solution_of(other.round, other.agent) in prompt
                assert shown == (other.turn_index < turn.visible_turns), (turn, other)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_debate_ends_when_a_whole_round_says_yes(protocol: str) -> None:
    yes = [response("b", consensus=True)] * 2
    texts = [*[response("a")] * 3, *yes, response("b"), *[response("c", consensus=True)] * 3, *[response("never")] * 3]
    record = run_texts(texts, 3, protocol, max_rounds=4)
    assert record.rounds_played == 3 and len(record.turns) == 9
    assert record.consensus_reached and not record.aborted


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_debate_ends_at_max_rounds_without_consensus(protocol: str) -> None:
    record = run_texts([response("a")] * 12, 3, protocol, max_rounds=2)
    assert record.rounds_played == 2 and not record.consensus_reached


def test_sequential_parse_failure_aborts_at_that_turn() -> None:
    texts = [response("a")] * 4 + ["I forgot the format"] + [response("a")] * 4
    episode = run_sync(run_scripted_debate(texts, 3, protocol="sequential"))
    record = episode.record
    assert len(record.turns) == 5 and record.aborted
    failed = record.turns[-1]
    assert failed.failed and (failed.round, failed.agent) == (2, 1)
    assert failed.comparisons == () and failed.response.error is not None
    assert record.abort_reason is not None and "round 2, agent 1" in record.abort_reason
    assert [len(t.transitions) for t in episode.trajectories] == [2, 2, 1]


def test_parallel_parse_failure_keeps_the_round_up_to_the_failed_agent() -> None:
    texts = [response("a")] * 4 + ["<solution>x</solution>"] + [response("a")] * 4
    record = run_texts(texts, 3, "parallel")
    assert [(t.round, t.agent) for t in record.turns] == [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1)]
    assert record.aborted and record.turns[-1].failed
    assert record.turns[-1].visible_turns == 3


def test_failed_turn_comparisons_are_not_votes() -> None:
    broken = response("a", ["Agent 0 > Agent 2"]).replace("<consensus>NO", "<consensus>PERHAPS")
    record = run_texts([response("a"), broken, response("a")], 3, "sequential")
    assert record.turns[1].failed and record.turns[1].response.comparisons
    assert list(record.votes()) == []


def test_parallel_agents_of_a_round_sample_at_the_same_time() -> None:
    num_agents = 4
    arrived = 0
    gate = asyncio.Event()
    peak = 0

    class Barrier(RecordingPolicy):
        async def sample(self, prompt, *, stop, temperature, max_tokens, seed):  # type: ignore[no-untyped-def]
            nonlocal arrived, peak
            arrived += 1
            peak = max(peak, arrived)
            if arrived % num_agents == 0:
                gate.set()
            await gate.wait()
            result = await super().sample(prompt, stop=stop, temperature=temperature, max_tokens=max_tokens, seed=seed)
            arrived -= 1
            if arrived == 0:
                gate.clear()
            return result

    async def main() -> DebateRecord:
        setup = scripted_setup(num_agents, 2, protocol="parallel")
        policies = [Barrier(lambda k, i=i: response(f"{i}-{k}")) for i in range(num_agents)]
        # agents that sampled one at a time would wait at the barrier for ever: a hang limit, not a
        # timing (the debate takes milliseconds)
        episode = await asyncio.wait_for(run_debate(Problem("p", "q"), setup, policies, seed=1), timeout=60)
        return episode.record

    record = asyncio.run(main())
    assert len(record.turns) == 2 * num_agents and peak == num_agents
    assert [t.agent for t in record.turns] == [0, 1, 2, 3, 0, 1, 2, 3]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_persona_temperatures_override_the_run_temperature(protocol: str) -> None:
    async def main(personas: object) -> list[RecordingPolicy]:
        setup = scripted_setup(6, 1, protocol=protocol, temperature=0.3, personas=personas)  # type: ignore[arg-type]
        policies = [RecordingPolicy(lambda k: response()) for _ in range(6)]
        await run_debate(Problem("p", "q"), setup, policies, seed=0)
        return policies

    default = asyncio.run(main(None))
    assert [p.calls[0]["temperature"] for p in default] == [0.6, 1.0, 0.9, 1.0, 0.8, 0.6]
    plain = asyncio.run(main(PlainPersonas()))
    assert [p.calls[0]["temperature"] for p in plain] == [0.3] * 6


@pytest.mark.parametrize("override", [0.0, 0.7])
def test_a_temperature_override_beats_persona_temperatures(override: float) -> None:
    """The precedence of docs/protocol.md#sampling-temperature: override, then persona, then debate."""
    setup = attrs.evolve(scripted_setup(6, 1, temperature=0.3), temperature_override=override)
    policies = [RecordingPolicy(lambda k: response()) for _ in range(6)]
    asyncio.run(run_debate(Problem("p", "q"), setup, policies, seed=0))
    assert [p.calls[0]["temperature"] for p in policies] == [override] * 6
    persona = Persona("x", "prompt", 0.9)
    assert sampling_temperature(persona, setup) == override
    assert sampling_temperature(persona, attrs.evolve(setup, temperature_override=None)) == 0.9
    assert (
        sampling_temperature(attrs.evolve(persona, temperature=None), attrs.evolve(setup, temperature_override=None))
        == 0.3
    )


def test_turn_seeds_derive_from_seed_agent_and_round() -> None:
    async def seeds(seed: int) -> list[object]:
        setup = scripted_setup(3, 2, max_tokens=77)
        policies = [RecordingPolicy(lambda k: response()) for _ in range(3)]
        await run_debate(Problem("p", "q"), setup, policies, seed=seed)
        stop = sampling_stop(setup.renderer, setup.parser.contract)
        assert all(c["stop"] == stop for p in policies for c in p.calls)
        return [c["seed"] for p in policies for c in p.calls]

    first = asyncio.run(seeds(5))
    assert first == asyncio.run(seeds(5))
    assert first == [turn_seed(5, agent, r) for agent in range(3) for r in (1, 2)]
    assert len(set(first)) == 6
    assert set(first).isdisjoint(asyncio.run(seeds(6)))


@attrs.frozen
class ContainsGrader:
    def grade(self, solution: str, answer: str) -> Grade:
        return Grade(formatted=True, correct=answer in solution, extracted=solution)


def test_grader_grades_every_turn_when_the_answer_is_known() -> None:
    texts = [response("42"), response("41"), "broken"]
    record = run_texts(texts, 3, "sequential", answer="42", grader=ContainsGrader())
    assert [t.grade for t in record.turns] == [1.0, 0.0, 0.0]
    unknown = run_texts(texts, 3, "sequential", grader=ContainsGrader())
    assert [t.grade for t in unknown.turns] == [None, None, None]


def test_blind_review_hides_comparisons_whatever_the_history_policy() -> None:
    texts = [response(str(k), ["Agent 1 > Agent 2"], evaluation=f"eval-{k}") for k in range(6)]
    blind = scripted_setup(3, 2, protocol="parallel", blind_review=True)
    episode = run_sync(run_scripted_debate(texts, 3, setup=blind))
    prompt = TOK.decode(episode.trajectories[0].transitions[1].observation)
    assert "eval-1" in prompt and "Comparisons:" not in prompt
    seeing = scripted_setup(3, 2, protocol="parallel")
    prompt = TOK.decode(
        run_sync(run_scripted_debate(texts, 3, setup=seeing)).trajectories[0].transitions[1].observation
    )
    assert "Comparisons: Agent 1 > Agent 2" in prompt
    history_blind = scripted_setup(3, 2, history=AllRounds(HistoryOptions(blind=True)))
    prompt = TOK.decode(
        run_sync(run_scripted_debate(texts, 3, setup=history_blind)).trajectories[2].transitions[0].observation
    )
    assert "eval-0" in prompt and "Comparisons:" not in prompt


def test_one_policy_per_agent_is_required() -> None:
    setup = scripted_setup(3, 1)
    with pytest.raises(ValueError, match="one policy per agent"):
        asyncio.run(run_debate(Problem("p", "q"), setup, [ScriptedPolicy([response()])], seed=0))


def test_max_tokens_cuts_the_response_and_fails_the_turn() -> None:
    setup = scripted_setup(2, 1, max_tokens=20)
    record = run_sync(run_scripted_debate([response(), response()], 2, setup=setup)).record
    assert record.aborted and record.turns[0].failed and len(record.turns[0].text.encode()) == 20


def test_scripted_debate_helper_works_inside_a_running_loop() -> None:
    from debate_core.testing.scripted_debate import scripted_debate

    async def main() -> DebateRecord:
        return scripted_debate([response("x")] * 2, 2, "parallel")

    record = asyncio.run(main())
    assert record.protocol == "parallel" and len(record.turns) == 2
