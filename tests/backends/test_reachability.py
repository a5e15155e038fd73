"""An address where nothing can answer fails at once (docs/training.md, "A backend that is down"):
a port where nothing listens and a host name that does not resolve are told apart from a service
that is there but slow or silent, which keeps the configured wait."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from debate_core.backends.reachability import ServiceUnreachable, check_reachable
from debate_core.runtime.retries import BackendError, RetryPolicy, with_retries


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def closed_port() -> int:
    """A port that was free a moment ago: nothing listens on it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextmanager
def never_accepting() -> Iterator[int]:
    """A port that listens and never accepts or answers: a silent service."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def test_a_refused_port_is_named_at_once() -> None:
    port = closed_port()
    with pytest.raises(ServiceUnreachable) as raised:
        check_reachable(f"http://127.0.0.1:{port}", f"TINKER_BASE_URL=http://127.0.0.1:{port}")
    assert str(raised.value).startswith(f"nothing listens at 127.0.0.1:{port}, the connection is refused")
    assert f"(TINKER_BASE_URL=http://127.0.0.1:{port})" in str(raised.value)


def test_a_name_that_does_not_resolve_is_named_at_once() -> None:
    with pytest.raises(ServiceUnreachable) as raised:
        check_reachable("https://nonexistent.invalid/services/tinker", "backend.options.base_url = ...")
    assert str(raised.value).startswith("the host name 'nonexistent.invalid' does not resolve")


def test_a_silent_service_is_left_to_the_configured_wait() -> None:
    with never_accepting() as port:
        assert check_reachable(f"http://127.0.0.1:{port}", "test") is None


def test_behind_a_proxy_only_the_proxy_can_tell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://proxy.example:3128")
    assert check_reachable(f"http://127.0.0.1:{closed_port()}", "test") is None


def test_an_unreachable_address_is_not_retried() -> None:
    attempts: list[int] = []

    async def create() -> None:
        attempts.append(1)
        raise ServiceUnreachable("nothing listens at 127.0.0.1:9, the connection is refused (TINKER_BASE_URL=...)")

    policy = RetryPolicy(max_attempts=4, initial_delay_s=0.0, timeout_s=600.0)
    with pytest.raises(BackendError) as raised:
        asyncio.run(with_retries("create the training client", create, policy, "tinker"))
    assert attempts == [1]
    assert str(raised.value) == (
        "backend 'tinker': create the training client: nothing listens at 127.0.0.1:9, the connection is "
        "refused (TINKER_BASE_URL=...)"
    )
