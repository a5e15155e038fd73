"""A KL penalty towards the reference policy, the weights RL started from (docs/training.md#kl-penalty).

For every action token ``t`` of the batch, ``d_t`` is the sampler's logprob minus the
reference's logprob of the same token in the same context: a one-sample estimate of the
token's contribution to KL(policy ‖ reference). With coefficient ``β``
(``training.kl_penalty_coef``) each action token's advantage gains

    β · (d̄ − d_t)

where ``d̄`` is the mean of ``d`` over every action token of the batch. Tokens the policy has made
likelier than the reference did are pushed back, the others forward; centring on ``d̄`` keeps the
penalty from shifting the advantages' mean. Observation tokens keep advantage 0.

The reference is saved once, when RL starts (``rl_reference``, its path recorded by the run
directory in ``checkpoints/rl_reference.json``), so that a resumed run penalises against the same
weights.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import attrs
from tinker import types

from debate_core.errors import ConfigError
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.retries import BackendError
from debate_core.runtime.session import BackendSession
from debate_core.training.kernel.datum import AssembledDatum

REFERENCE_NAME = "rl_reference"
"""The backend's name for the reference weights."""


@attrs.frozen
class Penalised:
    """The batch's Datums with the penalty added, and what it measured."""

    datums: list[AssembledDatum]
    mean_divergence: float
    """``d̄``: the mean over action tokens of sampler logprob minus reference logprob."""
    tokens: int
    """Action tokens the penalty was computed over."""


def token_divergences(datum: AssembledDatum, reference_logprobs: Sequence[float | None]) -> list[float]:
    """``d_t`` for each target of ``datum`` (0 where the target is an observation token).

    ``reference_logprobs`` are the reference's logprobs of the datum's full sequence, inputs then
    the last target, with ``None`` for the first token (``compute_logprobs``).

    Raises:
        BackendError: the reference gave a number of logprobs that does not match the sequence,
            or none for an action token.
    """
    sampler = datum.datum.loss_fn_inputs["logprobs"].data
    if len(reference_logprobs) != len(sampler) + 1:
        raise BackendError(
            f"the reference policy gave {len(reference_logprobs)} logprobs for a sequence of {len(sampler) + 1} tokens"
        )
    out: list[float] = []
    for i, (mask, sampled) in enumerate(zip(datum.mask, sampler, strict=True)):
        if not mask:
            out.append(0.0)
            continue
        reference = reference_logprobs[i + 1]
        if reference is None or not math.isfinite(reference):
            raise BackendError(f"the reference policy gave no finite logprob for action token {i + 1} of a sequence")
        out.append(float(sampled) - float(reference))
    return out


def apply_penalty(
    datums: Sequence[AssembledDatum], divergences: Sequence[Sequence[float]], coefficient: float
) -> Penalised:
    """The Datums with ``coefficient · (d̄ − d_t)`` added to each action token's advantage."""
    pairs = zip(datums, divergences, strict=True)
    action = [d for datum, ds in pairs for d, m in zip(ds, datum.mask, strict=True) if m]
    mean_divergence = math.fsum(action) / len(action) if action else 0.0
    out: list[AssembledDatum] = []
    for datum, ds in zip(datums, divergences, strict=True):
        inputs = datum.datum.loss_fn_inputs
        advantages = [
            float(a) + (coefficient * (mean_divergence - d) if m else 0.0)
            for a, d, m in zip(inputs["advantages"].data, ds, datum.mask, strict=True)
        ]
        loss_fn_inputs = {
            "target_tokens": inputs["target_tokens"].data,
            "logprobs": inputs["logprobs"].data,
            "advantages": advantages,
        }
        penalised = types.Datum(model_input=datum.datum.model_input, loss_fn_inputs=loss_fn_inputs)  # type: ignore[arg-type]
        out.append(attrs.evolve(datum, datum=penalised))
    return Penalised(out, mean_divergence, len(action))


async def reference_path(session: BackendSession, run_dir: RunDirectory, iteration: int, step: int) -> str:
    """The reference weights' path: saved now at RL's first iteration, else read back from the
    record the run directory wrote then (``checkpoints/rl_reference.json``).

    Raises:
        ConfigError: a resumed run past its first iteration with no reference saved (it
            started RL with ``training.kl_penalty_coef = 0``).
        RunDirectoryError: the record is damaged.
    """
    if iteration == 0:
        path = await session.save_sampler_weights(REFERENCE_NAME)
        run_dir.write_rl_reference(path, step)
        return path
    saved = run_dir.read_rl_reference()
    if saved is None:
        raise ConfigError(
            f"training.kl_penalty_coef needs the weights RL started from, and this run saved none "
            f"({run_dir.rl_reference_path} is missing: it started RL without the penalty); resume with "
            "training.kl_penalty_coef = 0, or start a new run"
        )
    return saved


async def penalise(
    session: BackendSession,
    run_dir: RunDirectory,
    datums: Sequence[AssembledDatum],
    coefficient: float,
    iteration: int,
    step: int,
) -> Penalised:
    """The batch's Datums of RL iteration ``iteration`` (the update after ``step``) with the KL
    penalty of coefficient ``coefficient`` (``training.kl_penalty_coef``) added."""
    path = await reference_path(session, run_dir, iteration, step)
    client = session.sampler().sibling(await session.saved_sampling_client(path))

    async def divergences(datum: AssembledDatum) -> list[float]:
        inputs = datum.datum.model_input.to_ints()
        last = datum.datum.loss_fn_inputs["target_tokens"].data[-1]
        logprobs = await client.compute_logprobs(types.ModelInput.from_ints([*inputs, int(last)]))
        return token_divergences(datum, logprobs)

    measured = await asyncio.gather(*(divergences(d) for d in datums))
    return apply_penalty(datums, measured, coefficient)
