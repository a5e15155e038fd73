"""Process-wide torch settings for the local backend: device, dtype and CPU threads.

Applied once, when the first service client is built. On a small CPU the defaults matter:
denormal floats late in training slowed one run 2.5x (the worker threads flush them to zero),
and torch's default of one inter-op pool per core only adds contention on two cores.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import torch

from debate_core.errors import ConfigError

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_configured_threads: int | None = None


def configure_torch(num_threads: int) -> int:
    """Set the intra-op thread count (0: every core, at most 8).

    Flush-to-zero is not set here: it is a per-thread CPU flag, set only on the backend's own
    worker threads, so the caller's thread (and libraries such as hypothesis that check for
    subnormals) keeps IEEE semantics. Returns the thread count in force; the last call wins.
    """
    global _configured_threads
    with _lock:
        threads = num_threads if num_threads > 0 else min(os.cpu_count() or 1, 8)
        if _configured_threads != threads:
            torch.set_num_threads(threads)
            _configured_threads = threads
        # Raises once set, or once parallel work ran in this process: keep torch's choice then.
        with contextlib.suppress(RuntimeError):
            torch.set_num_interop_threads(1)
        return threads


def configured_threads() -> int:
    """The thread count of the last ``configure_torch`` (every core, at most 8, before any)."""
    return _configured_threads or min(os.cpu_count() or 1, 8)


def resolve_device(name: str) -> torch.device:
    """``auto`` is CUDA when present, else CPU; ``cuda`` without a GPU is a clear error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"backend.options.device: {name!r} was asked for, but torch sees no CUDA device")
    try:
        return torch.device(name)
    except RuntimeError as exc:
        raise ConfigError(f"backend.options.device: {name!r} is not a torch device: {exc}") from None


def resolve_dtype(name: str) -> torch.dtype:
    """``auto`` is float32: exact enough for summed RL losses, and bf16 matmuls are ~300x slower
    on CPUs without AMX. ``bfloat16`` halves memory for larger models on a GPU."""
    if name == "auto":
        return torch.float32
    table = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    if name not in table:
        raise ConfigError(f"backend.options.dtype: {name!r} is not one of auto, {', '.join(table)}")
    return table[name]


def no_grad(function: Callable[P, R]) -> Callable[P, R]:
    """``torch.no_grad`` as a typed decorator (torch's own is untyped for mypy)."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with torch.no_grad():
            return function(*args, **kwargs)

    return wrapper
