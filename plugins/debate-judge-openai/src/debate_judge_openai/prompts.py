"""What the ``openai`` judge asks about a pair, and how it reads the verdict in a reply."""

from __future__ import annotations

import re

from debate_core import JudgePair, Turn

_VERDICT = re.compile(r"\b([AB])\s*([>=<])\s*([AB])\b")
_THINKING = re.compile(r"<think>.*?</think>", flags=re.DOTALL)


def solution_of(turn: Turn) -> str:
    """The solution section of a response (its whole text when it has none)."""
    return turn.response.solution or turn.text


def pair_messages(system_prompt: str, pair: JudgePair, swapped: bool) -> list[dict[str, str]]:
    """The chat messages asking which of the pair's solutions is better: the first as ``A``, or,
    ``swapped``, the second as ``A``."""
    a, b = (pair.second, pair.first) if swapped else (pair.first, pair.second)
    question = (
        f"Question:\n{pair.question}\n\nAnswer A:\n{solution_of(a)}\n\nAnswer B:\n{solution_of(b)}\n\n"
        "Which answer is better?"
    )
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": question}]


def read_verdict(text: str) -> int | None:
    """+1 (A better), -1 (B better) or 0 (equal) from a reply's last verdict (``A > B``, ``B > A``,
    ``A = B``, ``A < B``; a reasoning model's ``<think>`` block is skipped), None when it has none."""
    matches = [m for m in _VERDICT.finditer(_THINKING.sub("", text)) if m.group(1) != m.group(3)]
    if not matches:
        return None
    last = matches[-1]
    a_better = {">": 1, "<": -1, "=": 0}[last.group(2)]
    return a_better if last.group(1) == "A" else -a_better


def both_orders_verdict(first: int, second_swapped: int) -> tuple[int, bool, bool]:
    """The pair's verdict from its two orders (``second_swapped``: the verdict with the pair
    swapped, in its own frame), whether the orders agree, and whether they flipped. A verdict stands
    only when both orders give it (the judge benchmark's consistency); otherwise the pair is a tie.
    A flip is two strict verdicts that prefer different answers: the position decided."""
    second = -second_swapped
    if first == second:
        return first, True, False
    return 0, False, first != 0 and second != 0
