"""Process-wide torch settings for the local backend: device, precision and CPU threads.

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

import attrs
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


AUTO_LOW_PRECISION_MIN_HIDDEN = 256
"""``dtype = "auto"`` computes in bfloat16 on a CPU with bfloat16 units only for models at least this
wide: below it the matrix products are too small for the faster units to outweigh the conversions
and the slower elementwise work (``benchmarks/bfloat16.py``, AVX512-BF16: debate-tiny, hidden 128,
samples one sequence at 0.6x float32's speed and trains at 0.9x; SmolLM2-135M, hidden 576, is
faster in every figure)."""

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@attrs.frozen
class Precision:
    """How a model computes: ``compute`` is the dtype of its matrix products and activations, of the
    sampler's weights and KV cache, and of frozen weights (a LoRA run's base); trainable weights and
    the optimizer's state stay float32 (mixed precision), and so do checkpoints. ``reason`` says why,
    for the run's environment record and the CLI."""

    compute: torch.dtype
    reason: str

    @property
    def name(self) -> str:
        return str(self.compute).removeprefix("torch.")

    @property
    def mixed(self) -> bool:
        """Whether training computes in a lower precision than its float32 master weights."""
        return bool(self.compute != torch.float32)

    def describe(self) -> str:
        return f"{self.name} ({self.reason})"


def bfloat16_units() -> str | None:
    """The CPU's bfloat16 matrix units as a name (``AMX-BF16``, ``AVX512-BF16``), or ``None``."""
    for probe, name in (("_is_amx_tile_supported", "AMX-BF16"), ("_is_avx512_bf16_supported", "AVX512-BF16")):
        if bool(getattr(torch.cpu, probe, lambda: False)()):
            return name
    return None


def resolve_precision(name: str, device: torch.device, hidden_size: int | None) -> Precision:
    """The precision of a model ``hidden_size`` wide on ``device`` for ``backend.options.dtype``.

    ``auto`` is bfloat16 on a CPU with bfloat16 units (AMX or AVX512-BF16) for a model at least
    ``AUTO_LOW_PRECISION_MIN_HIDDEN`` wide, float32 everywhere else (a GPU included: set
    ``bfloat16`` there yourself); a named dtype is taken as it is."""
    if name != "auto":
        if name not in _DTYPES:
            raise ConfigError(f"backend.options.dtype: {name!r} is not one of auto, {', '.join(_DTYPES)}")
        return Precision(_DTYPES[name], "backend.options.dtype")
    if device.type != "cpu":
        return Precision(torch.float32, f"auto: float32 on {device.type}")
    units = bfloat16_units()
    if units is None:
        return Precision(torch.float32, "auto: this CPU has no bfloat16 units")
    if hidden_size is not None and hidden_size < AUTO_LOW_PRECISION_MIN_HIDDEN:
        return Precision(
            torch.float32,
            f"auto: hidden size {hidden_size} < {AUTO_LOW_PRECISION_MIN_HIDDEN}, faster in float32 despite {units}",
        )
    return Precision(torch.bfloat16, f"auto: {units}")


def no_grad(function: Callable[P, R]) -> Callable[P, R]:
    """``torch.no_grad`` as a typed decorator (torch's own is untyped for mypy)."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with torch.no_grad():
            return function(*args, **kwargs)

    return wrapper
