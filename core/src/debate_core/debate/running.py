"""One debate, start to finish: the one code path of training, evaluation and ``debate run``.

``run_debate`` starts one task per agent. Each asks the turn protocol for its turn, builds
its prompt (persona, history policy, instructions, renderer), samples from its own policy,
parses the answer, applies the authorship rules and hands the turn in. The debate ends by
the turn protocol's termination rule or by an abort; on an abort every other agent task is
cancelled at once, so no agent is ever left waiting.

A policy that raises fails its turn (``ParseError`` code ``turn_failed``, step reward -1).
A *component* that raises (history policy, renderer, parser, grader) is a bug, not a move
in the debate: the debate is stopped the same way and ``ComponentFailure`` names it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

import attrs

from debate_core.debate.coordinators import TurnDraft, TurnState, TurnTicket, saw_every_latest_solution
from debate_core.debate.instructions import turn_instructions
from debate_core.debate.observations import OwnTurn, build_messages, system_prompt
from debate_core.debate.rendering import sampling_stop
from debate_core.debate.seating import Seating
from debate_core.debate.setup import DebateSetup, sampling_temperature, turn_seed
from debate_core.debate.token_sections import token_sections
from debate_core.errors import ComponentFailure
from debate_core.plugin import (
    PluginCall,
    checked_decoded_text,
    checked_grade,
    checked_history,
    checked_instance,
    checked_parsed_response,
    checked_persona,
    checked_prompt,
)
from debate_core.records import (
    AgentPolicy,
    AgentTrajectory,
    CheckedComparisons,
    DebateEpisode,
    DebateRecord,
    Grader,
    HistoryEntry,
    Message,
    ParsedResponse,
    ParseError,
    Persona,
    Problem,
    SampledAction,
    StopCondition,
    Transition,
    Turn,
    TurnView,
    ViewingPolicy,
    apply_authorship,
    apply_seated_authorship,
)

T = TypeVar("T")


@attrs.frozen
class FirstTurnPrompt:
    """An agent's blind first turn: its prompt messages and tokens, its stop and temperature."""

    messages: tuple[Message, ...]
    tokens: tuple[int, ...]
    stop: StopCondition
    temperature: float


def first_turn_prompt(problem: Problem, setup: DebateSetup, agent: int = 0) -> FirstTurnPrompt:
    """The prompt ``agent`` answers ``problem`` in having seen nobody (a parallel debate's first round:
    evaluation's direct answers), built by the code of every turn: persona, contract, instructions."""
    debate = _Debate(problem, setup, [], seed=0)
    persona = debate.persona(agent)
    _, messages, tokens, _ = debate.observe(TurnTicket(round=1, agent=agent, visible=()), persona, {})
    return FirstTurnPrompt(tuple(messages), tuple(tokens), debate.stop, sampling_temperature(persona, setup))


class _ComponentRaised(Exception):
    """A component raised inside an agent task; carries the message for ``ComponentFailure``."""


def _call_component(what: str, call: Callable[[], T]) -> T:
    try:
        return call()
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise _ComponentRaised(f"{what} raised {type(exc).__name__}: {exc}") from exc


@attrs.frozen
class _Sample:
    observation: tuple[int, ...]
    action: tuple[int, ...]
    logprobs: tuple[float, ...]
    sections: tuple[str | None, ...]


