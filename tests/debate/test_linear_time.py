"""The parser, the transcript reader and the v2 reward are linear in their input
(docs/limits.md#time-and-memory): time at 8n over time at n stays near 8, where quadratic
work gives 64. Times are the CPU time of the test's own thread, so load from other processes
does not enter them (wall-clock ratios swing with time slices); ratios are measured side by side
in one test, best of several runs, so that what load still changes changes both sizes alike."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from debate_core.debate.three_sections import parse_three_sections
from debate_core.debate.transcripts import load_transcript
from debate_core.debate.xml_parser import parse_response
from debate_core.rewards.v2 import V2Reward

GROWTH = 8
"""The larger input is this many times the smaller."""
MOST_RATIO = 20.0
"""A linear cost gives a ratio near GROWTH (8); a quadratic one near GROWTH**2 (64)."""


def _best_time(work: Callable[[], object], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        work()
        best = min(best, time.thread_time() - start)
    return best


def _ratio(make: Callable[[int], object], run: Callable[[object], object], n: int, rounds: int = 3) -> float:
    """The smallest of up to ``rounds`` measured ratios: a burst of other load during one round
    can only raise it, while quadratic work raises every round's."""
    small, large = make(n), make(GROWTH * n)
    best = float("inf")
    for _ in range(rounds):
        best = min(best, _best_time(lambda: run(large)) / max(_best_time(lambda: run(small)), 1e-6))
        if best < MOST_RATIO:
            break
    return best


ADVERSARIAL_RESPONSES: dict[str, Callable[[int], str]] = {
    "an opening bracket then whitespace": lambda n: "<" + " " * n,
    "brackets and spaces": lambda n: "< " * (n // 2),
    "closing brackets then whitespace": lambda n: "</" + " " * n,
    "think markers": lambda n: "<think> " * (n // 8),
    "opening tags only": lambda n: "<solution>" * (n // 10),
    "comparison lines": lambda n: (
        "<solution>a</solution><evaluation>b</evaluation><comparison>"
        + "Agent 1 > Agent 2\n" * (n // 18)
        + "</comparison><consensus>NO</consensus><consensus_reason>r</consensus_reason>"
    ),
    "a comparison line of spaces": lambda n: (
        "<solution>a</solution><evaluation>b</evaluation><comparison>Agent" + " " * n + "1</comparison>"
    ),
    "consensus padded with stars": lambda n: (
        "<solution>a</solution><evaluation>b</evaluation>"
        "<comparison>N/A</comparison><consensus>" + "*" * (n // 2) + "yes" + "*" * (n // 2) + "x</consensus>"
    ),
}


@pytest.mark.parametrize("family", sorted(ADVERSARIAL_RESPONSES))
@pytest.mark.parametrize("parse", [parse_response, parse_three_sections], ids=["xml", "three_sections"])
def test_the_parser_is_linear_in_the_response(family: str, parse: Callable[[str], object]) -> None:
    ratio = _ratio(ADVERSARIAL_RESPONSES[family], lambda text: parse(str(text)), 40_000)
    assert ratio < MOST_RATIO, f"{family}: 8x the input took {ratio:.1f}x the time"


def _transcript(rounds: int) -> dict[str, object]:
    agents = 20
    turns = []
    for r in range(1, rounds + 1):
        for a in range(agents):
            b, c = (a + 1) % agents, (a + 2) % agents
            text = (
                f"<solution>{r} {a}</solution><evaluation>e</evaluation><comparison>Agent {b} > Agent {c}"
                "</comparison><consensus>NO</consensus><consensus_reason>r</consensus_reason>"
            )
            turns.append({"round": r, "agent": a, "text": text})
    return {"num_agents": agents, "max_rounds": rounds, "turns": turns}


def test_reading_a_transcript_is_linear_in_its_rounds() -> None:
    ratio = _ratio(_transcript, lambda data: load_transcript(data), 10)  # type: ignore[arg-type]
    assert ratio < MOST_RATIO, f"8x the rounds took {ratio:.1f}x the time"


def test_the_v2_reward_is_linear_in_rounds() -> None:
    reward = V2Reward()
    ratio = _ratio(lambda n: load_transcript(_transcript(n)), lambda record: reward(record), 12)  # type: ignore[arg-type]
    assert ratio < MOST_RATIO, f"8x the rounds took {ratio:.1f}x the time"
