"""System prompts: the output contract every agent is told, and the persona sets.

``default`` is the five personas of seed 002 §2.4 with their own sampling temperatures,
cycling for more than five agents (agent 5 gets persona 0); ``plain`` is seed 000's agent
system prompt with the agent id and no persona (the run's temperature applies).
"""

from __future__ import annotations

import attrs

from debate_core.records import Persona

CONTRACT_TEMPLATE = """\
Answer with exactly these five tags, in this order, and nothing outside them:
<solution>your complete solution to the question</solution>
<evaluation>your assessment of the other agents' responses, or N/A</evaluation>
<comparison>your comparisons of other agents, one per line, or N/A</comparison>
<consensus>YES or NO</consensus>
<consensus_reason>one or two sentences on why the agents do or do not agree</consensus_reason>

Rules:
- Reason before judging: work out your own solution and your evaluation first; write comparisons only after them.
- A comparison line is "Agent A > Agent B" (Agent A's response is better than Agent B's) or \
"Agent A = Agent B" (equally good), with agent numbers for A and B.
- Never include yourself (Agent {agent_id}) in a comparison, and compare only agents whose responses you were shown.
- Write N/A in <comparison> when there is nobody you may compare.
- Write YES in <consensus> only when every agent's latest solution agrees with yours; otherwise NO."""


def contract_text(agent_id: int) -> str:
    """The output contract and its rules, addressed to one agent."""
    return CONTRACT_TEMPLATE.format(agent_id=agent_id)


def plain_system_prompt(agent_id: int, num_agents: int) -> str:
    """Seed 000's agent system prompt: who the agent is, the contract and its rules."""
    return (
        f"You are Agent {agent_id} in a debate among {num_agents} agents (Agent 0 to Agent {num_agents - 1}). "
        "The agents answer the same question over several rounds, read each other's responses, "
        "and judge them.\n\n" + contract_text(agent_id)
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
"""The personas of seed 002 §2.4, in agent order."""


@attrs.frozen(kw_only=True)
class DefaultPersonasOptions:
    """Options of the ``default`` persona set."""

    use_persona_temperatures: bool = True
    """Sample each agent at its persona's temperature (seed 002 §2.4); ``false`` keeps the run's."""


class DefaultPersonas:
    """The five personas of seed 002 §2.4, cycling for more than five agents."""

    def __init__(self, options: DefaultPersonasOptions | None = None) -> None:
        self.options = options or DefaultPersonasOptions()

    def persona(self, agent_id: int, num_agents: int) -> Persona:
        """Persona ``agent_id mod 5``, with the agent's own id in its system prompt."""
        profile = DEFAULT_PROFILES[agent_id % len(DEFAULT_PROFILES)]
        prompt = (
            f"You are Agent {agent_id}, the {profile.name}, in a debate among {num_agents} agents "
            f"(Agent 0 to Agent {num_agents - 1}). {profile.style} The agents answer the same question "
            "over several rounds, read each other's responses, and judge them.\n\n" + contract_text(agent_id)
        )
        temperature = profile.temperature if self.options.use_persona_temperatures else None
        return Persona(profile.name, prompt, temperature)


class PlainPersonas:
    """Seed 000's system prompt with the agent id: no persona, the run's temperature."""

    def persona(self, agent_id: int, num_agents: int) -> Persona:
        """The same prompt for every agent but its id."""
        return Persona(f"Agent {agent_id}", plain_system_prompt(agent_id, num_agents), None)
