"""How failed Tinker requests are treated: a request that completed as failed is retried when the
service says the failure was its own (``server``, ``unknown``), never when it was the request's (``user``)."""

from __future__ import annotations

import asyncio

import pytest
import tinker
from tinker.types import RequestErrorCategory

from debate_core.runtime.retries import BackendError, RetryPolicy, is_transient, with_retries


def failed(category: RequestErrorCategory) -> tinker.RequestFailedError:
    return tinker.RequestFailedError(f"Request failed: {category.value}", request_id="r1", category=category)


@pytest.mark.parametrize(
    ("category", "transient"),
    [(RequestErrorCategory.Server, True), (RequestErrorCategory.Unknown, True), (RequestErrorCategory.User, False)],
)
def test_failed_requests_by_category(category: RequestErrorCategory, transient: bool) -> None:
    assert is_transient(failed(category)) is transient


def test_a_server_failure_is_retried_and_a_user_failure_is_not() -> None:
    attempts: list[RequestErrorCategory] = []

    def flaky(category: RequestErrorCategory) -> object:
        async def call() -> str:
            attempts.append(category)
            if len(attempts) == 1:
                raise failed(category)
            return "saved"

        return call

    policy = RetryPolicy(max_attempts=3, initial_delay_s=0.0)
    assert asyncio.run(with_retries("save_state", flaky(RequestErrorCategory.Server), policy, "tinker")) == "saved"  # type: ignore[arg-type]
    attempts.clear()
    with pytest.raises(BackendError, match=r"backend 'tinker': save_state failed: RequestFailedError"):
        asyncio.run(with_retries("save_state", flaky(RequestErrorCategory.User), policy, "tinker"))  # type: ignore[arg-type]
    assert len(attempts) == 1
