"""The backend calls of one policy update (``kernel.policy_update.update_policy``): ``forward_backward``
then ``optim_step`` per chunk, pipelined.

The batch's Datums are split into ``num_substeps`` chunks. The next chunk's
``forward_backward`` and ``optim_step`` are submitted before the current chunk's results are
awaited; a training client runs requests in submission order, so the objective is unchanged
and the backend never waits for the trainer (docs/training.md#the-update).

It trains every Datum it is given and submits nothing without Datums. Leaving out the Datums
whose advantages are all zero (they carry no policy gradient, and an ``optim_step`` on a zero
gradient still moves the weights through Adam's momentum) is the RL iteration's choice
(``training.rl.iteration.train_batch``, under ``training.skip_zero_advantage_updates``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import attrs
from tinker import types

from debate_core.backends.contract import APIFutureLike, TrainingClientLike
from debate_core.errors import DebateError
from debate_core.runtime.retries import BackendError
from debate_core.training.kernel.datum import AssembledDatum


class NonFiniteUpdateError(DebateError):
    """An update's loss or gradient norm was not finite: the weights it produced are not trusted,
    so the run stops before any checkpoint of them is written (the last good one stays)."""


@attrs.frozen
class UpdateResult:
    """What the backend returned for each trained chunk, in order."""

    chunks: tuple[tuple[AssembledDatum, ...], ...]
    outputs: tuple[types.ForwardBackwardOutput, ...]
    steps: tuple[types.OptimStepResponse, ...] = ()
    """What each ``optim_step`` returned, with its metrics where the backend reports any."""

    def non_finite(self) -> list[str]:
        """Every loss or gradient-norm metric of the update that is not a finite number."""
        found: list[str] = []
        for index, output in enumerate(self.outputs):
            for name, value in output.metrics.items():
                if name.startswith("loss") and not _finite(value):
                    found.append(f"forward_backward {index + 1}: {name} = {value}")
        for index, step in enumerate(self.steps):
            for name, value in (step.metrics or {}).items():
                if name.startswith("grad_norm") and not _finite(value):
                    found.append(f"optim_step {index + 1}: {name} = {value}")
        return found

    @property
    def updated(self) -> bool:
        return bool(self.outputs)

    @property
    def datums(self) -> list[AssembledDatum]:
        return [d for chunk in self.chunks for d in chunk]


def _finite(value: float) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def split_chunks(datums: Sequence[AssembledDatum], num_chunks: int) -> list[list[AssembledDatum]]:
    """``num_chunks`` consecutive chunks of near-equal size (empty ones left out)."""
    if num_chunks < 1:
        raise ValueError(f"num_substeps must be >= 1, got {num_chunks}")
    size, extra = divmod(len(datums), num_chunks)
    chunks: list[list[AssembledDatum]] = []
    start = 0
    for index in range(num_chunks):
        end = start + size + (1 if index < extra else 0)
        if end > start:
            chunks.append(list(datums[start:end]))
        start = end
    return chunks


async def train_chunks(
    client: TrainingClientLike,
    datums: Sequence[AssembledDatum],
    *,
    loss_fn: types.LossFnType,
    loss_fn_config: Mapping[str, float] | None,
    adam_params: types.AdamParams,
    num_substeps: int,
    backend_name: str = "backend",
) -> UpdateResult:
    """Train on ``datums`` in ``num_substeps`` optimizer steps, submitting ahead of awaiting.

    Raises:
        BackendError: a ``forward_backward`` or ``optim_step`` failed (not retried: a retry could
            apply a gradient twice; the run resumes from its last checkpoint).
    """
    chunks = split_chunks(datums, num_substeps)
    config = dict(loss_fn_config) if loss_fn_config else None

    def submit(
        chunk: list[AssembledDatum],
    ) -> tuple[APIFutureLike[types.ForwardBackwardOutput], APIFutureLike[types.OptimStepResponse]]:
        forward = client.forward_backward([d.datum for d in chunk], loss_fn, config)
        step = client.optim_step(adam_params)
        return forward, step

    outputs: list[types.ForwardBackwardOutput] = []
    steps: list[types.OptimStepResponse] = []
    if not chunks:
        return UpdateResult((), ())
    try:
        pending = submit(chunks[0])
        for index in range(len(chunks)):
            following = submit(chunks[index + 1]) if index + 1 < len(chunks) else None
            forward, step = pending
            outputs.append(await forward)
            steps.append(await step)
            if following is not None:
                pending = following
    except BackendError:
        raise
    except Exception as exc:
        raise BackendError(
            f"backend '{backend_name}': the update failed in forward_backward/optim_step: {type(exc).__name__}: {exc}"
        ) from exc
    return UpdateResult(tuple(tuple(c) for c in chunks), tuple(outputs), tuple(steps))
