"""Column-by-column worked solutions of arithmetic problems, correct or with a typical slip:
the reference text of the warm-start (docs/datasets.md#worked-solutions).

A small model cannot add two-digit numbers in one token step, but it learns quickly to do it
one column at a time, the way it is taught in school: the problem restated, units first, each
column written out with its carry or borrow, then the digits read back in the usual order.
Operators are written without spaces, as in the questions (``57+8``): the embedded tokenizer
makes a space before a digit its own token, and a model copying digits from its context finds
them far more easily after a distinctive ``+`` than after a space that is everywhere. These
strings become the ``<solution>`` of the warm-start's reference responses (``metadata["solution"]``).

    >>> worked_solution(57, "+", 8)
    '57+8: 7+8=15, 5+0+1=6. The answer is \\\\boxed{65}.'
    >>> worked_solution(52, "-", 8)
    '52-8: 12-8=4, 5-1-0=4. The answer is \\\\boxed{44}.'

The warm-start's reference debates also need *plausibly wrong* solutions for the agents to
judge: the same worked form with one slip a person makes (:data:`SLIPS`):

* ``dropped_carry``: a carry (or borrow) is forgotten in the next column;
* ``digit_slip``: one column's result is off by one;
* ``off_by_one``: every column is right but the final answer is off by one;
* ``digit_error`` (not drawn by default, :data:`EXTRA_SLIPS`): one column's result digit is any
  other digit, so a judge has to compare digits that may be far apart, not only neighbours.

    >>> flawed_worked_solution(57, "+", 8, "dropped_carry")
    '57+8: 7+8=15, 5+0=5. The answer is \\\\boxed{55}.'
"""

from __future__ import annotations

import re
from typing import Literal

import attrs

Slip = Literal["dropped_carry", "digit_slip", "off_by_one", "digit_error"]
SLIPS: tuple[Slip, ...] = ("dropped_carry", "digit_slip", "off_by_one")
"""The slips a flawed solution is drawn from by default."""
EXTRA_SLIPS: tuple[Slip, ...] = ("digit_error",)
"""Slips that a dataset draws only when asked (``ArithmeticOptions.slips``)."""

_STEP = re.compile(r"(\d[\d+\-*]*=\d+)")


@attrs.frozen
class Column:
    """One written step of a worked solution: its text and the value written after ``=``."""

    text: str
    value: int


def _digits(value: int) -> list[int]:
    """Decimal digits, units first."""
    return [int(c) for c in reversed(str(value))]


def _wrong_digit(value: int, shift: int) -> int:
    """``value`` with its units digit moved by ``shift`` places (mod 10): a different digit for
    any shift from 1 to 9."""
    return value - value % 10 + (value % 10 + shift) % 10


def _addition(a: int, b: int, slip: Slip | None, at: int, shift: int = 1) -> list[Column]:
    left, right = _digits(a), _digits(b)
    columns: list[Column] = []
    carry = 0
    for column in range(max(len(left), len(right))):
        terms = [d[column] if column < len(d) else 0 for d in (left, right)]
        if carry and not (slip == "dropped_carry" and column == at):
            terms.append(carry)
        total = sum(terms)
        if slip == "digit_slip" and column == at:
            total = total + 1 if total % 10 != 9 else total - 1
        if slip == "digit_error" and column == at:
            total = _wrong_digit(total, shift)
        columns.append(Column(f"{'+'.join(map(str, terms))}={total}", total))
        carry = total // 10
    return columns


def _subtraction(a: int, b: int, slip: Slip | None, at: int, shift: int = 1) -> list[Column]:
    left, right = _digits(a), _digits(b)
    columns: list[Column] = []
    borrow = 0
    for column, digit in enumerate(left):
        bottom = right[column] if column < len(right) else 0
        paid = borrow and not (slip == "dropped_carry" and column == at)
        borrows_here = 1 if digit - (1 if paid else 0) < bottom else 0
        top = digit + 10 * borrows_here
        result = top - (1 if paid else 0) - bottom
        if slip == "digit_slip" and column == at:
            result = result + 1 if result < 9 else result - 1
        if slip == "digit_error" and column == at:
            result = _wrong_digit(result, shift)
        columns.append(Column(f"{top}{'-1' if paid else ''}-{bottom}={result}", result))
        borrow = borrows_here
    return columns


