"""Built-in renderers ``role_colon`` (any tokenizer) and ``hf_chat_template`` (the tokenizer's own)."""

from __future__ import annotations

from collections.abc import Callable

from debate_core import Tokenizer
from debate_core.debate import (
    ChatTemplateOptions,
    ChatTemplateRenderer,
    RoleColonOptions,
    RoleColonRenderer,
)
from debate_core.plugin import RendererSpec, hookimpl


def _role_colon(options: RoleColonOptions) -> Callable[[Tokenizer], RoleColonRenderer]:
    def factory(tokenizer: Tokenizer) -> RoleColonRenderer:
        return RoleColonRenderer(tokenizer, options)

    return factory


def _chat_template(options: ChatTemplateOptions) -> Callable[[Tokenizer], ChatTemplateRenderer]:
    def factory(tokenizer: Tokenizer) -> ChatTemplateRenderer:
        return ChatTemplateRenderer(tokenizer, options)

    return factory


@hookimpl
def debate_renderers() -> list[RendererSpec]:
    return [
        RendererSpec(
            name="role_colon",
            description="'System: / User: / Assistant:' plain text for any tokenizer; string stops",
            build=_role_colon,
            options=RoleColonOptions,
        ),
        RendererSpec(
            name="hf_chat_template",
            description="the tokenizer's chat template (Qwen3, Llama 3, ...); EOS token stops; option enable_thinking",
            build=_chat_template,
            options=ChatTemplateOptions,
        ),
    ]
