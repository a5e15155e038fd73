"""Stop conditions of ``tinker.types.SamplingParams``, checked token by token.

``stop=None`` stops at the tokenizer's end-of-sequence token; ``stop=[]`` never stops before
``max_tokens``; a list of token ids stops when one is sampled; strings stop as soon as the
decoded text contains one. The stop itself (the token, or the token that completes the
string) stays in the returned tokens, as on the Tinker service.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs


@attrs.frozen
class StopSpec:
    """Resolved stops of one request: token ids, and strings as UTF-8 bytes."""

    token_ids: frozenset[int]
    strings: tuple[bytes, ...]

    @classmethod
    def from_param(cls, stop: str | Sequence[str] | Sequence[int] | None, eos_token_id: int | None) -> StopSpec:
        """Read ``SamplingParams.stop``; a mix of strings and ids is refused (the SDK does too)."""
        if stop is None:
            return cls(frozenset() if eos_token_id is None else frozenset({eos_token_id}), ())
        # Any: strings or token ids, told apart by the checks below
        items: Sequence[Any] = [stop] if isinstance(stop, str) else list(stop)
        if all(isinstance(item, str) for item in items):
            strings = tuple(dict.fromkeys(item.encode("utf-8") for item in items if item))
            return cls(frozenset(), strings)
        if all(isinstance(item, int) and not isinstance(item, bool) for item in items):
            return cls(frozenset(int(item) for item in items), ())
        raise ValueError(f"SamplingParams.stop must hold only strings or only token ids, got {stop!r}")

    @property
    def longest_string(self) -> int:
        return max((len(s) for s in self.strings), default=0)


class StopMatcher:
    """Follows one sampled sequence and says when a stop string has appeared.

    With a byte table (byte-level BPE tokenizers) it keeps a short tail of raw bytes; for
    other tokenizers it decodes a window of the last tokens, wide enough for the longest stop.
    """

    def __init__(
        self,
        spec: StopSpec,
        byte_table: Sequence[bytes] | None,
        decode: Callable[[Sequence[int]], str],
    ) -> None:
        self._strings = spec.strings
        self._keep = max(spec.longest_string - 1, 0)
        self._table = byte_table
        self._decode = decode
        self._tail = b""
        self._tokens: list[int] = []

    def add(self, token: int) -> bool:
        """Record one sampled token; ``True`` when the text now contains a stop string."""
        if not self._strings:
            return False
        if self._table is not None:
            piece = self._table[token] if 0 <= token < len(self._table) else b""
            window = self._tail + piece
            hit = any(s in window for s in self._strings)
            self._tail = window[-self._keep :] if self._keep else b""
            return hit
        self._tokens.append(token)
        window_tokens = self._tokens[-(self._keep + 2) :]
        previous = self._decode(window_tokens[:-1]).encode("utf-8", "replace")
        text = self._decode(window_tokens).encode("utf-8", "replace")
        # A stop that was already complete before this token would have ended the sequence.
        return any(s in text and s not in previous for s in self._strings)