def _multiplication(a: int, b: int, slip: Slip | None, at: int, shift: int = 1) -> list[Column]:
    columns: list[Column] = []
    carry = 0
    for column, digit in enumerate(_digits(a)):
        added = carry and not (slip == "dropped_carry" and column == at)
        product = digit * b + (carry if added else 0)
        if slip == "digit_slip" and column == at:
            product = product + 1 if product % 10 != 9 else product - 1
        if slip == "digit_error" and column == at:
            product = _wrong_digit(product, shift)
        columns.append(Column(f"{digit}*{b}" + (f"+{carry}" if added else "") + f"={product}", product))
        carry = product // 10
    return columns


def _read_back(columns: list[Column], op: str) -> int:
    """The answer the written columns give: each column's units digit, the last column whole."""
    if op == "-":
        return int("".join(str(c.value) for c in reversed(columns)))
    digits = [str(c.value % 10) for c in columns[:-1]]
    return int(str(columns[-1].value) + "".join(reversed(digits)))


def _columns(a: int, op: str, b: int, slip: Slip | None = None, at: int = -1, shift: int = 1) -> list[Column] | None:
    if a < 0 or b < 0:
        return None
    if op == "+":
        return _addition(a, b, slip, at, shift)
    if op == "-" and a >= b:
        return _subtraction(a, b, slip, at, shift)
    if op == "*" and b < 10:
        return _multiplication(a, b, slip, at, shift)
    return None


def _render(a: int, op: str, b: int, columns: list[Column], answer: int) -> str:
    return f"{a}{op}{b}: {', '.join(c.text for c in columns)}. The answer is \\boxed{{{answer}}}."


def worked_solution(a: int, op: str, b: int) -> str | None:
    """The worked solution of ``a op b`` (non-negative integers), or None when there is none
    (subtraction with a negative result, multiplication by more than one digit)."""
    columns = _columns(a, op, b)
    if columns is None:
        return None
    return _render(a, op, b, columns, _read_back(columns, op))


def _slip_columns(a: int, op: str, b: int) -> dict[Slip, list[int]]:
    """For each slip, the columns where it changes the final answer."""
    columns = _columns(a, op, b)
    assert columns is not None
    right = _read_back(columns, op)
    places: dict[Slip, list[int]] = {"dropped_carry": [], "digit_slip": [], "off_by_one": [], "digit_error": []}
    for slip in ("dropped_carry", "digit_slip", "digit_error"):
        for at in range(len(columns)):
            flawed = _columns(a, op, b, slip, at)
            if flawed is not None and _read_back(flawed, op) != right:
                places[slip].append(at)
    if right > 0:
        places["off_by_one"].append(-1)
    return places


def available_slips(a: int, op: str, b: int, allowed: tuple[Slip, ...] = SLIPS) -> tuple[Slip, ...]:
    """The ``allowed`` slips that can make ``a op b``'s worked solution wrong (none when it has none)."""
    if _columns(a, op, b) is None:
        return ()
    return tuple(slip for slip, places in _slip_columns(a, op, b).items() if places and slip in allowed)


