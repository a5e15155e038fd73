"""Collapse alarms (docs/training.md#collapse-alarms): after each RL iteration, the label-free
figures of ``training.collapse.monitor`` (and the comparison rate), averaged over the last
``alarms.window`` iterations, are compared with the thresholds of ``[alarms]``. An alarm that
trips is recorded as ``alarm/<name> = 1`` in the iteration's metrics (0 otherwise) and said in
one line naming the failure mode, once per run, or again every ``alarms.repeat_every``
iterations while it keeps tripping.

* ``degenerate_consensus``: ``monitor/degenerate_consensus`` > ``max_degenerate_consensus``
  (agents agree from round 1, so votes have nothing to compare);
* ``no_signal``: ``monitor/no_signal`` > ``max_no_signal`` (rewards do not vary within debates);
* ``random_noise``: ``monitor/answer_diversity`` > ``max_answer_diversity`` (every agent answers
  differently, so votes rank noise);
* ``format_collapse``: ``monitor/unreadable_answers`` > ``max_unreadable_answers`` or
  ``debate/comparison_rate`` < ``min_comparison_rate`` (answers or comparisons stop being written);
* ``constant_answer``: ``monitor/top_answer_share`` > ``max_top_answer_share`` (one answer for
  every problem).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

import attrs

from debate_core.config.sections import AlarmSettings
from debate_core.records.json_values import JsonMapping
from debate_core.records.metrics import MetricValue
from debate_core.stats import mean


@attrs.frozen
class AlarmRule:
    """One threshold: ``metric``'s window mean above (``"max"``) or below (``"min"``) ``limit``."""

    metric: str
    bound: str
    limit: float
    says: str
    """What the figure is, for the line: ``{value}`` and ``{limit}`` are filled in."""

    def tripped(self, value: float) -> bool:
        return value > self.limit if self.bound == "max" else value < self.limit


@attrs.frozen
class Alarm:
    """A failure mode and the rules that trip it (any one of them)."""

    name: str
    mode: str
    rules: tuple[AlarmRule, ...]
    why: str


RuleSpec = tuple[str, str, str, str]
"""``(metric, bound, the [alarms] key of its limit, what the line says)``."""

ALARMS: tuple[tuple[str, str, str, tuple[RuleSpec, ...]], ...] = (
    (
        "degenerate_consensus",
        "degenerate consensus",
        "the agents never disagree, so their votes have nothing to tell apart",
        (
            (
                "monitor/degenerate_consensus",
                "max",
                "max_degenerate_consensus",
                "{value} of debates agree from round 1 to the end (alarm above {limit})",
            ),
        ),
    ),
    (
        "no_signal",
        "no signal",
        "those debates carry no gradient",
        (
            (
                "monitor/no_signal",
                "max",
                "max_no_signal",
                "{value} of debates give every agent the same reward (alarm above {limit})",
            ),
        ),
    ),
    (
        "random_noise",
        "random noise",
        "nearly every agent answers differently, so the votes rank noise",
        (
            (
                "monitor/answer_diversity",
                "max",
                "max_answer_diversity",
                "answer diversity {value} (alarm above {limit})",
            ),
        ),
    ),
    (
        "format_collapse",
        "format collapse",
        "the policy stops writing what the rewards read",
        (
            (
                "monitor/unreadable_answers",
                "max",
                "max_unreadable_answers",
                "{value} of agents end without a readable answer (alarm above {limit})",
            ),
            ("debate/comparison_rate", "min", "min_comparison_rate", "comparison rate {value} (alarm below {limit})"),
        ),
    ),
    (
        "constant_answer",
        "constant answer",
        "the policy gives the same answer whatever the problem",
        (
            (
                "monitor/top_answer_share",
                "max",
                "max_top_answer_share",
                "one answer holds {value} of all final answers (alarm above {limit})",
            ),
        ),
    ),
)
"""Every alarm: its name, the failure mode it names, why that matters, and its rules."""


def alarms_of(settings: AlarmSettings) -> tuple[Alarm, ...]:
    """The alarms with the thresholds of ``settings``."""
    return tuple(
        Alarm(
            name,
            mode,
            tuple(AlarmRule(m, bound, float(getattr(settings, key)), says) for m, bound, key, says in rules),
            why,
        )
        for name, mode, why, rules in ALARMS
    )


@attrs.define
class AlarmMonitor:
    """The alarms of one run: the last ``window`` values of each figure, and when each alarm was
    last said (so that a tripped alarm is not said every iteration)."""

    settings: AlarmSettings
    history: dict[str, deque[float]] = attrs.field(factory=dict)
    said_at: dict[str, int] = attrs.field(factory=dict)

    def check(self, iteration: int, metrics: Mapping[str, MetricValue]) -> tuple[dict[str, float], list[str]]:
        """Record RL iteration ``iteration``'s figures; the ``alarm/<name>`` metrics, and a line
        for each alarm to say now."""
        for alarm in alarms_of(self.settings):
            for rule in alarm.rules:
                value = metrics.get(rule.metric)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    window = self.history.setdefault(rule.metric, deque(maxlen=self.settings.window))
                    window.append(float(value))
        if not self.settings.enabled:
            return {}, []
        out: dict[str, float] = {}
        lines: list[str] = []
        for alarm in alarms_of(self.settings):
            found = [(rule, value) for rule in alarm.rules if (value := self._mean(rule.metric)) is not None]
            tripped = [(rule, value) for rule, value in found if rule.tripped(value)]
            out[f"alarm/{alarm.name}"] = float(bool(tripped))
            if tripped and self._due(alarm.name, iteration):
                self.said_at[alarm.name] = iteration
                lines.append(self._line(alarm, tripped, iteration))
        return out, lines

    def replay(self, records: Iterable[JsonMapping]) -> None:
        """Feed the RL iterations a resumed run already recorded (its intact ``metrics.jsonl``
        records up to the checkpoint, ``RunDirectory.metric_records``) through :meth:`check`,
        saying nothing, so that the windows and the times each alarm was said are those of a run
        that never stopped."""
        for record in records:
            if record.get("phase") != "rl":
                continue
            iteration = record.get("iteration")
            if isinstance(iteration, int) and not isinstance(iteration, bool):
                self.check(iteration, record)

    def _mean(self, metric: str) -> float | None:
        """The window mean of ``metric``, once the window is full (``None`` before)."""
        window = self.history.get(metric)
        if window is None or len(window) < self.settings.window:
            return None
        return mean(window)

    def _due(self, name: str, iteration: int) -> bool:
        last = self.said_at.get(name)
        repeat = self.settings.repeat_every
        return last is None or (repeat > 0 and iteration - last >= repeat)

    def _line(self, alarm: Alarm, tripped: list[tuple[AlarmRule, float]], iteration: int) -> str:
        window = self.settings.window
        over = f"over the last {window} iterations" if window > 1 else "in this iteration"
        figures = "; ".join(
            rule.says.format(value=f"{value:.0%}", limit=f"{rule.limit:.0%}") for rule, value in tripped
        )
        return (
            f"alarm: {alarm.mode} at RL iteration {iteration + 1}: {figures}, {over}; {alarm.why} "
            "(docs/training.md#collapse-alarms)"
        )
