"""Questions, datasets and graders: the task side of a debate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import attrs


@attrs.frozen
class Problem:
    """One question, with its ground-truth answer when the task is verifiable."""

    id: str
    question: str
    answer: str | None = None
    metadata: Mapping[str, str] = attrs.field(factory=dict)


@runtime_checkable
class Dataset(Protocol):
    """A source of problems. ``split`` is ``train`` or ``test``; order must be deterministic.

    A dataset may also define ``check() -> None``, raising a ``DebateError`` that says what is
    wrong: ``debate config check`` calls it to find a missing file or an unreadable first record
    before a run starts (the ``jsonl`` dataset does), without loading every problem.
    """

    def problems(self, split: str) -> Sequence[Problem]: ...


@attrs.frozen
class Grade:
    """The check of one solution: was an answer found (format), and is it right."""

    formatted: bool
    correct: bool
    extracted: str | None = None


@runtime_checkable
class Grader(Protocol):
    """Checks a solution text against a ground-truth answer."""

    def grade(self, solution: str, answer: str) -> Grade: ...
