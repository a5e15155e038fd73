"""The built-in losses of ``forward_backward``, defined as the Tinker service defines them.

For one datum with target logprobs ``lp`` (under the model being trained), sampler logprobs
``q = loss_fn_inputs["logprobs"]``, advantages ``A`` and ratio ``r = exp(lp - q)``, summed
over the datum's tokens (not averaged):

- ``cross_entropy``:       ``-sum(lp * weights)`` (weights default to 1)
- ``importance_sampling``: ``-sum(r * A)``
- ``ppo``:                 ``-sum(min(r * A, clip(r, low, high) * A))``, low/high default 0.8/1.2
- ``cispo``:               ``-sum(sg(clip(r, low, high)) * lp * A)``, low/high default 0/4

``low`` and ``high`` are ``loss_fn_config["clip_low_threshold"]`` and ``["clip_high_threshold"]``.
The batch loss is the sum over datums, reported as ``loss:sum``.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

SUPPORTED_LOSSES = ("cross_entropy", "importance_sampling", "ppo", "cispo")

_REQUIRED_INPUTS: Mapping[str, tuple[str, ...]] = {
    "cross_entropy": ("target_tokens",),
    "importance_sampling": ("target_tokens", "logprobs", "advantages"),
    "ppo": ("target_tokens", "logprobs", "advantages"),
    "cispo": ("target_tokens", "logprobs", "advantages"),
}
_OPTIONAL_INPUTS: Mapping[str, tuple[str, ...]] = {"cross_entropy": ("weights",)}
_CLIP_DEFAULTS: Mapping[str, tuple[float, float]] = {"ppo": (0.8, 1.2), "cispo": (0.0, 4.0)}


def check_loss(loss_fn: str, loss_fn_config: Mapping[str, float | str] | None) -> tuple[float, float]:
    """Validate the loss name and its config; returns the (low, high) clip thresholds."""
    if loss_fn not in SUPPORTED_LOSSES:
        raise ValueError(
            f"loss_fn {loss_fn!r} is not supported by the local backend; use one of {', '.join(SUPPORTED_LOSSES)}"
        )
    config = dict(loss_fn_config or {})
    low, high = _CLIP_DEFAULTS.get(loss_fn, (0.0, 0.0))
    allowed = {"clip_low_threshold", "clip_high_threshold"} if loss_fn in _CLIP_DEFAULTS else set()
    unknown = sorted(set(config) - allowed)
    if unknown:
        accepted = ", ".join(sorted(allowed)) or "none"
        raise ValueError(f"loss_fn_config for {loss_fn!r} has unknown keys {unknown}; accepted: {accepted}")
    try:
        low = float(config.get("clip_low_threshold", low))
        high = float(config.get("clip_high_threshold", high))
    except (TypeError, ValueError):
        raise ValueError(f"loss_fn_config clip thresholds must be numbers, got {config}") from None
    if loss_fn in _CLIP_DEFAULTS and not low <= high:
        raise ValueError(f"loss_fn_config: clip_low_threshold {low} is above clip_high_threshold {high}")
    return low, high


def required_inputs(loss_fn: str) -> tuple[str, ...]:
    return _REQUIRED_INPUTS[loss_fn]


def accepted_inputs(loss_fn: str) -> tuple[str, ...]:
    return _REQUIRED_INPUTS[loss_fn] + _OPTIONAL_INPUTS.get(loss_fn, ())


def datum_loss(
    loss_fn: str,
    logprobs: torch.Tensor,
    inputs: Mapping[str, torch.Tensor],
    clip: tuple[float, float],
) -> torch.Tensor:
    """The summed loss of one datum; ``logprobs`` carries the gradient."""
    if loss_fn == "cross_entropy":
        weights = inputs.get("weights")
        return -(logprobs * weights).sum() if weights is not None else -logprobs.sum()
    advantages = inputs["advantages"]
    ratio = torch.exp(logprobs - inputs["logprobs"])
    if loss_fn == "importance_sampling":
        return -(ratio * advantages).sum()
    low, high = clip
    if loss_fn == "ppo":
        return -torch.minimum(ratio * advantages, ratio.clamp(low, high) * advantages).sum()
    if loss_fn == "cispo":
        return -(ratio.clamp(low, high).detach() * logprobs * advantages).sum()
    raise ValueError(f"loss_fn {loss_fn!r} is not supported by the local backend")


def gradient_positions(loss_fn: str, inputs: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """Positions whose loss term has a non-zero coefficient (the others get no gradient)."""
    if loss_fn == "cross_entropy":
        weights = inputs.get("weights")
        return weights != 0 if weights is not None else torch.ones_like(inputs["target_tokens"], dtype=torch.bool)
    return inputs["advantages"] != 0
