"""A reply from a chat endpoint as the debate's sampled action (``debate_core.hosting.turns``):
the endpoint's own tokens where it gave them, else the text encoded by the run's tokenizer with
the stop marker the endpoint cut off put back; the turn's request carries the prompt's messages
and sampling."""

from __future__ import annotations

import asyncio

from debate_core.hosting import ReplyPolicy, TurnReply, TurnRequest
from debate_core.records import Message, StopCondition, TurnView
from debate_core.testing.tokenizer import ByteTokenizer

MARKER = "</consensus_reason>"


def policy(replies: list[TurnRequest], reply: TurnReply) -> ReplyPolicy:
    async def answer(turn: TurnRequest) -> TurnReply:
        replies.append(turn)
        return reply

    return ReplyPolicy(answer, ByteTokenizer(), MARKER)


def test_the_endpoint_s_tokens_and_logprobs_are_the_action() -> None:
    tokenizer = ByteTokenizer()
    tokens = tuple(tokenizer.encode("<solution>5</solution>" + MARKER))
    reply = TurnReply("<solution>5</solution>", tokens, (-0.5,) * len(tokens), True)
    action = policy([], reply).action(reply)
    assert action.tokens == tokens and action.logprobs == (-0.5,) * len(tokens)
    assert action.text == "<solution>5</solution>" + MARKER  # decoded from the tokens, stop included


def test_a_text_reply_is_encoded_with_the_cut_stop_marker_put_back() -> None:
    reply_policy = policy([], TurnReply(""))
    stopped = reply_policy.action(TurnReply("<solution>5</solution>", stopped=True))
    assert stopped.text.endswith(MARKER) and stopped.logprobs == (0.0,) * len(stopped.tokens)
    assert ByteTokenizer().decode(list(stopped.tokens)) == stopped.text
    at_length = reply_policy.action(TurnReply("<solution>5", stopped=False))
    assert at_length.text == "<solution>5"  # ran out of tokens: nothing was cut
    mismatched = reply_policy.action(TurnReply("ab", token_ids=(97, 98), logprobs=(-1.0,)))
    assert mismatched.logprobs == (0.0, 0.0)  # logprobs that do not match the tokens are not kept


def test_a_turn_is_asked_with_its_messages_and_sampling() -> None:
    asked: list[TurnRequest] = []
    messages = (Message("system", "You are Agent 1."), Message("user", "What is 2+3?"))
    view = TurnView("What is 2+3?", 1, 3, 2, 2, (), False, messages)
    stop = StopCondition(strings=("\nUser:", MARKER))
    asyncio.run(
        policy(asked, TurnReply("x")).sample_with_view([1, 2], view, stop=stop, temperature=0.7, max_tokens=9, seed=11)
    )
    assert asked == [TurnRequest(1, 2, messages, 0.7, 9, 11, ("\nUser:", MARKER))]
