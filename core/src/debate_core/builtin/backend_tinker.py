"""Built-in backend ``tinker``: the Tinker SDK (its own credentials and ``TINKER_BASE_URL``, or the options)."""

from __future__ import annotations

from debate_core.backends import TinkerOptions, connect
from debate_core.plugin import BackendSpec, hookimpl


@hookimpl
def debate_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="tinker",
            description="the Tinker training service through its SDK (the SDK's credentials: TINKER_API_KEY, ...)",
            build=connect,
            options=TinkerOptions,
        )
    ]
