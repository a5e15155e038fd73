"""The policy ``debate serve`` answers with (docs/training.md#serving-a-policy): one sample of the
policy for its own model name, a test-time debate's answer for the model ``debate``.

A request of one user message is a question: the policy answers it in the prompt evaluation's
direct answers are sampled in (the debate's blind first round, agent 0: persona, output contract,
instructions), and the reply is the solution it wrote. Any other conversation (a system message,
earlier turns) is rendered as it is, for clients that bring their own format (a judge).

Both go through the code ``debate run`` uses: the run file's backend, debate components,
evaluation temperature and seed, sampling through a fresh retrying sampler per request (so one
request's failure never refuses the next).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence, Sized
from typing import TYPE_CHECKING

import attrs

from debate_core.config import RunConfig
from debate_core.debate.final_answer import final_answer
from debate_core.debate.running import first_turn_prompt
from debate_core.debate.sampling_policy import SamplingClientPolicy
from debate_core.debate.setup import DebateSetup
from debate_core.errors import DebateError
from debate_core.records import DebateEpisode, Grader, Problem, Renderer, SampledAction, StopCondition
from debate_core.runtime.context_guard import ContextLengthError, check_prompt_fits
from debate_core.runtime.retries import RetryingSamplingClient
from debate_core.runtime.sampling_failures import raise_backend_failure
from debate_core.runtime.session import BackendSession
from debate_core.serve.wire import ApiError, ChatRequest, Completion, cut_at_stop
from debate_core.training.evaluation.policy_debate import PolicyDebate, open_policy_session

if TYPE_CHECKING:
    from debate_core.plugin import ComponentBuilder

DEBATE_MODEL = "debate"
"""The model name that answers with a test-time debate's final answer."""


