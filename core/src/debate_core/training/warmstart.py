"""Supervised warm-start: cross-entropy on correct solutions written in the output format
(docs/training.md#warm-start-and-curriculum).

The reference responses are produced *through the debate itself*: a debate is run in which
every agent is a :class:`ReferencePolicy` that answers with the problem's correct solution,
so the prompts (personas, history, round instructions, renderer) are exactly the ones RL will
show. Each response is a complete, contract-following answer:

* ``<solution>``: the problem's reference solution (``metadata["solution"]``, trusted as given) or
  the configured template filled with its answer, kept only when the grader accepts it;
* ``<evaluation>``: ``N/A`` before anyone else has answered, else a line per visible agent
  saying its solution is correct;
* ``<comparison>``: ``Agent a = Agent b`` for every pair of other agents already answered
  (every reference solution is equally correct), ``N/A`` with fewer than two;
* ``<consensus>YES</consensus>`` and the configured reason, so the debate ends after round 1.

The training data are the agents' trajectories assembled exactly as for RL (prefix extension,
observations weight 0), with ``weights`` = the action mask.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence

import attrs

from debate_core.config.sections import WarmstartSettings
from debate_core.errors import DebateError
from debate_core.records import (
    Comparison,
    DebateEpisode,
    Grader,
    OutputContract,
    Problem,
    ResponseContent,
    SampledAction,
    StopCondition,
    Tokenizer,
)
from debate_core.training.datum import AssembledDatum, supervised_datums
from debate_core.training.rollouts import DebateJob
from debate_core.training.run_components import NamedDataset
from debate_core.training.seeding import batch_indices, derive_seed


class WarmstartError(DebateError):
    """The warm-start cannot run on this dataset."""


def reference_solution(problem: Problem, template: str) -> str | None:
    """The problem's reference solution, or the template filled with its answer."""
    given = problem.metadata.get("solution") if problem.metadata else None
    if given:
        return str(given)
    if problem.answer is None:
        return None
    return template.replace("{answer}", problem.answer)


def reference_response(solution: str, seen: Sequence[int], me: int, reason: str) -> ResponseContent:
    """What an agent that has seen ``seen`` answer says: the reference solution, every other
    solution judged correct, every pair of others equal, consensus."""
    others = [a for a in seen if a != me]
    evaluation = " ".join(f"Agent {a}'s solution is correct." for a in others)
    pairs = tuple(Comparison(a, "=", b) for a, b in itertools.combinations(sorted(others), 2))
    return ResponseContent(
        solution=solution, evaluation=evaluation, comparisons=pairs, consensus=True, consensus_reason=reason
    )


def render_response(contract: OutputContract, solution: str, seen: Sequence[int], me: int, reason: str) -> str:
    """The reference response, written in the output contract's format."""
    return contract.render(reference_response(solution, seen, me, reason)).text


@attrs.define
class _Answered:
    """Which agents of one debate have finished answering, in order."""

    agents: list[int] = attrs.field(factory=list)


@attrs.define
class ReferencePolicy:
    """An ``AgentPolicy`` that answers with the reference response instead of sampling.

    Agents that finished before this call started count as seen (sequential turns see the
    earlier agents of the round; parallel rounds see none in round 1).
    """

    agent: int
    solution: str
    reason: str
    tokenizer: Tokenizer
    contract: OutputContract
    answered: _Answered
    truncated: list[int] = attrs.field(factory=list)

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        seen = list(self.answered.agents)
        await asyncio.sleep(0)  # agents started together (parallel rounds) do not see each other
        text = render_response(self.contract, self.solution, seen, self.agent, self.reason)
        tokens = list(self.tokenizer.encode(text, add_special_tokens=False))
        if stop.token_ids:
            tokens.append(stop.token_ids[0])
        stop_reason = "stop"
        if len(tokens) > max_tokens:
            tokens = tokens[:max_tokens]
            stop_reason = "length"
            self.truncated.append(self.agent)
        self.answered.agents.append(self.agent)
        return SampledAction(tuple(tokens), tuple(0.0 for _ in tokens), text, stop_reason)


@attrs.define
class WarmstartData:
    """The problems usable for the warm-start and the jobs of each step."""

    problems: list[tuple[Problem, str]]
    """Each usable problem with its reference solution."""
    seed: int
    num_agents: int
    batch_size: int
    reason: str
    tokenizer: Tokenizer
    contract: OutputContract

    @classmethod
    def prepare(
        cls,
        dataset: NamedDataset,
        grader: Grader | None,
        settings: WarmstartSettings,
        seed: int,
        num_agents: int,
        tokenizer: Tokenizer,
        contract: OutputContract,
    ) -> WarmstartData:
        """Collect training problems whose reference solution the grader accepts.

        Raises:
            WarmstartError: no problem qualifies (no answers, or the template does not grade as correct).
        """
        usable: list[tuple[Problem, str]] = []
        rejected = 0
        for problem in dataset.problems("train"):
            solution = reference_solution(problem, settings.solution_template)
            if solution is None:
                continue
            from_template = not (problem.metadata and problem.metadata.get("solution"))
            if (
                from_template
                and grader is not None
                and problem.answer is not None
                and not grader.grade(solution, problem.answer).correct
            ):
                rejected += 1
                continue
            usable.append((problem, solution))
        if not usable:
            why = (
                f"the grader rejected all {rejected} reference solutions; check warmstart.solution_template"
                if rejected
                else "no training problem has an answer or a reference solution"
            )
            raise WarmstartError(f"warm-start on dataset '{dataset.name}' is impossible: {why}")
        return cls(usable, seed, num_agents, settings.batch_size, settings.consensus_reason, tokenizer, contract)

    def jobs(self, step: int) -> tuple[list[DebateJob], list[ReferencePolicy]]:
        """The reference debates of warm-start step ``step`` and their policies."""
        indices = batch_indices(self.seed, "warmstart", step, self.batch_size, len(self.problems))
        jobs: list[DebateJob] = []
        policies: list[ReferencePolicy] = []
        for slot, index in enumerate(indices):
            problem, solution = self.problems[index]
            answered = _Answered()
            agents = [
                ReferencePolicy(a, solution, self.reason, self.tokenizer, self.contract, answered)
                for a in range(self.num_agents)
            ]
            policies.extend(agents)
            jobs.append(
                DebateJob(
                    problem, tuple(agents), derive_seed(self.seed, "warmstart", step, slot), f"warm-{step}-{slot}"
                )
            )
        return jobs, policies


def warmstart_datums(episodes: Sequence[DebateEpisode]) -> list[AssembledDatum]:
    """Cross-entropy Datums of every agent of every reference debate."""
    return [
        d
        for index, episode in enumerate(episodes)
        for trajectory in episode.trajectories
        for d in supervised_datums(trajectory, debate_index=index)
    ]
