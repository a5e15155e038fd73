"""Shared builders for the protocol tests: response texts and small policies."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import ClassVar

from debate_core.records import SampledAction, StopCondition
from debate_core.testing.tokenizer import ByteTokenizer


def response(
    solution: str = "42",
    comparisons: Sequence[str] = (),
    consensus: bool = False,
    evaluation: str = "N/A",
    reason: str = "because",
) -> str:
    """A response that follows the contract (leading space as a sampler after 'Assistant:')."""
    comparison = "\n".join(comparisons) if comparisons else "N/A"
    return (
        f" <solution>{solution}</solution>\n<evaluation>{evaluation}</evaluation>\n"
        f"<comparison>{comparison}</comparison>\n<consensus>{'YES' if consensus else 'NO'}</consensus>\n"
        f"<consensus_reason>{reason}</consensus_reason>"
    )


class RecordingPolicy:
    """A policy that answers with ``answer(call_index)``, optionally after a delay (a number or
    a function of the call index) or an event, and records the arguments of every call."""

    def __init__(
        self,
        answer: Callable[[int], str],
        *,
        delay: float | Callable[[int], float] = 0.0,
        gate: asyncio.Event | None = None,
        raise_on: int | None = None,
    ) -> None:
        self.answer = answer
        self.delay = delay
        self.gate = gate
        self.raise_on = raise_on
        self.calls: list[dict[str, object]] = []
        self.in_flight = 0
        self.tokenizer = ByteTokenizer()

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        index = len(self.calls)
        self.calls.append({"prompt": list(prompt), "temperature": temperature, "seed": seed, "stop": stop})
        self.in_flight += 1
        try:
            if self.raise_on is not None and index == self.raise_on:
                raise RuntimeError("sampler exploded")
            if self.gate is not None:
                await self.gate.wait()
            delay = self.delay(index) if callable(self.delay) else self.delay
            if delay:
                await asyncio.sleep(delay)
        finally:
            self.in_flight -= 1
        tokens = self.tokenizer.encode(self.answer(index))
        return SampledAction(tuple(tokens), (-0.5,) * len(tokens), self.tokenizer.decode(tokens))


def count_sequences(transitions: Sequence[object]) -> int:
    """Training sequences one agent's transitions make (docs/training.md#from-trajectories-to-datums):
    a new one starts whenever an observation does not strictly extend the previous
    observation + action."""
    count = 0
    context: list[int] | None = None
    for transition in transitions:
        observation = list(transition.observation)  # type: ignore[attr-defined]
        if context is None or not (len(observation) > len(context) and observation[: len(context)] == context):
            count += 1
        context = observation + list(transition.action)  # type: ignore[attr-defined]
    return count


QWEN_LIKE_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message.role == 'assistant' -%}"
    "{%- set content = message.content.split('</think>')[-1].lstrip('\\n') -%}"
    "{%- else -%}{%- set content = message.content -%}{%- endif -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}"
    "{{- '<think>\\n\\n</think>\\n\\n' -}}{%- endif -%}"
    "{%- endif -%}"
)
"""A chat template written for these tests with Qwen3's two relevant habits: earlier assistant
turns lose everything up to ``</think>``, and ``enable_thinking=false`` adds an empty think block."""


class QwenLikeTokenizer(ByteTokenizer):
    """Bytes plus two special tokens, with a Python version of ``QWEN_LIKE_TEMPLATE``."""

    specials: ClassVar[dict[str, int]] = {"<|im_start|>": 300, "<|im_end|>": 301}
    eos_token_id = 301

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        ids: list[int] = []
        rest = text
        while rest:
            found = [(rest.find(s), s) for s in self.specials if s in rest]
            if not found:
                ids += super().encode(rest)
                break
            at, special = min(found)
            ids += [*super().encode(rest[:at]), self.specials[special]]
            rest = rest[at + len(special) :]
        return ids

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        names = {v: k for k, v in self.specials.items()}
        out, chunk = [], []
        for t in token_ids:
            if t in names:
                out.append(super().decode(chunk))
                chunk = []
                if not skip_special_tokens:
                    out.append(names[t])
            else:
                chunk.append(t)
        out.append(super().decode(chunk))
        return "".join(out)

    def convert_tokens_to_ids(self, token: str) -> int:
        return self.specials.get(token, -1)

    def apply_chat_template(
        self, messages: list[dict[str, str]], tokenize: bool = False, add_generation_prompt: bool = True, **kw: object
    ) -> str:
        out = ""
        for m in messages:
            content = m["content"]
            if m["role"] == "assistant":
                content = content.split("</think>")[-1].lstrip("\n")
            out += f"<|im_start|>{m['role']}\n{content}<|im_end|>\n"
        if add_generation_prompt:
            out += "<|im_start|>assistant\n"
            if kw.get("enable_thinking") is False:
                out += "<think>\n\n</think>\n\n"
        return out


def sampled_future(tokens: Sequence[int]) -> object:
    """What a Tinker sampling client's ``sample`` returns: a future whose result is one sampled
    sequence of ``tokens`` (each at logprob -1), stopped by a stop sequence."""
    from tinker import types

    sequence = types.SampledSequence(
        stop_reason="stop", sequence_id="x", _tokens_list=list(tokens), _logprobs_list=[-1.0] * len(tokens)
    )

    class Done:
        def result(self, timeout: float | None = None) -> object:
            return types.SampleResponse(sequences=[sequence])

    return Done()
