"""Progress display: a live bar on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import Literal, TextIO

import attrs

from debate_core.terminal import visible

ProgressMode = Literal["auto", "bar", "lines", "off"]

DEFAULT_LINE_INTERVAL_S = 30.0
"""Seconds between progress lines without a terminal (``logging.progress_interval_s``)."""


@attrs.define
class _Phase:
    """A phase of the run (warm-start, RL): ``total`` units, ``done`` of them, since ``started``,
    when ``done_at_start`` were done already (a resumed run)."""

    name: str
    unit: str
    total: int
    done: int
    done_at_start: int
    started: float


def format_duration(seconds: float) -> str:
    """``42s``, ``5m02s``, ``2h03m``: a duration as a log reader takes it in at a glance."""
    whole = max(round(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def pace(done: float, total: int, elapsed: float, unit: str, per: Literal["s", "min"]) -> str:
    """``elapsed 5m02s, 2.4 iterations/min, ETA 2h03m``: the rate of what is done so far and the
    time the rest takes at that rate (``ETA ?`` before anything is done)."""
    scale = 60.0 if per == "min" else 1.0
    if done <= 0 or elapsed <= 0:
        return f"elapsed {format_duration(elapsed)}, {unit}/{per} ?, ETA ?"
    rate = done / elapsed
    eta = max(total - done, 0) / rate
    return f"elapsed {format_duration(elapsed)}, {rate * scale:.3g} {unit}/{per}, ETA {format_duration(eta)}"


def _short(value: float) -> str:
    """A figure of a progress line: three significant digits, a rate of thousands whole (``1170``)."""
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"


class Progress:
    """Shows the iteration, debates done, tokens/s, mean reward and format rate.

    ``bar`` redraws one line in place (``\\r``); ``lines`` prints one line per iteration (for
    logs and non-terminals), and every ``line_interval_s`` seconds a line with the debates of the
    step (or evaluation) under way and the phase's progress: elapsed time, rate and ETA of each
    (docs/training.md#progress); ``off`` prints only messages; ``auto`` picks ``bar`` on a terminal.
    ``clock`` gives the time in seconds (tests pass a fake one).
    """

    def __init__(
        self,
        mode: ProgressMode = "auto",
        stream: TextIO | None = None,
        line_interval_s: float = DEFAULT_LINE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "bar" if getattr(self.stream, "isatty", lambda: False)() else "lines"
        self.mode = mode
        self.line_interval_s = line_interval_s
        self._clock = clock
        self._label = ""
        self._total_debates = 0
        self._done = 0
        self._tokens = 0
        self._started = clock()
        self._last_draw = 0.0
        self._last_line = self._started
        self._phase: _Phase | None = None
        self.run_note: Callable[[], str] = str
        """What the run has cost so far and is projected to, for the phase's progress lines ('' unpriced)."""

    def phase(self, name: str, total: int, unit: str, done: int = 0) -> None:
        """A phase of ``total`` steps (``unit``: ``steps``, ``iterations``) begins, ``done`` of them
        already done (resuming); each ``finish`` counts one."""
        now = self._clock()
        self._phase = _Phase(name, unit, total, done, done, now)
        self._last_line = now

    def start(self, label: str, debates: int, done: int = 0, tokens: int = 0) -> None:
        """A new iteration (or evaluation) with ``debates`` debates to run, ``done`` of them
        finished already with ``tokens`` action tokens (sampled ahead, docs/training.md#asynchronous-rollouts)."""
        self._label = visible(label)
        self._total_debates = debates
        self._done = done
        self._tokens = tokens
        self._started = self._clock()
        self._draw(force=True)

    def debate_done(self, sampled_tokens: int) -> None:
        """One more debate finished with ``sampled_tokens`` action tokens."""
        self._done += 1
        self._tokens += sampled_tokens
        self._draw()

    def finish(self, summary: Mapping[str, float], note: str = "", label: str | None = None) -> None:
        """The iteration is over; ``summary`` holds the headline metrics, ``note`` what it cost,
        ``label`` what the line is of when it is not the last part started (an evaluation, whose
        parts each have their own label)."""
        if self._phase is not None and not self._label.startswith("eval"):
            self._phase.done += 1
        if self.mode == "off":
            return
        parts = [f"{k} {_short(v)}" for k, v in summary.items()] + ([note] if note else [])
        line = f"{visible(label) if label is not None else self._label}  " + "  ".join(parts)
        if self.mode == "bar":
            self.stream.write("\r\x1b[2K" + line + "\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        if self.mode == "lines":
            self._line(between_steps=True)

    def message(self, text: str) -> None:
        """A line of its own (never lost under the bar); control characters in it are shown, not
        obeyed (it may quote a plugin's or a backend's words)."""
        if self.mode == "bar":
            self.stream.write("\r\x1b[2K")
        self.stream.write(visible(text) + "\n")
        self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        if self.mode == "lines":
            self._line()
            return
        if self.mode != "bar":
            return
        now = self._clock()
        if not force and now - self._last_draw < 0.1 and self._done < self._total_debates:
            return
        self._last_draw = now
        elapsed = max(now - self._started, 1e-9)
        width = 24
        filled = int(width * self._done / self._total_debates) if self._total_debates else width
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(
            f"\r\x1b[2K{self._label} [{bar}] {self._done}/{self._total_debates} debates  "
            f"{self._tokens / elapsed:.0f} tok/s"
        )
        self.stream.flush()

    def _line(self, between_steps: bool = False) -> None:
        """In ``lines`` mode, progress lines when ``line_interval_s`` have passed since the last ones:
        the debates of the step under way (while it runs), then, on a line of its own, the phase's progress."""
        now = self._clock()
        running = 0 < self._done < self._total_debates
        if now - self._last_line < self.line_interval_s or not (running or (between_steps and self._phase)):
            return
        self._last_line = now
        parts = []
        if running:
            elapsed = now - self._started
            tokens = self._tokens / max(elapsed, 1e-9)
            parts.append(
                f"{self._label}  {self._done}/{self._total_debates} debates  {tokens:.0f} tok/s  "
                + pace(self._done, self._total_debates, elapsed, "debates", "s")
            )
        phase = self._phase
        if phase is not None and phase.done < phase.total:
            within = self._done / self._total_debates if running and not self._label.startswith("eval") else 0.0
            done_here = phase.done - phase.done_at_start + within
            cost = self.run_note()
            parts.append(
                f"{phase.name} {phase.done}/{phase.total} {phase.unit}: "
                + pace(done_here, phase.total - phase.done_at_start, now - phase.started, phase.unit, "min")
                + (f", {cost}" if cost else "")
            )
        if parts:  # one line each, so that each fits a terminal
            self.stream.write("\n".join(parts) + "\n")
            self.stream.flush()
