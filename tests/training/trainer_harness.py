"""A deterministic world for trainer tests: the scripted backend, a tiny sums dataset and a
responder that writes contract-following (or broken) answers, registered as plugins."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from debate_core.config import RunConfig, load_run_config
from debate_core.plugin import (
    BackendSpec,
    DatasetSpec,
    GraderSpec,
    MetricSinkSpec,
    Registry,
    RewardSpec,
    get_registry,
    hookimpl,
)
from debate_core.records import Problem
from debate_core.runtime.manifests import latest_checkpoint
from tests.doubles.scripted_backend import ScriptedServiceClient

SERVICES: list[ScriptedServiceClient] = []
"""Every scripted service client built in this process (tests inspect the last one)."""


def respond(prompt: str, valid_only: bool = False) -> list[str]:
    """Candidate answers to the last sums question in ``prompt``: right, wrong, and broken."""
    question = re.findall(r"What is (\d+) \+ (\d+)\?", prompt)
    me = re.findall(r"You are Agent (\d+)", prompt)
    a, b = (int(x) for x in question[-1]) if question else (0, 0)
    self_id = int(me[-1]) if me else -1
    seen = sorted({int(x) for x in re.findall(r"\[Agent (\d+), round", prompt)} - {self_id})
    comparisons = ["N/A"]
    if len(seen) >= 2:
        comparisons = [f"Agent {seen[0]} > Agent {seen[1]}", f"Agent {seen[1]} > Agent {seen[0]}"]
    out = []
    for answer in (a + b, a + b + 1):
        for comparison in comparisons:
            out.append(
                f"<solution>{a} + {b}: \\boxed{{{answer}}}</solution>\n<evaluation>Checked.</evaluation>\n"
                f"<comparison>{comparison}</comparison>\n<consensus>NO</consensus>\n"
                "<consensus_reason>We differ.</consensus_reason>"
            )
    if not valid_only:
        out.append(f"I think it is {a + b}.")
    return out


@attrs.frozen(kw_only=True)
class TinySumsOptions:
    raise_on: str = ""
    """A split whose reading raises (fault tests)."""


class TinySums:
    """``What is a + b?`` with a fixed train and test split."""

    def __init__(self, options: TinySumsOptions) -> None:
        self.raise_on = options.raise_on

    def problems(self, split: str) -> Sequence[Problem]:
        if self.raise_on == split:
            raise OSError("disk on fire")
        if split == "train":
            pairs = [(i % 5, (3 * i) % 7) for i in range(10)]
        elif split == "test":
            pairs = [(i, i + 1) for i in range(4)]
        else:
            return []
        return [
            Problem(id=f"{split}-{i}", question=f"What is {a} + {b}?", answer=str(a + b))
            for i, (a, b) in enumerate(pairs)
        ]


@attrs.frozen(kw_only=True)
class ScriptedOptions:
    seed: int = 0
    valid_only: bool = False
    """Never answer outside the output contract."""


SERVICE_SETUP: list[Callable[[ScriptedServiceClient], None]] = []
"""Applied to every scripted service client when it is built (fault injection)."""


def build_scripted(options: ScriptedOptions) -> ScriptedServiceClient:
    responder = (lambda prompt: respond(prompt, valid_only=True)) if options.valid_only else respond
    service = ScriptedServiceClient(responder, seed=options.seed)
    for setup in SERVICE_SETUP:
        setup(service)
    SERVICES.append(service)
    return service


@contextmanager
def service_setup(setup: Callable[[ScriptedServiceClient], None]) -> Iterator[None]:
    """Apply ``setup`` to the scripted backends built inside the block."""
    SERVICE_SETUP.append(setup)
    try:
        yield
    finally:
        SERVICE_SETUP.remove(setup)


class HarnessPlugin:
    @hookimpl
    def debate_backends(self) -> list[BackendSpec]:
        return [BackendSpec(name="scripted", description="tests", build=build_scripted, options=ScriptedOptions)]

    @hookimpl
    def debate_datasets(self) -> list[DatasetSpec]:
        return [DatasetSpec(name="tiny_sums", description="tests", build=TinySums, options=TinySumsOptions)]

    @hookimpl
    def debate_rewards(self) -> list[RewardSpec]:
        return [
            RewardSpec(name="exploding", description="tests", build=Exploding, options=ExplodingOptions),
            RewardSpec(name="flat", description="tests: 0 for everyone", build=lambda _: flat_reward),
        ]

    @hookimpl
    def debate_graders(self) -> list[GraderSpec]:
        return [GraderSpec(name="broken", description="tests: always raises", build=lambda _: BrokenGrader())]

    @hookimpl
    def debate_metric_sinks(self) -> list[MetricSinkSpec]:
        return [
            MetricSinkSpec(name="signal_after", description="tests", build=build_signal_sink, options=SignalSinkOptions)
        ]


@attrs.frozen(kw_only=True)
class ExplodingOptions:
    calls_before: int = 4
    """Debates scored normally before it raises."""
    refusal: bool = False
    """Raise a ``DebateError`` written for the user (which passes through as it is) instead of a bug."""


class Exploding:
    """``win_rate`` until it has scored ``calls_before`` debates, then ``ZeroDivisionError``."""

    def __init__(self, options: ExplodingOptions) -> None:
        from debate_core.rewards.peer import build_win_rate

        self.inner = build_win_rate(None)
        self.left = options.calls_before
        self.refusal = options.refusal

    def __call__(self, debate: Any) -> Any:
        from debate_core.errors import DebateError

        if self.left == 0 and self.refusal:
            raise DebateError("reward 'exploding': refuses this debate")
        if self.left == 0:
            raise ZeroDivisionError("no votes to divide")
        self.left -= 1
        return self.inner(debate)


class BrokenGrader:
    def grade(self, solution: str, answer: str) -> Any:
        raise KeyError("no grading table")


def flat_reward(debate: Any) -> Any:
    from debate_core.records import RewardResult

    return RewardResult(agent_rewards=[0.0] * debate.num_agents)


@attrs.frozen(kw_only=True)
class SignalSinkOptions:
    step: int = 1
    signal: str = "SIGTERM"
    times: int = 1
    """How many times to send it, one right after the other."""


class SignalSink:
    """Sends a signal to this process (``times`` times) once the record of ``step`` is written."""

    def __init__(self, options: SignalSinkOptions) -> None:
        self.options = options

    def write(self, step: int, metrics: Any) -> None:
        if step == self.options.step:
            for _ in range(self.options.times):
                os.kill(os.getpid(), getattr(signal, self.options.signal))

    def close(self) -> None:
        pass


def build_signal_sink(options: SignalSinkOptions) -> Any:
    return lambda run_dir: SignalSink(options)


@contextmanager
def harness_registry() -> Iterator[Registry]:
    """The process registry with the harness plugins."""
    registry = get_registry()
    with registry.temporary_plugin(HarnessPlugin(), name="trainer-harness"):
        yield registry


BASE_OVERRIDES = (
    "backend.name=scripted",
    "dataset.name=tiny_sums",
    "grader.name=boxed",
    "reward.name=win_rate",
    "debate.num_agents=3",
    "debate.max_rounds=2",
    "debate.max_tokens=400",
    "training.batch_size=3",
    "training.num_iterations=4",
    "training.save_every=2",
    "training.learning_rate=0.05",
    "training.max_debates_in_flight=2",
    "evaluation.num_problems=2",
    "evaluation.modes=['direct', 'debate']",
    "logging.progress=off",
    "logging.num_groups_to_log=1",
)


def make_config(*overrides: str) -> RunConfig:
    return load_run_config(None, [*BASE_OVERRIDES, *overrides], registry=get_registry())


def read_metrics(path: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


VOLATILE = ("time/", "throughput/")
"""Metric name prefixes that vary from run to run (timings)."""


def train_quietly(config: RunConfig, registry: Registry, run_dir: Path, resume: bool = False, **kw: Any) -> Any:
    """``run_training`` on ``run_dir`` with the progress line off; returns its ``RunOutcome``."""
    import asyncio

    from debate_core.rundir.directory import RunDirectory
    from debate_core.training.progress import Progress
    from debate_core.training.run import run_training

    return asyncio.run(
        run_training(config, registry, RunDirectory(run_dir), resume=resume, progress=Progress("off"), **kw)
    )


def without_timings(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The metric records without the metrics that vary from run to run."""
    return [{k: v for k, v in r.items() if not k.startswith(VOLATILE)} for r in records]


def final_weights(run_dir: Path) -> np.ndarray:
    """The scripted backend's weights in a run's latest checkpoint."""
    checkpoint = latest_checkpoint(run_dir / "checkpoints")
    assert checkpoint is not None
    with np.load(checkpoint.backend_state) as state:
        return state["weights"].copy()
