"""Final answers: the last ``\\boxed{...}`` of a text, and normalisation so that equal answers
written differently compare equal (``1,000`` = ``1000``, ``0.5`` = ``1/2`` = ``\\frac{1}{2}``)."""

from __future__ import annotations

import re
from fractions import Fraction

_BOXED = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*(?:(?P<brace>\{)|(?P<token>[0-9A-Za-z]))")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_FRAC = re.compile(r"^([+-]?)\\frac\{([^{}]+)\}\{([^{}]+)\}$")
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}")
_SPACING = re.compile(r"\\[,;:! ]|\\(?:left|right)\b|\\displaystyle")


def extract_last_boxed(text: str) -> str | None:
    """The content of the last complete ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced, or
    the one character of TeX's brace-less ``\\boxed 2`` (seven MATH training solutions write it);
    ``None`` when there is none."""
    for match in reversed(list(_BOXED.finditer(text))):
        if match.group("token") is not None:
            return match.group("token")
        depth = 1
        for index in range(match.end(), len(text)):
            char = text[index]
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return text[match.end() : index]
    return None


def as_number(text: str) -> Fraction | None:
    """The exact value of an integer, decimal, ``a/b`` or ``\\frac{a}{b}``; ``None`` otherwise."""
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    frac = _FRAC.match(text)
    if frac:
        sign, top, bottom = frac.groups()
        text = f"{sign}{top}/{bottom}"
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def normalise_answer(text: str) -> str:
    """A canonical form: no whitespace, ``$`` or spacing commands, ``\\dfrac`` as ``\\frac``,
    ``\\text{x}`` as ``x``, no trailing full stop, and numbers as reduced fractions (``3``, ``-1/2``)."""
    s = text.strip().strip("$")
    s = _TEXT.sub(r"\1", s)
    s = _SPACING.sub("", s)
    s = s.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    s = re.sub(r"\s+", "", s).rstrip(".")
    number = as_number(s)
    if number is not None:
        return str(number)
    return s


def answers_match(predicted: str, truth: str) -> bool:
    """True when both answers have the same canonical form."""
    return normalise_answer(predicted) == normalise_answer(truth)
