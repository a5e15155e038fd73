"""The ``local`` backend plugin: the Tinker client contract on torch, on this machine.

Runs embedded models (``embedded:debate-tiny``: a tokenizer trained offline and the pretrained
base weights the package ships) and Hugging Face causal-LM directories, with full fine-tuning
or LoRA. torch and transformers are imported only when the backend is built.
"""

from __future__ import annotations

from debate_core.backends import LocalBackendOptions, ServiceClientLike, local_service
from debate_core.plugin import BackendSpec, hookimpl


def build_local_backend(options: LocalBackendOptions | None) -> ServiceClientLike:
    """A ``LocalServiceClient`` with these options (imports torch)."""
    return local_service(options)


@hookimpl
def debate_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="local",
            description="torch on this machine: embedded models or a Hugging Face directory, full or LoRA",
            build=build_local_backend,
            options=LocalBackendOptions,
        )
    ]
