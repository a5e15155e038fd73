"""Ship a trained local checkpoint as an embedded model, so a run can start from it on any machine.

A run that starts from a trained checkpoint (the main job's RL starts from a warm-start's,
docs/training.md#a-task-with-room) would otherwise have to train it first, and a trained
checkpoint's figures can differ between machines; the package can ship its weights instead, bit
for bit, under an embedded model's name, with the recipe that made them in the file's metadata:

    python -m debate_core.tools.embed_checkpoint \\
        runs/subtraction3-warmstart/checkpoints/step_000400.json debate-tiny-subtraction3 \\
        --description "debate-tiny after ..." --recipe "debate train examples/subtraction3-warmstart.toml, step 400"

writes ``data/pretrained/debate-tiny-subtraction3.safetensors`` (float32, every weight the
checkpoint trained) and the model's entry in ``data/embedded_models.json``: the shape of the
checkpoint's base model under the new name. Only a full fine-tune of an embedded model can be
shipped this way (an adapter has no base weights of its own to stand in for).
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path

import torch

from debate_core.backends.local.models.loading import EMBEDDED_PREFIX, embedded_specs
from debate_core.backends.local.models.pretrained import pretrained_file, tokenizer_hash
from debate_core.backends.local.models.tokenizer import build_embedded_tokenizer
from debate_core.backends.local.saved_states import read_state
from debate_core.errors import ConfigError
from debate_core.tools import run_tool
from debate_core.training.policy_weights import resolve_policy_weights

SPECS_RESOURCE = "data/embedded_models.json"


def shipped_weights(checkpoint: str, name: str, recipe: str) -> tuple[dict[str, torch.Tensor], dict[str, str], str]:
    """The checkpoint's weights, the file's metadata, and the embedded base model it was trained from.

    Raises:
        ConfigError: the checkpoint is an adapter, not of an embedded model, was trained with
            another tokenizer than the package builds for that model, or ``name`` is its base model.
        CheckpointError: no checkpoint at ``checkpoint``.
    """
    weights = resolve_policy_weights(checkpoint, "checkpoint")
    state = read_state(weights.state_path or weights.path, with_optimizer=False)
    base_model = str(state.meta.get("base_model", ""))
    if not base_model.startswith(EMBEDDED_PREFIX):
        raise ConfigError(f"checkpoint {checkpoint}: its base model {base_model!r} is not an embedded model")
    if int(state.meta.get("finetune", {}).get("lora_rank", 0)) > 0:
        raise ConfigError(f"checkpoint {checkpoint}: holds LoRA adapters, not every weight of the model")
    base = base_model.removeprefix(EMBEDDED_PREFIX)
    if name == base:
        raise ConfigError(f"checkpoint {checkpoint}: {name!r} is its own base model; ship it under a new name")
    spec = embedded_specs()[base]
    _, tokenizer_json = build_embedded_tokenizer(spec.vocab_size)
    if state.tokenizer_json is not None and tokenizer_hash(state.tokenizer_json) != tokenizer_hash(tokenizer_json):
        raise ConfigError(f"checkpoint {checkpoint}: trained with another tokenizer than embedded:{base}'s")
    metadata = {
        "model": name,
        "trained_from": base_model,
        "recipe": recipe,
        "optimizer_steps": str(state.meta.get("optimizer_steps", "")),
        "seed": str(state.meta.get("seed", "")),
        "tokenizer_sha256_16": tokenizer_hash(tokenizer_json),
    }
    tensors = {key: value.float().contiguous() for key, value in state.weights.items()}
    return tensors, metadata, base


def register(name: str, base: str, description: str, specs_path: Path) -> None:
    """Add (or replace) embedded model ``name`` in ``specs_path`` with ``base``'s shape."""
    specs = json.loads(specs_path.read_text(encoding="utf-8"))
    shape = {key: value for key, value in specs[base].items() if key != "description"}
    specs[name] = {"description": description, **shape}
    specs_path.write_text(json.dumps(specs, indent=2) + "\n", encoding="utf-8")


def ship_checkpoint(
    checkpoint: str, name: str, *, description: str, recipe: str, weights_out: Path, specs_path: Path
) -> None:
    """Write ``checkpoint``'s weights to ``weights_out`` and embedded model ``name`` into ``specs_path``."""
    from safetensors.torch import save_file

    tensors, metadata, base = shipped_weights(checkpoint, name, recipe)
    weights_out.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(weights_out), metadata=metadata)
    register(name, base, description, specs_path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Ship a local checkpoint's weights as an embedded model.")
    parser.add_argument("checkpoint", help="a run directory, checkpoint manifest or local backend state")
    parser.add_argument("name", help="the embedded model's name, e.g. debate-tiny-subtraction3")
    parser.add_argument("--description", required=True, help="what the model is, for embedded_models.json")
    parser.add_argument("--recipe", required=True, help="how the checkpoint was made, kept in the file's metadata")
    parser.add_argument("--out", type=Path, help="default: the package's data/pretrained/<name>.safetensors")
    parser.add_argument("--specs", type=Path, help="default: the package's data/embedded_models.json")
    args = parser.parse_args(argv)
    out = args.out or Path(str(pretrained_file(args.name)))
    specs = args.specs or Path(str(resources.files("debate_core.backends.local").joinpath(SPECS_RESOURCE)))

    def work() -> str:
        ship_checkpoint(
            args.checkpoint,
            args.name,
            description=args.description,
            recipe=args.recipe,
            weights_out=out,
            specs_path=specs,
        )
        return f"wrote {out} and embedded:{args.name} in {specs}"

    return run_tool("embed_checkpoint", work)


if __name__ == "__main__":
    raise SystemExit(main())
