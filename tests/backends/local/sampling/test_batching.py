"""Batching of concurrent requests, joining a running batch, and prefix reuse: each must give
the tokens a request gets alone, while sharing forward passes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from tinker import types

from debate_core.backends.local.sampling.client import LocalSamplingClient
from debate_core.backends.local.sampling.engine import SamplerEngine
from debate_core.backends.local.service import LocalServiceClient
from debate_core.backends.local.training_client import LocalTrainingClient
from tests.backends.local.conftest import MICRO, encode

GATHER_S = 0.5
"""The wait for more requests of the engines that tests needing one batch submit to: requests
submitted less than this apart form one batch. The service's engine waits 2 ms, which the test's
thread can take between two submissions on a loaded machine, and the batch then splits."""


@contextmanager
def gathering(sampler: LocalSamplingClient) -> Iterator[tuple[LocalSamplingClient, SamplerEngine]]:
    """``sampler``'s weights behind an engine of their own that waits ``GATHER_S`` for more requests."""
    engine = SamplerEngine(gather_seconds=GATHER_S)
    try:
        yield LocalSamplingClient(sampler.snapshot, engine), engine
    finally:
        engine.close()
        engine.join(timeout=60)


def _params(seed: int, max_tokens: int = 10) -> types.SamplingParams:
    return types.SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=seed, stop=[])


def _prompts(client: LocalSamplingClient, count: int) -> list[list[int]]:
    return [encode(client, f"User: Question: What is {i} + {2 * i + 1}?\nAssistant:") for i in range(count)]


async def together(sampler: LocalSamplingClient, prompts: list[list[int]]) -> list[types.SampleResponse]:
    """One request per prompt, all submitted before any is awaited (seeded by position)."""
    futures = [sampler.sample(types.ModelInput.from_ints(p), 1, _params(i)) for i, p in enumerate(prompts)]
    return list(await asyncio.gather(*futures))


def test_concurrent_requests_share_one_batch(service: LocalServiceClient, trainer: LocalTrainingClient) -> None:
    sampler = trainer.save_weights_and_get_sampling_client().result()
    prompts = _prompts(sampler, 9)
    alone = [
        sampler.sample(types.ModelInput.from_ints(p), 1, _params(i)).result().sequences[0]
        for i, p in enumerate(prompts)
    ]

    with gathering(sampler) as (batching, engine):
        batched = [r.sequences[0] for r in asyncio.run(together(batching, prompts))]
    # Nine requests of ten tokens: one prefill and nine shared steps, not ninety.
    assert engine.steps <= 10
    assert engine.largest_batch == 9
    for one, many in zip(alone, batched, strict=True):
        assert one.tokens == many.tokens
        np.testing.assert_allclose(one.logprobs, many.logprobs, atol=1e-4)


def test_a_request_joins_a_running_batch(service: LocalServiceClient, trainer: LocalTrainingClient) -> None:
    sampler = trainer.save_weights_and_get_sampling_client().result()
    long_prompt, short_prompt = _prompts(sampler, 2)
    short_alone = sampler.sample(types.ModelInput.from_ints(short_prompt), 2, _params(3, 6)).result()
    steps = service.engine.steps
    long_run = sampler.sample(types.ModelInput.from_ints(long_prompt), 1, _params(1, 400))
    while service.engine.steps == steps:  # until the long request is running
        assert not long_run.future().done()
        time.sleep(0.001)
    short = sampler.sample(types.ModelInput.from_ints(short_prompt), 2, _params(3, 6)).result()
    assert not long_run.future().done()
    assert [s.tokens for s in short.sequences] == [s.tokens for s in short_alone.sequences]
    assert len(long_run.result().sequences[0].tokens) == 400
    assert service.engine.steps - steps < 400 + 6


def test_logprobs_of_another_snapshot_are_served_while_a_long_batch_runs(
    service: LocalServiceClient, trainer: LocalTrainingClient
) -> None:
    """The KL penalty's reference logprobs during debates sampled ahead (docs/training.md#asynchronous-rollouts):
    a one-token request of another snapshot runs between two steps of the running batch, and
    gives what it gives alone."""
    sampler = trainer.save_weights_and_get_sampling_client().result()
    reference = service.create_sampling_client(base_model=MICRO).result()
    long_prompt, scored = _prompts(sampler, 2)
    alone = reference.compute_logprobs(types.ModelInput.from_ints(scored)).result()
    steps = service.engine.steps
    long_run = sampler.sample(types.ModelInput.from_ints(long_prompt), 1, _params(1, 400))
    while service.engine.steps == steps:  # until the long request is running
        time.sleep(0.001)
    during = reference.compute_logprobs(types.ModelInput.from_ints(scored)).result()
    assert not long_run.future().done()
    assert during == alone
    assert len(long_run.result().sequences[0].tokens) == 400


