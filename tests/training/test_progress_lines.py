"""Progress for logs (docs/training.md#progress): without a terminal, a line every
``logging.progress_interval_s`` seconds with the elapsed time, rate and ETA of the phase under way.
A fake clock stands in for time."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.training.progress import Progress, format_duration, pace


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lines_progress(interval: float = 30.0) -> tuple[Progress, io.StringIO, FakeClock]:
    clock, stream = FakeClock(), io.StringIO()
    return Progress("lines", stream, line_interval_s=interval, clock=clock), stream, clock


def test_a_line_while_a_step_runs_shows_its_debates_and_the_phase() -> None:
    progress, stream, clock = lines_progress()
    progress.phase("RL", 10, "iterations")
    for step in range(1, 3):  # two iterations of 4 debates, 5 s each
        progress.start(f"iter {step}/10", 4)
        for _ in range(4):
            clock.now += 5
            progress.debate_done(50)
        progress.finish({"reward": 0.5})
    lines = stream.getvalue().splitlines()
    assert lines[0] == "iter 1/10  reward 0.5"
    # 30 s after the phase began, half-way through iteration 2: 1.5 iterations in 30 s is 3 a minute,
    # and the 8.5 left take 170 s; the step's own 2 of 4 debates in 10 s leave 10 s
    debates, phase = lines[1:3]  # each on a line of its own
    assert debates == "iter 2/10  2/4 debates  10 tok/s  elapsed 10s, 0.2 debates/s, ETA 10s"
    assert phase == "RL 1/10 iterations: elapsed 30s, 3 iterations/min, ETA 2m50s"
    assert lines[3:] == ["iter 2/10  reward 0.5"]  # the next line is due at 60 s


def test_between_steps_the_line_shows_the_phase() -> None:
    progress, stream, clock = lines_progress()
    progress.phase("RL", 10, "iterations")
    progress.start("iter 1/10", 1)
    clock.now += 40  # one long debate, then the update: no line while it runs
    progress.debate_done(5)
    progress.finish({"reward": 1.0})
    assert stream.getvalue().splitlines() == [
        "iter 1/10  reward 1",
        "RL 1/10 iterations: elapsed 40s, 1.5 iterations/min, ETA 6m00s",
    ]


def test_a_resumed_phase_counts_its_rate_from_where_it_resumed() -> None:
    progress, stream, clock = lines_progress(interval=30)
    progress.phase("warm-start", 100, "steps", done=50)  # 50 done before the resume
    progress.start("warm-start 51/100", 10)
    for _ in range(7):
        clock.now += 4
        progress.debate_done(100)
    assert stream.getvalue() == ""  # 28 s: not yet
    clock.now += 4
    progress.debate_done(100)
    debates, phase = stream.getvalue().splitlines()[:2]
    assert debates == "warm-start 51/100  8/10 debates  25 tok/s  elapsed 32s, 0.25 debates/s, ETA 8s"
    # 0.8 of a step in 32 s: 1.5 steps a minute; 49.2 steps left take 1968 s
    assert phase == "warm-start 50/100 steps: elapsed 32s, 1.5 steps/min, ETA 32m48s"


def test_an_evaluation_shows_its_own_rate_and_eta_and_counts_no_step() -> None:
    progress, stream, clock = lines_progress(interval=10)
    progress.start("eval final debate", 50)
    for _ in range(20):
        clock.now += 1
        progress.debate_done(10)
    progress.finish({"cons@3": 0.5})
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("eval final debate  10/50 debates  10 tok/s")
    assert lines[0].endswith("elapsed 10s, 1 debates/s, ETA 40s")
    assert lines[1].endswith("elapsed 20s, 1 debates/s, ETA 30s")
    assert lines[2] == "eval final debate  cons@3 0.5"


def test_half_a_step_counts_before_the_first_step_ends() -> None:
    progress, stream, clock = lines_progress(interval=1)
    progress.phase("RL", 3, "iterations")
    progress.start("iter 1/3", 2)
    clock.now += 5
    progress.debate_done(1)
    assert stream.getvalue().splitlines()[1] == "RL 0/3 iterations: elapsed 5s, 6 iterations/min, ETA 25s"


def test_no_rate_before_anything_is_done() -> None:
    progress, stream, clock = lines_progress(interval=1)
    progress.phase("RL", 3, "iterations")
    progress.start("iter 1/3", 1)
    clock.now += 5
    progress.finish({})  # a step that ran no debate (all skipped) still counts once it is done
    assert stream.getvalue().splitlines()[-1] == "RL 1/3 iterations: elapsed 5s, 12 iterations/min, ETA 10s"
    assert pace(0, 3, 5, "steps", "min") == "elapsed 5s, steps/min ?, ETA ?"


@pytest.mark.parametrize("mode", ["bar", "off"])
def test_only_lines_mode_prints_the_periodic_lines(mode: str) -> None:
    clock, stream = FakeClock(), io.StringIO()
    progress = Progress(mode, stream, line_interval_s=1, clock=clock)  # type: ignore[arg-type]
    progress.phase("RL", 3, "iterations")
    progress.start("iter 1/3", 2)
    clock.now += 100
    progress.debate_done(1)
    assert "ETA" not in stream.getvalue()


@given(st.floats(min_value=0, max_value=10 * 24 * 3600, allow_nan=False))
def test_durations_read_back_to_the_second_or_minute(seconds: float) -> None:
    text = format_duration(seconds)
    if "h" in text:
        hours, minutes = text.removesuffix("m").split("h")
        assert abs(int(hours) * 3600 + int(minutes) * 60 - seconds) <= 60
    elif "m" in text:
        minutes, secs = text.removesuffix("s").split("m")
        assert int(minutes) * 60 + int(secs) == round(seconds)
    else:
        assert int(text.removesuffix("s")) == round(seconds)
