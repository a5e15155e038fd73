"""The sampler's threads per model call: one for small matrix products, more for large ones."""

from __future__ import annotations

import threading

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from debate_core.backends.local.threads import ThreadPlan, use_threads


def test_small_calls_run_on_one_thread_and_large_ones_on_up_to_the_maximum() -> None:
    plan = ThreadPlan(max_threads=4, min_mflops_per_thread=1.0)
    assert plan.threads_for(tokens=1, flops_per_token=1e5) == 1  # 0.1 MFLOP
    assert plan.threads_for(tokens=20, flops_per_token=1e5) == 2  # 2 MFLOP: two threads of 1
    assert plan.threads_for(tokens=10_000, flops_per_token=1e5) == 4
    assert ThreadPlan(max_threads=4, min_mflops_per_thread=0.0).threads_for(1, 1.0) == 4
    assert ThreadPlan(max_threads=1).threads_for(10**9, 1e9) == 1


@given(
    threads=st.integers(1, 16),
    threshold=st.floats(0.01, 100.0),
    tokens=st.integers(1, 10**5),
    flops=st.floats(1.0, 1e9),
)
def test_the_thread_count_is_in_range_and_never_falls_as_the_work_grows(
    threads: int, threshold: float, tokens: int, flops: float
) -> None:
    plan = ThreadPlan(max_threads=threads, min_mflops_per_thread=threshold)
    count = plan.threads_for(tokens, flops)
    assert 1 <= count <= threads
    assert plan.threads_for(tokens * 2, flops) >= count
    assert count == 1 or tokens * flops / 1e6 >= threshold * count


def test_use_threads_sets_only_the_calling_threads_count() -> None:
    before = torch.get_num_threads()
    seen: list[int] = []

    def worker() -> None:
        use_threads(1)
        seen.append(torch.get_num_threads())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [1]
    assert torch.get_num_threads() == before


def test_a_maximum_below_one_thread_is_refused() -> None:
    with pytest.raises(ValueError):
        ThreadPlan(max_threads=0)


def test_the_service_says_its_torch_device_threads_and_instruction_set() -> None:
    """What decides how the backend's sums round, for ``environment.json``
    (``backends.contract.SupportsEnvironment``)."""
    from debate_core.backends.contract import SupportsEnvironment
    from debate_core.backends.local.service import LocalServiceClient

    service = LocalServiceClient()
    try:
        assert isinstance(service, SupportsEnvironment)
        facts = service.environment()
        assert facts["torch"] == torch.__version__ and facts["device"] == "cpu"
        assert facts["threads"] == str(service.threads)
        assert facts["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    finally:
        service.close()
