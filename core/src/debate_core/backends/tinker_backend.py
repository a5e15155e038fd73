"""The ``tinker`` backend: the real Tinker SDK against the Tinker service (or any server that
speaks its API, through ``base_url``).

The SDK's ``ServiceClient`` already is the contract; :class:`TinkerService` only adds the checks
that turn the service's late errors into early, clear ones (an API key, a LoRA rank of at least 1).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import attrs

from debate_core.errors import ConfigError, PluginError

if TYPE_CHECKING:
    from debate_core.backends.contract import APIFutureLike, SamplingClientLike, TrainingClientLike

API_KEY_PREFIX = "tml-"


@attrs.frozen(kw_only=True)
class TinkerOptions:
    """Options of the ``tinker`` backend (``[backend.options]``)."""

    base_url: str | None = None
    """The service URL; unset: ``TINKER_BASE_URL`` or the SDK's default (the Tinker service)."""
    api_key_env: str = "TINKER_API_KEY"
    """The environment variable that holds the API key (never put keys in run files)."""
    project_id: str | None = None
    """A Tinker project to bill; unset: ``TINKER_PROJECT_ID`` or the account default."""


class TinkerService:
    """``tinker.ServiceClient`` with early checks; every other attribute is the SDK client's."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def create_lora_training_client(
        self,
        base_model: str,
        rank: int = 32,
        seed: int | None = None,
        train_mlp: bool = True,
        train_attn: bool = True,
        train_unembed: bool = True,
    ) -> APIFutureLike[TrainingClientLike]:
        if rank < 1:
            raise ConfigError(
                f"model.lora_rank: the tinker backend trains LoRA adapters and needs a rank >= 1, got {rank}"
            )
        future: APIFutureLike[TrainingClientLike] = self.client.create_lora_training_client(
            base_model, rank, seed, train_mlp, train_attn, train_unembed
        )
        return future

    def create_training_client_from_state(
        self, path: str, base_model: str | None = None
    ) -> APIFutureLike[TrainingClientLike]:
        future: APIFutureLike[TrainingClientLike] = self.client.create_training_client_from_state(path, base_model)
        return future

    def create_training_client_from_state_with_optimizer(
        self, path: str, base_model: str | None = None
    ) -> APIFutureLike[TrainingClientLike]:
        future: APIFutureLike[TrainingClientLike] = self.client.create_training_client_from_state_with_optimizer(
            path, base_model
        )
        return future

    def create_sampling_client(
        self, model_path: str | None = None, base_model: str | None = None
    ) -> APIFutureLike[SamplingClientLike]:
        future: APIFutureLike[SamplingClientLike] = self.client.create_sampling_client(model_path, base_model)
        return future

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def connect(options: TinkerOptions) -> TinkerService:
    """A service client of the Tinker SDK, with the key from the environment.

    Raises:
        PluginError: no API key, or a key that is not a Tinker key.
    """
    api_key = os.environ.get(options.api_key_env, "").strip()
    if not api_key:
        raise PluginError(
            f"backend 'tinker' needs an API key: set {options.api_key_env} (Tinker keys start with '{API_KEY_PREFIX}')"
        )
    if not api_key.startswith(API_KEY_PREFIX) and options.base_url is None:
        raise PluginError(
            f"backend 'tinker': {options.api_key_env} does not look like a Tinker key (they start with "
            f"'{API_KEY_PREFIX}'); set backend.options.base_url to use another Tinker-compatible server"
        )
    import tinker

    client = tinker.ServiceClient(project_id=options.project_id, base_url=options.base_url, api_key=api_key)
    return TinkerService(client)
