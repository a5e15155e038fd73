"""What shapes a debate besides its question and policies: the components of ``[debate]``
built once (:class:`DebateSetup`), each agent's sampling temperature and the seed of each turn."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import attrs

from debate_core.config.sections import DebateSettings
from debate_core.debate.coordinators import Coordinator
from debate_core.debate.final_answer import MajorityRule, NamedAnswerRule
from debate_core.errors import PluginError
from debate_core.plugin import (
    ComponentBuilder,
    PluginCall,
    build_choice,
)
from debate_core.records import (
    AnswerRule,
    ConsensusRule,
    HistoryPolicy,
    OutputParser,
    Persona,
    PersonaSet,
    Renderer,
    Tokenizer,
)


@attrs.frozen(kw_only=True)
class DebateSetup:
    """Everything that shapes a debate except the question and the policies."""

    num_agents: int = attrs.field(validator=attrs.validators.ge(1))
    max_rounds: int = attrs.field(validator=attrs.validators.ge(1))
    max_tokens: int = attrs.field(validator=attrs.validators.ge(1))
    temperature: float
    """The debate's temperature (``debate.temperature``, validated at config load), for agents whose
    persona sets none."""
    temperature_override: float | None = None
    """A temperature for every agent, persona temperatures included (``evaluation.temperature``,
    validated at config load)."""
    coordinator: Coordinator
    parser: OutputParser
    persona_set: PersonaSet
    history_policy: HistoryPolicy
    renderer: Renderer
    consensus_rule: ConsensusRule = "informed"
    """Which YES answers end a debate early (``debate.stop_on_consensus``)."""
    show_answers: bool = False
    """State in each history entry the answer the grader reads in its solution (``debate.show_answers``)."""
    recap: bool = False
    """End each later prompt with the question and the stated answers (``debate.recap``)."""
    brief_instructions: bool = False
    """State each turn's instructions in a sentence or two (``debate.instructions = "brief"``)."""
    stop_after_round: int | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.ge(1))
    )
    """End every debate after this round whatever the stop rule, while the prompts still say
    ``Round r of max_rounds``: evaluation's direct answers are the blind first round of the
    same debate."""
    answer_rule: AnswerRule = attrs.field(factory=MajorityRule)  # debate.final_answer (docs/answer-rules.md)
    names: Mapping[str, str] = attrs.field(factory=dict)
    """The components as the run file chose them, by kind (``parser``: ``xml`` or an import
    path), for the errors that name a plugin whose result is bad (``plugin_results``)."""

    def call(self, kind: str, hook: str, given: str) -> PluginCall:
        """One call of the component of ``kind`` (``history_policy``), as its errors name it."""
        return PluginCall(kind.replace("_", " "), self.names.get(kind, ""), hook, given)


def sampling_temperature(persona: Persona, setup: DebateSetup) -> float:
    """The temperature an agent samples at, the one precedence rule (docs/protocol.md#sampling-temperature):
    the setup's override when it has one (``evaluation.temperature``, which ``debate eval`` and
    ``debate run`` set, ``--temperature`` too), else the persona's own temperature when it sets one,
    else the run's ``debate.temperature``. The run file's values are checked once, at config load."""
    if setup.temperature_override is not None:
        return setup.temperature_override
    if persona.temperature is not None:
        return persona.temperature
    return setup.temperature


def turn_seed(seed: int, agent: int, round: int) -> int:
    """The sampling seed of one turn: a hash of the debate seed, the agent and the round
    (stable across processes and Python versions), in ``0 .. 2**31 - 1``."""
    digest = hashlib.blake2b(f"{seed}:{agent}:{round}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


def build_debate_setup(debate: DebateSettings, registry: ComponentBuilder, tokenizer: Tokenizer) -> DebateSetup:
    """The debate setup of a run file's ``[debate]`` section.

    Args:
        debate: the ``[debate]`` section (``RunConfig.debate``).
        registry: builds the chosen components (the plugin registry).
        tokenizer: the policy's tokenizer, for the renderer.
    """
    coordinator = build_choice(registry, "coordinator", debate.coordinator, "debate.coordinator")
    parser = build_choice(registry, "parser", debate.parser, "debate.parser")
    persona_set = build_choice(registry, "persona_set", debate.persona_set, "debate.persona_set")
    history_policy = build_choice(registry, "history_policy", debate.history_policy, "debate.history_policy")
    renderer_factory = build_choice(registry, "renderer", debate.renderer, "debate.renderer")
    if not callable(renderer_factory):
        raise PluginError(f"renderer '{debate.renderer.name}' must build a factory (tokenizer) -> Renderer")
    renderer = renderer_factory(tokenizer)
    answer_rule = build_choice(registry, "answer_rule", debate.final_answer, "debate.final_answer")
    for value, interface, attribute in (
        (coordinator, Coordinator, "coordinator"),
        (parser, OutputParser, "parser"),
        (persona_set, PersonaSet, "persona_set"),
        (history_policy, HistoryPolicy, "history_policy"),
        (renderer, Renderer, "renderer"),
    ):
        if not isinstance(value, interface):
            name = getattr(debate, attribute).name
            raise PluginError(
                f"debate.{attribute}: component '{name}' built a {type(value).__name__}, "
                f"which is not a {interface.__name__}"
            )
    return DebateSetup(
        num_agents=debate.num_agents,
        max_rounds=debate.max_rounds,
        max_tokens=debate.max_tokens,
        temperature=debate.temperature,
        coordinator=coordinator,
        parser=parser,
        persona_set=persona_set,
        history_policy=history_policy,
        renderer=renderer,
        consensus_rule=debate.stop_on_consensus,
        show_answers=debate.show_answers,
        recap=debate.recap,
        brief_instructions=debate.instructions == "brief",
        answer_rule=NamedAnswerRule(debate.final_answer.name, answer_rule),
        names={kind: getattr(debate, kind).name for kind in _COMPONENT_KINDS},
    )


_COMPONENT_KINDS = ("coordinator", "parser", "persona_set", "history_policy", "renderer", "final_answer")
"""The kinds of component a debate setup holds, by their ``[debate]`` key."""
