"""An evaluation metric's value and change as they may be stated without overclaiming
(docs/training.md#reading-the-figures): a proportion with its Wilson interval, a metric measured
over fewer than :data:`MIN_OBSERVATIONS` observations with its count and no standard error, and a
change called better or worse only by the metric's declared direction
(:mod:`debate_core.rundir.metric_directions`). The report, ``debate compare``, ``debate eval``
and the end-of-training summary all state figures through this module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypeGuard

import attrs

from debate_core.rundir.metric_directions import Direction, MetricFacts, metric_facts, observation_count
from debate_core.stats import wilson_interval

MIN_OBSERVATIONS = 20
"""Below this many observations a standard error says too little to base a verdict on."""


def is_number(value: object) -> TypeGuard[int | float]:
    """A finite int or float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def number_text(value: float) -> str:
    """A value to three decimals, a whole value of 1 or more without them."""
    return f"{round(value)}" if float(value).is_integer() and abs(value) >= 1 else f"{value:.3f}"


def is_rate(facts: MetricFacts | None) -> bool:
    """Whether a metric is a share between 0 and 1, or a difference of two (every declared metric
    that is not a count), so that it may be shown in percent."""
    return facts is not None and not facts.count


@attrs.frozen
class Figure:
    """One metric in one evaluation."""

    value: float
    error: float | None
    """Its recorded standard error, if any."""
    count: int | None
    """How many observations it was measured over, if known."""
    facts: MetricFacts | None

    @property
    def few(self) -> bool:
        """Measured over fewer than :data:`MIN_OBSERVATIONS` observations."""
        return self.count is not None and self.count < MIN_OBSERVATIONS

    @property
    def is_count(self) -> bool:
        return self.facts is not None and self.facts.count

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% Wilson interval of a proportion with a known, non-zero count."""
        if self.facts is None or not self.facts.proportion or not self.count:
            return None
        return wilson_interval(self.value, self.count)

    def main_text(self, percent: bool = False) -> str:
        """The value; with ``percent``, a rate (a declared metric, not a count) in percent."""
        if self.is_count:
            return f"{round(self.value)}"
        if percent and is_rate(self.facts):
            return f"{self.value * 100:.1f}%"
        return f"{self.value:.3f}" if self.facts is not None and self.facts.proportion else number_text(self.value)

    def detail_text(self, percent: bool = False) -> str:
        """What qualifies the value: its interval or ± SE, and its count where that matters."""
        if self.is_count:
            return ""
        scale, places = (100, 1) if percent and is_rate(self.facts) else (1, 3)
        parts = []
        interval = self.interval
        if interval is not None:
            parts.append(f"[{interval[0] * scale:.{places}f}, {interval[1] * scale:.{places}f}]")
        elif self.error is not None and not self.few:
            parts.append(f"± {self.error * scale:.{places}f}" if scale != 1 else f"± {number_text(self.error)}")
        if self.count is not None and (self.few or interval is not None):
            parts.append(f"(n={self.count})")
        return " ".join(parts)

    def text(self, percent: bool = False) -> str:
        """The value and its qualification, as one phrase (``percent``: rates in percent)."""
        return " ".join(part for part in (self.main_text(percent), self.detail_text(percent)) if part)


def read_figure(metrics: Mapping[str, object], name: str) -> Figure | None:
    """The figure of ``name`` (a full ``eval_<dataset>/...`` name) in an evaluation's metrics;
    ``None`` when it holds no finite value of it."""
    value = metrics.get(name)
    if not is_number(value):
        return None
    error = metrics.get(f"{name}_se")
    return Figure(
        float(value),
        float(error) if is_number(error) else None,
        observation_count(metrics, name),
        metric_facts(name),
    )


@attrs.frozen
class Paired:
    """A change measured per problem: its mean, standard error and number of problems."""

    change: float
    error: float
    count: int | None


def recorded_paired(metrics: Mapping[str, object], name: str) -> Paired | None:
    """The paired change since the run's baseline that an evaluation recorded for ``name``
    (``<name>_change`` and ``<name>_change_se``), over its problems."""
    change, error = metrics.get(f"{name}_change"), metrics.get(f"{name}_change_se")
    if not is_number(change):
        return None
    problems = metrics.get(f"{name.split('/', 1)[0]}/num_problems")
    return Paired(
        float(change),
        float(error) if is_number(error) else math.nan,
        int(problems) if is_number(problems) else None,
    )


@attrs.frozen
class Change:
    """The change of one metric between two evaluations."""

    value: float
    error: float | None
    """Its standard error (``None``: none can be given)."""
    paired: bool
    """Measured per problem (else the two evaluations are taken as independent)."""
    count: int | None
    """The fewest observations behind it, if known."""
    facts: MetricFacts | None

    @property
    def few(self) -> bool:
        return self.count is not None and self.count < MIN_OBSERVATIONS

    @property
    def ratio(self) -> float | None:
        """The change in standard errors; ``None`` where no SE-based verdict may be given."""
        if self.few or self.error is None or not self.error > 0:
            return None
        return self.value / self.error

    @property
    def verdict(self) -> str | None:
        """``better`` or ``worse`` by the metric's declared direction; ``None`` for a count, a
        metric without a direction, no change, or too few observations."""
        if self.few or self.facts is None or self.facts.count or self.facts.better is None or self.value == 0:
            return None
        up = self.value > 0
        return "better" if up == (self.facts.better is Direction.HIGHER) else "worse"

    def main_text(self, percent: bool = False) -> str:
        """The signed change; with ``percent``, a rate's change in percentage points."""
        if self.facts is not None and self.facts.count:
            return f"{round(self.value):+d}"
        return f"{self.value * 100:+.1f}" if percent and is_rate(self.facts) else f"{self.value:+.3f}"

    def detail_text(self, percent: bool = False) -> str:
        if self.facts is not None and self.facts.count:
            return ""
        how = "paired" if self.paired else "independent"
        if self.few:
            return f"(n={self.count}: too few for an SE)"
        ratio = self.ratio
        if ratio is not None and self.error is not None:
            error = f"{self.error * 100:.1f}" if percent and is_rate(self.facts) else f"{self.error:.3f}"
            return f"± {error} ({ratio:+.1f} SE, {how})"
        if self.error is not None and self.error == 0:
            return f"(no spread, {how})"
        return ""

    def text(self, percent: bool = False) -> str:
        """The change and its SE or count, as one phrase (``percent``: a rate's in points)."""
        return " ".join(part for part in (self.main_text(percent), self.detail_text(percent)) if part)


def change_between(before: Figure, after: Figure, paired: Paired | None = None) -> Change:
    """The change from ``before`` to ``after``: the paired one when given, else the difference
    with the two taken as independent (its SE from both SEs, where both have one)."""
    counts = [c for c in (before.count, after.count) if c is not None]
    if paired is not None:
        count = paired.count if paired.count is not None else (min(counts) if counts else None)
        error = paired.error if math.isfinite(paired.error) else None
        return Change(paired.change, error, True, count, after.facts)
    error = math.hypot(before.error, after.error) if before.error is not None and after.error is not None else None
    return Change(after.value - before.value, error, False, min(counts) if counts else None, after.facts)


def change_in(
    before: Mapping[str, object], after: Mapping[str, object], name: str, paired: Paired | None = None
) -> Change | None:
    """The change of ``name`` between two evaluations' metrics: ``paired`` when given (even where
    the values themselves are not), else from both values (``None`` when either lacks it)."""
    first, last = read_figure(before, name), read_figure(after, name)
    if first is None or last is None:
        if paired is None:
            return None
        empty = Figure(math.nan, None, None, metric_facts(name))
        return change_between(empty, empty, paired)
    return change_between(first, last, paired)