def test_prompts_extending_an_earlier_turn_reuse_its_keys_and_values(trainer: LocalTrainingClient) -> None:
    sampler = trainer.save_weights_and_get_sampling_client().result()
    cache = sampler.snapshot.prefix_cache
    prompt = _prompts(sampler, 1)[0]
    first = sampler.sample(types.ModelInput.from_ints(prompt), 1, _params(5, 12)).result().sequences[0]
    follow_up = prompt + first.tokens + encode(sampler, "\nUser: Round 2.\nAssistant:")
    hits = cache.hit_tokens
    reused = sampler.sample(types.ModelInput.from_ints(follow_up), 1, _params(6, 12)).result().sequences[0]
    # Everything but the last sampled token had been run through the model.
    assert cache.hit_tokens - hits == len(prompt) + len(first.tokens) - 1
    cache.clear()
    fresh = sampler.sample(types.ModelInput.from_ints(follow_up), 1, _params(6, 12)).result().sequences[0]
    assert reused.tokens == fresh.tokens
    np.testing.assert_allclose(reused.logprobs, fresh.logprobs, atol=1e-4)


def test_prompts_of_one_batch_sharing_a_prefix_compute_it_once(trainer: LocalTrainingClient) -> None:
    sampler = trainer.save_weights_and_get_sampling_client().result()
    cache = sampler.snapshot.prefix_cache
    system = encode(sampler, "System: You are one of several agents. Answer with care, step by step, and check.\n" * 2)
    assert len(system) >= 40
    prompts = [system + p for p in _prompts(sampler, 4)]
    cache.clear()
    cache.computed_tokens = 0
    with gathering(sampler) as (batching, _):
        shared = [r.sequences[0] for r in asyncio.run(together(batching, prompts))]
    own = sum(len(p) for p in prompts) - 4 * len(system)
    # the common prefix (the system text and the start of the question) once, then each row's own part
    assert cache.computed_tokens <= len(system) + own
    alone = []
    for i, p in enumerate(prompts):
        cache.clear()
        alone.append(sampler.sample(types.ModelInput.from_ints(p), 1, _params(i)).result().sequences[0])
    for one, many in zip(alone, shared, strict=True):
        assert one.tokens == many.tokens
        np.testing.assert_allclose(one.logprobs, many.logprobs, atol=1e-4)


def test_a_shared_prefix_is_run_first_only_when_it_narrows_the_prefill(trainer: LocalTrainingClient) -> None:
    """A prefill pads its rows to the longest part left to compute: when a prompt that shares
    nothing is as long as the others, running their shared prefix first saves no position and
    costs a pass, so every row is computed from its start."""
    sampler = trainer.save_weights_and_get_sampling_client().result()
    cache = sampler.snapshot.prefix_cache
    system = encode(sampler, "System: You are one of several agents. Answer with care, step by step, and check.\n" * 2)
    sharing = [system + p for p in _prompts(sampler, 3)]
    lone = encode(sampler, "Note: a different opening, as long as the rest of the batch. " * 8)[: len(sharing[0])]
    prompts = [*sharing, lone]
    cache.clear()
    cache.computed_tokens = 0
    with gathering(sampler) as (batching, _):
        asyncio.run(together(batching, prompts))
    assert cache.computed_tokens == sum(len(p) for p in prompts)


def test_the_prefill_width_rule_counts_padded_positions() -> None:
    from debate_core.backends.local.sampling.fast_decoder import prefill_width_saved

    prompts = [[1] * 100, [1] * 90 + [2] * 10, [3] * 100]
    # rows 0 and 1 share 90 tokens, row 2 shares nothing: 3 rows x 100 wide either way, plus the prefix
    assert not prefill_width_saved(prompts, [0, 0, 0], [90, 90, 0], [[1] * 90])
    # without the lone row the prefill narrows from 100 to 10 positions a row
    assert prefill_width_saved(prompts[:2], [0, 0], [90, 90], [[1] * 90])
    # what the cache already holds counts: rows starting at 95 leave nothing for the prefix to save
    assert not prefill_width_saved(prompts[:2], [95, 95], [95, 95], [[1] * 90])