@attrs.define
class ServedPolicy:
    """A checkpoint's policy, open for sampling, and the debate setup of its run file."""

    config: RunConfig
    session: BackendSession
    name: str
    """The model name of one plain sample (the run directory's name unless ``--name`` says otherwise)."""
    debate: PolicyDebate
    """The test-time debate the model ``debate`` answers with; its setup serves single samples too."""

    @property
    def setup(self) -> DebateSetup:
        return self.debate.setup

    @property
    def grader(self) -> Grader:
        return self.debate.grader

    @classmethod
    async def open(cls, config: RunConfig, registry: ComponentBuilder, checkpoint: str, name: str) -> ServedPolicy:
        """Open the checkpoint's weights for sampling on the run file's backend.

        Raises:
            DebateError: the checkpoint cannot be found or opened, or a component cannot be built.
        """
        session = await open_policy_session(config, registry, checkpoint, "CHECKPOINT")
        return cls(config, session, name, PolicyDebate.build(config, registry, session.tokenizer))

    @property
    def models(self) -> tuple[str, str]:
        """The model names served: ``debate`` and the policy's own."""
        return (DEBATE_MODEL, self.name)

    async def answer(self, request: ChatRequest) -> tuple[Completion, ...]:
        """The ``n`` answers to a checked request, choice ``i`` sampled with seed ``seed + i``
        (choice 0 is the answer of the same request with ``n = 1``).

        Raises:
            ApiError: logprobs asked of an answer that is not one sequence's text (400), the
                prompt does not fit the model's context (400), or sampling failed (500).
        """
        check_request(request)
        try:
            return tuple(await asyncio.gather(*(self._one(request, choice) for choice in range(request.n))))
        except ContextLengthError as exc:
            raise ApiError(400, str(exc), "messages", "context_length_exceeded") from None
        except DebateError as exc:
            raise ApiError(500, f"sampling failed: {exc}") from None

    async def _one(self, request: ChatRequest, choice: int) -> Completion:
        request = attrs.evolve(request, seed=self._seed(request) + choice)
        if request.model == DEBATE_MODEL:
            return await self._debate(request)
        if request.prompt is not None:
            return await self._raw(request)
        return await self._sample(request)

    def _seed(self, request: ChatRequest) -> int:
        """The request's seed, else the run's (``run.seed``): the same request gets the same answer."""
        return self.config.run.seed if request.seed is None else request.seed

    def _tokens(self, request: ChatRequest, prompt: Sequence[int], action: SampledAction) -> Completion:
        """What a completion says of one sampled sequence: its token ids, and each token's text and
        logprob when the request asked for them."""
        decode = self.session.tokenizer.decode
        logprobs = None
        if request.logprobs:
            logprobs = tuple((decode([t]), lp) for t, lp in zip(action.tokens, action.logprobs, strict=True))
        return Completion(
            "",
            "stop",
            len(prompt),
            len(action.tokens),
            prompt_token_ids=tuple(prompt),
            token_ids=action.tokens,
            token_logprobs=logprobs,
        )

    async def _raw(self, request: ChatRequest) -> Completion:
        """``/v1/completions``: the prompt sampled as it is (text encoded without special tokens, or
        token ids), stopped by the request's ``stop`` strings and the model's end of sequence."""
        prompt = request.prompt
        tokenizer = self.session.tokenizer
        tokens = list(prompt) if isinstance(prompt, tuple) else tokenizer.encode(str(prompt), add_special_tokens=False)
        size = len(tokenizer) if isinstance(tokenizer, Sized) else None
        if size is not None and any(t >= size for t in tokens):
            raise ApiError(400, f"'prompt' holds token ids outside the vocabulary [0, {size})", "prompt")
        max_tokens = request.max_tokens or self.config.debate.max_tokens
        check_prompt_fits(len(tokens), max_tokens, self.session.context_length)
        sampler = self.session.sampler()
        stop = StopCondition(strings=request.stop)
        action = await _sampled(
            sampler, self.setup.renderer, tokens, stop, self._temperature(request), max_tokens, self._seed(request)
        )
        text, stopped = cut_at_stop(action.text, request.stop)
        finish = "length" if action.stop_reason == "length" and not stopped else "stop"
        return attrs.evolve(self._tokens(request, tokens, action), text=text, finish_reason=finish)

    def _temperature(self, request: ChatRequest) -> float:
        """The request's temperature, else the evaluation's, else the debate's (as ``debate run``)."""
        if request.temperature is not None:
            return request.temperature
        override = self.setup.temperature_override
        return self.setup.temperature if override is None else override

    async def _sample(self, request: ChatRequest) -> Completion:
        """One sample of the policy: a lone question answered as evaluation's direct answers are,
        any other conversation rendered as it is."""
        if len(request.messages) == 1 and request.messages[0].role == "user":
            return await self._direct(request)
        renderer = self.setup.renderer
        prompt = renderer.build_prompt(request.messages)
        max_tokens = request.max_tokens or self.config.debate.max_tokens
        check_prompt_fits(len(prompt), max_tokens, self.session.context_length)
        temperature = self._temperature(request)
        stop = renderer.stop_condition()
        if stop.strings:  # string stops take the request's too; token-id stops cannot mix with strings
            stop = StopCondition(strings=tuple(dict.fromkeys([*stop.strings, *request.stop])))
        sampler = self.session.sampler()
        action = await _sampled(sampler, renderer, prompt, stop, temperature, max_tokens, self._seed(request))
        text, stopped = cut_at_stop(action.text, [*request.stop, *stop.strings])
        finish = "length" if action.stop_reason == "length" and not stopped else "stop"
        return attrs.evolve(self._tokens(request, prompt, action), text=text, finish_reason=finish)

    async def _direct(self, request: ChatRequest) -> Completion:
        """One answer to the question in the prompt evaluation's direct answers use: the reply is
        the response's solution (the whole response when it broke the output contract), cut at the
        request's first ``stop`` string, with the response and the answer the grader reads in the
        ``direct`` object."""
        setup = self.setup if request.max_tokens is None else attrs.evolve(self.setup, max_tokens=request.max_tokens)
        first = first_turn_prompt(Problem(id="request", question=request.question), setup)
        check_prompt_fits(len(first.tokens), setup.max_tokens, self.session.context_length)
        temperature = request.temperature if request.temperature is not None else first.temperature
        sampler = self.session.sampler()
        action = await _sampled(
            sampler, setup.renderer, first.tokens, first.stop, temperature, setup.max_tokens, self._seed(request)
        )
        text = action.text
        response = setup.parser.parse(text)
        reply, _ = cut_at_stop(response.solution if response.ok else text, list(request.stop))
        summary = {
            "response": text,
            "format_ok": response.ok,
            "answer": self.grader.grade(response.solution, "").extracted if response.ok else None,
        }
        finish = "length" if action.stop_reason == "length" else "stop"
        sampled = self._tokens(attrs.evolve(request, logprobs=False), first.tokens, action)
        return attrs.evolve(sampled, text=reply, finish_reason=finish, direct=summary)

    async def _debate(self, request: ChatRequest) -> Completion:
        """A test-time debate of the last user message; its final answer is the reply."""
        debate = self.debate.with_limits(request.max_tokens, request.temperature)
        sampler = self.session.sampler()
        problem = Problem(id="request", question=request.question)
        episode = await debate.play(problem, sampler, seed=self._seed(request))
        context = [f for f in sampler.failures if isinstance(f, ContextLengthError)]
        if context:
            raise context[0]
        raise_backend_failure(sampler, [episode], self.config)
        return debate_completion(episode, debate.grader, debate.setup)

    async def close(self, status: str = "success") -> None:
        """Close the backend session."""
        await self.session.close(status)


