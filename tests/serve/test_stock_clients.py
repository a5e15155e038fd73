"""``debate serve`` for stock clients (docs/training.md#serving-a-policy), through the official
``openai`` client over loopback: streaming for both models (usage included when asked, comment
lines while a debate is played), ``n`` choices, the policy's own logprobs and sampled token ids,
and ``/v1/completions``."""

from __future__ import annotations

import asyncio
import math
import socket
from typing import Any

import pytest

from debate_core.serve import PolicyServer

openai = pytest.importorskip("openai", reason="the official client: pip install openai (tox installs it)")

pytestmark = pytest.mark.slow  # a model trained and served end to end

SYSTEM = {"role": "system", "content": "You are Agent 0."}
QUESTION = {"role": "user", "content": "What is 2+3?"}


def client(server: PolicyServer) -> Any:
    return openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=600)


@pytest.mark.parametrize("model", ["tiny", "debate"])
def test_the_client_streams_both_models_with_the_usage_last(server: PolicyServer, model: str) -> None:
    whole = client(server).chat.completions.create(model=model, messages=[QUESTION], max_tokens=6)
    chunks = list(
        client(server).chat.completions.create(
            model=model, messages=[QUESTION], max_tokens=6, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content  # the same seed: the same answer, streamed
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == whole.choices[0].finish_reason
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == whole.usage.total_tokens
    assert all(c.usage is None for c in chunks[:-1])


def test_a_long_debate_is_kept_alive_with_comment_lines(server: PolicyServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the debate is played the server sends ``: keep-alive`` lines, so a client whose read
    timeout is shorter than the debate still gets the answer (the debate made to last 1.5 s)."""
    from debate_core.serve import ServedPolicy

    played = ServedPolicy.answer

    async def slow(self: ServedPolicy, request: Any) -> Any:
        await asyncio.sleep(1.5)
        return await played(self, request)

    monkeypatch.setattr(ServedPolicy, "answer", slow)
    server.keep_alive_s = 0.1
    try:
        with socket.create_connection(("127.0.0.1", int(server.url.split(":")[2].split("/")[0])), timeout=600) as raw:
            body = b'{"model": "debate", "stream": true, "messages": [{"role": "user", "content": "What is 2+3?"}]}'
            raw.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            received = b""
            while chunk := raw.recv(65536):
                received += chunk
        head, _, events = received.partition(b"\r\n\r\n")
        assert b"200 OK" in head and b"text/event-stream" in head
        assert events.startswith(b": keep-alive\n\n") and events.endswith(b"data: [DONE]\n\n")
        assert b'"final_answer"' in events  # the debate's summary rides on the finishing chunk
        timed = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=0.5)
        stream = timed.chat.completions.create(model="debate", messages=[QUESTION], stream=True)
        assert [c for c in stream if c.choices]  # no read waited over 0.5 s, however long the debate
    finally:
        server.keep_alive_s = 5.0


def test_n_choices_are_sampled_with_consecutive_seeds(server: PolicyServer) -> None:
    three = client(server).chat.completions.create(
        model="tiny", messages=[QUESTION], n=3, temperature=2.0, seed=10, max_tokens=8
    )
    assert [c.index for c in three.choices] == [0, 1, 2]
    for index, choice in enumerate(three.choices):
        alone = client(server).chat.completions.create(
            model="tiny", messages=[QUESTION], temperature=2.0, seed=10 + index, max_tokens=8
        )
        assert choice.message.content == alone.choices[0].message.content
    assert len({c.message.content for c in three.choices}) > 1
    debates = client(server).chat.completions.create(model="debate", messages=[QUESTION], n=2, max_tokens=4)
    assert len(debates.choices) == 2


def test_logprobs_are_the_policy_s_own_and_token_ids_are_the_sampled_ones(server: PolicyServer) -> None:
    """The logprobs of a conversation's reply are the sampler's logprobs of its tokens: at
    temperature 0 every one is the model's log-probability of the greedy token (<= 0, finite),
    and their tokens are the sampled ``token_ids``."""
    answer = client(server).chat.completions.create(
        model="tiny",
        messages=[SYSTEM, QUESTION],
        max_tokens=8,
        temperature=1.0,
        seed=3,
        logprobs=True,
        extra_body={"return_token_ids": True},
    )
    choice = answer.choices[0]
    content = choice.logprobs.content
    token_ids = choice.model_extra["token_ids"]
    prompt_ids = answer.model_extra["prompt_token_ids"]
    assert len(content) == len(token_ids) == answer.usage.completion_tokens > 0
    assert len(prompt_ids) == answer.usage.prompt_tokens
    assert all(math.isfinite(t.logprob) and t.logprob <= 0 for t in content)
    assert any(t.logprob < 0 for t in content)  # temperature 1 over an untrained model: not all certain
    assert "".join(t.token for t in content).startswith(choice.message.content)
    plain = client(server).chat.completions.create(model="tiny", messages=[SYSTEM, QUESTION], max_tokens=8, seed=3)
    assert plain.choices[0].logprobs is None and "token_ids" not in (plain.choices[0].model_extra or {})


def test_text_completions_sample_the_prompt_as_it_is(server: PolicyServer) -> None:
    text = client(server).completions.create(model="tiny", prompt="2+3=", max_tokens=5, logprobs=1, seed=1)
    choice = text.choices[0]
    assert text.object == "text_completion" and isinstance(choice.text, str)
    assert 0 < text.usage.completion_tokens <= 5 and len(choice.logprobs.token_logprobs) == text.usage.completion_tokens
    ids = client(server).completions.create(
        model="tiny", prompt="2+3=", max_tokens=5, seed=1, extra_body={"return_token_ids": True}
    )
    again = client(server).completions.create(
        model="tiny", prompt=ids.model_extra["prompt_token_ids"], max_tokens=5, seed=1
    )
    assert again.choices[0].text == ids.choices[0].text == choice.text  # token ids in: the same sample
    with pytest.raises(openai.BadRequestError) as caught:
        client(server).completions.create(model="tiny", prompt=[5, 10**8], max_tokens=5)
    assert caught.value.body["param"] == "prompt" and "vocabulary" in caught.value.body["message"]
    streamed = client(server).completions.create(model="tiny", prompt="2+3=", max_tokens=5, seed=1, stream=True)
    assert "".join(c.choices[0].text for c in streamed if c.choices) == choice.text
