"""A training client restored from a saved state, on servers that lack the SDK 0.38's way.

The SDK 0.38 creates a training client from a state with one ``load_weights`` request that names
no model (the server creates it). A server of the older protocol (SkyRL 0.4.0's Tinker API)
refuses that with HTTP 422 ("model_id: Field required") and loads a state only into a model that
exists. There the backend does as that protocol does, in one place: it reads the state's base model
and LoRA rank (``/api/v1/weights_info``), creates a LoRA training client with them, and loads the
state into it (the SDK's ``load_state`` / ``load_state_with_optimizer``, deprecated in 0.38 and
still sent as the older protocol expects), saying so once in the log.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Generic, TypeVar

from debate_core.backends.tinker_replies import say_once

if TYPE_CHECKING:  # the SDK imports torch when it is installed: not at the CLI's start
    import tinker

T = TypeVar("T")

SDK_TRAINING_LOGGER = "tinker.lib.public_interfaces.training_client"


class Settled(Generic[T]):
    """A value as an SDK future (``result()``, awaitable) for :class:`~debate_core.backends.off_thread.OffThread`."""

    def __init__(self, value: T) -> None:
        self.value = value

    def result(self, timeout: float | None = None) -> T:
        return self.value

    def __await__(self) -> Generator[None, None, T]:
        if False:  # pragma: no cover - makes this a generator
            yield
        return self.value


def lacks_create_from_state(error: BaseException) -> bool:
    """True for the older protocol's refusal of a ``load_weights`` request without ``model_id``."""
    import tinker

    return isinstance(error, tinker.UnprocessableEntityError) and "model_id" in str(error)


class _DropDeprecation(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("DEPRECATED: TrainingClient.load_state")


def restored_training_client(
    client: tinker.ServiceClient,
    rest: Callable[[], tinker.RestClient],
    path: str,
    base_model: str | None,
    optimizer: bool,
    server: str,
) -> Settled[tinker.TrainingClient]:
    """The SDK's ``create_training_client_from_state[_with_optimizer]``, resolved; on a server of
    the older protocol, a LoRA client of the state's base model and rank with the state loaded
    (``rest`` makes the ``tinker.RestClient`` that reads them)."""
    create = (
        client.create_training_client_from_state_with_optimizer
        if optimizer
        else client.create_training_client_from_state
    )
    try:
        return Settled(create(path, base_model).result())
    except Exception as exc:
        if not lacks_create_from_state(exc):
            raise
    say_once(
        "no-create-from-state",
        f"the server at {server} cannot create a training client from a saved state (HTTP 422 on "
        "load_weights without a model); creating a LoRA client and loading the state into it instead",
    )
    info = rest().get_weights_info_by_tinker_path(path).result()
    if not info.is_lora or not info.lora_rank:
        raise ValueError(f"{path}: the server holds no LoRA rank for it, so it cannot be loaded into a new client")
    training = client.create_lora_training_client(base_model or info.base_model, int(info.lora_rank)).result()
    sdk_logger = logging.getLogger(SDK_TRAINING_LOGGER)
    drop = _DropDeprecation()
    sdk_logger.addFilter(drop)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            load = training.load_state_with_optimizer(path) if optimizer else training.load_state(path)
        load.result()
    finally:
        sdk_logger.removeFilter(drop)
    return Settled(training)
