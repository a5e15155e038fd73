"""Progress display: a live bar on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Literal, TextIO

ProgressMode = Literal["auto", "bar", "lines", "off"]


class Progress:
    """Shows the iteration, debates done, tokens/s, mean reward and format rate.

    ``bar`` redraws one line in place (``\\r``); ``lines`` prints one line per iteration (for
    logs and non-terminals), and while a phase runs, a line every ``line_interval_s`` seconds
    with the debates done so far (an evaluation is never minutes of silence); ``off`` prints
    only messages; ``auto`` picks ``bar`` on a terminal.
    """

    def __init__(
        self, mode: ProgressMode = "auto", stream: TextIO | None = None, line_interval_s: float = 10.0
    ) -> None:
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "bar" if getattr(self.stream, "isatty", lambda: False)() else "lines"
        self.mode = mode
        self.line_interval_s = line_interval_s
        self._label = ""
        self._total_debates = 0
        self._done = 0
        self._tokens = 0
        self._started = time.monotonic()
        self._last_draw = 0.0
        self._last_line = 0.0

    def start(self, label: str, debates: int) -> None:
        """A new iteration (or evaluation) with ``debates`` debates to run."""
        self._label = label
        self._total_debates = debates
        self._done = 0
        self._tokens = 0
        self._started = time.monotonic()
        self._last_line = self._started
        self._draw(force=True)

    def debate_done(self, sampled_tokens: int) -> None:
        """One more debate finished with ``sampled_tokens`` action tokens."""
        self._done += 1
        self._tokens += sampled_tokens
        self._draw()

    def finish(self, summary: Mapping[str, float]) -> None:
        """The iteration is over; ``summary`` holds the headline metrics."""
        if self.mode == "off":
            return
        parts = [f"{k} {v:.3g}" for k, v in summary.items()]
        line = f"{self._label}  " + "  ".join(parts)
        if self.mode == "bar":
            self.stream.write("\r\x1b[2K" + line + "\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line of its own (never lost under the bar)."""
        if self.mode == "bar":
            self.stream.write("\r\x1b[2K")
        self.stream.write(text + "\n")
        self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        if self.mode == "lines":
            self._line()
            return
        if self.mode != "bar":
            return
        now = time.monotonic()
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

    def _line(self) -> None:
        """In ``lines`` mode, a progress line when the phase has run ``line_interval_s`` since the last one."""
        now = time.monotonic()
        if now - self._last_line < self.line_interval_s or not 0 < self._done < self._total_debates:
            return
        self._last_line = now
        elapsed = max(now - self._started, 1e-9)
        self.stream.write(
            f"{self._label}  {self._done}/{self._total_debates} debates  {elapsed:.0f}s  "
            f"{self._tokens / elapsed:.0f} tok/s\n"
        )
        self.stream.flush()
