"""The environment: one episode is one debate of a task's question, built from the run file's
plugins by ``debate_core.hosting`` (docs/verifiers.md). Seat ``agent_i`` plays agent ``i``; each
of its turns is one run of that seat (one trace, whose prompt is the turn's messages). When the
debate ends, every trace of agent ``i`` gets the reward the run's reward plugin gives agent ``i``
(``debate_reward``: the number ``debate score`` prints for the transcript) and the debate's answer
under the run's rule as metrics."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import attrs
import verifiers.v1 as vf
from pydantic import Field, create_model
from verifiers.v1.runtimes import SubprocessConfig

from debate_core import Problem
from debate_core.hosting import HostedDebate, HostedResult, TurnReply, TurnRequest
from debate_verifiers.harness import REPLIES, DebateTurn, DebateTurnData
from debate_verifiers.taskset import DebateTask, DebateTaskset

MAX_SEATS = 8
"""Seats declared (``agent_0`` .. ``agent_7``): a run file's debate may have up to this many agents."""


def seat(agent: int) -> str:
    """The seat (the agent's name in verifiers) of debate agent ``agent``."""
    return f"agent_{agent}"


def _seat_config() -> vf.AgentConfig:
    """A seat: this package's harness, in this process (no remote sandbox)."""
    return vf.AgentConfig(harness={"id": "debate_verifiers"}, runtime=SubprocessConfig())


class _Options(vf.EnvConfig):
    fixed_agents: list[int] = Field(default_factory=list)
    """Agents that are not trained (``trainable = False``), e.g. a fixed judge."""
    vary_seeds: bool = False
    """Seed each episode at random (recorded in each trace's ``info``) instead of ``run.seed + task
    index``, as ``debate run --questions`` does: several rollouts of one task then differ."""
    transcripts_dir: str | None = None
    """Where each finished debate's transcript is written (``debate score`` reads it)."""


DebateEnvConfig: type[_Options] = create_model(  # type: ignore[call-overload]
    "DebateEnvConfig",
    __base__=_Options,
    __doc__="The debate's seats, one per agent, and its options.",
    **{seat(i): (vf.AgentConfig, _seat_config()) for i in range(MAX_SEATS)},
)


@attrs.define
class _Played:
    """What ``run`` leaves for ``finalize``: each trace's agent, and the finished debate."""

    agents: dict[str, int] = attrs.field(factory=dict)
    results: dict[str, HostedResult] = attrs.field(factory=dict)


