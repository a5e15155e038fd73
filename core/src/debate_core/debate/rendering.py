"""Renderers: chat messages to prompt tokens, and the stop conditions that fit them.

Both renderers build a prompt segment by segment: every earlier assistant message is encoded
on its own and surrounded by the same segments it was sampled after, so an agent's next
prompt starts with exactly the tokens of its previous prompt and its previous response
whenever the response's tokens are the tokenizer's own encoding of its text. Nothing is
stripped from earlier turns (keep the empty ``<think></think>`` block of a chat template;
docs/protocol.md#renderers-and-stop-conditions), which makes a whole debate of one agent one training sequence when the
history policy only ever adds to the prompt.

A renderer says how its chat format ends a turn (``stop_condition``); :func:`sampling_stop`
adds the output contract's own stop marker: token-id stops (a chat template's end of turn)
are used unchanged, string stops (or none) get the contract's marker (``</consensus_reason>``)
appended, deduplicated; never a mix of both kinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from attrs import validators as v

from debate_core.plugin import PluginCall, checked_stop_condition
from debate_core.records import Message, OutputContract, Renderer, StopCondition, Tokenizer

_SENTINEL = "\u27e6debate-assistant-turn\u27e7"


def sampling_stop(renderer: Renderer, contract: OutputContract, renderer_name: str = "") -> StopCondition:
    """The stops a debate samples with: the renderer's token-id stops unchanged, or its string
    stops with the contract's stop marker appended (without duplicates, in order). The
    renderer's answer is checked (``plugin_results``); ``renderer_name`` names it in the error."""
    call = PluginCall("renderer", renderer_name, "stop_condition", "")
    stop = checked_stop_condition(call, renderer.stop_condition)
    if stop.token_ids:
        return stop
    return StopCondition(strings=tuple(dict.fromkeys([*stop.strings, contract.stop_marker])))


def _encode(tokenizer: Tokenizer, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False)) if text else []


# ------------------------------------------------------------------ role_colon


