"""Gradient accumulation across ``forward_backward`` calls, AdamW with Tinker's ``AdamParams``
meaning (betas, eps, decoupled weight decay, global-norm clipping), and submission order."""

from __future__ import annotations

import asyncio
import copy

import pytest
import torch
from tinker import types

from debate_core.backends.local.training_client import LocalTrainingClient

from .conftest import assert_same_gradients, datum, encode, gradients


def _two_datums(trainer: LocalTrainingClient) -> tuple[types.Datum, types.Datum]:
    return datum(encode(trainer, "Agent 0 > Agent 2")), datum(encode(trainer, "The answer is \\boxed{42}."))


def test_gradients_accumulate_until_optim_step(trainer: LocalTrainingClient) -> None:
    first, second = _two_datums(trainer)
    together = trainer.forward_backward([first, second], "cross_entropy").result()
    both = gradients(trainer)
    a = trainer.forward_backward([first], "cross_entropy").result()
    b = trainer.forward_backward([second], "cross_entropy").result()
    assert a.metrics["loss:sum"] + b.metrics["loss:sum"] == pytest.approx(together.metrics["loss:sum"], rel=1e-5)
    assert_same_gradients(both, gradients(trainer))


def test_optim_step_is_adamw_with_the_given_params_and_clears_gradients(trainer: LocalTrainingClient) -> None:
    first, second = _two_datums(trainer)
    params = types.AdamParams(learning_rate=1e-2, beta1=0.8, beta2=0.9, eps=1e-6, weight_decay=0.1)
    reference = copy.deepcopy(trainer.module)
    optimizer = torch.optim.AdamW(
        reference.parameters(), lr=params.learning_rate, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1
    )
    for _ in range(2):
        trainer.forward_backward([first, second], "cross_entropy").result()
        for mine, theirs in zip(trainer.module.parameters(), reference.parameters(), strict=True):
            theirs.grad = mine.grad.detach().clone()
        optimizer.step()
        optimizer.zero_grad()
        response = trainer.optim_step(params).result()
        assert response.metrics is not None and response.metrics["learning_rate:mean"] == params.learning_rate
    for mine, theirs in zip(trainer.module.parameters(), reference.parameters(), strict=True):
        assert torch.allclose(mine, theirs, atol=1e-6)
        assert mine.grad is None


def test_grad_clip_norm_scales_the_gradient_to_the_limit(trainer: LocalTrainingClient) -> None:
    first, _ = _two_datums(trainer)
    trainer.forward_backward([first], "cross_entropy").result()
    grads = [p.grad.detach().clone() for p in trainer.module.parameters()]
    norm = float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])))
    limit = norm / 10
    reference = copy.deepcopy(trainer.module)
    # A large eps makes Adam's first step depend on the gradient's size, so clipping shows.
    optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-1, betas=(0.9, 0.95), eps=1.0, weight_decay=0.0)
    unclipped = copy.deepcopy(reference)
    for parameter, grad in zip(reference.parameters(), grads, strict=True):
        parameter.grad = grad * (limit / norm)
    optimizer.step()
    params = types.AdamParams(learning_rate=1e-1, eps=1.0, grad_clip_norm=limit)
    response = trainer.optim_step(params).result()
    assert response.metrics is not None and response.metrics["grad_norm:mean"] == pytest.approx(norm, rel=1e-4)
    moved = 0.0
    for mine, theirs, start in zip(
        trainer.module.parameters(), reference.parameters(), unclipped.parameters(), strict=True
    ):
        assert torch.allclose(mine, theirs, atol=1e-7)
        moved = max(moved, float((mine.detach() - start.detach()).abs().max()))
    assert moved > 0


def test_operations_run_in_submission_order(trainer: LocalTrainingClient) -> None:
    first, _ = _two_datums(trainer)
    before = trainer.forward([first], "cross_entropy").result().metrics["loss:sum"]
    # Submit everything before waiting for anything: the pipelining the trainer relies on.
    backward = trainer.forward_backward([first], "cross_entropy")
    step = trainer.optim_step(types.AdamParams(learning_rate=1e-2))
    after = trainer.forward([first], "cross_entropy")
    assert backward.result().metrics["loss:sum"] == pytest.approx(before, rel=1e-6)
    step.result()
    assert after.result().metrics["loss:sum"] < before


def test_futures_are_awaitable(trainer: LocalTrainingClient) -> None:
    first, _ = _two_datums(trainer)

    async def run() -> tuple[types.ForwardBackwardOutput, types.OptimStepResponse]:
        backward = trainer.forward_backward([first], "cross_entropy")
        step = trainer.optim_step(types.AdamParams(learning_rate=1e-3))
        return await backward, await step

    output, step = asyncio.run(run())
    assert output.metrics["loss:sum"] > 0
    assert step.metrics is not None and step.metrics["step:max"] == 1
