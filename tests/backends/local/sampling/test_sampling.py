"""The sampler against the ``SamplingParams`` definitions: stops (strings, token ids, EOS,
none), ``max_tokens``, temperature, top-k, top-p, seeds, ``num_samples``, logprobs, and the
snapshot property of sampling clients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tinker import types

from debate_core.backends.local.sampling.client import LocalSamplingClient
from debate_core.backends.local.sampling.stops import StopSpec
from debate_core.backends.local.training_client import LocalTrainingClient
from tests.backends.local.conftest import datum, encode, sample_text_prompt


def _sample(client: LocalSamplingClient, prompt: list[int], n: int = 1, **params: object) -> types.SampleResponse:
    return client.sample(types.ModelInput.from_ints(prompt), n, types.SamplingParams(**params)).result()


@pytest.fixture
def sampler(trainer: LocalTrainingClient) -> LocalSamplingClient:
    return trainer.save_weights_and_get_sampling_client().result()


def test_without_stops_generation_runs_to_max_tokens(sampler: LocalSamplingClient) -> None:
    prompt = sample_text_prompt(sampler)
    response = _sample(sampler, prompt, max_tokens=17, temperature=1.0, stop=[], seed=1)
    (sequence,) = response.sequences
    assert len(sequence.tokens) == 17 and sequence.stop_reason == "length"
    assert sequence.logprobs is not None and len(sequence.logprobs) == 17


def test_a_stop_token_ends_the_sequence_and_stays_in_it(sampler: LocalSamplingClient) -> None:
    prompt = sample_text_prompt(sampler)
    # A seeded draw repeats token for token, so a stop can be placed on a known token.
    free = _sample(sampler, prompt, max_tokens=30, temperature=1.0, seed=21, stop=[]).sequences[0].tokens
    stop_at = next(i for i in range(3, len(free)) if free[i] not in free[:i])
    stopped = _sample(sampler, prompt, max_tokens=30, temperature=1.0, seed=21, stop=[free[stop_at]]).sequences[0]
    assert stopped.tokens == free[: stop_at + 1]
    assert stopped.stop_reason == "stop"


def test_a_stop_string_ends_at_the_token_that_completes_it(sampler: LocalSamplingClient) -> None:
    tokenizer = sampler.get_tokenizer()
    prompt = sample_text_prompt(sampler)
    free = _sample(sampler, prompt, max_tokens=40, temperature=1.0, seed=22, stop=[]).sequences[0].tokens
    text = tokenizer.decode(free)
    stop = text[len(text) // 2 : len(text) // 2 + 3]
    # By definition: the first prefix of tokens whose decoded text contains the stop string.
    expected = next(k for k in range(1, len(free) + 1) if stop in tokenizer.decode(free[:k]))
    params = {"max_tokens": 40, "temperature": 1.0, "seed": 22, "stop": [stop, "never-there"]}
    stopped = _sample(sampler, prompt, **params).sequences[0]
    assert stopped.tokens == free[:expected]
    assert stopped.stop_reason == "stop"


def test_default_stop_is_the_end_of_sequence_token(trainer: LocalTrainingClient) -> None:
    tokenizer = trainer.get_tokenizer()
    text = [*encode(trainer, "Say done."), tokenizer.eos_token_id]
    for _ in range(60):
        trainer.forward_backward([datum(text)], "cross_entropy")
        trainer.optim_step(types.AdamParams(learning_rate=2e-2))
    sampler = trainer.save_weights_and_get_sampling_client().result()
    prompt = encode(trainer, "Say")
    default = _sample(sampler, prompt, max_tokens=20, temperature=0.0).sequences[0]
    assert default.stop_reason == "stop" and default.tokens[-1] == tokenizer.eos_token_id
    assert default.tokens == text[len(prompt) :]
    ignored = _sample(sampler, prompt, max_tokens=20, temperature=0.0, stop=[]).sequences[0]
    assert ignored.stop_reason == "length" and len(ignored.tokens) == 20


def test_seeds_reproduce_and_num_samples_differ(sampler: LocalSamplingClient) -> None:
    prompt = sample_text_prompt(sampler)
    a = _sample(sampler, prompt, 3, max_tokens=12, temperature=1.0, seed=5, stop=[])
    b = _sample(sampler, prompt, 3, max_tokens=12, temperature=1.0, seed=5, stop=[])
    assert [s.tokens for s in a.sequences] == [s.tokens for s in b.sequences]
    assert len({tuple(s.tokens) for s in a.sequences}) == 3
    assert len({s.sequence_id for s in a.sequences + b.sequences}) == 6
    other = _sample(sampler, prompt, 1, max_tokens=12, temperature=1.0, seed=6, stop=[])
    assert other.sequences[0].tokens != a.sequences[0].tokens


def test_top_k_one_and_tiny_top_p_are_greedy(sampler: LocalSamplingClient) -> None:
    prompt = sample_text_prompt(sampler)
    greedy = _sample(sampler, prompt, max_tokens=10, temperature=0.0, stop=[]).sequences[0].tokens
    top_k = _sample(sampler, prompt, max_tokens=10, temperature=1.5, top_k=1, seed=2, stop=[]).sequences[0]
    top_p = _sample(sampler, prompt, max_tokens=10, temperature=1.5, top_p=1e-6, seed=3, stop=[]).sequences[0]
    assert top_k.tokens == greedy and top_p.tokens == greedy
    # One token left: the sampling distribution is a point mass, logprob 0.
    assert top_k.logprobs is not None and max(abs(x) for x in top_k.logprobs) < 1e-5


def test_logprobs_are_those_of_the_sampling_distribution(trainer: LocalTrainingClient) -> None:
    sampler = trainer.save_weights_and_get_sampling_client().result()
    prompt = sample_text_prompt(sampler)
    for temperature in (1.0, 0.5):
        sequence = _sample(sampler, prompt, max_tokens=8, temperature=temperature, seed=9, stop=[]).sequences[0]
        full = torch.tensor([prompt + sequence.tokens], device=trainer.device)
        with torch.no_grad():
            logits = trainer.module(input_ids=full).logits[0, len(prompt) - 1 : -1].float().cpu()
        expected = torch.log_softmax(logits / temperature, dim=-1).gather(1, torch.tensor(sequence.tokens)[:, None])
        np.testing.assert_allclose(sequence.logprobs, expected[:, 0].numpy(), atol=2e-4)


def test_sampling_follows_the_distribution(sampler: LocalSamplingClient) -> None:
    prompt = sample_text_prompt(sampler)
    draws = _sample(sampler, prompt, 400, max_tokens=1, temperature=1.0, seed=11, stop=[]).sequences
    logprobs = {s.tokens[0]: s.logprobs[0] for s in draws if s.logprobs is not None}
    top = max(logprobs, key=lambda t: logprobs[t])
    frequency = sum(s.tokens[0] == top for s in draws) / len(draws)
    p = math.exp(logprobs[top])
    assert abs(frequency - p) < 4 * math.sqrt(p * (1 - p) / len(draws)) + 1e-3


def test_prompt_logprobs_match_training_logprobs(trainer: LocalTrainingClient) -> None:
    sampler = trainer.save_weights_and_get_sampling_client().result()
    tokens = encode(trainer, "The answer is \\boxed{42}.")
    from_sampler = sampler.compute_logprobs(types.ModelInput.from_ints(tokens)).result()
    from_trainer = trainer.forward([datum(tokens)], "cross_entropy").result().loss_fn_outputs[0]["logprobs"]
    assert from_sampler[0] is None
    np.testing.assert_allclose(from_sampler[1:], from_trainer.tolist(), atol=1e-4)
    last = sampler.compute_logprobs(types.ModelInput.from_ints(tokens), prompt_logprobs_last_n=2).result()
    assert all(x is None for x in last[:-2]) and last[-2:] == pytest.approx(from_sampler[-2:], abs=1e-6)


def test_a_sampling_client_is_a_snapshot(trainer: LocalTrainingClient) -> None:
    before = trainer.save_weights_and_get_sampling_client().result()
    prompt = sample_text_prompt(before)
    first = _sample(before, prompt, 2, max_tokens=12, temperature=1.0, seed=4, stop=[])
    target = encode(trainer, "User: Question: <solution>1</solution>")
    for _ in range(5):
        trainer.forward_backward([datum(target)], "cross_entropy")
        trainer.optim_step(types.AdamParams(learning_rate=5e-2))
    again = _sample(before, prompt, 2, max_tokens=12, temperature=1.0, seed=4, stop=[])
    after = _sample(
        trainer.save_weights_and_get_sampling_client().result(),
        prompt,
        2,
        max_tokens=12,
        temperature=1.0,
        seed=4,
        stop=[],
    )
    assert [s.tokens for s in again.sequences] == [s.tokens for s in first.sequences]
    np.testing.assert_allclose(again.sequences[0].logprobs, first.sequences[0].logprobs, atol=1e-5)
    assert [s.logprobs for s in after.sequences] != [s.logprobs for s in first.sequences]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"temperature": -1.0}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"max_tokens": 0}, "max_tokens"),
    ],
)
def test_bad_sampling_params_fail_the_request(
    sampler: LocalSamplingClient, params: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _sample(sampler, sample_text_prompt(sampler), **params)


def test_mixed_stops_are_refused() -> None:
    # The SDK's SamplingParams already refuses a mix; a constructed one still fails clearly.
    mixed = types.SamplingParams.model_construct(stop=["a", 3])
    with pytest.raises(ValueError, match="only strings or only token ids"):
        StopSpec.from_param(mixed.stop, None)


def test_prompts_outside_the_model_fail_the_request(sampler: LocalSamplingClient) -> None:
    with pytest.raises(ValueError, match="outside the vocabulary"):
        _sample(sampler, [1, 10**6], max_tokens=2)
    with pytest.raises(ValueError, match="reads at most"):
        _sample(sampler, [1] * 5000, max_tokens=2)
    with pytest.raises(ValueError, match="does not support topk_sample_logprobs"):
        sampler.sample(types.ModelInput.from_ints([1, 2]), 1, types.SamplingParams(), topk_sample_logprobs=2).result()
