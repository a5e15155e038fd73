"""External judges: components that give their own verdict on pairs of responses, mixed into
the peer reward while their weight lasts (docs/rewards.md#a-stronger-judge-phased-out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

from debate_core.records.debate import Turn
from debate_core.records.episodes import AgentPolicy
from debate_core.records.prompts import Renderer


@attrs.frozen
class JudgePair:
    """Two responses to one question, for a judge: its verdict is +1 when ``first`` is better,
    -1 when ``second`` is, 0 when they are equal (or it cannot tell)."""

    question: str
    answer: str | None
    first: Turn
    second: Turn


@runtime_checkable
class JudgeHost(Protocol):
    """What the trainer offers a judge: a policy and its renderer for a model the run's backend
    serves (``weights``: a saved checkpoint of it, or None for the base model), and a folder of the
    run directory for the judge's own files."""

    judge_dir: Path | None
    """``RUN_DIR/judges/``, where a judge keeps what a resumed run should find again (a cache of the
    answers it paid for); None outside a training run. The folder may not exist yet. Hosts written
    before it may lack the attribute: read it with ``getattr(host, "judge_dir", None)``."""

    async def sampling_policy(self, base_model: str, weights: str | None) -> tuple[AgentPolicy, Renderer]: ...


Verdict = int | None
"""A judge's verdict on one pair: +1 (the first is better), -1 (the second), 0 (equal, or it cannot
tell), or None: it gives no verdict (it could not get an answer it can read: an endpoint down,
slow, answering garbage or out of its format), and ``judge_mix`` stops the run or scores that
debate with the peer reward alone (its option ``on_unavailable``)."""


@runtime_checkable
class Judge(Protocol):
    """An external judge: one verdict (+1, -1, 0, or None to abstain) per pair, in order.

    A judge may also define ``check() -> None``, raising a ``DebateError`` when it cannot judge
    at all (an endpoint that nothing answers at): ``debate config check`` and ``debate train``
    call it before the run starts.
    """

    async def compare(self, pairs: Sequence[JudgePair], host: JudgeHost) -> Sequence[Verdict]: ...


@runtime_checkable
class CountingJudge(Judge, Protocol):
    """A judge that counts what happened while it judged (requests, retries, failures, cache hits):
    ``judge_mix`` takes the counts after each debate's ``compare`` and adds them to that debate's
    metrics as ``judge/<counter>`` (averaged over the iteration's debates, like every reward metric).

    Example::

        class Counting:
            def __init__(self): self.counts = collections.Counter()
            async def compare(self, pairs, host):
                self.counts["asked"] += len(pairs)
                return [0] * len(pairs)
            def take_counts(self):
                counts, self.counts = dict(self.counts), collections.Counter()
                return counts
    """

    def take_counts(self) -> Mapping[str, float]:
        """The counts since the last call, which starts them again from zero."""
        ...
