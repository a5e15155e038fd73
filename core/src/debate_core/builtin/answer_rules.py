"""Built-in answer rules: ``majority``, ``vote_winner``, ``answer_votes`` and ``runoff`` (docs/answer-rules.md)."""

from __future__ import annotations

from debate_core.debate import AnswerVotesRule, MajorityRule, RunoffRule, VoteWinnerRule
from debate_core.plugin import AnswerRuleSpec, hookimpl


@hookimpl
def debate_answer_rules() -> list[AnswerRuleSpec]:
    return [
        AnswerRuleSpec(
            name="majority",
            description="the answer most agents' final solutions hold, ties to the peer votes their agents received",
            build=lambda _: MajorityRule(),
        ),
        AnswerRuleSpec(
            name="vote_winner",
            description="the answer of the solution the debate's comparisons score highest (Borda)",
            build=lambda _: VoteWinnerRule(),
        ),
        AnswerRuleSpec(
            name="answer_votes",
            description="the comparisons summed per answer, votes between solutions of one answer left out",
            build=lambda _: AnswerVotesRule(),
        ),
        AnswerRuleSpec(
            name="runoff",
            description="the two most held round-1 answers, decided by the votes between them, ties to the more held",
            build=lambda _: RunoffRule(),
        ),
    ]
