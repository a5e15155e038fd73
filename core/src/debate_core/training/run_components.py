"""The components a run resolves from the registry, built once and named for error messages.

Training, evaluation, warm-start and preflight all get their debates from a
:class:`DebateRunner` (by default ``debate.running.run_debate`` over the run's
:class:`~debate_core.debate.setup.DebateSetup`: coordinator, parser, personas, history policy
and renderer), their policies from ``make_policy`` (by default
``debate.sampling_policy.SamplingClientPolicy``), and their rewards, graders and datasets from
the plugins the run file names. Each plugin is called through ``debate_core.plugin``'s checked calls: one
that raises or returns a bad result is reported as a ``ComponentFailure`` naming it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Protocol

import attrs

from debate_core.backends.contract import SamplingClientLike
from debate_core.config.sections import RunConfig, WarmstartSettings
from debate_core.debate.running import run_debate
from debate_core.debate.sampling_policy import SamplingClientPolicy
from debate_core.debate.setup import DebateSetup, build_debate_setup
from debate_core.debate.transcripts import save_transcript
from debate_core.limits import short_repr
from debate_core.plugin import (
    ComponentBuilder,
    PluginCall,
    build_choice,
    call_async_plugin,
    checked_grade,
    checked_problems,
    checked_reward_result,
)
from debate_core.records import (
    AgentPolicy,
    Dataset,
    DebateEpisode,
    DebateRecord,
    Grade,
    Grader,
    OutputContract,
    Problem,
    Renderer,
    RewardFunction,
    RewardResult,
    Tokenizer,
    TrainingRound,
    TrainingTimeReward,
)


class DebateRunner(Protocol):
    """Runs one debate of ``problem`` with one policy per agent."""

    def __call__(
        self, problem: Problem, policies: Sequence[AgentPolicy], *, seed: int, debate_id: str
    ) -> Awaitable[DebateEpisode]: ...


TranscriptWriter = Callable[[DebateRecord, Path], object]


@attrs.define
class NamedDataset:
    """A dataset plugin with its name; problem lists are read once per split."""

    name: str
    dataset: Dataset
    _cache: dict[str, list[Problem]] = attrs.field(factory=dict)

    def problems(self, split: str) -> list[Problem]:
        """The problems of ``split``; a raising plugin becomes a ``ComponentFailure`` naming it."""
        if split not in self._cache:
            call = PluginCall("dataset", self.name, "problems", f"split '{split}'")
            self._cache[split] = checked_problems(call, lambda: self.dataset.problems(split))
        return self._cache[split]


@attrs.frozen
class NamedGrader:
    """A grader plugin with its name: a raising grader becomes a ``ComponentFailure`` naming it."""

    name: str
    grader: Grader

    def grade(self, solution: str, answer: str) -> Grade:
        call = PluginCall("grader", self.name, "grade", f"answer {short_repr(answer)}, solution {short_repr(solution)}")
        return checked_grade(call, lambda: self.grader.grade(solution, answer))


@attrs.frozen
class Stage:
    """A curriculum stage: a dataset and the number of RL iterations spent on it."""

    dataset: NamedDataset
    iterations: int


@attrs.define
class RunComponents:
    """Everything a run uses besides the backend session."""

    setup: DebateSetup
    """The run's debate (``[debate]``); evaluation derives variants of it (one agent, its temperature)."""
    runner_for: Callable[[DebateSetup], DebateRunner]
    """Builds the debate runner of a setup."""
    make_policy: Callable[[SamplingClientLike], AgentPolicy]
    reward: RewardFunction
    reward_name: str
    grader: Grader | None
    grader_name: str
    stages: list[Stage]
    eval_dataset: NamedDataset
    write_transcript: TranscriptWriter
    renderer_for: Callable[[Tokenizer], Renderer] | None = None
    """The run's renderer for another tokenizer (a model judge samples another model)."""
    tokenizer: Tokenizer | None = None
    """The policy's tokenizer (reference agents encode their responses with it)."""
    solution_template: str = WarmstartSettings().solution_template
    """``warmstart.solution_template``: reference solutions of problems without a worked one."""
    _runners: dict[int, tuple[DebateSetup, DebateRunner]] = attrs.field(factory=dict)

    def runner(self, setup: DebateSetup | None = None) -> DebateRunner:
        """The runner of ``setup`` (the run's own by default), built once per setup object.

        The cache holds the setup itself beside its runner: an ``id`` alone would be reused by a
        later setup once a temporary one has been freed.
        """
        setup = self.setup if setup is None else setup
        cached = self._runners.get(id(setup))
        if cached is None or cached[0] is not setup:
            cached = (setup, self.runner_for(setup))
            self._runners[id(setup)] = cached
        return cached[1]

    @property
    def contract(self) -> OutputContract:
        """The output contract of the run's parser."""
        return self.setup.parser.contract

    def score(self, record: DebateRecord, problem: Problem | None = None) -> RewardResult:
        """The reward plugin's result, checked against the reward contract; a raising plugin or a bad
        result becomes a ``ComponentFailure`` naming it and the debate (``plugin_results``)."""
        given = f"debate '{record.debate_id}'" + (f" (problem '{problem.id}')" if problem is not None else "")
        call = PluginCall("reward", self.reward_name, "__call__", given)
        return checked_reward_result(call, record, lambda: self.reward(record))

    async def score_in_training(self, record: DebateRecord, problem: Problem, round: TrainingRound) -> RewardResult:
        """:meth:`score` of an RL iteration's debate: a reward whose training-time score depends on
        the round (``TrainingTimeReward``, e.g. ``judge_mix``) is awaited with it, checked alike."""
        if not isinstance(self.reward, TrainingTimeReward):
            return self.score(record, problem)
        given = f"debate '{record.debate_id}' (problem '{problem.id}')"
        call = PluginCall("reward", self.reward_name, "score_in_training", given)
        result = await call_async_plugin(call, partial(self.reward.score_in_training, record, round))
        return checked_reward_result(call, record, lambda: result)

    @property
    def total_iterations(self) -> int:
        return sum(stage.iterations for stage in self.stages)

    def stage_at(self, iteration: int) -> tuple[int, int]:
        """``(stage index, iteration within the stage)`` of a global RL iteration."""
        remaining = iteration
        for index, stage in enumerate(self.stages):
            if remaining < stage.iterations:
                return index, remaining
            remaining -= stage.iterations
        raise ValueError(f"iteration {iteration} is past the last of {self.total_iterations} iterations")


