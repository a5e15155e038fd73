"""Learning-rate schedules: constant, linear decay and cosine decay to zero."""

from __future__ import annotations

import math
from typing import Literal

Schedule = Literal["constant", "linear", "cosine"]


def learning_rate_at(base: float, schedule: Schedule, step: int, total_steps: int) -> float:
    """The learning rate of update ``step`` (0-based) out of ``total_steps``.

    ``linear``: ``base * (1 - step / total)``; ``cosine``: ``base * (1 + cos(pi * step / total)) / 2``.
    Both start at ``base`` and approach 0 at the last step without reaching it.
    """
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if schedule == "constant" or total_steps <= 0:
        return base
    progress = min(step, total_steps) / total_steps
    if schedule == "linear":
        return base * (1.0 - progress)
    if schedule == "cosine":
        return base * 0.5 * (1.0 + math.cos(math.pi * progress))
    raise ValueError(f"unknown learning-rate schedule {schedule!r}: expected constant, linear or cosine")