def flawed_worked_solution(a: int, op: str, b: int, slip: Slip, choice: int = 0) -> str | None:
    """The worked solution of ``a op b`` with one ``slip`` (the ``choice``-th place it can
    happen, modulo their number), or None when the slip cannot make this problem wrong."""
    columns = _columns(a, op, b)
    if columns is None:
        return None
    places = _slip_columns(a, op, b)[slip]
    if not places:
        return None
    at = places[choice % len(places)]
    if slip == "off_by_one":
        right = _read_back(columns, op)
        return _render(a, op, b, columns, right - 1 if choice % 2 == 0 else right + 1)
    # digit_error: the wrong digit is the choice's own (1 to 9 places away)
    flawed = _columns(a, op, b, slip, at, 1 + (choice // len(places)) % 9)
    assert flawed is not None
    return _render(a, op, b, flawed, _read_back(flawed, op))


def digit_check(left: str, right: str) -> str:
    """Two numbers' characters compared side by side, right-aligned like the columns:
    ``7-7 same, 4-3 differ: wrong`` (``74`` against ``73``).

    Each step sets two characters side by side and says ``same`` or ``differ`` right after them,
    so the verdict never needs an equality across a long stretch of text; a missing character is
    ``_`` (``93`` against ``103``: ``_-1 differ, 9-0 differ, 3-3 same: wrong``).

        >>> digit_check("28", "28")
        '2-2 same, 8-8 same: right'
    """
    width = max(len(left), len(right))
    pairs = zip(left.rjust(width, "_"), right.rjust(width, "_"), strict=True)
    steps = ", ".join(f"{a}-{b} {'same' if a == b else 'differ'}" for a, b in pairs)
    return f"{steps}: {'right' if left == right else 'wrong'}"


def inverse_check(a: int, op: str, b: int, stated: int) -> str | None:
    """A stated answer of ``a op b`` checked by the inverse operation, column by column: a
    difference is checked by adding ``b`` back, a sum by taking ``b`` away. Each column is
    followed by its result digit beside ``a``'s digit of the same place, ``same`` or ``differ``
    (``_`` for a place a number does not have), so every comparison is of two digits just
    written; the verdict is ``right`` when every place is the same. None when the inverse has no
    worked form (a product; a stated sum smaller than ``b``; a negative number).

        >>> inverse_check(65, "-", 27, 38)
        '38+27: 8+7=15 5-5 same, 3+2+1=6 6-6 same: right'
        >>> inverse_check(65, "-", 27, 48)
        '48+27: 8+7=15 5-5 same, 4+2+1=7 7-6 differ: wrong'
        >>> inverse_check(73, "-", 17, 86)
        '86+17: 6+7=13 3-3 same, 8+1+1=10 0-7 differ, 1-_ differ: wrong'
    """
    inverse = {"-": "+", "+": "-"}.get(op)
    if inverse is None or stated < 0:
        return None
    columns = _columns(stated, inverse, b)
    if columns is None:
        return None
    result = _read_back(columns, inverse)
    got, want = [str(d) for d in _digits(result)], [str(d) for d in _digits(a)]
    steps = []
    for place in range(max(len(got), len(want), len(columns))):
        left = got[place] if place < len(got) else "_"
        right = want[place] if place < len(want) else "_"
        pair = f"{left}-{right} {'same' if left == right else 'differ'}"
        steps.append(f"{columns[place].text} {pair}" if place < len(columns) else pair)
    verdict = "right" if result == a else "wrong"
    return f"{stated}{inverse}{b}: {', '.join(steps)}: {verdict}"


def first_wrong_step(a: int, op: str, b: int, solution: str) -> str | None:
    """The correct text of the first step a written solution of ``a op b`` gets wrong.

    Steps are compared in order after the restated problem; a solution whose steps are all
    right but whose answer is wrong gives ``None`` (the slip is in the read-back).

        >>> first_wrong_step(57, "+", 8, "57+8: 7+8=15, 5+0=5. The answer is \\\\boxed{55}.")
        '5+0+1=6'
    """
    columns = _columns(a, op, b)
    if columns is None:
        return None
    body = solution.split(":", 1)[1] if ":" in solution else solution
    written = _STEP.findall(body)
    for index, column in enumerate(columns):
        if index >= len(written) or written[index] != column.text:
            return column.text
    return None
