"""Answers and graders: \\boxed{} extraction, normalisation, the built-in graders."""

from __future__ import annotations

import sys
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.builtin.graders import debate_graders
from debate_core.errors import ConfigError
from debate_core.tasks.answers import answers_match, extract_last_boxed, normalise_answer
from debate_core.tasks.graders import BoxedGrader, MathVerifyGrader, NoGrader, build_math_verify


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The answer is \\boxed{42}.", "42"),
        ("\\boxed{1} then \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{7} and an unclosed \\boxed{8", "7"),
        ("\\boxed {x + y}", "x + y"),
        ("\\fbox{3}", "3"),
        ("our answer is $\\boxed 2$.", "2"),  # TeX's one-token argument, as MATH writes it
        ("\\boxed x + 1", "x"),
        ("\\boxedtext{5}", None),
        ("no box here: 42", None),
        ("", None),
    ],
)
def test_extract_last_boxed(text: str, expected: str | None) -> None:
    assert extract_last_boxed(text) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1,000", "1000"),
        (" 42 ", "42"),
        ("0.50", "1/2"),
        ("\\dfrac{1}{2}", "0.5"),
        ("-\\frac{3}{6}", "-0.5"),
        ("$12$", "12"),
        ("12.", "12"),
        ("3.0", "3"),
        ("\\text{5}", "5"),
        ("x + 1", "x+1"),
        ("\\left(1, 2\\right)", "(1,2)"),
    ],
)
def test_equal_answers_match(a: str, b: str) -> None:
    assert answers_match(a, b)


@pytest.mark.parametrize(("a", "b"), [("41", "42"), ("1/2", "1/3"), ("x", "y"), ("1,00", "100")])
def test_different_answers_do_not_match(a: str, b: str) -> None:
    assert not answers_match(a, b)


@given(st.integers(-(10**9), 10**9))
def test_integer_spellings_match(n: int) -> None:
    assert answers_match(f"{n:,}", str(n))
    assert answers_match(f"{n}.0", f" {n} ")
    assert not answers_match(str(n), str(n + 1))


@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    normalise_answer(text)
    BoxedGrader().grade(text, "1")


def test_boxed_grader() -> None:
    grader = BoxedGrader()
    assert grader.grade("so \\boxed{82}", "82").correct
    wrong = grader.grade("so \\boxed{81}", "82")
    assert wrong.formatted and not wrong.correct and wrong.extracted == "81"
    missing = grader.grade("82", "82")
    assert not missing.formatted and not missing.correct
    assert grader.grade("\\boxed{\\frac{1}{2}}", "The answer is \\boxed{0.5}").correct


def test_none_grader() -> None:
    grade = NoGrader().grade("an essay", "")
    assert grade.formatted and not grade.correct
    # none can never confirm an answer (it is for prompts without a ground truth); boxed can
    assert not NoGrader().grade("\\boxed{42}", "42").correct and BoxedGrader().grade("\\boxed{42}", "42").correct


def test_math_verify_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "math_verify", None)
    with pytest.raises(ConfigError, match="pip install math-verify"):
        build_math_verify(None)


def stand_in_math_verify(limits: list[object]) -> types.ModuleType:
    """A math-verify stand-in that records the time limits it is handed."""
    module = types.ModuleType("math_verify")

    def parse(text: str, parsing_timeout: int | None = 5) -> list[Any]:
        limits.append(parsing_timeout)
        box = extract_last_boxed(text)
        if box is None and text.startswith("$"):
            box = text.strip("$")
        return [] if box is None else [float(box), box]

    def verify(gold: list[Any], pred: list[Any], timeout_seconds: int | None = 5) -> bool:
        limits.append(timeout_seconds)
        return bool(gold[0] == pred[0])

    module.parse = parse  # type: ignore[attr-defined]
    module.verify = verify  # type: ignore[attr-defined]
    return module


def test_math_verify_grader_with_a_stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    limits: list[object] = []
    monkeypatch.setitem(sys.modules, "math_verify", stand_in_math_verify(limits))
    grader = build_math_verify(None)
    assert isinstance(grader, MathVerifyGrader)
    assert grader.grade("\\boxed{2.0}", "2").correct
    assert not grader.grade("no answer", "2").formatted
    assert not grader.grade("\\boxed{oops}", "2").formatted  # parse raised: never propagates
    assert set(limits) == {5}  # math-verify's own limits on the main thread


def test_math_verify_runs_without_signal_limits_off_the_main_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its limits use signal.alarm, which only the main thread may set: elsewhere none is passed."""
    limits: list[object] = []
    monkeypatch.setitem(sys.modules, "math_verify", stand_in_math_verify(limits))
    grader = build_math_verify(None)
    with ThreadPoolExecutor(1) as pool:
        grade = pool.submit(grader.grade, "\\boxed{2}", "2").result()
    assert grade.correct and limits == [None, None, None]


def test_hook_lists_the_three_graders() -> None:
    assert {spec.name for spec in debate_graders()} == {"boxed", "none", "math_verify"}
