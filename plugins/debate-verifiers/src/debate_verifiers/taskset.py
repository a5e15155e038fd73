"""The tasks: a run file's dataset, one task per problem (docs/verifiers.md)."""

from __future__ import annotations

from collections.abc import Iterator

import verifiers.v1 as vf
from pydantic import Field

from debate_core.hosting import load_problems


class DebateTaskData(vf.TaskData):
    """One problem of the run file's dataset: the question the agents debate, and the answer the
    debate's answer is graded against (None where the dataset has none)."""

    question: str = ""
    answer: str | None = None


class DebateTask(vf.Task[DebateTaskData]):
    """A problem to debate."""


class DebateTasksetConfig(vf.TasksetConfig):
    """Which debate: the run file (``--taskset.run-file``), its overrides (``section.key=value``,
    as ``debate run`` takes them), the dataset split, and a checkpoint whose tokenizer to use
    (default: the base model's)."""

    run_file: str = ""
    overrides: list[str] = Field(default_factory=list)
    split: str = "test"
    checkpoint: str | None = None


class DebateTaskset(vf.Taskset[DebateTask, DebateTasksetConfig]):
    """The run file's dataset as tasks, in the dataset's order (task ``i`` is what ``debate run
    --questions`` debates ``i``-th, with seed ``run.seed + i``)."""

    def load(self) -> Iterator[DebateTask]:
        if not self.config.run_file:
            raise ValueError("debate_verifiers needs a run file: --taskset.run-file FILE (a debate-core run file)")
        for problem in load_problems(self.config.run_file, self.config.overrides, self.config.split):
            yield DebateTask(DebateTaskData(id=problem.id, question=problem.question, answer=problem.answer))
