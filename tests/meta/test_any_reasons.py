"""``Any`` only where it is needed, each with its reason (docs/architecture.md, "Typing: Any"): a line of
core/src/debate_core that uses ``Any`` says why with ``# Any: <reason>`` on that line or the line
above. JSON values are named by ``records/json_values.py``, the one module that may use ``Any`` without."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "core" / "src" / "debate_core"
JSON_VALUES = "records/json_values.py"
"""Where JSON's aliases over ``Any`` are defined, with their reason in the module's docstring."""
REASON = "# Any:"

_STATEMENT_STARTS = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
_ANY = re.compile(r"\bAny\b")


def _statements(text: str) -> list[list[tokenize.TokenInfo]]:
    """The logical lines of ``text`` (a statement, or a ``def`` with its whole signature), comments left out."""
    statements: list[list[tokenize.TokenInfo]] = [[]]
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT:
            statements[-1].append(token)
        if token.type == tokenize.NEWLINE:
            statements.append([])
    return statements


def _uses_any(statement: list[tokenize.TokenInfo], index: int) -> bool:
    """A name ``Any``, or a string that is not a statement of its own (a docstring) and names it
    (``cast("type[Any]", value)``)."""
    token = statement[index]
    if token.type == tokenize.NAME:
        return token.string == "Any"
    if token.type != tokenize.STRING or not _ANY.search(token.string):
        return False
    alone_before = index == 0 or statement[index - 1].type in _STATEMENT_STARTS
    alone_after = index + 1 == len(statement) or statement[index + 1].type in {tokenize.NEWLINE, tokenize.NL}
    return not (alone_before and alone_after)


def lines_using_any(text: str) -> dict[int, int]:
    """Each line of ``text`` that uses ``Any`` outside imports, comments and docstrings, with the line
    its statement starts on."""
    found: dict[int, int] = {}
    for statement in _statements(text):
        code = [t for t in statement if t.type not in _STATEMENT_STARTS]
        if not code or (code[0].type == tokenize.NAME and code[0].string in {"from", "import"}):
            continue
        for index, token in enumerate(statement):
            if _uses_any(statement, index):
                found[token.start[0]] = code[0].start[0]
    return found


def unexplained(text: str) -> list[int]:
    """The lines that use ``Any`` with no ``# Any:`` reason on them, on the line above, or on the line
    above their statement (a signature over several lines)."""
    lines = ["", *text.splitlines()]
    return sorted(
        number
        for number, start in lines_using_any(text).items()
        if not any(REASON in lines[n] for n in {number, number - 1, start - 1} if n > 0)
    )


def _audited(path: Path) -> bool:
    return path.relative_to(SOURCE).as_posix() != JSON_VALUES


def test_every_any_says_why() -> None:
    offenders = [
        f"{path.relative_to(SOURCE).as_posix()}:{number}"
        for path in sorted(SOURCE.rglob("*.py"))
        if _audited(path)
        for number in unexplained(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], f"Any without a `{REASON} <reason>` on its line or the line above: {offenders}"


def test_the_rule_finds_an_any_without_a_reason() -> None:
    """The check above can fail: an ``Any`` with no reason is found; imports, comments, docstrings and
    explained lines are not."""
    text = '''from typing import Any, cast
"""Any docstring."""


def f(value: Any) -> None:  # a comment, not a reason
    """Any words."""
    cast("list[Any]", value)


def g(value: Any) -> None:  # Any: an untyped library's object
    # Any: the line above explains the next one
    h: dict[str, Any] = {}


# Any: a reason above a signature over several lines
def k(
    value: Any,
) -> None:
    m: dict[
        str, Any
    ] = {}
'''
    assert set(lines_using_any(text)) == {5, 7, 10, 12, 17, 20}
    assert unexplained(text) == [5, 7, 20]
