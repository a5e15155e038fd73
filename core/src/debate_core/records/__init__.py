"""The records that pass between the parts of debate-core, and the interfaces each kind of
component implements.

This is the bottom layer: it imports only the standard library and attrs. Everything else
(configuration, the debate, rewards, tasks, backends, the trainer) is built on these types.
"""

from __future__ import annotations

from debate_core.records.answers import (
    AnswerReader,
    AnswerRule,
    Candidate,
    DebateAnswer,
    answer_of,
    normalise_solution,
)
from debate_core.records.authorship import CheckedComparisons, apply_authorship, apply_seated_authorship
from debate_core.records.debate import (
    CONSENSUS_RULES,
    AuthoredComparison,
    Comparison,
    ComparisonOp,
    ConsensusRule,
    DebateRecord,
    HistoryIndex,
    ParsedResponse,
    ParseError,
    SectionSpan,
    Turn,
    counts_as_consensus,
    round_reaches_consensus,
)
from debate_core.records.episodes import (
    AgentPolicy,
    AgentTrajectory,
    DebateEpisode,
    SampledAction,
    Transition,
    TurnView,
    ViewingPolicy,
)
from debate_core.records.external_judges import CountingJudge, Judge, JudgeHost, JudgePair, Verdict
from debate_core.records.metrics import MetricSink, MetricValue
from debate_core.records.output_contract import OutputContract, OutputParser, RenderedResponse, ResponseContent
from debate_core.records.prompts import (
    HistoryEntry,
    HistoryPolicy,
    Message,
    Persona,
    PersonaSet,
    Renderer,
    StopCondition,
    Tokenizer,
)
from debate_core.records.rewards import (
    GENERATOR_STREAM,
    JUDGE_STREAM,
    RewardFunction,
    RewardResult,
    TrainingRound,
    TrainingTimeReward,
)
from debate_core.records.tasks import Dataset, Grade, Grader, Problem
from debate_core.records.votes import AgentVotes, VoteTally, tally_votes, vote_counts

__all__ = [
    "AnswerReader",
    "AnswerRule",
    "Candidate",
    "DebateAnswer",
    "answer_of",
    "normalise_solution",
    "CONSENSUS_RULES",
    "GENERATOR_STREAM",
    "JUDGE_STREAM",
    "AgentPolicy",
    "AgentTrajectory",
    "AgentVotes",
    "AuthoredComparison",
    "CheckedComparisons",
    "Comparison",
    "ComparisonOp",
    "CountingJudge",
    "ConsensusRule",
    "Dataset",
    "DebateEpisode",
    "DebateRecord",
    "Grade",
    "Grader",
    "HistoryEntry",
    "HistoryIndex",
    "HistoryPolicy",
    "Judge",
    "JudgeHost",
    "JudgePair",
    "Message",
    "MetricSink",
    "MetricValue",
    "OutputContract",
    "OutputParser",
    "ParseError",
    "ParsedResponse",
    "Persona",
    "PersonaSet",
    "Problem",
    "RenderedResponse",
    "Renderer",
    "ResponseContent",
    "RewardFunction",
    "RewardResult",
    "SampledAction",
    "SectionSpan",
    "StopCondition",
    "Tokenizer",
    "TrainingRound",
    "TrainingTimeReward",
    "Transition",
    "Turn",
    "TurnView",
    "Verdict",
    "ViewingPolicy",
    "VoteTally",
    "apply_authorship",
    "apply_seated_authorship",
    "counts_as_consensus",
    "round_reaches_consensus",
    "tally_votes",
    "vote_counts",
]
