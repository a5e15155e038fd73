"""Text for a terminal: what a model wrote, or a file from someone else, shown and never obeyed.

A policy can emit escape sequences (colours, cursor moves, a new window title, a cleared screen)
and a shared transcript or run file can hold them; printed raw, a terminal acts on them.
:func:`visible` is the one place that makes them visible: every command that prints such text
(``debate show``, ``debate run``, ``debate compare``, the trainer's progress lines and every
error line) passes it through here.
"""

from __future__ import annotations

KEPT = frozenset("\n\t")
"""Control characters that stay as they are: text has lines and tabs."""
BIDI_CONTROLS = tuple(range(0x202A, 0x202F)) + tuple(range(0x2066, 0x206A))
"""Unicode's bidirectional embeddings, overrides and isolates: they reorder what a terminal shows
(text that reads differently from what it is), so they are shown as escapes too."""


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_TABLE = {
    code: _escape(code)
    for code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS)
    if chr(code) not in KEPT
}


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab, and every bidirectional
    control, written as a Python escape: ESC (the start of every terminal escape sequence) as
    ``\\x1b``, carriage return as ``\\x0d``, NUL as ``\\x00``, DEL as ``\\x7f``, a C1 control
    as ``\\x9b``, a right-to-left override as ``\\u202e``. Other unicode (accents, CJK, emoji)
    is unchanged.

    >>> visible("\\x1b[31mred\\x1b[0m\\nnext line")
    '\\\\x1b[31mred\\\\x1b[0m\\nnext line'
    """
    return text.translate(_TABLE)