def debate_runner_factory(grader: Grader | None) -> Callable[[DebateSetup], DebateRunner]:
    """Runners over ``debate.running.run_debate``, grading every turn with ``grader``."""

    def runner_for(setup: DebateSetup) -> DebateRunner:
        async def run(problem: Problem, policies: Sequence[AgentPolicy], *, seed: int, debate_id: str) -> DebateEpisode:
            return await run_debate(problem, setup, list(policies), seed=seed, debate_id=debate_id, grader=grader)

        return run

    return runner_for


def sampling_policy_factory(setup: DebateSetup) -> Callable[[SamplingClientLike], AgentPolicy]:
    """Policies over a sampling client (``debate.sampling_policy.SamplingClientPolicy``), decoding
    with the setup's renderer so that section spans line up with the tokens."""

    def make(sampling_client: SamplingClientLike) -> AgentPolicy:
        return SamplingClientPolicy(sampling_client, setup.renderer)

    return make


def build_run_components(config: RunConfig, registry: ComponentBuilder, tokenizer: Tokenizer) -> RunComponents:
    """Build every component the run file names (the backend excepted)."""
    setup = build_debate_setup(config.debate, registry, tokenizer)
    reward = build_choice(registry, "reward", config.reward, "reward")
    grader = NamedGrader(config.grader.name, build_choice(registry, "grader", config.grader, "grader"))
    main = NamedDataset(config.dataset.name, build_choice(registry, "dataset", config.dataset, "dataset"))
    if config.curriculum:
        stages = [
            Stage(
                NamedDataset(s.dataset.name, build_choice(registry, "dataset", s.dataset, f"curriculum[{i}].dataset")),
                s.iterations,
            )
            for i, s in enumerate(config.curriculum)
        ]
    else:
        stages = [Stage(main, config.training.num_iterations)]
    return RunComponents(
        setup=setup,
        runner_for=debate_runner_factory(grader),
        make_policy=sampling_policy_factory(setup),
        reward=reward,
        reward_name=config.reward.name,
        grader=grader,
        grader_name=config.grader.name,
        stages=stages,
        eval_dataset=main,
        write_transcript=save_transcript,
        renderer_for=build_choice(registry, "renderer", config.debate.renderer, "debate.renderer"),
        tokenizer=tokenizer,
        solution_template=config.warmstart.solution_template,
    )


def read_every_split(components: RunComponents, config: RunConfig) -> None:
    """Read every split the run will read, before its first step (``debate train``): a missing
    test split or an empty one fails the run then, not after its first trained step. The problems
    are kept for the run (``NamedDataset`` reads each split once).

    Raises:
        DebateError: the first split that cannot be read, named by its dataset.
    """
    from debate_core.errors import ConfigError
    from debate_core.training.run_needs import evaluation_scheduled

    warmstart = config.warmstart.enabled and config.warmstart.steps > 0
    for index, stage in enumerate(components.stages):
        if stage.iterations > 0 or (index == 0 and warmstart):
            stage.dataset.problems("train")
    if evaluation_scheduled(config):
        split = config.evaluation.split
        if not components.eval_dataset.problems(split):
            raise ConfigError(
                f"evaluation.split: dataset '{components.eval_dataset.name}' has no '{split}' problems to evaluate on; "
                "set evaluation.split to a split it has, or evaluation.num_problems = 0"
            )
