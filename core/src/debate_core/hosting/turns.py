"""One agent turn handed to a policy outside debate-core (a chat API, another framework's agent):
what it must be asked (``TurnRequest``), what it answered (``TurnReply``), and the agent policy
that asks it (``ReplyPolicy``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import attrs

from debate_core.records import Message, SampledAction, StopCondition, Tokenizer, TurnView


@attrs.frozen
class TurnRequest:
    """One turn as a chat request: the prompt's messages (rendered by the run's renderer they are
    the prompt ``debate run`` samples), and the turn's sampling: temperature (the persona's or the
    evaluation's), ``max_tokens``, seed (``turn_seed`` of the debate's seed) and stop strings (the
    renderer's with the output contract's marker; empty where the renderer stops on token ids).
    ``agent`` is the debate's agent, also for a seated turn whose messages name it by its seat
    (the ``runoff`` coordinator's, docs/protocol.md#the-runoff)."""

    agent: int
    round: int
    messages: tuple[Message, ...]
    temperature: float
    max_tokens: int
    seed: int
    stop: tuple[str, ...]


@attrs.frozen
class TurnReply:
    """What the policy answered: its text, and the sampled token ids and their logprobs where the
    endpoint returned them (``debate serve`` with ``return_token_ids``). ``stopped`` says the reply
    ended at a stop string the endpoint cut off (as OpenAI-compatible servers do)."""

    text: str
    token_ids: tuple[int, ...] | None = None
    logprobs: tuple[float, ...] | None = None
    stopped: bool = False


AnswerTurn = Callable[[TurnRequest], Awaitable[TurnReply]]
"""Answers one turn: a chat request to an endpoint, another framework's agent, a test's script."""


@attrs.frozen
class ReplyPolicy:
    """An agent policy whose turns are answered by ``answer`` from the prompt's messages: the
    reply becomes the sampled action, its tokens the endpoint's own where it gave them, else the
    text (with the stop marker the endpoint cut off put back) encoded by the run's tokenizer."""

    answer: AnswerTurn
    tokenizer: Tokenizer
    stop_marker: str

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        raise TypeError("a ReplyPolicy answers from the turn's messages: run_debate calls sample_with_view")

    async def sample_with_view(
        self,
        prompt: Sequence[int],
        view: TurnView,
        *,
        stop: StopCondition,
        temperature: float,
        max_tokens: int,
        seed: int | None,
    ) -> SampledAction:
        request = TurnRequest(
            agent=view.debate_agent,
            round=view.round,
            messages=view.messages,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=0 if seed is None else seed,
            stop=stop.strings,
        )
        reply = await self.answer(request)
        return self.action(reply)

    def action(self, reply: TurnReply) -> SampledAction:
        """The sampled action of a reply."""
        if reply.token_ids is not None:
            tokens = tuple(reply.token_ids)
            text = self.tokenizer.decode(list(tokens))
        else:
            cut = reply.stopped and not reply.text.endswith(self.stop_marker)
            text = reply.text + self.stop_marker if cut else reply.text
            tokens = tuple(self.tokenizer.encode(text, add_special_tokens=False))
        logprobs = reply.logprobs if reply.logprobs is not None and len(reply.logprobs) == len(tokens) else None
        return SampledAction(tokens, logprobs if logprobs is not None else (0.0,) * len(tokens), text)
