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

    A dataset may also define ``check(splits) -> None``, raising a ``DebateError`` that says what
    is wrong with any of the splits a run will read: ``debate config check`` and ``debate train``
    (before its first step) call it with those splits, e.g. ``("train", "test")``. A dataset that
    reads the network checks what it can without downloading (the ``datasets`` library installed);
    one without ``check`` has the problems of each split read instead.
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
