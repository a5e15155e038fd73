"""Where the local backend's models come from: a Hugging Face causal-LM directory on disk, a
GGUF file (``gguf:PATH``, or a directory holding one; read by ``transformers`` with the ``gguf``
package), or a named embedded model (``embedded:debate-tiny``) built from a config shipped in the
package, with a tokenizer trained offline and the pretrained base weights the package ships for
it (or, when there are none or ``base_weights = "random"``, weights drawn from a fixed seed).

Nothing is downloaded. Fine-tuning is full (every weight) or LoRA through peft, with the
attention / MLP / unembedding switches of ``create_lora_training_client``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import importlib.util
import json
import re
import threading
import warnings
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import torch

from debate_core.backends.local.models.gguf_files import find_gguf
from debate_core.backends.local.models.model_context import check_loadable
from debate_core.backends.local.models.pretrained import load_pretrained
from debate_core.backends.local.models.tokenizer import build_embedded_tokenizer, wrap_tokenizer
from debate_core.backends.local.torch_settings import Precision
from debate_core.errors import ConfigError
from debate_core.records.json_values import JsonObject

EMBEDDED_PREFIX = "embedded:"

_ATTENTION_NAME = re.compile(r"(^|\.)(self_attn|attn|attention|self_attention)(\.|$)")
_MLP_NAME = re.compile(r"(^|\.)(mlp|feed_forward|ffn|ff)(\.|$)")


@attrs.frozen(kw_only=True)
class EmbeddedModelSpec:
    """The shape of an embedded model (a Qwen3-style decoder)."""

    name: str
    description: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    max_positions: int
    vocab_size: int


@attrs.frozen(kw_only=True)
class FinetuneMode:
    """Full fine-tuning (``lora_rank == 0``) or LoRA with these targets."""

    lora_rank: int
    train_mlp: bool = True
    train_attn: bool = True
    train_unembed: bool = True

    @property
    def full(self) -> bool:
        return self.lora_rank == 0

    def to_json(self) -> JsonObject:
        return attrs.asdict(self)


@attrs.define(eq=False)
class LoadedModel:
    """A model ready to train: the (possibly peft-wrapped) module and its tokenizer.

    ``tokenizer_json`` is the embedded tokenizer's text (saved with every checkpoint), or
    ``None`` for a directory model, whose tokenizer lives in that directory.
    """

    module: torch.nn.Module
    tokenizer: Any  # Any: a Hugging Face tokenizer (untyped)
    tokenizer_json: str | None
    base_model: str
    mode: FinetuneMode
    precision: Precision


@lru_cache(maxsize=1)
def embedded_specs() -> dict[str, EmbeddedModelSpec]:
    """Every embedded model the package ships, by name."""
    text = resources.files("debate_core.backends.local").joinpath("data/embedded_models.json").read_text("utf-8")
    return {name: EmbeddedModelSpec(name=name, **fields) for name, fields in json.loads(text).items()}


def is_embedded(base_model: str) -> bool:
    return base_model.startswith(EMBEDDED_PREFIX)


def embedded_spec(base_model: str) -> EmbeddedModelSpec:
    name = base_model[len(EMBEDDED_PREFIX) :]
    specs = embedded_specs()
    if name not in specs:
        raise ConfigError(
            f"model.base_model: no embedded model {name!r}; the embedded models are "
            + ", ".join(f"{EMBEDDED_PREFIX}{n}" for n in sorted(specs))
        )
    return specs[name]


# Any: a transformers Qwen3Config (untyped)
def embedded_config(spec: EmbeddedModelSpec, vocab_size: int, eos_token_id: int, pad_token_id: int) -> Any:
    """The ``transformers`` ``Qwen3Config`` of an embedded model."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_kv_heads,
        head_dim=spec.head_dim,
        max_position_embeddings=spec.max_positions,
        tie_word_embeddings=True,
        eos_token_id=eos_token_id,
        pad_token_id=pad_token_id,
        bos_token_id=eos_token_id,
    )


