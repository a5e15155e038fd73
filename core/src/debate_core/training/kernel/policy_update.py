"""The update of one step on the backend: Adam's settings, the watchdog, the check that the
update is finite, and a sampling client of the new weights (docs/training.md#one-iteration)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tinker import types

from debate_core.config import TrainingSettings
from debate_core.runtime.retries import watched
from debate_core.runtime.session import BackendSession
from debate_core.runtime.token_meter import TokenCount
from debate_core.training.kernel.chunked_update import NonFiniteUpdateError, UpdateResult, train_chunks
from debate_core.training.kernel.datum import AssembledDatum
from debate_core.training.run_context import RunPosition


def adam_params(training: TrainingSettings, lr: float) -> types.AdamParams:
    """The optimiser's settings of ``[training]`` at learning rate ``lr``."""
    return types.AdamParams(
        learning_rate=lr,
        beta1=training.adam_beta1,
        beta2=training.adam_beta2,
        eps=training.adam_eps,
        weight_decay=training.weight_decay,
        grad_clip_norm=training.grad_clip_norm,
    )


async def update_policy(
    session: BackendSession,
    position: RunPosition,
    datums: Sequence[AssembledDatum],
    adam: types.AdamParams,
    loss_fn: types.LossFnType,
    loss_config: Mapping[str, float] | None = None,
    substeps: int = 1,
) -> UpdateResult:
    """``forward_backward`` of ``loss_fn`` + ``optim_step`` with ``adam`` of the step after
    ``position.step`` on ``datums`` (nothing without datums), then a fresh sampling client of the
    new weights.

    Marks the position uncommitted until its metrics are written, so that a failure in between
    leaves the last checkpoint standing.

    Raises:
        NonFiniteUpdateError: the loss or a gradient is not finite; no checkpoint of these
            weights is written.
    """
    if not datums:
        return UpdateResult((), ())
    position.uncommitted = True
    update_call = train_chunks(
        session.require_training_client(),
        datums,
        loss_fn=loss_fn,
        loss_fn_config=loss_config,
        adam_params=adam,
        num_substeps=substeps,
        backend_name=session.backend_name,
    )
    what = f"the update of step {position.step + 1} (forward_backward, optim_step)"
    retry = session.retry
    update = await (
        watched(what, update_call, retry.timeout_s, session.backend_name, retry.ledger)
        if retry.watched
        else update_call
    )
    problems = update.non_finite()
    if problems:
        raise NonFiniteUpdateError(
            f"the update of step {position.step + 1} is not finite ({'; '.join(problems)}): the run stops before "
            f"any checkpoint of these weights, so resuming starts from the last good one "
            f"(step {position.last_checkpoint if position.last_checkpoint is not None else 0}); lower "
            "training.learning_rate or set training.grad_clip_norm, and check the reward's scale"
        )
    session.tokens.add(TokenCount(trained=sum(d.num_tokens for d in update.datums)))
    await session.refresh_sampling_client()
    return update
