"""Column-by-column worked solutions of arithmetic problems, the reference text of the warm-start.

A small model cannot add two-digit numbers in one token step, but it learns quickly to do it
one column at a time, the way it is taught in school: the problem restated, units first, each
column written out with its carry or borrow, then the digits read back in the usual order.
Operators are written without spaces, as in the questions (``57+8``): the embedded tokenizer
makes a space before a digit its own token, and a model copying digits from its context finds
them far more easily after a distinctive ``+`` than after a space that is everywhere. These strings become the
``<solution>`` of the warm-start's reference responses (``metadata["solution"]``).

    >>> worked_solution(57, "+", 8)
    '57+8: 7+8=15, 5+0+1=6. The answer is \\\\boxed{65}.'
    >>> worked_solution(52, "-", 8)
    '52-8: 12-8=4, 5-1-0=4. The answer is \\\\boxed{44}.'
"""

from __future__ import annotations


def _digits(value: int) -> list[int]:
    """Decimal digits, units first."""
    return [int(c) for c in reversed(str(value))]


def _addition(a: int, b: int) -> list[str]:
    left, right = _digits(a), _digits(b)
    steps: list[str] = []
    carry = 0
    for column in range(max(len(left), len(right))):
        terms = [d[column] if column < len(d) else 0 for d in (left, right)]
        if carry:
            terms.append(carry)
        total = sum(terms)
        steps.append(f"{'+'.join(map(str, terms))}={total}")
        carry = total // 10
    return steps


def _subtraction(a: int, b: int) -> list[str]:
    left, right = _digits(a), _digits(b)
    steps: list[str] = []
    borrow = 0
    for column, digit in enumerate(left):
        bottom = right[column] if column < len(right) else 0
        borrows_here = 1 if digit - borrow < bottom else 0
        top = digit + 10 * borrows_here
        paid = "-1" if borrow else ""
        steps.append(f"{top}{paid}-{bottom}={top - borrow - bottom}")
        borrow = borrows_here
    return steps


def _multiplication(a: int, b: int) -> list[str]:
    steps: list[str] = []
    carry = 0
    for digit in _digits(a):
        product = digit * b + carry
        steps.append(f"{digit}*{b}" + (f"+{carry}" if carry else "") + f"={product}")
        carry = product // 10
    return steps


def worked_solution(a: int, op: str, b: int) -> str | None:
    """The worked solution of ``a op b`` (non-negative integers), or None when there is none
    (subtraction with a negative result, multiplication by more than one digit)."""
    if a < 0 or b < 0:
        return None
    if op == "+":
        steps, answer = _addition(a, b), a + b
    elif op == "-" and a >= b:
        steps, answer = _subtraction(a, b), a - b
    elif op == "*" and b < 10:
        steps, answer = _multiplication(a, b), a * b
    else:
        return None
    return f"{a}{op}{b}: {', '.join(steps)}. The answer is \\boxed{{{answer}}}."
