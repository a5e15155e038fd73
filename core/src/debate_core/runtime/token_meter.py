"""Tokens a run has asked the backend to compute, by the three kinds a service bills
(docs/training.md#tokens-and-cost): prompt tokens of every sampling request (prefill), tokens
sampled, and tokens trained (every input token of a Datum sent to ``forward_backward``)."""

from __future__ import annotations

import threading

import attrs

from debate_core.records.json_values import JsonMapping


@attrs.frozen
class TokenCount:
    """Tokens of each billed kind: ``prompt_sampled`` (prefill of sampling requests and of
    ``compute_logprobs``), ``sampled`` (every sequence a request returned), ``trained``."""

    prompt_sampled: int = 0
    sampled: int = 0
    trained: int = 0

    def __add__(self, other: TokenCount) -> TokenCount:
        return TokenCount(
            self.prompt_sampled + other.prompt_sampled, self.sampled + other.sampled, self.trained + other.trained
        )

    def __sub__(self, other: TokenCount) -> TokenCount:
        return TokenCount(
            self.prompt_sampled - other.prompt_sampled, self.sampled - other.sampled, self.trained - other.trained
        )

    def to_json(self) -> dict[str, int]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, raw: JsonMapping) -> TokenCount:
        """The count a ``to_json`` wrote; a missing kind counts 0."""
        return cls(*(int(raw.get(field.name, 0)) for field in attrs.fields(cls)))


class TokenMeter:
    """A running count of a session's tokens, safe to add to from the sampling threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = TokenCount()

    def add(self, tokens: TokenCount) -> None:
        with self._lock:
            self._count = self._count + tokens

    def sampling_result(self, prompt_tokens: int, response: object) -> None:
        """Count one answered sampling request: its prompt once, and every sequence it returned."""
        sequences = getattr(response, "sequences", None) or ()
        self.add(TokenCount(prompt_sampled=prompt_tokens, sampled=sum(len(s.tokens) for s in sequences)))

    def reading(self) -> TokenCount:
        """Every token counted so far."""
        with self._lock:
            return self._count