def model_context_length(base_model: str) -> int | None:
    """The positions ``base_model`` reads, without loading it; ``None`` when its config names none
    (or it is neither an embedded model nor a directory: loading it reports that)."""
    if is_embedded(base_model):
        return embedded_spec(base_model).max_positions
    config_file = Path(base_model).expanduser() / "config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in ("max_position_embeddings", "n_positions", "max_seq_len"):
        value = config.get(key) if isinstance(config, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    return None


# Any: the model's Hugging Face tokenizer (untyped)
def load_base(
    base_model: str,
    *,
    device: torch.device,
    dtype: torch.dtype,
    init_seed: int,
    tokenizer_json: str | None = None,
    base_weights: str = "auto",
) -> tuple[torch.nn.Module, Any, str | None]:
    """The base model, its tokenizer, and the embedded tokenizer's JSON text (``None`` for directories).

    ``tokenizer_json`` (from a checkpoint) replaces the freshly trained embedded tokenizer,
    so a checkpoint restores with the exact vocabulary it was trained with. ``base_weights``
    (embedded models): ``auto`` loads the pretrained weights the package ships for the model
    when there are any, else the seeded random initialisation; ``pretrained`` insists on them;
    ``random`` always starts from ``init_seed``.
    """
    if is_embedded(base_model):
        spec = embedded_spec(base_model)
        if tokenizer_json is None:
            tokenizer, tokenizer_json = build_embedded_tokenizer(spec.vocab_size)
        else:
            tokenizer = wrap_tokenizer(tokenizer_json)
        from transformers import Qwen3ForCausalLM

        config = embedded_config(spec, len(tokenizer), tokenizer.eos_token_id, tokenizer.pad_token_id)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(init_seed)
            module = Qwen3ForCausalLM(config)
        if base_weights != "random":
            load_pretrained(module, spec.name, tokenizer_json, required=base_weights == "pretrained")
        return module.to(device=device, dtype=dtype), tokenizer, tokenizer_json
    gguf_file = find_gguf(base_model)
    if gguf_file is not None:
        module, tokenizer = _load_gguf(gguf_file, dtype)
        return module.to(device), tokenizer, None
    check_loadable(base_model)  # a directory from here on, or a clear error naming what is accepted
    path = Path(base_model).expanduser()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        with _quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(path)
            module = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"model.base_model: {path} could not be loaded as a causal language model: {exc}") from None
    return module.to(device), tokenizer, None


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Hide ``transformers``' progress bars while a model loads (they would scroll the CLI's output),
    including the GGUF reader's, which is a plain ``tqdm`` bar outside its logging switch."""
    from transformers.utils import logging

    was_enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    gguf_utils: Any = None  # Any: transformers' GGUF module (untyped), its tqdm patched below
    with contextlib.suppress(ImportError):
        gguf_utils = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    bar = getattr(gguf_utils, "tqdm", None)
    if bar is not None:
        gguf_utils.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar
        if was_enabled:
            logging.enable_progress_bar()


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules, or without a spec
        return False


_gguf_lock = threading.Lock()
# Any: a Hugging Face tokenizer (untyped)
_gguf_loaded: dict[tuple[str, int, int, torch.dtype], tuple[torch.nn.Module, Any]] = {}


