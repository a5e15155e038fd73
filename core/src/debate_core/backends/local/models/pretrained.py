"""The pretrained base weights the package ships for embedded models, and their check against
the tokenizer they were trained with. ``debate_core.tools.pretrain_embedded`` makes them."""

from __future__ import annotations

import hashlib
from importlib import resources
from typing import TYPE_CHECKING

import torch

from debate_core.errors import ConfigError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

PRETRAINED_DIRECTORY = "data/pretrained"


def pretrained_file(name: str) -> Traversable:
    """The packaged base-weights resource of embedded model ``name`` (may not exist)."""
    return resources.files("debate_core.backends.local").joinpath(f"{PRETRAINED_DIRECTORY}/{name}.safetensors")


def tokenizer_hash(tokenizer_json: str) -> str:
    """Identifies the vocabulary the weights were trained with."""
    return hashlib.sha256(tokenizer_json.encode("utf-8")).hexdigest()[:16]


def load_pretrained(module: torch.nn.Module, name: str, tokenizer_json: str, *, required: bool) -> None:
    """Load the package's pretrained base weights of embedded model ``name`` (``embedded:<name>``)
    into ``module``; with ``required`` a model the package ships none for is an error."""
    from safetensors import safe_open

    resource = pretrained_file(name)
    if not resource.is_file():
        if required:
            raise ConfigError(
                f"backend.options.base_weights: the package ships no pretrained weights for embedded:{name}; "
                f"use base_weights = 'random', or make them with: python -m debate_core.tools.pretrain_embedded {name}"
            )
        return
    with resources.as_file(resource) as path, safe_open(str(path), framework="pt") as weights:
        expected = (weights.metadata() or {}).get("tokenizer_sha256_16")
        if expected != tokenizer_hash(tokenizer_json):
            raise ConfigError(
                f"the pretrained weights of embedded:{name} were made with another tokenizer "
                f"({expected}); rebuild them with: python -m debate_core.tools.pretrain_embedded {name}"
            )
        state = {key: weights.get_tensor(key).float() for key in weights.keys()}  # noqa: SIM118
    if "lm_head.weight" not in state:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    module.load_state_dict(state, strict=True)