class DebateEnv(vf.Env[DebateEnvConfig]):
    """The run file's debate: the agents of its ``[debate]`` in seats ``agent_0`` ..."""

    def __init__(self, config: Any) -> None:  # Any: DebateEnvConfig, built at import
        super().__init__(config)
        self._debate: HostedDebate | None = None
        self._played = _Played()

    @property
    def options(self) -> Any:  # Any: DebateEnvConfig, built at import
        return self.config

    async def start(self) -> None:
        taskset = self.taskset
        assert isinstance(taskset, DebateTaskset)
        settings = taskset.config
        debate = await HostedDebate.open(settings.run_file, settings.overrides, settings.checkpoint)
        outside = [a for a in self.options.fixed_agents if not 0 <= a < debate.num_agents]
        if debate.num_agents > MAX_SEATS or outside:
            await debate.close()
            if outside:
                raise ValueError(
                    f"--env.fixed-agents: agent {outside[0]} is not in the debate of {settings.run_file} "
                    f"(agents 0 to {debate.num_agents - 1})"
                )
            raise ValueError(
                f"{settings.run_file}: debate.num_agents = {debate.num_agents}; debate_verifiers has {MAX_SEATS} seats"
            )
        self._debate = debate

    async def stop(self) -> None:
        if self._debate is not None:
            await self._debate.close()
            self._debate = None

    async def setup(self, agents: vf.Agents) -> None:
        for agent in self.options.fixed_agents:
            getattr(agents, seat(agent)).trainable = False

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        debate = self._debate
        if debate is None:
            raise RuntimeError("the debate environment was not started (Env.start opens the run file)")
        assert isinstance(task, DebateTask)
        data = task.data
        problem = Problem(id=data.id or f"task-{data.idx}", question=data.question, answer=data.answer)
        seed = uuid.uuid4().int % 2**31 if self.options.vary_seeds else debate.seed + (data.idx or 0)
        traces: dict[str, int] = {}

        async def answer(turn: TurnRequest) -> TurnReply:
            key = uuid.uuid4().hex
            turn_task = DebateTurn(
                DebateTurnData(
                    idx=data.idx,
                    id=f"{problem.id}/round-{turn.round}/agent-{turn.agent}",
                    prompt=[{"role": m.role, "content": m.content} for m in turn.messages],
                    turn=key,
                    agent=turn.agent,
                    round=turn.round,
                    temperature=turn.temperature,
                    max_tokens=turn.max_tokens,
                    seed=turn.seed,
                    stop=list(turn.stop),
                )
            )
            trace = await getattr(agents, seat(turn.agent)).run(turn_task)
            trace.info["debate"] = {"seed": seed, "agent": turn.agent, "round": turn.round}
            traces[trace.id] = turn.agent
            reply = REPLIES.waiting.pop(key, None)
            return reply if reply is not None else reply_of_trace(trace, turn.stop)

        result = await debate.play(problem, answer, seed=seed)
        for trace_id, agent in traces.items():
            self._played.agents[trace_id] = agent
            self._played.results[trace_id] = result
        if self.options.transcripts_dir is not None:
            folder = Path(self.options.transcripts_dir)
            folder.mkdir(parents=True, exist_ok=True)
            name = "".join(c if c.isalnum() or c in "-_." else "_" for c in problem.id)
            (folder / f"{name}-{seed}.json").write_text(result.transcript(), encoding="utf-8")

    async def finalize(self, task: vf.Task, episode: vf.Episode) -> None:
        for trace in episode.traces:
            agent = self._played.agents.pop(trace.id, None)
            result = self._played.results.pop(trace.id, None)
            if agent is None or result is None:
                raise RuntimeError(f"trace {trace.id} was not a turn of this episode's debate")
            record_outcome(trace, agent, result)


def reply_of_trace(trace: vf.Trace, stop: tuple[str, ...]) -> TurnReply:
    """The reply of a turn another harness played (a stock one, e.g. ``null``): the trace's last
    sampled message, cut after the first of the turn's stop strings, which such a harness did not
    send (``debate run``'s sampled text ends with the stop it met, so the stop is kept).

    Raises:
        RuntimeError: the trace holds no sampled message (the turn failed).
    """
    texts = [n.message.content for n in trace.nodes if n.sampled]
    if not texts:
        errors = "; ".join(f"{e.type}: {e.message}" for e in trace.errors) or "no error recorded"
        raise RuntimeError(f"agent turn {trace.id} produced no reply ({errors})")
    text = texts[-1] if isinstance(texts[-1], str) else str(texts[-1] or "")
    cuts = sorted((at, len(s)) for s in stop if (at := text.find(s)) >= 0)
    if cuts:
        at, length = cuts[0]
        text = text[: at + length]
    return TurnReply(text)


def record_outcome(trace: vf.Trace, agent: int, result: HostedResult) -> None:
    """Agent ``agent``'s reward and the debate's answer, on one of its traces."""
    trace.record_reward("debate_reward", result.rewards[agent])
    answer = result.answer
    trace.record_metric("debate_answer_found", float(answer.answer is not None))
    if answer.correct is not None:
        trace.record_metric("debate_answer_correct", float(answer.correct))
    trace.record_metric("debate_rounds", float(result.record.rounds_played))
    trace.record_metric("debate_consensus", float(result.record.consensus_reached))
    trace.record_metric("debate_aborted", float(result.record.aborted))
    trace.info.setdefault("debate", {}).update(
        {"answer": answer.answer, "answer_rule": answer.rule, "debate_id": result.record.debate_id}
    )