# Any: a Hugging Face tokenizer (untyped)
def _load_gguf(path: Path, dtype: torch.dtype) -> tuple[torch.nn.Module, Any]:
    """A GGUF file's model (weights dequantized to ``dtype``) and tokenizer with its chat template.

    Reading a GGUF file converts its tokenizer and dequantizes every tensor (about 20 s for a
    135M-parameter model on a small CPU), so the last file read is kept and every caller gets
    its own copy of the module: a run's training client and its base-model sampling client
    read the file once.
    """
    if not _importable("gguf"):  # transformers reads GGUF files through it
        raise ConfigError(
            f"model.base_model: {path} is a GGUF file, and reading one needs the 'gguf' package: "
            "pip install 'debate-core[gguf]'"
        )
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns, dtype)
    with _gguf_lock:
        if key not in _gguf_loaded:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            try:
                with _quiet_transformers():
                    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
                    module = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=dtype)
            except (OSError, ValueError, KeyError, RuntimeError) as exc:
                message = f"model.base_model: {path} could not be loaded as a causal language model: {exc}"
                raise ConfigError(message) from None
            _gguf_loaded.clear()
            _gguf_loaded[key] = (module.eval(), tokenizer)
        module, tokenizer = _gguf_loaded[key]
        return copy.deepcopy(module), tokenizer


def lora_targets(module: torch.nn.Module, mode: FinetuneMode) -> list[str]:
    """Names of the linear layers LoRA adapts: attention and/or MLP projections, and the unembedding."""
    from transformers.pytorch_utils import Conv1D

    output = module.get_output_embeddings() if hasattr(module, "get_output_embeddings") else None
    targets = []
    for name, child in module.named_modules():
        if not isinstance(child, torch.nn.Linear | Conv1D):
            continue
        if child is output:
            if mode.train_unembed:
                targets.append(name)
        elif (mode.train_attn and _ATTENTION_NAME.search(name)) or (mode.train_mlp and _MLP_NAME.search(name)):
            targets.append(name)
    return targets


def prepare_for_training(module: torch.nn.Module, mode: FinetuneMode, lora_seed: int) -> torch.nn.Module:
    """Full fine-tuning trains every parameter; LoRA freezes the base and adds adapters.

    The module stays in eval mode: dropout would make training logprobs differ from the
    sampler's, and the importance ratios of the RL losses assume they agree.
    """
    if mode.full:
        for parameter in module.parameters():
            parameter.requires_grad_(True)
        module.eval()
        return module
    if not (mode.train_attn or mode.train_mlp or mode.train_unembed):
        raise ConfigError("model: LoRA needs at least one of train_attn, train_mlp, train_unembed")
    from peft import LoraConfig, get_peft_model

    targets = lora_targets(module, mode)
    if not targets:
        raise ConfigError("model: LoRA found no linear layer to adapt with these train_* switches")
    config = LoraConfig(r=mode.lora_rank, lora_alpha=mode.lora_rank, lora_dropout=0.0, target_modules=targets)
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        # peft asks transformers a deprecated question about gradient checkpointing (transformers 5)
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        # and warns that a tied unembedding is adapted: its adapter changes the output layer only (the
        # tied base weight stays frozen), and `debate export` unties it before merging, so nothing is
        # wrong for the user to act on
        warnings.filterwarnings("ignore", message=".*tie_word_embeddings=True.*ensure_weight_tying.*")
        torch.manual_seed(lora_seed)
        wrapped = get_peft_model(module, config)
    wrapped.eval()
    return wrapped


def hidden_size(module: torch.nn.Module) -> int | None:
    """The width of a ``transformers`` model's residual stream (``None`` where its config has none)."""
    value = getattr(getattr(module, "config", None), "hidden_size", None)
    return int(value) if isinstance(value, int) else None


def hold_frozen_in(module: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    """Store every frozen floating-point parameter in ``dtype`` (a LoRA run's base weights, a sampling
    client's whole model); trainable ones stay as they are, the float32 master weights of mixed
    precision. Autocast would otherwise convert each frozen weight again at every call (it caches
    only the weights that need a gradient). Tied weights stay one tensor."""
    for parameter in module.parameters():
        if not parameter.requires_grad and parameter.is_floating_point() and parameter.dtype != dtype:
            parameter.data = parameter.data.detach().to(dtype)
    return module


def trainable_parameters(module: torch.nn.Module) -> dict[str, torch.nn.Parameter]:
    """The parameters the optimizer updates, by name (tied weights once)."""
    return {name: p for name, p in module.named_parameters() if p.requires_grad}
