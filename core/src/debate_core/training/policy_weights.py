"""Saved policy weights named by a user (``--checkpoint``, ``evaluation.opponent``), resolved to
what the backend opens: the weights saved for sampling when there are any, else the training
state (manifests written before sampler weights were saved, a Tinker ``.../weights/...`` path).

Accepted: a trainer manifest (``checkpoints/step_*.json``), a run directory or its
``checkpoints/`` folder (the latest checkpoint), or a backend path as the backend wrote it
(``tinker://...``, a local backend's state folder).
"""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from debate_core.config import RunConfig
from debate_core.runtime.checkpoint_format import Checkpoint, CheckpointError
from debate_core.runtime.manifests import load_checkpoint_argument

if TYPE_CHECKING:
    from debate_core.backends.contract import SamplingClientLike
    from debate_core.runtime.session import BackendSession

BASE_OPPONENT = "base"

TINKER_STATE_SEGMENT = "/weights/"
"""Tinker names training states ``tinker://<run>/weights/<name>`` and sampler weights
``tinker://<run>/sampler_weights/<name>``."""


@attrs.frozen
class PolicyWeights:
    """Where a saved policy is: ``sampler_path`` is opened with ``create_sampling_client``; without
    one, ``state_path`` is loaded into a training client and snapshotted."""

    sampler_path: str | None = None
    state_path: str | None = None
    step: int | None = None
    """The trainer's step the weights are of, when a manifest names them (``None``: a backend path)."""

    def __attrs_post_init__(self) -> None:
        if self.sampler_path is None and self.state_path is None:
            raise ValueError("PolicyWeights needs a sampler path or a state path")

    @property
    def path(self) -> str:
        """The path that is opened."""
        return self.sampler_path or self.state_path or ""

    @classmethod
    def of_checkpoint(cls, checkpoint: Checkpoint) -> PolicyWeights:
        """The weights a trainer manifest names."""
        if checkpoint.sampler_weights is not None:
            return cls(
                sampler_path=checkpoint.sampler_weights, state_path=checkpoint.backend_state, step=checkpoint.step
            )
        return cls(state_path=checkpoint.backend_state, step=checkpoint.step)

    def describe(self, argument: str) -> str:
        """What was loaded for ``argument`` (a ``--checkpoint`` value), in one line:
        ``checkpoint runs/main: step 60 (weights /.../step_000060_sampler.npz)``."""
        step = f"step {self.step}" if self.step is not None else "a backend's own save (no step recorded)"
        return f"checkpoint {argument}: {step} (weights {self.path})"


def check_not_expired(checkpoint: Checkpoint, where: str) -> None:
    """A checkpoint past its backend TTL is an error naming when it expired."""
    if checkpoint.expired():
        expiry = checkpoint.expires_at() or 0.0
        when = datetime.datetime.fromtimestamp(expiry, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        raise CheckpointError(
            f"{where}: the checkpoint of step {checkpoint.step} expired on the backend at {when} "
            f"(periodic checkpoints live backend.options.checkpoint_ttl_s = {checkpoint.ttl_seconds} seconds; "
            "0 keeps them)"
        )


def resolve_policy_weights(argument: str, where: str) -> PolicyWeights:
    """The weights ``argument`` names; ``where`` (``--checkpoint``, ``evaluation.opponent``) prefixes errors.

    Raises:
        CheckpointError: nothing at a local path, no checkpoint in a run directory, or an expired one.
    """
    if "://" in argument:
        if TINKER_STATE_SEGMENT in argument:
            return PolicyWeights(state_path=argument)
        return PolicyWeights(sampler_path=argument)
    path = Path(argument)
    if not path.exists():
        raise CheckpointError(f"{where} {argument}: no such file or directory")
    is_manifest = path.is_file() and path.suffix == ".json"
    is_run = path.is_dir() and ((path / "checkpoints").is_dir() or path.name == "checkpoints")
    if not (is_manifest or is_run):
        return PolicyWeights(sampler_path=str(path.resolve()))  # a backend's own save
    try:
        checkpoint = load_checkpoint_argument(path)
    except CheckpointError as exc:
        raise CheckpointError(f"{where} {exc}") from None
    check_not_expired(checkpoint, f"{where} {argument}")
    return PolicyWeights.of_checkpoint(checkpoint)


def resolve_init_from(config: RunConfig) -> RunConfig:
    """``config`` with ``model.init_from`` resolved to the training state a new run loads: a run
    directory or manifest to the backend state of its (latest) checkpoint, a backend path as given.

    Raises:
        CheckpointError: nothing at a local path, no intact checkpoint, an expired one, or weights
            saved only for sampling on a remote backend (a training client loads a training state).
    """
    argument = config.model.init_from
    if not argument:
        return config
    where = "model.init_from"
    if "://" in argument:
        if TINKER_STATE_SEGMENT not in argument:
            raise CheckpointError(
                f"{where} {argument}: names weights saved for sampling; a new run loads a training state "
                f"(a path with {TINKER_STATE_SEGMENT.strip('/')!r} in it, as save_state returns it) or a run directory"
            )
        state = argument
    else:
        weights = resolve_policy_weights(argument, where)
        state = weights.state_path or weights.path
    return attrs.evolve(config, model=attrs.evolve(config.model, init_from=state))


def resolve_opponent(opponent: str) -> PolicyWeights | None:
    """The fixed opponent of role-averaged evaluation (``evaluation.opponent``): ``None`` for the
    base model, else the checkpoint's weights.

    Raises:
        CheckpointError: ``opponent`` names no checkpoint (or an expired one).
    """
    if opponent == BASE_OPPONENT:
        return None
    return resolve_policy_weights(opponent, "evaluation.opponent")


def opponent_client(
    session: BackendSession, opponent: PolicyWeights | None
) -> Callable[[], Awaitable[SamplingClientLike]]:
    """Opens the fixed opponent on first use: the base model (``None``), or the weights a checkpoint
    saved for sampling."""
    if opponent is None:
        return session.base_sampling_client
    weights = opponent

    async def open_opponent() -> SamplingClientLike:
        return await session.saved_sampling_client(weights.sampler_path, weights.state_path)

    return open_opponent
