"""What the ``tinker`` backend makes of a Tinker-compatible server's answers
(``backends/tinker_replies.py``): ``loss:sum`` recomputed by each loss's definition equals the
local backend's loss, ``compute_logprobs`` one value per prompt token, and the line for a reply
without ``sample_sequence_ids``, raised whether the reply is read or awaited."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Generator

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tinker import types

from debate_core.backends.local.losses import check_loss, datum_loss
from debate_core.backends.tinker_replies import (
    SEQUENCE_IDS_ASSERTION,
    Mapped,
    ServerReplyError,
    completed_forward_backward,
    completed_logprobs,
    missing_reply_field,
    summed_loss,
)

SERVER = "http://127.0.0.1:8000"
LOSSES = ("cross_entropy", "importance_sampling", "ppo", "cispo")


def _datum(rng: np.random.Generator, length: int) -> tuple[types.Datum, np.ndarray]:
    inputs = {
        "target_tokens": rng.integers(0, 50, length).tolist(),
        "weights": rng.integers(0, 2, length).astype(float).tolist(),
        "logprobs": (-rng.random(length) * 3).tolist(),
        "advantages": rng.normal(size=length).tolist(),
    }
    datum = types.Datum(model_input=types.ModelInput.from_ints(list(range(length))), loss_fn_inputs=inputs)
    return datum, -rng.random(length) * 3


@settings(max_examples=40, deadline=None)
@given(
    loss=st.sampled_from(LOSSES),
    seed=st.integers(0, 2**32 - 1),
    lengths=st.lists(st.integers(1, 12), min_size=1, max_size=4),
    clip=st.sampled_from([None, {"clip_low_threshold": 0.7, "clip_high_threshold": 1.3}]),
)
def test_summed_loss_is_the_local_backends_loss(loss: str, seed: int, lengths: list[int], clip: dict | None) -> None:
    rng = np.random.default_rng(seed)
    made = [_datum(rng, n) for n in lengths]
    config = clip if loss in ("ppo", "cispo") else None
    outputs = [{"logprobs": types.TensorData.from_numpy(lp.astype(np.float32))} for _, lp in made]
    expected = 0.0
    thresholds = check_loss(loss, config)
    for (datum, _), output in zip(made, outputs, strict=True):
        tensors = {
            k: torch.tensor(v.data, dtype=torch.float64)
            for k, v in datum.loss_fn_inputs.items()
            if loss != "cross_entropy" or k in ("target_tokens", "weights")
        }
        trainer = torch.tensor(output["logprobs"].data, dtype=torch.float64)
        expected += float(datum_loss(loss, trainer, tensors, thresholds))
    assert summed_loss(loss, [d for d, _ in made], outputs, config) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_a_reported_loss_is_kept_and_a_missing_one_computed() -> None:
    datum, lp = _datum(np.random.default_rng(0), 5)
    output = types.ForwardBackwardOutput(
        loss_fn_output_type="ArrayRecord",
        loss_fn_outputs=[{"logprobs": types.TensorData.from_numpy(lp.astype(np.float32))}],
        metrics={"loss:sum": 1.5},
    )
    assert completed_forward_backward(output, "cross_entropy", [datum], None, SERVER) is output
    bare = dataclasses.replace(output, metrics={})
    completed = completed_forward_backward(bare, "cross_entropy", [datum], None, SERVER)
    weights = np.asarray(datum.loss_fn_inputs["weights"].data)
    assert completed.metrics["loss:sum"] == pytest.approx(float(-(lp.astype(np.float32) * weights).sum()), rel=1e-6)


def test_logprobs_of_the_wrong_shape_are_one_line() -> None:
    datum, lp = _datum(np.random.default_rng(1), 5)
    output = types.ForwardBackwardOutput(
        loss_fn_output_type="ArrayRecord",
        loss_fn_outputs=[{"logprobs": types.TensorData.from_numpy(lp[:3].astype(np.float32))}],
        metrics={},
    )
    with pytest.raises(ServerReplyError) as raised:
        completed_forward_backward(output, "cross_entropy", [datum], None, SERVER)
    assert str(raised.value) == f"the server at {SERVER}: forward_backward returned 3 logprobs for 5 target tokens"


def test_compute_logprobs_gets_one_value_per_prompt_token() -> None:
    assert completed_logprobs([None, -1.0, -2.0], 3, SERVER) == [None, -1.0, -2.0]
    assert completed_logprobs([-1.0, -2.0], 3, SERVER) == [None, -1.0, -2.0]  # the first left out
    with pytest.raises(ServerReplyError) as raised:
        completed_logprobs([-1.0], 3, SERVER)
    assert str(raised.value) == (
        f"the server at {SERVER} returned 1 logprobs from compute_logprobs for a prompt of 3 tokens (expected 3)"
    )


def test_a_reply_without_sequence_ids_is_named() -> None:
    explained = missing_reply_field(AssertionError(SEQUENCE_IDS_ASSERTION), SERVER)
    assert explained is not None
    assert str(explained).startswith(f"the server at {SERVER} answers sample without sample_sequence_ids")
    assert missing_reply_field(AssertionError("another"), SERVER) is None
    assert missing_reply_field(ValueError(SEQUENCE_IDS_ASSERTION), SERVER) is None


class _Failing:
    """An SDK future whose reply raised ``error``, read by ``result()`` or awaited."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def result(self, timeout: float | None = None) -> object:
        raise self.error

    def __await__(self) -> Generator[object, None, object]:
        raise self.error
        yield  # a generator: awaiting it raises


@pytest.mark.parametrize("message", [SEQUENCE_IDS_ASSERTION, "another"])
def test_a_mapped_reply_raises_its_error_as_explained_or_as_it_was(message: str) -> None:
    def explain(error: BaseException) -> BaseException | None:
        return missing_reply_field(error, SERVER)

    def awaited(mapped: Mapped[object, object]) -> object:
        async def wait() -> object:
            return await mapped

        return asyncio.run(wait())

    for read in (lambda m: m.result(), awaited):
        original = AssertionError(message)
        with pytest.raises(Exception) as raised:
            read(Mapped(_Failing(original), lambda value: value, explain))
        if message == SEQUENCE_IDS_ASSERTION:
            assert isinstance(raised.value, ServerReplyError) and raised.value.__cause__ is original
        else:
            assert raised.value is original