class _Debate:
    """The state of one running debate (one instance per ``run_debate`` call)."""

    def __init__(
        self,
        problem: Problem,
        setup: DebateSetup,
        policies: Sequence[AgentPolicy],
        seed: int,
        grader: Grader | None = None,
    ) -> None:
        self.problem = problem
        self.setup = setup
        self.policies = policies
        self.seed = seed
        self.grader = grader
        rounds = min(setup.max_rounds, setup.stop_after_round or setup.max_rounds)
        self.state: TurnState = checked_instance(
            setup.call("coordinator", "start", f"problem '{problem.id}'"),
            lambda: setup.coordinator.start(setup.num_agents, rounds),
            TurnState,  # type: ignore[type-abstract]  # any subclass of the base
        )
        self.state.consensus_rule = setup.consensus_rule
        self.state.answer_reader = self.read_solution
        self.stop = sampling_stop(setup.renderer, setup.parser.contract, setup.names.get("renderer", ""))
        self.samples: dict[tuple[int, int], _Sample] = {}

    def persona(self, agent: int, num_agents: int | None = None) -> Persona:
        """``agent``'s persona in a debate of ``num_agents`` (default: this one's)."""
        agents = self.setup.num_agents if num_agents is None else num_agents
        call = self.setup.call("persona_set", "persona", f"agent {agent} of problem '{self.problem.id}'")
        return checked_persona(call, lambda: self.setup.persona_set.persona(agent, agents))

    def turn_persona(self, ticket: TurnTicket) -> Persona:
        """The persona a turn answers as: its agent's, or a seated turn's seat's in the debate its
        prompt names (``debate.seating``), temperature included."""
        if not ticket.seats:
            return self.persona(ticket.agent)
        return self.persona(ticket.seats.index(ticket.agent), len(ticket.seats))

    def turn(self, ticket: TurnTicket) -> str:
        """A turn as a plugin's error names it."""
        return f"agent {ticket.agent}'s turn in round {ticket.round} of problem '{self.problem.id}'"

    async def agent_loop(self, agent: int) -> None:
        setup = self.setup
        own_turns: dict[int, OwnTurn] = {}
        while True:
            ticket = await self.state.next_turn(agent)
            if ticket is None:
                return
            persona = self.turn_persona(ticket)
            temperature = sampling_temperature(persona, setup)
            instructions, messages, prompt, view = self.observe(ticket, persona, own_turns)
            policy = self.policies[agent]
            seed = turn_seed(self.seed, agent, ticket.round)
            try:
                if isinstance(policy, ViewingPolicy):
                    action = await policy.sample_with_view(
                        prompt, view, stop=self.stop, temperature=temperature, max_tokens=setup.max_tokens, seed=seed
                    )
                else:
                    action = await policy.sample(
                        prompt, stop=self.stop, temperature=temperature, max_tokens=setup.max_tokens, seed=seed
                    )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                message = f"the policy of agent {agent} raised {type(exc).__name__}: {exc}"
                self.samples[(ticket.round, agent)] = _Sample(tuple(prompt), (), (), ())
                draft = TurnDraft(
                    "", ParsedResponse(error=ParseError("turn_failed", message)), persona.name, prompt=tuple(messages)
                )
                await self.state.fail(ticket, draft)
                return
            draft = attrs.evolve(
                self.read_answer(ticket, persona, prompt, action), informed=view.informed, prompt=tuple(messages)
            )
            own_turns[ticket.round] = OwnTurn(draft.text, instructions, len(ticket.visible))
            await self.state.submit(ticket, draft)

    def observe(
        self, ticket: TurnTicket, persona: Persona, own_turns: dict[int, OwnTurn]
    ) -> tuple[str, list[Message], list[int], TurnView]:
        setup = self.setup
        entries = checked_history(
            setup.call("history_policy", "select", self.turn(ticket)),
            lambda: setup.history_policy.select(ticket.visible, ticket.round),
            ticket.visible,
            ticket.round,
        )
        if setup.coordinator.hide_comparisons:
            entries = [attrs.evolve(e, comparison=None, consensus_reason=None) for e in entries]
        if "consensus_reason" not in setup.parser.contract.sections:  # nothing to show (three sections)
            entries = [attrs.evolve(e, consensus_reason=None) for e in entries]
        if setup.show_answers and self.grader is not None:
            entries = [attrs.evolve(e, answer=self.answer_of(ticket, e)) for e in entries]
        informed = saw_every_latest_solution(ticket, entries, setup.num_agents)
        index_of = {(t.round, t.agent): t.turn_index for t in ticket.visible}
        indices = [index_of.get((e.round, e.agent), len(ticket.visible)) for e in entries]
        agent, num_agents = ticket.agent, setup.num_agents
        if ticket.seats:  # the prompt names seats, not the debate's agents (debate.seating)
            seating = Seating(ticket.seats, ticket.agent)
            agent, num_agents = seating.own_seat, seating.size
            entries, indices = seating.entries(entries, indices)
            own_turns = seating.own_turns(own_turns, lambda r: self.instructions(agent, r, [], informed=False))
        instructions = self.instructions(agent, ticket.round, entries, informed)
        messages = build_messages(
            question=self.problem.question,
            system_prompt=system_prompt(persona, setup.parser.contract, agent),
            agent=agent,
            entries=entries,
            turn_indices=indices,
            own_turns=own_turns,
            instructions=instructions,
            with_recap=setup.recap,
        )
        prompt = checked_prompt(
            setup.call("renderer", "build_prompt", self.turn(ticket)), lambda: setup.renderer.build_prompt(messages)
        )
        view = TurnView(
            question=self.problem.question,
            agent=agent,
            num_agents=num_agents,
            round=ticket.round,
            max_rounds=setup.max_rounds,
            shown=tuple(entries),
            informed=informed,
            messages=tuple(messages),
            seats=ticket.seats,
        )
        return instructions, list(messages), prompt, view

    def instructions(self, agent: int, round: int, entries: Sequence[HistoryEntry], informed: bool) -> str:
        """The instructions ``agent`` is given in ``round`` with ``entries`` in its prompt."""
        return turn_instructions(
            agent=agent,
            round=round,
            max_rounds=self.setup.max_rounds,
            answered_this_round=[e.agent for e in entries if e.round == round],
            seen_in_earlier_rounds=[e.agent for e in entries if e.round < round],
            contract=self.setup.parser.contract,
            informed=informed,
            brief=self.setup.brief_instructions,
        )

    def answer_of(self, ticket: TurnTicket, entry: HistoryEntry) -> str | None:
        """The answer the grader reads in the full solution of the turn behind ``entry``."""
        grader = self.grader
        assert grader is not None
        turn = next((t for t in ticket.visible if (t.round, t.agent) == (entry.round, entry.agent)), None)
        if turn is None or turn.failed:
            return None
        solution = turn.response.solution
        call = PluginCall("grader", "", "grade", f"the solution of {self.turn(ticket)}")
        return checked_grade(call, lambda: grader.grade(solution, self.problem.answer or "")).extracted

    def read_solution(self, solution: str) -> str | None:
        """The answer the grader reads in ``solution`` (``None`` without a grader), for the turn
        protocol (``TurnState.answer_reader``); nothing reads the ground truth."""
        grader = self.grader
        if grader is None:
            return None
        call = PluginCall("grader", "", "grade", f"a solution of problem '{self.problem.id}'")
        return checked_grade(call, lambda: grader.grade(solution, "")).extracted

    def read_answer(self, ticket: TurnTicket, persona: Persona, prompt: list[int], action: SampledAction) -> TurnDraft:
        setup = self.setup
        if len(action.logprobs) != len(action.tokens):
            raise _ComponentRaised(
                f"the policy of agent {ticket.agent} returned {len(action.tokens)} tokens "
                f"but {len(action.logprobs)} logprobs"
            )
        given = self.turn(ticket)
        text = checked_decoded_text(
            setup.call("renderer", "decode", given), lambda: setup.renderer.decode(action.tokens)
        )
        response = checked_parsed_response(setup.call("parser", "parse", given), lambda: setup.parser.parse(text))
        if not response.ok:
            authored = CheckedComparisons()
        elif ticket.seats:
            authored = apply_seated_authorship(response.comparisons, ticket.agent, ticket.seats)
        else:
            authored = apply_authorship(response.comparisons, ticket.agent, setup.num_agents)
        # the sections of a response that broke the contract are not trusted: all its tokens are in none
        sections = (
            _call_component("renderer", lambda: token_sections(setup.renderer.decode, action.tokens, response.spans))
            if response.ok
            else (None,) * len(action.tokens)
        )
        self.samples[(ticket.round, ticket.agent)] = _Sample(
            tuple(prompt), tuple(action.tokens), tuple(float(x) for x in action.logprobs), sections
        )
        return TurnDraft(
            text=text,
            response=response,
            persona=persona.name,
            comparisons=authored.valid,
            self_comparisons=authored.self_comparisons,
            malformed_comparisons=authored.malformed,
        )

    async def run(self) -> None:
        tasks = [
            asyncio.create_task(self.agent_loop(agent), name=f"debate-agent-{agent}")
            for agent in range(self.setup.num_agents)
        ]
        finished = asyncio.create_task(self.state.finished.wait(), name="debate-finished")
        failure: BaseException | None = None
        try:
            pending: set[asyncio.Task[None]] = set(tasks)
            while pending and not self.state.finished.is_set():
                done, _ = await asyncio.wait(pending | {finished}, return_when=asyncio.FIRST_COMPLETED)
                for task in done & pending:
                    pending.discard(task)
                    if not task.cancelled() and task.exception() is not None:
                        failure = task.exception()
                        await self.state.abort(f"a component failed: {failure}")
        finally:
            for started in [*tasks, finished]:
                started.cancel()
            await asyncio.gather(*tasks, finished, return_exceptions=True)
        if failure is not None:
            if isinstance(failure, _ComponentRaised):
                raise ComponentFailure(f"debate stopped: {failure}") from failure.__cause__
            raise failure

    def record(self, debate_id: str, grader: Grader | None) -> DebateRecord:
        state = self.state
        turns = tuple(state.committed)
        if grader is not None and self.problem.answer is not None:
            turns = tuple(attrs.evolve(t, grade=self.grade(grader, t)) for t in turns)
        return DebateRecord(
            question=self.problem.question,
            num_agents=self.setup.num_agents,
            turns=turns,
            protocol=self.setup.coordinator.protocol_name,
            max_rounds=self.setup.max_rounds,
            answer=self.problem.answer,
            debate_id=debate_id,
            consensus_reached=state.consensus_reached,
            aborted=state.aborted,
            abort_reason=state.abort_reason,
            consensus_rule=self.setup.consensus_rule,
        )

    def grade(self, grader: Grader, turn: Turn) -> float:
        if turn.failed or self.problem.answer is None:
            return 0.0
        answer = self.problem.answer
        call = PluginCall(
            "grader", "", "grade", f"agent {turn.agent}'s turn in round {turn.round} of problem '{self.problem.id}'"
        )
        return 1.0 if checked_grade(call, lambda: grader.grade(turn.response.solution, answer)).correct else 0.0

    def trajectories(self, record: DebateRecord) -> tuple[AgentTrajectory, ...]:
        result: list[AgentTrajectory] = []
        for agent in range(self.setup.num_agents):
            transitions = []
            for turn in record.turns_of(agent):
                sample = self.samples[(turn.round, agent)]
                transitions.append(
                    Transition(
                        turn_index=turn.turn_index,
                        step=turn.step,
                        observation=sample.observation,
                        action=sample.action,
                        logprobs=sample.logprobs,
                        action_sections=sample.sections,
                    )
                )
            result.append(AgentTrajectory(agent, tuple(transitions)))
        return tuple(result)


async def run_debate(
    problem: Problem,
    setup: DebateSetup,
    policies: Sequence[AgentPolicy],
    *,
    seed: int,
    debate_id: str = "",
    grader: Grader | None = None,
) -> DebateEpisode:
    """Run one debate on ``problem``; ``policies[i]`` plays agent ``i``.

    Args:
        problem: the question (and its answer when known).
        setup: the debate's shape and components.
        policies: one policy per agent (the same object for self-play, a fixed opponent for
            some roles in evaluation).
        seed: the debate's seed; each turn samples with ``turn_seed(seed, agent, round)``.
        debate_id: a label carried into the record.
        grader: grades every turn's solution (``Turn.grade``) when ``problem.answer`` is known
            (a failed turn grades 0.0), and reads the answers history entries state when the
            setup shows answers.

    Raises:
        ComponentFailure: a component (not a policy) raised; the debate was stopped cleanly.
    """
    if len(policies) != setup.num_agents:
        raise ValueError(f"run_debate needs one policy per agent: got {len(policies)} for {setup.num_agents} agents")
    debate = _Debate(problem, setup, policies, seed, grader)
    await debate.run()
    record = debate.record(debate_id, grader)
    return DebateEpisode(record, debate.trajectories(record))
