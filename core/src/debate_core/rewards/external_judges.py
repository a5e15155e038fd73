"""The built-in external judges (docs/rewards.md#a-stronger-judge-phased-out): ``oracle``
(ground truth) and ``model`` (a model the run's backend serves, asked which answer is better)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs
from attrs import validators as v

from debate_core.records import AgentPolicy, JudgeHost, JudgePair, Message, Renderer

MODEL_JUDGE_PROMPT = (
    "You compare two answers to the same question. Reply with one line and nothing else: "
    "'A > B' if answer A is better, 'B > A' if answer B is better, or 'A = B' if they are equally good."
)
"""The system prompt of the ``model`` judge."""

_VERDICT = re.compile(r"\b([AB])\s*([>=<])\s*([AB])\b")


class OracleJudge:
    """Ground truth as the judge: of a correct and a wrong response the correct one is better;
    two responses the grader does not tell apart (both right, both wrong, or ungraded) are equal."""

    async def compare(self, pairs: Sequence[JudgePair], host: JudgeHost) -> Sequence[int]:
        out: list[int] = []
        for pair in pairs:
            a, b = pair.first.grade, pair.second.grade
            out.append(0 if a is None or b is None or a == b else (1 if a > b else -1))
        return out


def read_verdict(text: str) -> int | None:
    """+1, -1 or 0 from a model judge's reply (``A > B``, ``B > A``, ``A = B``, ``A < B``), None
    when it has none."""
    match = _VERDICT.search(text)
    if match is None or match.group(1) == match.group(3):
        return None
    left_better = {">": 1, "<": -1, "=": 0}[match.group(2)]
    return left_better if match.group(1) == "A" else -left_better


def _none_if_empty(value: str | None) -> str | None:
    """``""`` means "none" in a run file (TOML has no null)."""
    return value or None


@attrs.frozen(kw_only=True)
class ModelJudgeOptions:
    """Options of the ``model`` judge."""

    base_model: str
    """A model the run's backend serves (``embedded:debate-tiny``, a model directory, ``Qwen/Qwen3-8B``...)."""
    weights: str | None = attrs.field(default=None, converter=_none_if_empty)
    """A saved checkpoint of it to sample from (unset: the base model)."""
    max_tokens: int = attrs.field(default=16, validator=v.ge(1))
    """Tokens the judge may write for one verdict."""
    temperature: float = attrs.field(default=0.0, validator=v.ge(0.0))
    seed: int = 0


class ModelJudge:
    """A judge sampled from a model: shown the question and the two solutions as ``A`` and ``B``,
    it answers ``A > B``, ``B > A`` or ``A = B``; an unreadable reply is a tie (counted)."""

    def __init__(self, options: ModelJudgeOptions) -> None:
        self.options = options
        self._policy: tuple[AgentPolicy, Renderer] | None = None
        self.unreadable = 0
        """Replies without a verdict, over the judge's life."""
        self._reported = 0

    def messages(self, pair: JudgePair) -> list[Message]:
        """The judge's prompt for one pair."""
        question = (
            f"Question:\n{pair.question}\n\nAnswer A:\n{pair.first.response.solution}\n\n"
            f"Answer B:\n{pair.second.response.solution}\n\nWhich answer is better?"
        )
        return [Message("system", MODEL_JUDGE_PROMPT), Message("user", question)]

    async def compare(self, pairs: Sequence[JudgePair], host: JudgeHost) -> Sequence[int]:
        if self._policy is None:
            self._policy = await host.sampling_policy(self.options.base_model, self.options.weights)
        policy, renderer = self._policy
        verdicts: list[int] = []
        for index, pair in enumerate(pairs):
            action = await policy.sample(
                renderer.build_prompt(self.messages(pair)),
                stop=renderer.stop_condition(),
                temperature=self.options.temperature,
                max_tokens=self.options.max_tokens,
                seed=self.options.seed + index,
            )
            verdict = read_verdict(renderer.decode(action.tokens))
            if verdict is None:
                self.unreadable += 1
            verdicts.append(verdict or 0)
        return verdicts

    def take_counts(self) -> dict[str, float]:
        """``unreadable``: replies without a verdict since the last call (a ``CountingJudge``)."""
        counts = {"unreadable": float(self.unreadable - self._reported)}
        self._reported = self.unreadable
        return counts
