"""What a run's phases read (``RunContext``) and where the run stands (``RunPosition``).

The loop (``training.loop``) schedules; the phase steps it schedules (``rl_iteration``,
``warmstart_step``, ``evaluate_weights``, the ``Checkpointer``) take these two records instead of
reaching into a trainer object, and hand the steps they are made of only the fields those use
(docs/architecture.md#narrow-seams).
"""

from __future__ import annotations

import attrs

from debate_core.config import RunConfig
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.session import BackendSession
from debate_core.training.collapse.alarms import AlarmMonitor
from debate_core.training.costs import CostTracker
from debate_core.training.progress import Progress
from debate_core.training.run_components import RunComponents
from debate_core.training.signals import StopRequest


@attrs.frozen
class RunContext:
    """The run's configuration, its built components, the open backend session, the run
    directory, where progress lines and stop requests go, and its cost count: fixed for the whole
    run (the collapse alarms keep what they have seen)."""

    config: RunConfig
    components: RunComponents
    session: BackendSession
    run_dir: RunDirectory
    progress: Progress
    stop: StopRequest
    alarms: AlarmMonitor = attrs.field(
        default=attrs.Factory(lambda self: AlarmMonitor(self.config.alarms), takes_self=True)
    )
    """The collapse alarms of the run (``training.collapse.alarms``): what they have seen and said."""
    costs: CostTracker = attrs.field(
        default=attrs.Factory(
            lambda self: CostTracker(self.session.tokens, self.config.pricing, self.config.training.max_cost),
            takes_self=True,
        )
    )
    """The run's tokens and dollars, read from the session's meter (docs/training.md#tokens-and-cost)."""

    def step_label(self, step: int) -> str:
        """``step 21/210``: the step of the update under way, out of every step of the run."""
        total = self.components.total_iterations
        if self.config.warmstart.enabled:
            total += self.config.warmstart.steps
        return f"step {step}/{total}"


@attrs.define
class RunPosition:
    """How far the run has come. Steps count updates, warm-start steps first, then RL
    iterations: step ``s`` is the state after ``s`` updates (docs/training.md#one-iteration)."""

    step: int = 0
    warmstart_steps: int = 0
    iteration: int = 0
    last_checkpoint: int | None = None
    """The step of the run's latest checkpoint (None before the first)."""
    uncommitted: bool = False
    """True from the start of an update until its step's metrics are written: a checkpoint then
    would not match any written step, so failures in between leave the last checkpoint standing."""

    @property
    def last_checkpoint_text(self) -> str:
        """``step 12`` or ``no checkpoint yet``, for messages about where a resume would start."""
        return f"step {self.last_checkpoint}" if self.last_checkpoint is not None else "no checkpoint yet"
