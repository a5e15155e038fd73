"""A local-backend checkpoint as a Hugging Face causal-LM directory (``debate export``):
``config.json``, the weights as safetensors with any LoRA adapter merged into the base weights,
and the tokenizer with its chat template, loadable by ``AutoModelForCausalLM.from_pretrained``.

The checkpoint is opened as ``create_training_client_from_state`` opens it (the same base model,
tokenizer and adapter), so the exported model computes what the backend computed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from debate_core.backends.local.service import LocalServiceClient
from debate_core.errors import DebateError
from debate_core.files import atomic_directory

ROLE_COLON_CHAT_TEMPLATE = (
    "{%- if bos_token %}{{ bos_token }}{% endif -%}"
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'assistant' -%}{{ 'Assistant:' + message['content'] + '\\n\\n' }}"
    "{%- else -%}{{ (message['role'] | capitalize) + ': ' + message['content'] + '\\n\\n' }}{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ 'Assistant:' }}{%- endif -%}"
)
"""The chat format of the ``role_colon`` renderer with its default labels (``User: ...``, then
``Assistant:``), for tokenizers that bring no chat template of their own (the embedded models')."""


class ExportError(DebateError):
    """A checkpoint cannot be exported as asked."""


@attrs.frozen
class ExportedModel:
    """What ``export_checkpoint`` wrote."""

    directory: Path
    base_model: str
    merged_lora: bool
    chat_template_added: bool


def _untie_an_adapted_unembedding(peft_model: Any) -> None:
    """Give an adapted unembedding its own weight before merging: with tied embeddings, merging its
    adapter into the shared tensor would change the input embeddings too, which the adapter never did."""
    import torch

    base = peft_model.get_base_model()
    output = base.get_output_embeddings()
    layer = getattr(output, "base_layer", None)  # a LoRA-wrapped linear layer
    if layer is None or not getattr(base.config, "tie_word_embeddings", False):
        return
    layer.weight = torch.nn.Parameter(layer.weight.detach().clone(), requires_grad=False)
    base.config.tie_word_embeddings = False


def _forget_the_gguf_quantizer(model: Any) -> None:
    """A model read from a GGUF file holds its weights dequantized (the local backend trains them so),
    but ``transformers`` still marks it as GGUF-quantized and refuses to save it: the mark goes, and the
    directory holds plain weights of the dtype they were trained in."""
    if getattr(model, "hf_quantizer", None) is None:
        return
    model.hf_quantizer = None
    for attribute in ("quantization_config", "_pre_quantization_dtype"):
        if hasattr(model.config, attribute):
            delattr(model.config, attribute)


def export_checkpoint(state_path: str, target: Path, service: LocalServiceClient) -> ExportedModel:
    """Write the checkpoint at ``state_path`` (a local backend's saved state or sampler weights) to
    ``target`` as a Hugging Face directory; ``service`` is the backend configured as the run was
    (its base weights and seed make the base model a LoRA adapter is merged into).

    Raises:
        ExportError: ``target`` exists and is not an empty directory.
        SavedStateError: the checkpoint is missing or damaged.
    """
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ExportError(f"--to {target}: already exists and is not an empty directory; name a new one")
    client = service.create_training_client_from_state(state_path).result()
    try:
        module: Any = client.module
        merged = hasattr(module, "merge_and_unload")  # a peft model: fold B·A into each adapted weight
        if merged:
            _untie_an_adapted_unembedding(module)
        model = module.merge_and_unload() if merged else module
        tokenizer = client.get_tokenizer()
        added = not getattr(tokenizer, "chat_template", None)
        if added:
            tokenizer.chat_template = ROLE_COLON_CHAT_TEMPLATE
        _forget_the_gguf_quantizer(model)
        base_model = str(client.get_info().model_name)
        with atomic_directory(target) as staging:
            model.save_pretrained(staging)
            tokenizer.save_pretrained(staging)
    finally:
        client.close()
    return ExportedModel(target, base_model, merged, added)
