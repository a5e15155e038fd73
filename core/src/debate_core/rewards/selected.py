"""The ``selected_answer`` reward (docs/rewards.md#selected_answer): agreement with the answer the
debate's answer rule selects, a label-free reward that trains what the rule reads.

- The debate's answer is chosen by the answer rule of option ``rule`` (``vote_winner`` by
  default; docs/answer-rules.md), reading answers as option ``answers`` says.
- Each agent's final answer is its latest turn that followed the output contract
  (``DebateRecord.final_turn``), read the same way; an agent with none has no answer.
- ``r_i = 1`` when agent ``i``'s final answer is the selected answer, else 0; every agent gets 0
  when the rule selects none.

This is the test-time-RL reward of DTE (arXiv 2505.15734) with the debate's own rule in place of a
majority vote. No ground truth is read: not ``DebateRecord.answer``, not ``Turn.grade``.
"""

from __future__ import annotations

import attrs
from attrs import validators as v

from debate_core.config.choices import ComponentChoice, nested_component
from debate_core.plugin import BuildContext
from debate_core.records import AnswerReader, AnswerRule, DebateRecord, RewardResult, answer_of
from debate_core.rewards.majority import AnswerForm
from debate_core.stats import mean


@attrs.frozen(kw_only=True)
class SelectedAnswerOptions:
    """Options of the ``selected_answer`` reward."""

    rule: ComponentChoice = attrs.field(
        factory=lambda: ComponentChoice(name="vote_winner"), metadata=nested_component("answer_rule")
    )
    """The answer rule that selects the debate's answer; set it to the run's ``debate.final_answer``
    so that RL trains the answer the run gives."""
    answers: AnswerForm = attrs.field(default="boxed", validator=v.in_(("boxed", "text")))
    """How answers are read from solutions: ``boxed`` (the last ``\\boxed{}``, normalised) or
    ``text`` (the whole solution, whitespace collapsed)."""


class SelectedAnswerReward:
    """1 for an agent whose final answer is the one the answer rule selects, else 0."""

    def __init__(self, rule: AnswerRule, read_answer: AnswerReader) -> None:
        self.rule = rule
        self.read_answer = read_answer

    def __call__(self, debate: DebateRecord) -> RewardResult:
        selected = self.rule(debate, self.read_answer)
        answers: list[str | None] = []
        for agent in range(debate.num_agents):
            turn = debate.final_turn(agent)
            answers.append(None if turn is None else answer_of(turn.response.solution, self.read_answer)[0])
        rewards = tuple(float(selected.answer is not None and answer == selected.answer) for answer in answers)
        metrics = {
            "selected_answer/has_answer": float(selected.answer is not None),
            "selected_answer/support": mean(rewards),
            "selected_answer/fallback": float(selected.fallback is not None),
        }
        return RewardResult(agent_rewards=rewards, metrics=metrics)

    def __repr__(self) -> str:
        return f"SelectedAnswerReward({self.rule!r}, {self.read_answer!r})"


def build_selected_answer(
    options: SelectedAnswerOptions, context: BuildContext, read_answer: AnswerReader
) -> SelectedAnswerReward:
    """Build the answer rule through the host's registry (``context``), then the reward."""
    rule: AnswerRule = context.build("answer_rule", options.rule, "rule")
    return SelectedAnswerReward(rule, read_answer)
