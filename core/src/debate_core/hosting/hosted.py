"""A run file's debate hosted by another program (``debate-verifiers``, a notebook): the debate
``debate run`` holds, built from the run file's plugins, its turns answered by the host, then
scored as ``debate score`` scores it and answered under the run's answer rule."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

import attrs

from debate_core.config import RunConfig, load_run_config
from debate_core.debate.final_answer import final_answer
from debate_core.debate.running import run_debate
from debate_core.debate.transcripts import dumps_transcript
from debate_core.hosting.turns import AnswerTurn, ReplyPolicy
from debate_core.plugin import PluginCall, build_choice, checked_reward_result, get_registry
from debate_core.records import DebateAnswer, DebateRecord, Problem, RewardFunction, RewardResult
from debate_core.runtime.session import BackendSession
from debate_core.training.evaluation.policy_debate import PolicyDebate, open_policy_session


def load_problems(run_file: str | Path, overrides: Sequence[str] = (), split: str = "test") -> list[Problem]:
    """The problems of a run file's dataset (``split``: ``train`` or ``test``), without opening its backend.

    Raises:
        DebateError: the run file is invalid or its dataset cannot be built or read.
    """
    registry = get_registry()
    config = load_run_config(Path(run_file), list(overrides), registry=registry)
    dataset = build_choice(registry, "dataset", config.dataset, "dataset")
    return list(dataset.problems(split))


@attrs.frozen
class HostedResult:
    """A finished debate: its record, each agent's reward from the run's reward plugin (the
    numbers ``debate score`` prints for its transcript) and the debate's answer under the run's
    rule, graded where the problem has an answer."""

    record: DebateRecord
    reward: RewardResult
    answer: DebateAnswer

    @property
    def rewards(self) -> tuple[float, ...]:
        return self.reward.agent_rewards

    def transcript(self) -> str:
        """The record as ``debate run --out`` writes it (``debate score`` reads it)."""
        return dumps_transcript(self.record)


@attrs.define
class HostedDebate:
    """The test-time debate of a run file, open for a host to play: ``debate run``'s debate (the
    run's agents, rounds, personas, history policy, parser, renderer and evaluation temperature),
    its grader, answer rule and reward plugin. The run file's backend is opened for its tokenizer
    only; nothing is sampled from it."""

    config: RunConfig
    debate: PolicyDebate
    reward_plugin: RewardFunction
    session: BackendSession

    @classmethod
    async def open(
        cls, run_file: str | Path, overrides: Sequence[str] = (), checkpoint: str | None = None
    ) -> HostedDebate:
        """The debate of ``run_file`` (``section.key=value`` overrides as ``debate run`` takes them).

        Raises:
            DebateError: the run file is invalid, a plugin cannot be built or the backend cannot be opened.
        """
        registry = get_registry()
        config = load_run_config(Path(run_file), list(overrides), registry=registry)
        session = await open_policy_session(config, registry, checkpoint, "checkpoint")
        debate = PolicyDebate.build(config, registry, session.tokenizer)
        reward = build_choice(registry, "reward", config.reward, "reward")
        return cls(config, debate, reward, session)

    @property
    def num_agents(self) -> int:
        return self.debate.setup.num_agents

    @property
    def seed(self) -> int:
        """The run's seed: ``debate run --questions`` plays its question ``i`` with ``seed + i``."""
        return self.config.run.seed

    async def play(self, problem: Problem, answer: AnswerTurn, *, seed: int) -> HostedResult:
        """One debate of ``problem``, every turn answered by ``answer``; scored and answered.

        Raises:
            ComponentFailure: a plugin raised; the debate was stopped.
        """
        setup = self.debate.setup
        policy = ReplyPolicy(answer, self.session.tokenizer, setup.parser.contract.stop_marker)
        episode = await run_debate(
            problem, setup, [policy] * setup.num_agents, seed=seed, debate_id=problem.id, grader=self.debate.grader
        )
        return self.score(episode.record)

    def score(self, record: DebateRecord) -> HostedResult:
        """The run's reward and answer rule applied to a finished debate."""
        where = f"debate '{record.debate_id}'" if record.debate_id else "a hosted debate"
        call = PluginCall("reward", self.config.reward.name, "__call__", where)
        reward = checked_reward_result(call, record, partial(self.reward_plugin, record))
        answer = final_answer(record, self.debate.grader, rule=self.debate.setup.answer_rule)
        return HostedResult(record, reward, answer)

    async def close(self) -> None:
        """Close the backend session opened for the tokenizer."""
        await self.session.close("success")