def check_request(request: ChatRequest) -> None:
    """What a request may ask of its model, checked before anything is sampled: logprobs are the
    sampled tokens' own, so only a reply that is one sequence's text has them.

    Raises:
        ApiError: 400, naming ``logprobs``.
    """
    if not request.logprobs:
        return
    if request.model == DEBATE_MODEL:
        raise ApiError(
            400,
            "logprobs are not available from the model 'debate': its answer is read from many agents' "
            "turns, not sampled as one sequence; ask the policy's own model",
            "logprobs",
        )
    if request.prompt is None and len(request.messages) == 1 and request.messages[0].role == "user":
        raise ApiError(
            400,
            "logprobs are not available for a lone question: its reply is the solution cut out of the "
            "response sampled in the debate's first-turn prompt; send a system message too (the "
            "conversation is then sampled as it is) or use /v1/completions",
            "logprobs",
        )


async def _sampled(
    sampler: RetryingSamplingClient,
    renderer: Renderer,
    prompt: Sequence[int],
    stop: StopCondition,
    temperature: float,
    max_tokens: int,
    seed: int,
) -> SampledAction:
    """One sample; a failure that outlasted the sampler's retries is raised as that failure."""
    policy = SamplingClientPolicy(sampler, renderer)
    try:
        return await policy.sample(prompt, stop=stop, temperature=temperature, max_tokens=max_tokens, seed=seed)
    except Exception:
        if sampler.failures:
            raise sampler.failures[0] from None
        raise


def debate_completion(episode: DebateEpisode, grader: Grader, setup: DebateSetup) -> Completion:
    """A debate as an answer: its answer under the setup's rule (``debate.final_answer``) as the
    text, every turn's tokens as the usage, and what the debate did in the ``debate`` object."""
    record = episode.record
    answer = final_answer(record, grader, rule=setup.answer_rule)
    transitions = [t for trajectory in episode.trajectories for t in trajectory.transitions]
    summary = {
        "final_answer": answer.answer,
        "answer_rule": answer.rule,
        "answer_rule_fallback": answer.fallback,
        "solution": answer.solution,
        "support": answer.support,
        "num_agents": record.num_agents,
        "rounds_played": record.rounds_played,
        "max_rounds": record.max_rounds,
        "consensus_reached": record.consensus_reached,
        "aborted": record.aborted,
        "abort_reason": record.abort_reason,
    }
    return Completion(
        text=answer.answer or "",
        finish_reason="stop",
        prompt_tokens=sum(len(t.observation) for t in transitions),
        completion_tokens=sum(len(t.action) for t in transitions),
        debate=summary,
    )
