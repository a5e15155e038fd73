"""Built-in persona sets ``default`` and ``plain`` (docs/protocol.md#personas)."""

from __future__ import annotations

from debate_core.debate import DefaultPersonas, DefaultPersonasOptions, PlainPersonas
from debate_core.plugin import PersonaSetSpec, hookimpl


def _build_plain(_: None) -> PlainPersonas:
    return PlainPersonas()


@hookimpl
def debate_persona_sets() -> list[PersonaSetSpec]:
    return [
        PersonaSetSpec(
            name="default",
            description="five personas with temperatures 0.6, 1.0, 0.9, 1.0, 0.8, cycling",
            build=DefaultPersonas,
            options=DefaultPersonasOptions,
        ),
        PersonaSetSpec(
            name="plain",
            description="the agent system prompt with its id, no persona",
            build=_build_plain,
        ),
    ]
