"""``debate export CHECKPOINT --to DIR``: a checkpoint as a Hugging Face causal-LM directory; with
``--adapter`` a LoRA run's adapter in PEFT's format, with ``--base`` the base model it goes on."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from debate_core.errors import DebateError
from debate_core.records.json_values import JsonObject

if TYPE_CHECKING:
    from debate_core.backends.local.export import ExportedAdapter, ExportedModel
    from debate_core.backends.local.service import LocalServiceClient


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write a checkpoint as a Hugging Face model directory",
        description=(
            "Write a local-backend checkpoint as a Hugging Face causal-LM directory (config.json, "
            "safetensors weights with any LoRA adapter merged, the tokenizer and its chat template) that "
            "transformers' AutoModelForCausalLM.from_pretrained(DIR) loads. A Tinker checkpoint lives on "
            "the service: the command that downloads it is printed instead (docs/training.md#exporting-a-policy). "
            "--adapter writes a LoRA run's adapter alone in PEFT's format, --base the base model it goes on "
            "(docs/training.md#lora-adapters)."
        ),
    )
    parser.add_argument(
        "checkpoint",
        metavar="CHECKPOINT",
        help="a run directory (its latest checkpoint), a manifest (checkpoints/step_*.json) or a backend path",
    )
    parser.add_argument("--to", type=Path, required=True, metavar="DIR", help="the new model directory")
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--adapter",
        action="store_true",
        help="a LoRA run's adapter alone (adapter_config.json, adapter_model.safetensors), for PEFT or vLLM",
    )
    what.add_argument(
        "--base", action="store_true", help="the base model a LoRA run's adapter goes on, as the run read it"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from debate_core.training.policy_weights import resolve_policy_weights

    weights = resolve_policy_weights(args.checkpoint, "CHECKPOINT")
    if "://" in weights.path:
        raise DebateError(remote_checkpoint_message(weights.sampler_path or weights.path, args.to))
    service = _local_backend(Path(args.checkpoint))
    try:
        from debate_core.backends.local import export

        if args.adapter:
            return _print_adapter(export.export_adapter(weights.path, args.to, service))
        if args.base:
            return _print_base(export.export_base(weights.path, args.to, service))
        exported = export.export_checkpoint(weights.path, args.to, service)
    finally:
        service.close()
    merged = "LoRA merged into " if exported.merged_lora else "fine-tuned from "
    print(f"{exported.directory}: a Hugging Face causal LM ({merged}{exported.base_model})")
    if exported.chat_template_added:
        print("  chat template: the role_colon renderer's (User: ... / Assistant:), the tokenizer had none")
    print(f"  load it with: AutoModelForCausalLM.from_pretrained({str(exported.directory)!r})")
    return 0


def _print_adapter(exported: ExportedAdapter) -> int:
    print(
        f"{exported.directory}: a PEFT LoRA adapter (rank {exported.rank}, "
        f"{exported.adapted_layers} layers: {', '.join(exported.target_modules)}) for {exported.base_model}"
    )
    print(
        f"  load it with: PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(BASE), "
        f"{str(exported.directory)!r})"
    )
    if exported.base_model.startswith(("embedded:", "gguf:")):
        print(f"  BASE: `debate export CHECKPOINT --base --to BASE` writes {exported.base_model} as a directory")
    return 0


def _print_base(exported: ExportedModel) -> int:
    print(f"{exported.directory}: the base model {exported.base_model} (the LoRA adapter left out)")
    if exported.chat_template_added:
        print("  chat template: the role_colon renderer's (User: ... / Assistant:), the tokenizer had none")
    return 0


def remote_checkpoint_message(path: str, target: Path) -> str:
    """What to do with a checkpoint a service keeps: its own download command (Tinker's CLI)."""
    return (
        f"{path} is kept by the Tinker service, not on this machine: download it with "
        f"`tinker checkpoint download {path} -o {target}` (the Tinker SDK's CLI; a LoRA adapter in the "
        "PEFT format, to load onto its base model)"
    )


def _local_backend(argument: Path) -> LocalServiceClient:
    """The local backend configured as the checkpoint's run was (its base weights and init seed make
    the base model an adapter is merged into): the run's config.toml when the argument is in a run
    directory, the defaults otherwise; always in float32, so that the export holds the float32
    master weights (a mixed-precision run's frozen base is otherwise held in bfloat16)."""
    from debate_core.backends.local.service import LocalServiceClient
    from debate_core.config import load_run_config
    from debate_core.plugin import get_registry

    registry = get_registry()
    candidates = [argument, *list(argument.parents)[:3]]  # RUN_DIR, its manifests, its backend states
    runs = [c for c in candidates if (c / "config.toml").is_file() and (c / "checkpoints").is_dir()]
    config_file = runs[0] / "config.toml" if runs else None
    options: JsonObject = {}
    if config_file is not None:
        config = load_run_config(config_file, registry=registry)
        if config.backend.name == "local":
            options = dict(config.backend.options)
    service = registry.build("backend", "local", {**options, "dtype": "float32"}, "backend.options")
    assert isinstance(service, LocalServiceClient)
    return service
