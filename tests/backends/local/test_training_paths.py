"""The training shortcuts change no number: shared prefixes, fused matrices and gradient-free
zero-coefficient positions give the logprobs, losses and gradients of the plain
``transformers`` forward."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
import torch

from debate_core.backends.local import fast_training
from debate_core.backends.local.prefix_groups import PrefixGroup, group_by_prefix
from debate_core.backends.local.service import LocalServiceClient
from debate_core.backends.local.training_client import LocalTrainingClient

from .conftest import MICRO, assert_same_gradients, datum, encode, gradients


def test_grouping_keeps_one_own_token_per_member() -> None:
    a = [*range(40), 1, 2]
    b = [*range(40), 3]
    c = list(range(40))
    d = [7] * 50
    groups = group_by_prefix([a, b, c, d], min_shared=32)
    by_members = {g.members: g.shared for g in groups}
    assert by_members == {(2, 0, 1): 39, (3,): 0}
    assert sorted(group_by_prefix([a, b], min_shared=41), key=lambda g: g.members) == [
        PrefixGroup(0, (0,)),
        PrefixGroup(0, (1,)),
    ]


def _data(trainer: LocalTrainingClient) -> list:  # type: ignore[type-arg]
    rng = np.random.default_rng(0)
    system = encode(trainer, "System: You are Agent 0, the Methodical Analyst, in a debate among 3 agents.")
    other = encode(trainer, "System: You are Agent 1, the Creative Problem-Solver, in a debate among 3 agents.")
    data = []
    for prefix, question in [
        (system, "7 + 5"),
        (system, "17 + 25"),
        (system, "9 * 3"),
        (other, "4 + 4"),
        (other, "1 + 8"),
    ]:
        tokens = prefix + encode(trainer, f"\nUser: What is {question}?\nAssistant: <solution>\\boxed{{1}}</solution>")
        n = len(tokens) - 1
        advantages = np.where(np.arange(n) > len(prefix), rng.normal(size=n), 0.0)
        data.append(datum(tokens, logprobs=-rng.uniform(0.5, 3.0, size=n), advantages=advantages))
    lone = encode(trainer, "Agent 2 > Agent 0")
    data.append(datum(lone, logprobs=-np.ones(len(lone) - 1), advantages=np.ones(len(lone) - 1)))
    return data


@pytest.mark.parametrize("loss_fn", ["importance_sampling", "cross_entropy"])
def test_shared_prefixes_give_the_same_losses_and_gradients(
    service: LocalServiceClient, trainer: LocalTrainingClient, loss_fn: str
) -> None:
    data = _data(trainer)
    if loss_fn == "cross_entropy":
        data = [datum([*d.model_input.to_ints(), d.loss_fn_inputs["target_tokens"].tolist()[-1]]) for d in data]
    settings = service.settings
    try:
        shared = trainer.forward_backward(data, loss_fn).result()
        shared_grads = gradients(trainer)
        service.settings = attrs.evolve(settings, share_training_prefixes=False)
        plain = trainer.forward_backward(data, loss_fn).result()
        plain_grads = gradients(trainer)
    finally:
        service.settings = settings
    assert shared.metrics["loss:sum"] == pytest.approx(plain.metrics["loss:sum"], rel=1e-5)
    for a, b in zip(shared.loss_fn_outputs, plain.loss_fn_outputs, strict=True):
        np.testing.assert_allclose(a["logprobs"].tolist(), b["logprobs"].tolist(), atol=1e-5)
    assert_same_gradients(shared_grads, plain_grads)


@pytest.mark.parametrize("trained", [0, 1, 2])
def test_a_shared_position_trained_by_any_member_gets_its_gradient(
    service: LocalServiceClient, trainer: LocalTrainingClient, trained: int
) -> None:
    # The logprobs of a group's shared positions are computed once for the group: a position inside
    # the shared prefix that only one member trains (whichever member it is) still needs its graph.
    rng = np.random.default_rng(1)
    system = encode(trainer, "System: You are Agent 0, the Methodical Analyst, in a debate among 3 agents. " * 3)
    data = []
    for index, question in enumerate(["7 + 5", "17 + 25", "9 * 3"]):
        tokens = system + encode(trainer, f"\nUser: What is {question}?\nAssistant: <solution>1</solution>")
        n = len(tokens) - 1
        advantages = np.where(np.arange(n) > len(system), rng.normal(size=n), 0.0)
        advantages[3] = 2.0 if index == trained else 0.0
        data.append(datum(tokens, logprobs=-rng.uniform(0.5, 3.0, size=n), advantages=advantages))
    groups = group_by_prefix([d.model_input.to_ints() for d in data], min_shared=32)
    assert [sorted(g.members) for g in groups] == [[0, 1, 2]] and groups[0].shared > 4
    settings = service.settings
    try:
        shared = trainer.forward_backward(data, "importance_sampling").result()
        shared_grads = gradients(trainer)
        service.settings = attrs.evolve(settings, share_training_prefixes=False)
        plain = trainer.forward_backward(data, "importance_sampling").result()
        plain_grads = gradients(trainer)
    finally:
        service.settings = settings
    assert shared.metrics["loss:sum"] == pytest.approx(plain.metrics["loss:sum"], rel=1e-5)
    assert_same_gradients(shared_grads, plain_grads)


def test_the_functional_forward_matches_transformers(
    monkeypatch: pytest.MonkeyPatch, trainer: LocalTrainingClient
) -> None:
    data = _data(trainer)
    fast = trainer.forward_backward(data, "importance_sampling").result()
    fast_grads = gradients(trainer)
    # Without the Llama-family shortcuts every datum goes through the model's own forward.
    monkeypatch.setattr(fast_training, "supports", lambda config: False)
    reference = trainer.forward_backward(data, "importance_sampling").result()
    assert fast.metrics["loss:sum"] == pytest.approx(reference.metrics["loss:sum"], rel=1e-5)
    for a, b in zip(fast.loss_fn_outputs, reference.loss_fn_outputs, strict=True):
        np.testing.assert_allclose(a["logprobs"].tolist(), b["logprobs"].tolist(), atol=1e-5)
    assert_same_gradients(fast_grads, gradients(trainer))


def test_a_small_token_budget_splits_the_batch_without_changing_it(
    service: LocalServiceClient, trainer: LocalTrainingClient
) -> None:
    data = _data(trainer)
    whole = trainer.forward_backward(data, "importance_sampling").result()
    whole_grads = gradients(trainer)
    settings = service.settings
    try:
        service.settings = attrs.evolve(settings, train_tokens_per_batch=20)
        split = trainer.forward_backward(data, "importance_sampling").result()
    finally:
        service.settings = settings
    assert split.metrics["loss:sum"] == pytest.approx(whole.metrics["loss:sum"], rel=1e-5)
    assert_same_gradients(whole_grads, gradients(trainer))
    assert torch.is_tensor(next(iter(whole_grads.values())))


def test_lora_trains_through_the_shared_prefix_forward_with_the_gradients_of_its_own_forward(
    monkeypatch: pytest.MonkeyPatch, service: LocalServiceClient
) -> None:
    lora = service.create_lora_training_client(MICRO, rank=4, seed=3).result()
    try:
        with torch.no_grad():  # adapters start at B = 0: make them non-zero, so every gradient is
            for name, parameter in lora.module.named_parameters():
                if "lora_B" in name:
                    parameter.normal_(0.0, 0.05)
        data = _data(lora)
        fast = lora.forward_backward(data, "importance_sampling").result()
        fast_grads = gradients(lora)
        assert fast_grads and all("lora_" in name for name in fast_grads)
        monkeypatch.setattr(fast_training, "supports", lambda config: False)
        reference = lora.forward_backward(data, "importance_sampling").result()
        assert fast.metrics["loss:sum"] == pytest.approx(reference.metrics["loss:sum"], rel=1e-5)
        for a, b in zip(fast.loss_fn_outputs, reference.loss_fn_outputs, strict=True):
            np.testing.assert_allclose(a["logprobs"].tolist(), b["logprobs"].tolist(), atol=1e-5)
        assert_same_gradients(fast_grads, gradients(lora))
    finally:
        lora.close()
