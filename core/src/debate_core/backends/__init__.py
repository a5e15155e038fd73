"""Backends: the client contract (the Tinker SDK's surface) and its implementations, the
``tinker`` adapter and the ``local`` torch engine.

Importing this package imports neither torch nor the Tinker SDK; :func:`local_service` imports
torch when it is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debate_core.backends.contract import (
    CONTRACT_METHODS,
    CONTRACT_PROTOCOLS,
    APIFutureLike,
    SamplingClientLike,
    ServiceClientLike,
    SupportsStateDirectory,
    TrainingClientLike,
)
from debate_core.backends.local.options import LocalBackendOptions
from debate_core.backends.tinker_backend import TinkerOptions, TinkerService, connect

if TYPE_CHECKING:
    from debate_core.backends.local.service import LocalServiceClient


def local_service(options: LocalBackendOptions | None = None) -> LocalServiceClient:
    """A ``LocalServiceClient`` (the ``local`` backend) with these options; imports torch."""
    from debate_core.backends.local.service import LocalServiceClient

    return LocalServiceClient(options or LocalBackendOptions())


__all__ = [
    "CONTRACT_METHODS",
    "CONTRACT_PROTOCOLS",
    "APIFutureLike",
    "LocalBackendOptions",
    "SamplingClientLike",
    "ServiceClientLike",
    "SupportsStateDirectory",
    "TinkerOptions",
    "TinkerService",
    "TrainingClientLike",
    "connect",
    "local_service",
]
