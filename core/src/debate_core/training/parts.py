"""The components a run resolves from the registries, built once and named for error messages.

Training, evaluation, warm-start and preflight all get their debates from a
:class:`DebateRunner` (by default ``protocol.episode.run_debate`` over the configured
coordinator, parser, personas, history policy and renderer), their policies from
``make_policy`` (by default ``protocol.sampling_policy.SamplingClientPolicy``), and their
rewards, graders and datasets from the plugins the run file names. A plugin that raises is
reported as a ``ComponentFailure`` naming it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs
from tinker import types

from debate_core.backends.contract import SamplingClientLike
from debate_core.backends.session import BackendError, RetryPolicy, with_retries
from debate_core.errors import ComponentFailure, DebateError, PluginError
from debate_core.protocol.interfaces import AgentPolicy, DebateEpisode
from debate_core.protocol.records import DebateRecord
from debate_core.protocol.tasks import Dataset, Grade, Grader, Problem
from debate_core.rewards.contract import RewardFunction, RewardResult


class DebateRunner(Protocol):
    """Runs one debate of ``problem`` with one policy per agent."""

    def __call__(
        self, problem: Problem, policies: Sequence[AgentPolicy], *, seed: int, debate_id: str
    ) -> Awaitable[DebateEpisode]: ...


TranscriptWriter = Callable[[DebateRecord, Path], object]


class _Builds(Protocol):
    def build(self, kind: str, name: str, options: Any = None, path: str = "") -> Any: ...


@attrs.define
class NamedDataset:
    """A dataset plugin with its name; problem lists are read once per split."""

    name: str
    dataset: Dataset
    _cache: dict[str, list[Problem]] = attrs.field(factory=dict)

    def problems(self, split: str) -> list[Problem]:
        """The problems of ``split``; a raising plugin becomes a ``ComponentFailure`` naming it."""
        if split not in self._cache:
            try:
                self._cache[split] = list(self.dataset.problems(split))
            except DebateError:
                raise
            except Exception as exc:
                raise ComponentFailure(
                    f"dataset plugin '{self.name}' raised {type(exc).__name__} reading split '{split}': {exc}"
                ) from exc
        return self._cache[split]


@attrs.frozen
class NamedGrader:
    """A grader plugin with its name: a raising grader becomes a ``ComponentFailure`` naming it."""

    name: str
    grader: Grader

    def grade(self, solution: str, answer: str) -> Grade:
        try:
            return self.grader.grade(solution, answer)
        except DebateError:
            raise
        except Exception as exc:
            raise ComponentFailure(
                f"grader plugin '{self.name}' raised {type(exc).__name__}: {exc} (answer {answer!r})"
            ) from exc


@attrs.frozen
class Stage:
    """A curriculum stage: a dataset and the number of RL iterations spent on it."""

    dataset: NamedDataset
    iterations: int


@attrs.define
class RunParts:
    """Everything a run uses besides the backend session."""

    config: Any
    runner_for: Callable[[Any], DebateRunner]
    """Builds a debate runner for a run config (evaluation builds variants, e.g. one agent)."""
    make_policy: Callable[[SamplingClientLike], AgentPolicy]
    reward: RewardFunction
    reward_name: str
    grader: Grader | None
    grader_name: str
    stages: list[Stage]
    eval_dataset: NamedDataset
    write_transcript: TranscriptWriter
    _runners: dict[int, tuple[Any, DebateRunner]] = attrs.field(factory=dict)

    def runner(self, config: Any | None = None) -> DebateRunner:
        """The runner for ``config`` (the run's own by default), built once per config object.

        The cache holds the config itself beside its runner: an ``id`` alone would be reused by a
        later config once a temporary one (evaluation's, say) has been freed.
        """
        config = self.config if config is None else config
        cached = self._runners.get(id(config))
        if cached is None or cached[0] is not config:
            cached = (config, self.runner_for(config))
            self._runners[id(config)] = cached
        return cached[1]

    def score(self, record: DebateRecord, problem: Problem) -> RewardResult:
        """The reward plugin's result; a raising plugin becomes a ``ComponentFailure`` naming it and the debate."""
        try:
            return self.reward(record)
        except DebateError:
            raise
        except Exception as exc:
            raise ComponentFailure(
                f"reward plugin '{self.reward_name}' raised {type(exc).__name__}: {exc} "
                f"on debate '{record.debate_id}' (problem '{problem.id}')"
            ) from exc

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


class RetryingFuture:
    """Wraps a sampling call so that awaiting it retries transient backend errors."""

    def __init__(
        self, what: str, submit: Callable[[], Any], policy: RetryPolicy, backend: str, failures: list[DebateError]
    ) -> None:
        self._what = what
        self._submit = submit
        self._policy = policy
        self._backend = backend
        self._failures = failures

    async def _run(self) -> Any:
        async def attempt() -> Any:
            from debate_core.protocol.sampling_policy import resolve_future

            return await resolve_future(self._submit())

        try:
            return await with_retries(self._what, attempt, self._policy, self._backend)
        except BackendError as exc:
            self._failures.append(exc)
            raise

    def result(self, timeout: float | None = None) -> Any:
        return self._submit().result(timeout)

    def __await__(self) -> Generator[Any, Any, Any]:
        return self._run().__await__()


class RetryingSamplingClient:
    """A sampling client whose ``sample`` and ``compute_logprobs`` retry transient errors, and whose
    ``sample`` refuses a prompt plus ``max_tokens`` beyond ``context_length`` before sending it.

    A debate turns a policy's exception into a failed turn; ``failures`` keeps the backend
    errors that outlasted their retries and the context overflows (``training.context_guard``),
    so the trainer can stop instead of training on them. Clients that share one ``failures``
    list (a policy and its evaluation opponent) stop together.
    """

    def __init__(
        self,
        client: SamplingClientLike,
        policy: RetryPolicy,
        backend: str,
        *,
        context_length: int | None = None,
        failures: list[DebateError] | None = None,
    ) -> None:
        self.client = client
        self._policy = policy
        self._backend = backend
        self.context_length = context_length
        self.failures: list[DebateError] = failures if failures is not None else []

    def sample(
        self,
        prompt: types.ModelInput,
        num_samples: int,
        sampling_params: types.SamplingParams,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
    ) -> RetryingFuture:
        self._guard_context(prompt.length, sampling_params.max_tokens)
        return RetryingFuture(
            "sample",
            lambda: self.client.sample(
                prompt, num_samples, sampling_params, include_prompt_logprobs, topk_prompt_logprobs
            ),
            self._policy,
            self._backend,
            self.failures,
        )

    def sibling(self, client: SamplingClientLike) -> RetryingSamplingClient:
        """``client`` with this client's retries and context guard, sharing its ``failures``."""
        return RetryingSamplingClient(
            client, self._policy, self._backend, context_length=self.context_length, failures=self.failures
        )

    def _guard_context(self, prompt_tokens: int, max_tokens: int | None) -> None:
        from debate_core.training.context_guard import ContextGuardStop, ContextLengthError, check_context

        if any(isinstance(f, ContextLengthError) for f in self.failures):
            raise ContextGuardStop("sampling stopped: another prompt of this batch did not fit the model's context")
        try:
            check_context(prompt_tokens, max_tokens, self.context_length)
        except ContextLengthError as exc:
            self.failures.append(exc)
            raise

    def compute_logprobs(self, prompt: types.ModelInput) -> RetryingFuture:
        return RetryingFuture(
            "compute_logprobs",
            lambda: self.client.compute_logprobs(prompt),
            self._policy,
            self._backend,
            self.failures,
        )

    def get_tokenizer(self) -> Any:
        return self.client.get_tokenizer()


def _build(registry: _Builds, kind: str, choice: Any, path: str) -> Any:
    try:
        return registry.build(kind, choice.name, choice.options, f"{path}.options")
    except DebateError:
        raise
    except Exception as exc:
        raise PluginError(
            f"{kind} plugin '{choice.name}' ({path}) could not be built: {type(exc).__name__}: {exc}"
        ) from exc


def protocol_runner_factory(registry: _Builds, tokenizer: Any, grader: Grader | None) -> Callable[[Any], DebateRunner]:
    """Runners over ``protocol.episode.run_debate`` with the configured protocol components."""

    def runner_for(config: Any) -> DebateRunner:
        from debate_core.protocol.episode import build_debate_setup, run_debate

        setup = build_debate_setup(config, registry, tokenizer)

        async def run(problem: Problem, policies: Sequence[AgentPolicy], *, seed: int, debate_id: str) -> DebateEpisode:
            return await run_debate(problem, setup, list(policies), seed=seed, debate_id=debate_id, grader=grader)

        return run

    return runner_for


def default_policy_factory(
    config: Any, registry: _Builds, tokenizer: Any
) -> Callable[[SamplingClientLike], AgentPolicy]:
    """Policies over a sampling client (``protocol.sampling_policy.SamplingClientPolicy``), decoding
    with the configured renderer so that section spans line up with the tokens."""
    renderer_factory = _build(registry, "renderer", config.debate.renderer, "debate.renderer")
    renderer = renderer_factory(tokenizer)

    def make(sampling_client: SamplingClientLike) -> AgentPolicy:
        from debate_core.protocol.sampling_policy import SamplingClientPolicy

        policy: AgentPolicy = SamplingClientPolicy(sampling_client, renderer)
        return policy

    return make


def default_transcript_writer() -> TranscriptWriter:
    """``protocol.transcripts.save_transcript``."""
    from debate_core.protocol.transcripts import save_transcript

    writer: TranscriptWriter = save_transcript
    return writer


def build_run_parts(config: Any, registry: _Builds, tokenizer: Any) -> RunParts:
    """Build every component the run file names (the backend excepted)."""
    reward = _build(registry, "reward", config.reward, "reward")
    grader_name = config.grader.name
    grader = NamedGrader(grader_name, _build(registry, "grader", config.grader, "grader"))
    main = NamedDataset(config.dataset.name, _build(registry, "dataset", config.dataset, "dataset"))
    if config.curriculum:
        stages = [
            Stage(
                NamedDataset(s.dataset.name, _build(registry, "dataset", s.dataset, f"curriculum[{i}].dataset")),
                s.iterations,
            )
            for i, s in enumerate(config.curriculum)
        ]
    else:
        stages = [Stage(main, config.training.num_iterations)]
    return RunParts(
        config=config,
        runner_for=protocol_runner_factory(registry, tokenizer, grader),
        make_policy=default_policy_factory(config, registry, tokenizer),
        reward=reward,
        reward_name=config.reward.name,
        grader=grader,
        grader_name=grader_name,
        stages=stages,
        eval_dataset=main,
        write_transcript=default_transcript_writer(),
    )
