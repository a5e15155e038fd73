"""Write an embedded model as a Hugging Face folder, so a server that loads models by folder
(a Tinker-compatible server such as SkyRL's, docs/own-gpus.md) can serve it:

    python -m debate_core.tools.export_embedded debate-tiny exports/debate-tiny

writes the model's ``config.json`` and weights (``save_pretrained``, float32: the weights the
package ships, as ``embedded:debate-tiny`` loads them) and its tokenizer (``tokenizer.json`` and
``tokenizer_config.json``), which ``transformers``' ``AutoModelForCausalLM`` and
``AutoTokenizer`` load offline. A run then names the folder as ``model.base_model``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from debate_core.tools import run_tool


def export_embedded(name: str, directory: Path) -> Path:
    """Write embedded model ``name`` (``debate-tiny`` or ``embedded:debate-tiny``) with its
    tokenizer to ``directory``; returns the directory.

    Raises:
        ConfigError: no embedded model of that name, or ``directory`` exists and is not an empty folder.
    """
    import torch

    from debate_core.backends.local.models.loading import EMBEDDED_PREFIX, embedded_spec, load_base
    from debate_core.errors import ConfigError

    base_model = name if name.startswith(EMBEDDED_PREFIX) else EMBEDDED_PREFIX + name
    embedded_spec(base_model)  # an unknown name is one line naming the embedded models
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ConfigError(f"{directory}: exists and is not an empty folder; name a new one")
    module, tokenizer, _ = load_base(base_model, device=torch.device("cpu"), dtype=torch.float32, init_seed=0)
    from transformers.utils import logging

    logging.disable_progress_bar()  # the writer's progress bar is noise for one small file
    directory.mkdir(parents=True, exist_ok=True)
    module.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write an embedded model and its tokenizer as a Hugging Face folder.")
    parser.add_argument("name", help="the embedded model, e.g. debate-tiny (see embedded_models.json)")
    parser.add_argument("directory", type=Path, help="a new (or empty) folder to write")
    args = parser.parse_args(argv)

    def work() -> str:
        return f"wrote {args.name.removeprefix('embedded:')} to {export_embedded(args.name, args.directory)}"

    return run_tool("export_embedded", work)


if __name__ == "__main__":
    raise SystemExit(main())
