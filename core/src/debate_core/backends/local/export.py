"""A local-backend checkpoint as a Hugging Face causal-LM directory (``debate export``):
``config.json``, the weights as safetensors with any LoRA adapter merged into the base weights,
and the tokenizer with its chat template, loadable by ``AutoModelForCausalLM.from_pretrained``;
or, for a LoRA run, the adapter alone in PEFT's format (``--adapter``) and the base model it goes
on (``--base``), for servers that load adapters onto a base model (vLLM, PEFT).

The checkpoint is opened as ``create_training_client_from_state`` opens it (the same base model,
tokenizer and adapter), so the exported model computes what the backend computed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from debate_core.backends.local.service import LocalServiceClient
from debate_core.errors import DebateError
from debate_core.files import atomic_directory

if TYPE_CHECKING:
    import torch

    from debate_core.backends.local.training_client import LocalTrainingClient

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


@attrs.frozen
class ExportedAdapter:
    """What ``export_adapter`` wrote: a PEFT adapter of ``rank`` on ``adapted_layers`` linear layers of
    ``base_model``, the ones whose names end in one of ``target_modules`` (PEFT's shortest such names)."""

    directory: Path
    base_model: str
    rank: int
    adapted_layers: int
    target_modules: tuple[str, ...]


def _untie_an_adapted_unembedding(peft_model: torch.nn.Module) -> None:
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


def _forget_the_gguf_quantizer(model: torch.nn.Module) -> None:
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
    _check_target(target)
    client = service.create_training_client_from_state(state_path).result()
    try:
        module: torch.nn.Module = client.module
        merged = hasattr(module, "merge_and_unload")  # a peft model: fold B·A into each adapted weight
        if merged:
            _untie_an_adapted_unembedding(module)
        model = module.merge_and_unload() if merged else module
        added = _write_model(model, client, target)
        base_model = str(client.get_info().model_name)
    finally:
        client.close()
    return ExportedModel(target, base_model, merged, added)


def _write_model(model: torch.nn.Module, client: LocalTrainingClient, target: Path) -> bool:
    """Save ``model`` with the client's tokenizer to ``target``; whether a chat template was added."""
    tokenizer = client.get_tokenizer()
    added = not getattr(tokenizer, "chat_template", None)
    if added:
        tokenizer.chat_template = ROLE_COLON_CHAT_TEMPLATE
    _forget_the_gguf_quantizer(model)
    with atomic_directory(target) as staging, _no_progress_bars():
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    return added


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Transformers' progress bars off for the block (its "Writing model shards" bar on a
    one-file model is noise between the command's own lines), as they were after it."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def _check_target(target: Path) -> None:
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ExportError(f"--to {target}: already exists and is not an empty directory; name a new one")


def _lora_module(client: LocalTrainingClient, flag: str) -> torch.nn.Module:
    """The checkpoint's peft model, or a clear refusal for a full fine-tune (it has no adapter)."""
    module: torch.nn.Module = client.module
    if not hasattr(module, "peft_config"):
        raise ExportError(
            f"{flag}: this checkpoint is a full fine-tune (model.lora_rank = 0), it has no LoRA adapter; "
            "`debate export CHECKPOINT --to DIR` writes the whole model"
        )
    return module


def export_adapter(state_path: str, target: Path, service: LocalServiceClient) -> ExportedAdapter:
    """Write the LoRA adapter of the checkpoint at ``state_path`` to ``target`` in PEFT's format
    (``adapter_config.json``, ``adapter_model.safetensors``), loadable by ``PeftModel.from_pretrained``
    onto the base model the run read (``--base`` writes an embedded one as a directory).

    Raises:
        ExportError: ``target`` holds files, or the checkpoint is a full fine-tune.
        SavedStateError: the checkpoint is missing or damaged.
    """
    _check_target(target)
    client = service.create_training_client_from_state(state_path).result()
    try:
        module = _lora_module(client, "--adapter")
        base_model = str(client.get_info().model_name)
        config = module.peft_config["default"]
        config.base_model_name_or_path = base_model
        with atomic_directory(target) as staging:
            # the unembedding's base weight stays out: the adapter holds only what training changed
            module.save_pretrained(staging, save_embedding_layers=False)
        saved = json.loads((target / "adapter_config.json").read_text(encoding="utf-8"))
        adapted = sum(1 for _, layer in module.named_modules() if hasattr(layer, "lora_A"))
    finally:
        client.close()
    return ExportedAdapter(target, base_model, int(config.r), adapted, tuple(sorted(saved["target_modules"])))


def export_base(state_path: str, target: Path, service: LocalServiceClient) -> ExportedModel:
    """Write the base model a LoRA checkpoint's adapter goes on (its weights as the run read them,
    adapter left out) with its tokenizer to ``target`` as a Hugging Face directory.

    Raises:
        ExportError: ``target`` holds files, or the checkpoint is a full fine-tune.
        SavedStateError: the checkpoint is missing or damaged.
    """
    _check_target(target)
    client = service.create_training_client_from_state(state_path).result()
    try:
        model = _lora_module(client, "--base").unload()  # the LoRA layers go, unmerged
        added = _write_model(model, client, target)
        base_model = str(client.get_info().model_name)
    finally:
        client.close()
    return ExportedModel(target, base_model, False, added)
