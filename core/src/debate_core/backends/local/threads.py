"""How many torch threads one model call of the sampler uses.

On a small CPU, splitting a small matrix product over threads costs more than it saves: the
threads meet at every operation, and a core that another process keeps busy makes each meeting
slow. So the sampler runs a call on one thread when its matrix products are small (a decoding
step of a few rows of a small model) and on up to ``num_threads`` when they are large (a long
prefill, many rows, a larger model): each thread gets at least ``min_mflops_per_thread`` million
floating-point operations of an average matrix product. The choice depends only on the call's
shape, so it is the same on every run.

Switching costs about a millisecond (torch rebuilds its thread team), so a thread keeps its count
until a call asks for another one.
"""

from __future__ import annotations

import threading

import attrs
import torch
from attrs import validators as v

_local = threading.local()


@attrs.frozen
class ThreadPlan:
    """Threads for a call of ``tokens`` tokens whose average matrix product costs
    ``flops_per_token`` floating-point operations per token."""

    max_threads: int = attrs.field(validator=v.ge(1))
    min_mflops_per_thread: float = attrs.field(default=1.0, validator=v.ge(0.0))

    def threads_for(self, tokens: int, flops_per_token: float) -> int:
        if self.max_threads == 1 or self.min_mflops_per_thread == 0:
            return self.max_threads
        work = tokens * flops_per_token / 1e6
        return max(1, min(self.max_threads, int(work // self.min_mflops_per_thread)))


def use_threads(count: int) -> None:
    """Run this thread's next torch operations on ``count`` threads (no call when already so)."""
    if getattr(_local, "threads", None) != count:
        torch.set_num_threads(count)
        _local.threads = count


def forget_thread_count() -> None:
    """Forget the count this thread last set (after someone else set it, e.g. ``configure_torch``)."""
    _local.threads = None
