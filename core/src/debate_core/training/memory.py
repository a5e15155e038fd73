"""Freeing what an RL iteration leaves behind before the next one (docs/local-backend.md#memory)."""

from __future__ import annotations

import ctypes
import functools
import gc
from collections.abc import Callable


def release_garbage() -> None:
    """Free what the iteration just left behind, now rather than when Python's collector gets to
    it, and hand the C heap's free pages back to the system. The debates of an iteration hold
    their sampling client in reference cycles, so the sampler of the weights before the update
    (on the local backend a copy of the weights and a prefix cache of up to ``prefix_cache_mb``)
    outlived it until a full collection, which a long-lived process rarely makes: a real model's
    run grew by gigabytes (docs/local-backend.md#memory)."""
    gc.collect()
    trim_c_heap()


def trim_c_heap() -> None:
    """``malloc_trim(0)`` where the C library has it (glibc): the memory freed by tensors of the
    last update and sampler goes back to the system instead of staying in the process's heap."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim``, looked up once (``None`` where there is none)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)
