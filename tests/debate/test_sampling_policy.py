"""``SamplingClientPolicy`` over clients with the Tinker SDK's surface."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

import pytest
from tinker import types

from debate_core.debate.rendering import RoleColonRenderer
from debate_core.debate.sampling_policy import SamplingClientPolicy, resolve_future
from debate_core.records import StopCondition
from debate_core.testing.tokenizer import ByteTokenizer

TOK = ByteTokenizer()


def sampled(text: str, logprobs: bool = True) -> types.SampleResponse:
    tokens = TOK.encode(text)
    sequence = types.SampledSequence(
        stop_reason="stop",
        sequence_id="s",
        _tokens_list=tokens,
        _logprobs_list=[-0.25] * len(tokens) if logprobs else None,
    )
    return types.SampleResponse(sequences=[sequence])


class AwaitableFuture:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Any:
        yield from asyncio.sleep(0).__await__()
        return self.value


class BlockingFuture:
    """Only ``result()``, which blocks: must not block the event loop."""

    def __init__(self, value: Any, release: threading.Event) -> None:
        self.value = value
        self.release = release

    def result(self, timeout: float | None = None) -> Any:
        assert self.release.wait(60)  # a hang limit: the test releases it at once
        return self.value


class Client:
    def __init__(self, make_future: Any) -> None:
        self.make_future = make_future
        self.calls: list[dict[str, Any]] = []

    def get_tokenizer(self) -> ByteTokenizer:
        return TOK

    def sample(self, prompt: types.ModelInput, num_samples: int, sampling_params: types.SamplingParams) -> Any:
        self.calls.append({"prompt": prompt, "num_samples": num_samples, "params": sampling_params})
        return self.make_future(sampled(" <solution>1</solution>"))


def run_policy(client: Client, stop: StopCondition) -> Any:
    policy = SamplingClientPolicy(client, RoleColonRenderer(TOK))
    return asyncio.run(policy.sample([1, 2, 3], stop=stop, temperature=0.7, max_tokens=33, seed=9))


def test_builds_the_sdk_request_and_reads_the_response() -> None:
    client = Client(AwaitableFuture)
    action = run_policy(client, StopCondition(strings=("</consensus_reason>",)))
    (call,) = client.calls
    assert call["prompt"].to_ints() == [1, 2, 3] and call["num_samples"] == 1
    params = call["params"]
    assert (params.max_tokens, params.seed, params.temperature, params.stop) == (33, 9, 0.7, ["</consensus_reason>"])
    assert action.text == " <solution>1</solution>" and action.tokens == tuple(TOK.encode(action.text))
    assert action.logprobs == (-0.25,) * len(action.tokens) and action.stop_reason == "stop"


def test_token_stops_pass_through_and_no_stop_keeps_eos() -> None:
    client = Client(AwaitableFuture)
    run_policy(client, StopCondition(token_ids=(256,)))
    run_policy(client, StopCondition())
    assert client.calls[0]["params"].stop == [256] and client.calls[1]["params"].stop is None


def test_concurrent_futures_and_blocking_results_do_not_block_the_loop() -> None:
    pool_future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    pool_future.set_result(sampled("x"))
    assert asyncio.run(resolve_future(pool_future)).sequences[0].tokens == TOK.encode("x")

    release = threading.Event()

    async def main() -> Any:
        client = Client(lambda value: BlockingFuture(value, release))
        policy = SamplingClientPolicy(client, TOK.decode)
        task = asyncio.create_task(
            policy.sample([1], stop=StopCondition(strings=("x",)), temperature=1.0, max_tokens=5, seed=None)
        )
        await asyncio.sleep(0.01)
        assert not task.done()  # the loop keeps running while result() blocks in a thread
        release.set()
        return await task

    assert asyncio.run(main()).text == " <solution>1</solution>"


def test_missing_logprobs_is_an_error() -> None:
    client = Client(lambda value: AwaitableFuture(sampled("x", logprobs=False)))
    with pytest.raises(RuntimeError, match="no logprobs"):
        run_policy(client, StopCondition())


def test_without_a_renderer_the_clients_tokenizer_decodes() -> None:
    policy = SamplingClientPolicy(Client(AwaitableFuture))
    action = asyncio.run(policy.sample([1], stop=StopCondition(), temperature=1.0, max_tokens=5, seed=None))
    assert action.text == " <solution>1</solution>"
