"""One debate, start to finish: turn protocols, what each agent sees, the built-in parser,
personas, history policies and renderers, sampling from a backend, transcripts and the final
answer. ``run_debate`` is the one code path of training, evaluation and ``debate run``.
"""

from __future__ import annotations

from debate_core.debate.coordinators import (
    Coordinator,
    ParallelCoordinator,
    ParallelOptions,
    ParallelTurns,
    SequentialCoordinator,
    SequentialTurns,
    TurnDraft,
    TurnState,
    TurnTicket,
)
from debate_core.debate.final_answer import (
    AnswerVotesRule,
    MajorityRule,
    RunoffRule,
    VoteWinnerRule,
    choose_answer,
    final_answer,
    final_solutions,
)
from debate_core.debate.history_policies import (
    AllRounds,
    HistoryOptions,
    LastRounds,
    LastRoundsOptions,
    NoHistory,
    clip_field,
)
from debate_core.debate.instructions import turn_instructions
from debate_core.debate.observations import build_messages, system_prompt
from debate_core.debate.personas import DEFAULT_PROFILES, DefaultPersonas, DefaultPersonasOptions, PlainPersonas
from debate_core.debate.rendering import (
    ChatTemplateOptions,
    ChatTemplateRenderer,
    RoleColonOptions,
    RoleColonRenderer,
    sampling_stop,
)
from debate_core.debate.running import FirstTurnPrompt, first_turn_prompt, run_debate
from debate_core.debate.runoff_protocol import RunoffCoordinator, RunoffOptions, RunoffTurns
from debate_core.debate.sampling_policy import SamplingClientPolicy
from debate_core.debate.setup import DebateSetup, build_debate_setup, sampling_temperature, turn_seed
from debate_core.debate.three_sections import THREE_SECTION_CONTRACT, ThreeSectionParser, parse_three_sections
from debate_core.debate.token_sections import token_sections
from debate_core.debate.transcripts import (
    dumps_transcript,
    load_transcript,
    load_transcripts,
    record_to_json,
    save_transcript,
)
from debate_core.debate.xml_parser import XML_CONTRACT, XmlParser, XmlParserOptions, parse_response

__all__ = [
    "DEFAULT_PROFILES",
    "XML_CONTRACT",
    "AllRounds",
    "ChatTemplateOptions",
    "ChatTemplateRenderer",
    "Coordinator",
    "DebateSetup",
    "FirstTurnPrompt",
    "DefaultPersonas",
    "DefaultPersonasOptions",
    "AnswerVotesRule",
    "MajorityRule",
    "VoteWinnerRule",
    "HistoryOptions",
    "LastRounds",
    "LastRoundsOptions",
    "NoHistory",
    "ParallelCoordinator",
    "ParallelOptions",
    "ParallelTurns",
    "PlainPersonas",
    "RunoffCoordinator",
    "RunoffOptions",
    "RunoffRule",
    "RunoffTurns",
    "RoleColonOptions",
    "RoleColonRenderer",
    "SamplingClientPolicy",
    "SequentialCoordinator",
    "SequentialTurns",
    "TurnDraft",
    "TurnState",
    "TurnTicket",
    "THREE_SECTION_CONTRACT",
    "ThreeSectionParser",
    "XmlParser",
    "XmlParserOptions",
    "build_debate_setup",
    "build_messages",
    "choose_answer",
    "clip_field",
    "dumps_transcript",
    "final_answer",
    "final_solutions",
    "first_turn_prompt",
    "load_transcript",
    "load_transcripts",
    "parse_response",
    "parse_three_sections",
    "record_to_json",
    "run_debate",
    "sampling_stop",
    "sampling_temperature",
    "save_transcript",
    "system_prompt",
    "token_sections",
    "turn_instructions",
    "turn_seed",
]
