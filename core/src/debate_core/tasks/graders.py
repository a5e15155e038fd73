"""Answer graders: ``boxed`` (the last ``\\boxed{...}``), ``none`` (non-verifiable prompts) and
``math_verify`` (symbolic equivalence through the math-verify package, when installed)."""

from __future__ import annotations

import re
import threading
from types import ModuleType

from debate_core.errors import ConfigError
from debate_core.records import Grade
from debate_core.tasks.answers import answers_match, extract_last_boxed


class BoxedGrader:
    """Correct when the last ``\\boxed{...}`` of the solution matches the answer after
    normalisation; a ground truth that itself holds a ``\\boxed{}`` is compared by its content."""

    def grade(self, solution: str, answer: str) -> Grade:
        predicted = extract_last_boxed(solution)
        if predicted is None:
            return Grade(formatted=False, correct=False, extracted=None)
        truth = extract_last_boxed(answer)
        return Grade(
            formatted=True, correct=answers_match(predicted, answer if truth is None else truth), extracted=predicted
        )


class NoGrader:
    """For prompts without a ground truth: a solution is formatted when it is not empty,
    and never correct."""

    def grade(self, solution: str, answer: str) -> Grade:
        return Grade(formatted=bool(solution.strip()), correct=False, extracted=None)


_MATH_DELIMITER = re.compile(r"(?<!\\)\$")
"""A ``$`` that opens or closes inline maths: not ``\\$``, the escaped dollar sign of ``\\$18.90``."""

MATH_VERIFY_TIMEOUT_S = 5
"""math-verify's own limit on one parse or comparison, on the main thread (its default)."""


def math_verify_timeout() -> int | None:
    """The time limit to hand math-verify: its limits use ``signal.alarm``, which only the main
    thread may set, and off it every call would fail (and grade wrong); there it runs without one."""
    return MATH_VERIFY_TIMEOUT_S if threading.current_thread() is threading.main_thread() else None


def gold_text(answer: str) -> str:
    """The ground truth as math-verify should read it: as it is when it holds a ``\\boxed{}`` or
    inline maths, otherwise wrapped in ``$...$`` (a bare ``\\$36`` is a price, not maths delimiters)."""
    return answer if "\\boxed" in answer or _MATH_DELIMITER.search(answer) else f"${answer}$"


class MathVerifyGrader:
    """Symbolic equivalence of the solution's final answer and the ground truth (math-verify).

    The same grades from any thread: on the main thread math-verify keeps its 5-second limits,
    elsewhere it runs without them (they rely on signals, docs/datasets.md#graders)."""

    def __init__(self, module: ModuleType) -> None:
        self._mv = module

    def grade(self, solution: str, answer: str) -> Grade:
        limit = math_verify_timeout()
        try:
            gold = self._mv.parse(gold_text(answer), parsing_timeout=limit)
            predicted = self._mv.parse(solution, parsing_timeout=limit)
        except Exception:  # a model's text must never stop training
            return Grade(formatted=False, correct=False, extracted=None)
        if not predicted:
            return Grade(formatted=False, correct=False, extracted=None)
        try:
            correct = bool(self._mv.verify(gold, predicted, timeout_seconds=limit))
        except Exception:
            correct = False
        return Grade(formatted=True, correct=correct, extracted=str(predicted[-1]))


def build_boxed(options: None) -> BoxedGrader:
    """The ``boxed`` grader (it takes no options)."""
    return BoxedGrader()


def build_none(options: None) -> NoGrader:
    """The ``none`` grader (it takes no options)."""
    return NoGrader()


def build_math_verify(options: None) -> MathVerifyGrader:
    """The math-verify grader; a clear error when the package is not installed."""
    try:
        import math_verify
    except ImportError:
        raise ConfigError(
            "grader 'math_verify' needs the math-verify package: pip install math-verify (or use the 'boxed' grader)"
        ) from None
    return MathVerifyGrader(math_verify)