def _non_empty(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value.strip():
        raise ValueError(f"'{attribute.name}' must not be empty")


@attrs.frozen(kw_only=True)
class RoleColonOptions:
    """Options of the ``role_colon`` renderer."""

    system_label: str = attrs.field(default="System", validator=_non_empty)
    user_label: str = attrs.field(default="User", validator=_non_empty)
    assistant_label: str = attrs.field(default="Assistant", validator=_non_empty)
    separator: str = "\n\n"
    """Text between two messages."""
    stop_strings: tuple[str, ...] = ("\nUser:",)
    """String stops of the chat format (the output contract's stop marker is always added to them)."""
    add_bos: bool = True
    """Start the prompt with the tokenizer's BOS token, when it has one."""


class RoleColonRenderer:
    """``System: ...`` / ``User: ...`` / ``Assistant:`` turns in plain text; works with any tokenizer."""

    def __init__(self, tokenizer: Tokenizer, options: RoleColonOptions | None = None) -> None:
        self.tokenizer = tokenizer
        self.options = options or RoleColonOptions()
        self._labels = {
            "system": self.options.system_label,
            "user": self.options.user_label,
            "assistant": self.options.assistant_label,
        }

    def _label(self, role: str) -> str:
        return self._labels.get(role, role.capitalize())

    def build_prompt(self, messages: Sequence[Message]) -> list[int]:
        """Prompt tokens ending with the assistant label, ready for sampling."""
        sep = self.options.separator
        tokens: list[int] = []
        bos = getattr(self.tokenizer, "bos_token_id", None)
        if self.options.add_bos and isinstance(bos, int):
            tokens.append(bos)
        pending = ""
        for message in messages:
            if message.role == "assistant":
                tokens += _encode(self.tokenizer, pending + f"{self._label('assistant')}:")
                tokens += _encode(self.tokenizer, message.content)
                pending = sep
            else:
                pending += f"{self._label(message.role)}: {message.content}{sep}"
        tokens += _encode(self.tokenizer, pending + f"{self._label('assistant')}:")
        return tokens

    def stop_condition(self) -> StopCondition:
        """The configured string stops, without duplicates."""
        return StopCondition(strings=tuple(dict.fromkeys(self.options.stop_strings)))

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of sampled tokens (special tokens such as EOS left out)."""
        return self.tokenizer.decode(list(tokens), skip_special_tokens=True)


# ------------------------------------------------------------------ hf_chat_template


@attrs.frozen(kw_only=True)
class ChatTemplateOptions:
    """Options of the ``hf_chat_template`` renderer."""

    enable_thinking: bool | None = None
    """Passed to the template when set (``false`` for Qwen3 without thinking)."""
    extra_stop_tokens: tuple[str, ...] = ()
    """Token strings that also end a turn (e.g. ``<|eot_id|>``), besides the EOS token."""
    system_role: bool = attrs.field(default=True, validator=v.instance_of(bool))
    """``false`` for templates without a system role: the system prompt then leads the first user message."""


class ChatTemplateRenderer:
    """The tokenizer's own chat template (Qwen3, Llama 3, ...), with token-id stops."""

    def __init__(self, tokenizer: Tokenizer, options: ChatTemplateOptions | None = None) -> None:
        if not callable(getattr(tokenizer, "apply_chat_template", None)):
            raise TypeError("the hf_chat_template renderer needs a tokenizer with apply_chat_template()")
        self.tokenizer: Any = tokenizer  # Any: a Hugging Face tokenizer (untyped), its chat template checked above
        self.options = options or ChatTemplateOptions()
        self._stop_ids = self._find_stop_ids()

    def _find_stop_ids(self) -> tuple[int, ...]:
        eos = getattr(self.tokenizer, "eos_token_id", None)
        ids: list[int] = [eos] if isinstance(eos, int) else [i for i in (eos or []) if isinstance(i, int)]
        for token in self.options.extra_stop_tokens:
            converted = self.tokenizer.convert_tokens_to_ids(token)
            if not isinstance(converted, int) or converted < 0:
                raise ValueError(f"extra_stop_tokens: {token!r} is not a token of this tokenizer")
            ids.append(converted)
        return tuple(dict.fromkeys(ids))

    def _render(self, messages: Sequence[Message]) -> str:
        chat = [{"role": m.role, "content": m.content} for m in messages]
        if not self.options.system_role and chat and chat[0]["role"] == "system":
            system = chat.pop(0)["content"]
            if chat:
                chat[0] = {"role": chat[0]["role"], "content": f"{system}\n\n{chat[0]['content']}"}
        kwargs: dict[str, bool] = {}
        if self.options.enable_thinking is not None:
            kwargs["enable_thinking"] = self.options.enable_thinking
        rendered = self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True, **kwargs)
        return str(rendered)

    def build_prompt(self, messages: Sequence[Message]) -> list[int]:
        """Prompt tokens: the template's rendering, with every earlier assistant message kept as
        sampled (the template may not strip or rewrite it) and encoded on its own."""
        assistants = [k for k, m in enumerate(messages) if m.role == "assistant"]
        if not assistants:
            return _encode(self.tokenizer, self._render(messages))
        tokens = _encode(self.tokenizer, self._render(messages[: assistants[0]]))
        for n, index in enumerate(assistants):
            end = assistants[n + 1] if n + 1 < len(assistants) else len(messages)
            probe = [*messages[:index], Message("assistant", _SENTINEL), *messages[index + 1 : end]]
            rendered = self._render(probe)
            cut = rendered.find(_SENTINEL)
            if cut < 0 or rendered.find(_SENTINEL, cut + 1) >= 0:
                return _encode(self.tokenizer, self._render(messages))
            tokens += _encode(self.tokenizer, messages[index].content)
            tokens += _encode(self.tokenizer, rendered[cut + len(_SENTINEL) :])
        return tokens

    def stop_condition(self) -> StopCondition:
        """The template's end-of-turn token ids; none when the tokenizer has no EOS token at all
        (the debate then stops on the output contract's marker alone)."""
        return StopCondition(token_ids=self._stop_ids)

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of sampled tokens, without the end-of-turn tokens that stopped them."""
        end = len(tokens)
        while end and tokens[end - 1] in self._stop_ids:
            end -= 1
        return str(self.tokenizer.decode(list(tokens[:end]), skip_special_tokens=False))
