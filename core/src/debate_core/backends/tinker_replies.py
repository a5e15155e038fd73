"""What a Tinker-compatible server answers differently from the Tinker service, made whole or
named in one place (docs/own-gpus.md#what-the-backend-makes-of-a-servers-answers).

Measured against SkyRL 0.4.0's Tinker API with the SDK 0.38:

- ``forward_backward`` comes back without metrics: ``loss:sum`` is computed here from the
  logprobs the server did return, by the loss's definition (:func:`summed_loss`), so the
  warm-start's cross-entropy, the RL losses and the check for a non-finite loss see a number;
- ``compute_logprobs`` leaves out the first token's ``None``: one value short of the prompt is
  given its leading ``None``; any other length is an error naming the server;
- the ``asample`` reply lacks ``sample_sequence_ids``, which the SDK asserts: that becomes one
  line naming the server and the SDK (:func:`missing_reply_field`).

Each is said once per process in the log (``backend 'tinker': ...``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

import numpy as np

from debate_core.backends.contract import APIFutureLike
from debate_core.errors import DebateError

if TYPE_CHECKING:  # the SDK imports torch when it is installed: not at the CLI's start
    from tinker import types

logger = logging.getLogger("debate_core.backends.tinker_backend")

T = TypeVar("T")
U = TypeVar("U")

CLIP_DEFAULTS: Mapping[str, tuple[float, float]] = {"ppo": (0.8, 1.2), "cispo": (0.0, 4.0)}
"""The Tinker service's clip thresholds when ``loss_fn_config`` names none (docs/training.md)."""
SEQUENCE_IDS_ASSERTION = "asample promises always carry sample_sequence_ids"
"""The SDK 0.38's assertion on an ``asample`` reply without ``sample_sequence_ids``."""

_said: set[str] = set()
_said_lock = threading.Lock()


class ServerReplyError(DebateError):
    """A server's answer lacks what the backend needs: not retried (the server will answer the same)."""


def say_once(key: str, message: str) -> None:
    """Log ``message`` at WARNING the first time ``key`` is seen in this process."""
    with _said_lock:
        if key in _said:
            return
        _said.add(key)
    logger.warning("backend 'tinker': %s", message)


class Mapped(Generic[T, U]):
    """An SDK future whose value passes through ``then`` (awaited or with ``result()``), and whose
    error passes through ``explain``: the error it returns is raised instead (``None``: as it was)."""

    def __init__(
        self,
        future: APIFutureLike[T],
        then: Callable[[T], U],
        explain: Callable[[BaseException], BaseException | None] = lambda _: None,
    ) -> None:
        self._future = future
        self._then = then
        self._explain = explain

    def result(self, timeout: float | None = None) -> U:
        with self._explained():
            value: T = self._future.result(timeout)
        return self._then(value)

    async def _run(self) -> U:
        with self._explained():
            value: T = await self._future
        return self._then(value)

    @contextlib.contextmanager
    def _explained(self) -> Iterator[None]:
        """Re-raise what the reply raised as ``explain`` words it, or as it was."""
        try:
            yield
        except Exception as exc:
            explained = self._explain(exc)
            if explained is None:
                raise
            raise explained from exc

    def __await__(self) -> Generator[object, None, U]:
        return self._run().__await__()


def summed_loss(
    loss_fn: str,
    datums: Sequence[types.Datum],
    outputs: Sequence[types.LossFnOutput],
    config: Mapping[str, float] | None,
) -> float:
    """The batch's loss by its definition (docs/training.md, as the local backend computes it) from
    the trainer's logprobs ``outputs[d]["logprobs"]`` and each datum's ``loss_fn_inputs``: summed
    over tokens and datums, as the Tinker service reports ``loss:sum``.

    Raises:
        ServerReplyError: not one logprobs output per datum, or one of another length than its targets.
    """
    if len(outputs) != len(datums):
        raise ServerReplyError(f"forward_backward returned {len(outputs)} outputs for {len(datums)} datums")
    low, high = CLIP_DEFAULTS.get(loss_fn, (0.0, 0.0))
    low = float((config or {}).get("clip_low_threshold", low))
    high = float((config or {}).get("clip_high_threshold", high))
    total = 0.0
    for datum, output in zip(datums, outputs, strict=True):
        inputs = datum.loss_fn_inputs
        lp = np.asarray(output["logprobs"].data, dtype=np.float64).reshape(-1)
        targets = len(inputs["target_tokens"].data)
        if lp.shape[0] != targets:
            raise ServerReplyError(f"forward_backward returned {lp.shape[0]} logprobs for {targets} target tokens")
        if loss_fn == "cross_entropy":
            weights = inputs.get("weights")
            w = np.ones_like(lp) if weights is None else np.asarray(weights.data, dtype=np.float64).reshape(-1)
            total += float(-(lp * w).sum())
            continue
        q = np.asarray(inputs["logprobs"].data, dtype=np.float64).reshape(-1)
        a = np.asarray(inputs["advantages"].data, dtype=np.float64).reshape(-1)
        ratio = np.exp(lp - q)
        if loss_fn == "importance_sampling":
            total += float(-(ratio * a).sum())
        elif loss_fn == "ppo":
            total += float(-np.minimum(ratio * a, np.clip(ratio, low, high) * a).sum())
        elif loss_fn == "cispo":
            total += float(-(np.clip(ratio, low, high) * lp * a).sum())
        else:
            raise ServerReplyError(f"no definition of loss {loss_fn!r} to compute its loss:sum from")
    return total


def completed_forward_backward(
    output: types.ForwardBackwardOutput,
    loss_fn: str,
    datums: Sequence[types.Datum],
    config: Mapping[str, float] | None,
    server: str,
) -> types.ForwardBackwardOutput:
    """``output`` with ``loss:sum`` computed by :func:`summed_loss` when the server reported none."""
    metrics = dict(getattr(output, "metrics", None) or {})
    if "loss:sum" in metrics:
        return output
    say_once(
        "no-metrics",
        f"the server at {server} returns no forward_backward metrics; loss:sum is computed from the "
        "logprobs it returns",
    )
    try:
        metrics["loss:sum"] = summed_loss(loss_fn, datums, output.loss_fn_outputs, config)
    except ServerReplyError as exc:
        raise ServerReplyError(f"the server at {server}: {exc}") from None
    return dataclasses.replace(output, metrics=metrics)


def completed_logprobs(values: Sequence[float | None], prompt_length: int, server: str) -> list[float | None]:
    """``compute_logprobs``' answer with one value per prompt token, the first ``None``.

    Raises:
        ServerReplyError: neither one value per token nor one short (the first left out).
    """
    found = list(values)
    if len(found) == prompt_length:
        return found
    if len(found) == prompt_length - 1:
        say_once(
            "short-logprobs",
            f"the server at {server} leaves the first token out of compute_logprobs; it is given its None",
        )
        return [None, *found]
    raise ServerReplyError(
        f"the server at {server} returned {len(found)} logprobs from compute_logprobs "
        f"for a prompt of {prompt_length} tokens (expected {prompt_length})"
    )


def missing_reply_field(error: BaseException, server: str) -> ServerReplyError | None:
    """The line for an SDK assertion on a reply that lacks a field it needs, else ``None``."""
    if isinstance(error, AssertionError) and SEQUENCE_IDS_ASSERTION in str(error):
        from importlib.metadata import version

        return ServerReplyError(
            f"the server at {server} answers sample without sample_sequence_ids, which "
            f"the tinker SDK {version('tinker')} requires: the server speaks an older Tinker API "
            "(SkyRL 0.4.0 does; docs/own-gpus.md)"
        )
    return None
