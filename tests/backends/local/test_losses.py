"""Each built-in loss against its definition (design notes, Tinker's loss docs):
values computed by hand from the model's logprobs, and gradients compared with
cross-entropy gradients whose weights are the hand-derived coefficients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from debate_core.backends.local.training_client import LocalTrainingClient

from .conftest import assert_same_gradients, datum, encode, gradients


def _tokens(trainer: LocalTrainingClient) -> list[int]:
    return encode(trainer, "Agent 0 > Agent 1 because 17 + 25 = 42")


def _logprobs(trainer: LocalTrainingClient, tokens: list[int]) -> np.ndarray:
    out = trainer.forward([datum(tokens)], "cross_entropy").result()
    return np.asarray(out.loss_fn_outputs[0]["logprobs"].tolist(), dtype=np.float64)


def test_cross_entropy_is_minus_weighted_sum_of_logprobs(trainer: LocalTrainingClient) -> None:
    tokens = _tokens(trainer)
    lp = _logprobs(trainer, tokens)
    weights = np.linspace(0.0, 2.0, len(lp))
    out = trainer.forward_backward([datum(tokens, weights=weights)], "cross_entropy").result()
    assert out.metrics["loss:sum"] == pytest.approx(-(lp * weights).sum(), rel=1e-5)
    returned = out.loss_fn_outputs[0]["logprobs"]
    assert returned.shape == [len(tokens) - 1]
    np.testing.assert_allclose(returned.tolist(), lp, rtol=1e-5)
    # Without weights every target counts once.
    plain = trainer.forward([datum(tokens)], "cross_entropy").result()
    assert plain.metrics["loss:sum"] == pytest.approx(-lp.sum(), rel=1e-5)


@pytest.mark.parametrize("loss_fn", ["cross_entropy", "importance_sampling", "ppo", "cispo"])
def test_returned_logprobs_are_the_log_softmax_of_the_models_logits_at_the_targets(
    trainer: LocalTrainingClient, loss_fn: str
) -> None:
    tokens = _tokens(trainer)
    n = len(tokens) - 1
    inputs = {} if loss_fn == "cross_entropy" else {"logprobs": np.full(n, -1.0), "advantages": np.ones(n)}
    out = trainer.forward_backward([datum(tokens, **inputs)], loss_fn).result()  # type: ignore[arg-type]
    with torch.no_grad():
        logits = trainer.module(input_ids=torch.tensor([tokens[:-1]], device=trainer.device)).logits[0].double().cpu()
    by_hand = torch.log_softmax(logits, dim=-1)[torch.arange(n), torch.tensor(tokens[1:])].numpy()
    returned = out.loss_fn_outputs[0]["logprobs"]
    assert returned.shape == [n]
    np.testing.assert_allclose(returned.tolist(), by_hand, atol=1e-5)
    if loss_fn == "cross_entropy":
        assert out.metrics["loss:sum"] == pytest.approx(-by_hand.sum(), rel=1e-5)
    elif loss_fn == "importance_sampling":  # q = -1, A = 1: -sum(exp(lp + 1))
        assert out.metrics["loss:sum"] == pytest.approx(-np.exp(by_hand + 1.0).sum(), rel=1e-5)


def test_losses_are_summed_over_datums_not_averaged(trainer: LocalTrainingClient) -> None:
    tokens = _tokens(trainer)
    one = trainer.forward([datum(tokens)], "cross_entropy").result().metrics["loss:sum"]
    three = trainer.forward([datum(tokens)] * 3, "cross_entropy").result().metrics["loss:sum"]
    assert three == pytest.approx(3 * one, rel=1e-5)


def test_importance_sampling_value_and_gradient(trainer: LocalTrainingClient) -> None:
    tokens = _tokens(trainer)
    lp = _logprobs(trainer, tokens)
    rng = np.random.default_rng(0)
    q = lp + rng.normal(0.0, 0.3, len(lp))
    advantages = rng.normal(0.0, 1.0, len(lp))
    out = trainer.forward_backward([datum(tokens, logprobs=q, advantages=advantages)], "importance_sampling").result()
    ratio = np.exp(lp - q)
    assert out.metrics["loss:sum"] == pytest.approx(-(ratio * advantages).sum(), rel=1e-4)
    is_grads = gradients(trainer)
    # d/dθ of -Σ r·A is -Σ r·A·∇lp: cross-entropy with weights r·A.
    trainer.forward_backward([datum(tokens, weights=ratio * advantages)], "cross_entropy").result()
    assert_same_gradients(is_grads, gradients(trainer))


def test_ppo_clips_the_ratio_in_the_direction_of_the_advantage(trainer: LocalTrainingClient) -> None:
    tokens = _tokens(trainer)
    lp = _logprobs(trainer, tokens)
    n = len(lp)
    q = lp - math.log(2.0)  # ratio 2, above the default upper threshold 1.2
    positive = np.full(n, 0.5)
    out = trainer.forward_backward([datum(tokens, logprobs=q, advantages=positive)], "ppo").result()
    assert out.metrics["loss:sum"] == pytest.approx(-(1.2 * positive).sum(), rel=1e-4)
    assert all(float(g.abs().max()) == 0.0 for g in gradients(trainer).values())
    negative = np.full(n, -0.5)  # min(2A, 1.2A) = 2A: unclipped, gradient of the plain ratio
    out = trainer.forward_backward([datum(tokens, logprobs=q, advantages=negative)], "ppo").result()
    assert out.metrics["loss:sum"] == pytest.approx(-(2.0 * negative).sum(), rel=1e-4)
    ppo_grads = gradients(trainer)
    trainer.forward_backward([datum(tokens, weights=2.0 * negative)], "cross_entropy").result()
    assert_same_gradients(ppo_grads, gradients(trainer))


def test_ppo_thresholds_come_from_loss_fn_config(trainer: LocalTrainingClient) -> None:
    tokens = _tokens(trainer)
    lp = _logprobs(trainer, tokens)
    q = lp - math.log(2.0)
    advantages = np.ones(len(lp))
    config = {"clip_low_threshold": 0.5, "clip_high_threshold": 1.5}
    out = trainer.forward([datum(tokens, logprobs=q, advantages=advantages)], "ppo", config).result()
    assert out.metrics["loss:sum"] == pytest.approx(-1.5 * len(lp), rel=1e-4)


@pytest.mark.parametrize(("ratio", "coefficient"), [(2.0, 2.0), (8.0, 4.0)])
def test_cispo_weights_logprobs_by_the_clipped_detached_ratio(
    trainer: LocalTrainingClient, ratio: float, coefficient: float
) -> None:
    tokens = _tokens(trainer)
    lp = _logprobs(trainer, tokens)
    q = lp - math.log(ratio)
    advantages = np.linspace(-1.0, 1.0, len(lp))
    out = trainer.forward_backward([datum(tokens, logprobs=q, advantages=advantages)], "cispo").result()
    assert out.metrics["loss:sum"] == pytest.approx(-(coefficient * lp * advantages).sum(), rel=1e-4)
    cispo_grads = gradients(trainer)
    trainer.forward_backward([datum(tokens, weights=coefficient * advantages)], "cross_entropy").result()
    assert_same_gradients(cispo_grads, gradients(trainer))


def test_custom_loss_sees_the_same_logprobs(trainer: LocalTrainingClient) -> None:
    tokens = _tokens(trainer)
    lp = _logprobs(trainer, tokens)

    def negative_sum(data, logprobs):  # type: ignore[no-untyped-def]
        loss = -sum(x.sum() for x in logprobs)
        return loss, {"custom/n:sum": float(len(logprobs))}

    out = trainer.forward_backward_custom([datum(tokens)], negative_sum).result()
    assert out.metrics["loss:sum"] == pytest.approx(-lp.sum(), rel=1e-5)
    custom_grads = gradients(trainer)
    trainer.forward_backward([datum(tokens)], "cross_entropy").result()
    assert_same_gradients(custom_grads, gradients(trainer))


@pytest.mark.parametrize(
    ("loss_fn", "config", "inputs", "message"),
    [
        ("dro", None, {}, "not supported by the local backend"),
        ("ppo", {"epsilon": 0.2}, {"logprobs": [0.0], "advantages": [1.0]}, "unknown keys"),
        ("importance_sampling", None, {"logprobs": [0.0]}, "needs loss_fn_inputs ['advantages']"),
        ("cross_entropy", None, {"mask": [1.0]}, "not inputs of 'cross_entropy'"),
        ("cross_entropy", None, {"weights": [1.0, 1.0]}, "shape [2]"),
    ],
)
def test_bad_requests_fail_with_a_clear_message(
    trainer: LocalTrainingClient,
    loss_fn: str,
    config: dict[str, float] | None,
    inputs: dict[str, list[float]],
    message: str,
) -> None:
    bad = datum([5, 6], **inputs)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        trainer.forward_backward([bad], loss_fn, config).result()  # type: ignore[arg-type]
