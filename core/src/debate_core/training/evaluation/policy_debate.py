"""The test-time debate: a checkpoint's policy debating itself in the run file's ``[debate]`` at
the evaluation's temperature, graded by the run's grader. Evaluation's self-play, ``debate run``
and ``debate serve`` play it; this module builds it, and opens the policy it samples, once for all
three (docs/training.md#serving-a-policy).
"""

from __future__ import annotations

import attrs

from debate_core.backends.contract import SamplingClientLike
from debate_core.config import RunConfig
from debate_core.config.sections import EvaluationSettings
from debate_core.debate.running import run_debate
from debate_core.debate.sampling_policy import SamplingClientPolicy
from debate_core.debate.setup import DebateSetup, build_debate_setup
from debate_core.plugin import ComponentBuilder, build_choice
from debate_core.records import DebateEpisode, Grader, Problem, Tokenizer
from debate_core.runtime.session import BackendSession, open_session_async
from debate_core.training.policy_weights import PolicyWeights, resolve_policy_weights
from debate_core.training.run_components import NamedGrader


def evaluation_setup(setup: DebateSetup, settings: EvaluationSettings) -> DebateSetup:
    """The run's debate setup at the evaluation's temperature: ``evaluation.temperature``, when set,
    samples every agent, persona temperatures included (``debate.setup.sampling_temperature``)."""
    return attrs.evolve(setup, temperature_override=settings.temperature)


@attrs.frozen
class PolicyDebate:
    """The test-time debate of a run file: its setup (at the evaluation's temperature) and grader."""

    setup: DebateSetup
    grader: Grader

    @classmethod
    def build(cls, config: RunConfig, registry: ComponentBuilder, tokenizer: Tokenizer) -> PolicyDebate:
        """The run file's debate components and grader, built for ``tokenizer``."""
        setup = evaluation_setup(build_debate_setup(config.debate, registry, tokenizer), config.evaluation)
        return cls(setup, NamedGrader(config.grader.name, build_choice(registry, "grader", config.grader, "grader")))

    def with_limits(self, max_tokens: int | None = None, temperature: float | None = None) -> PolicyDebate:
        """The same debate with a request's own ``max_tokens`` and temperature, where it gives them."""
        setup = self.setup if max_tokens is None else attrs.evolve(self.setup, max_tokens=max_tokens)
        if temperature is not None:
            setup = attrs.evolve(setup, temperature_override=temperature)
        return attrs.evolve(self, setup=setup)

    async def play(
        self, problem: Problem, sampler: SamplingClientLike, *, seed: int, debate_id: str = ""
    ) -> DebateEpisode:
        """One debate of ``problem``, every agent sampled from ``sampler``, every turn graded."""
        policy = SamplingClientPolicy(sampler, self.setup.renderer)
        agents = [policy] * self.setup.num_agents
        return await run_debate(problem, self.setup, agents, seed=seed, debate_id=debate_id, grader=self.grader)


async def open_policy_session(
    config: RunConfig, registry: ComponentBuilder, checkpoint: str | None, argument: str
) -> BackendSession:
    """A sampling session on the run file's backend: the base model without ``checkpoint``, else the
    weights it names saved for sampling (its training state where it has none); ``argument`` names
    the option that gave it, for errors."""
    if checkpoint is None:
        return await open_session_async(config, registry, training=False)
    return await open_weights_session(config, registry, resolve_policy_weights(checkpoint, argument))


async def open_weights_session(
    config: RunConfig, registry: ComponentBuilder, weights: PolicyWeights | None
) -> BackendSession:
    """A sampling session on the run file's backend: the base model without ``weights``, else
    those weights (the ones saved for sampling, or the training state where there are none)."""
    if weights is None:
        return await open_session_async(config, registry, training=False)
    return await open_session_async(
        config,
        registry,
        training=False,
        sampler_path=weights.sampler_path,
        state_path=None if weights.sampler_path else weights.state_path,
    )
