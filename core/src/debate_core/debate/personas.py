"""Persona sets: who each agent is, in its system prompt, and its sampling temperature.

A persona's prompt says who the agent is; the debate appends the output parser's contract
instructions to it (``observations.system_prompt``), so persona sets never depend on the format.

``default`` is five personas with their own sampling temperatures (docs/protocol.md#personas),
cycling for more than five agents (agent 5 gets persona 0); ``plain`` is the plain agent
system prompt with the agent id and no persona (the run's temperature applies).
"""

from __future__ import annotations

import attrs

from debate_core.records import Persona


def plain_system_prompt(agent_id: int, num_agents: int) -> str:
    """The plain agent system prompt: who the agent is (the debate adds the contract and its rules)."""
    return (
        f"You are Agent {agent_id} in a debate among {num_agents} agents (Agent 0 to Agent {num_agents - 1}). "
        "The agents answer the same question over several rounds, read each other's responses, "
        "and judge them."
    )


@attrs.frozen
class PersonaProfile:
    """One persona of a persona set: a name, how it reasons, and its sampling temperature."""

    name: str
    style: str
    temperature: float | None


DEFAULT_PROFILES: tuple[PersonaProfile, ...] = (
    PersonaProfile(
        "Methodical Analyst",
        "You work systematically, step by step, stating each step and checking it before moving on.",
        0.6,
    ),
    PersonaProfile(
        "Creative Problem-Solver",
        "You look for unconventional approaches and try a different angle from the obvious one.",
        1.0,
    ),
    PersonaProfile(
        "Devil's Advocate",
        "You are skeptical: you probe every claim, look for counterexamples and hunt for errors.",
        0.9,
    ),
    PersonaProfile(
        "Synthesizer",
        "You combine the strongest parts of different viewpoints into one coherent answer.",
        1.0,
    ),
    PersonaProfile(
        "First Principles Thinker",
        "You return to fundamentals and rebuild the argument from basic definitions and facts.",
        0.8,
    ),
)
"""The personas of the ``default`` set, in agent order."""


@attrs.frozen(kw_only=True)
class DefaultPersonasOptions:
    """Options of the ``default`` persona set."""

    use_persona_temperatures: bool = True
    """Sample each agent at its persona's temperature; ``false`` keeps the run's
    (docs/protocol.md#sampling-temperature)."""
    brief: bool = False
    """The persona in one sentence (``You are Agent 1 of 3, the Creative Problem-Solver.``), for
    small models where every prompt token is trained on; pair it with the ``xml`` parser's
    ``instructions = "brief"``."""


class DefaultPersonas:
    """The five personas of ``DEFAULT_PROFILES``, cycling for more than five agents."""

    def __init__(self, options: DefaultPersonasOptions | None = None) -> None:
        self.options = options or DefaultPersonasOptions()

    def persona(self, agent_id: int, num_agents: int) -> Persona:
        """Persona ``agent_id mod 5``, with the agent's own id in its system prompt."""
        profile = DEFAULT_PROFILES[agent_id % len(DEFAULT_PROFILES)]
        if self.options.brief:
            prompt = f"You are Agent {agent_id} of {num_agents}, the {profile.name}."
        else:
            prompt = (
                f"You are Agent {agent_id}, the {profile.name}, in a debate among {num_agents} agents "
                f"(Agent 0 to Agent {num_agents - 1}). {profile.style} The agents answer the same question "
                "over several rounds, read each other's responses, and judge them."
            )
        temperature = profile.temperature if self.options.use_persona_temperatures else None
        return Persona(profile.name, prompt, temperature)


class PlainPersonas:
    """The plain system prompt with the agent id: no persona, the run's temperature."""

    def persona(self, agent_id: int, num_agents: int) -> Persona:
        """The same prompt for every agent but its id."""
        return Persona(f"Agent {agent_id}", plain_system_prompt(agent_id, num_agents), None)
