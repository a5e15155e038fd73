"""The ``majority`` reward (docs/rewards.md#majority): agreement with the debate's majority
answer, the test-time-RL baseline (TTRL), read from the agents' final answers and nothing else.

- Each agent's final answer is its latest turn that followed the output contract
  (``DebateRecord.final_turn``), read by ``read_answer`` (the last ``\\boxed{}``, normalised, for
  the built-in plugin); an agent with no such turn, or whose answer cannot be read, has none.
- The majority answer is the answer held by more agents than any other (a plurality). When two
  or more answers tie for the most agents, or no agent has an answer, the debate has none.
- ``r_i = 1`` when agent ``i``'s final answer is the majority answer, else 0.

No ground truth is read: not ``DebateRecord.answer``, not ``Turn.grade``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Literal

import attrs
from attrs import validators as v

from debate_core.records import DebateRecord, RewardResult
from debate_core.stats import mean

AnswerReader = Callable[[str], str | None]
"""Reads the final answer of a solution text (``None``: no answer there)."""

AnswerForm = Literal["boxed", "text"]
"""How the ``majority`` reward reads an answer: ``boxed``, the last ``\\boxed{...}`` normalised
(``1,000`` = ``1000``, ``0.5`` = ``1/2``); ``text``, the whole solution with runs of whitespace
collapsed (for tasks whose answers are not boxed)."""


@attrs.frozen(kw_only=True)
class MajorityOptions:
    """Options of the ``majority`` reward."""

    answers: AnswerForm = attrs.field(default="boxed", validator=v.in_(("boxed", "text")))
    """How an agent's answer is read from its final solution: ``boxed`` (the last ``\\boxed{}``,
    normalised) or ``text`` (the whole solution, whitespace collapsed)."""


def final_answers(debate: DebateRecord, read_answer: AnswerReader) -> list[str | None]:
    """Each agent's final answer as ``read_answer`` reads it (``None``: the agent has none)."""
    out: list[str | None] = []
    for agent in range(debate.num_agents):
        turn = debate.final_turn(agent)
        out.append(None if turn is None else read_answer(turn.response.solution))
    return out


def majority_answer(answers: list[str | None]) -> str | None:
    """The answer held by more agents than any other; ``None`` on a tie for the most, or with none."""
    counts = Counter(a for a in answers if a is not None).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


class MajorityReward:
    """1 for an agent whose final answer is the debate's majority answer, else 0."""

    def __init__(self, read_answer: AnswerReader) -> None:
        self.read_answer = read_answer

    def __call__(self, debate: DebateRecord) -> RewardResult:
        answers = final_answers(debate, self.read_answer)
        winner = majority_answer(answers)
        rewards = tuple(float(winner is not None and answer == winner) for answer in answers)
        metrics = {
            "majority/has_majority": float(winner is not None),
            "majority/support": mean(rewards),
            "majority/answered": mean(float(a is not None) for a in answers),
        }
        return RewardResult(agent_rewards=rewards, metrics=metrics)

    def __repr__(self) -> str:
        return f"MajorityReward({self.read_answer!r})"


def text_answer(solution: str) -> str | None:
    """The whole solution with runs of whitespace collapsed; ``None`` when it is empty."""
    text = " ".join(solution.split())
    return text or None
