"""Offline pre-training of an embedded model's base weights, shipped in the package.

A debate run starts from a *pretrained* language model. A randomly initialised transformer
first has to discover how to copy from its context (induction heads), which takes hundreds of
optimizer steps before anything else can be learned; on a laptop CPU that is most of a run's
budget. So the embedded models ship base weights made by this tool, once, at build time, on
text the package itself ships: windows of ``data/corpus.txt`` language-modelled, with spans
of the window and strings of numbers repeated later in the sequence, so that the model learns
to read and copy from its context, and the facts of the one-digit tables (``7 + 8 = 15``), as a
pretrained language model knows them. It never sees a multi-digit problem worked column by
column: that, and the output contract in earnest, is what the warm-start and RL teach. (The
corpus, which is also the tokenizer's training text, holds sample debate transcripts with a few
dozen arithmetic questions written with spaces, six of them two-digit plus one-digit.)

    python -m debate_core.tools.pretrain_embedded debate-tiny --steps 1500 --batch-size 12 --length 192

writes ``data/pretrained/debate-tiny.safetensors`` (weights, plus the recipe and the
tokenizer's hash in the file's metadata). ``embedded:debate-tiny`` loads it as its base model
when present; ``backend.options.base_weights = "random"`` starts from the seeded random
initialisation instead.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from importlib import resources
from pathlib import Path

import torch

from debate_core.backends.local.models.loading import embedded_config, embedded_specs
from debate_core.backends.local.models.pretrained import pretrained_file, tokenizer_hash
from debate_core.backends.local.models.tokenizer import build_embedded_tokenizer
from debate_core.records import Tokenizer


def _digit_fact(rng: random.Random) -> str:
    """One fact of the one-digit tables, the steps of written column arithmetic."""
    a, b = rng.randint(0, 9), rng.randint(0, 9)
    kind = rng.random()
    if kind < 0.45:
        carry = rng.random() < 0.3
        return f"{a}+{b}+1={a + b + 1}" if carry else f"{a}+{b}={a + b}"
    if kind < 0.75:
        return f"{a + 10}-{b}={a + 10 - b}" if a < b else f"{a}-{b}={a - b}"
    return f"{a}*{b}={a * b}"


def _number_string(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.4:
        gap = rng.choice(("", " "))
        return f"{rng.randint(0, 999)}{gap}{rng.choice('+-*')}{gap}{rng.randint(0, 999)}"
    if kind < 0.7:
        return " ".join(str(rng.randint(0, 9)) for _ in range(rng.randint(2, 6)))
    return ", ".join(str(rng.randint(0, 9999)) for _ in range(rng.randint(1, 3)))


class PretrainingData:
    """Sequences of corpus text with copy exercises: a span or a number string is shown, and
    repeated after a gap of other text."""

    def __init__(self, tokenizer: Tokenizer, seed: int) -> None:
        corpus = resources.files("debate_core.backends.local").joinpath("data/corpus.txt").read_text("utf-8")
        self.tokenizer = tokenizer
        self.tokens = list(tokenizer.encode(corpus, add_special_tokens=False))
        self.rng = random.Random(seed)

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _window(self, length: int) -> list[int]:
        start = self.rng.randrange(0, len(self.tokens) - length)
        return self.tokens[start : start + length]

    def sequence(self, length: int) -> list[int]:
        """One training sequence of exactly ``length`` tokens."""
        out: list[int] = []
        while len(out) < length:
            if self.rng.random() < 0.25:
                facts = ", ".join(_digit_fact(self.rng) for _ in range(self.rng.randint(2, 6)))
                out += self._window(self.rng.randint(2, 30)) + self._encode(f" {facts}.")
                continue
            shown: list[int]
            if self.rng.random() < 0.5:
                shown = self._encode(f" {_number_string(self.rng)}")
            else:
                shown = self._window(self.rng.randint(8, 24))
            gap = self._window(self.rng.randint(4, 80))
            out += self._window(self.rng.randint(2, 30)) + shown + gap + shown
        return out[:length]

    def batch(self, rows: int, length: int) -> torch.Tensor:
        return torch.tensor([self.sequence(length) for _ in range(rows)])


def pretrain(
    name: str,
    *,
    steps: int,
    batch_size: int = 16,
    length: int = 256,
    learning_rate: float = 3e-3,
    seed: int = 0,
    log_every: int = 50,
) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Train embedded model ``name`` from its seeded initialisation; returns weights and metadata."""
    from transformers import Qwen3ForCausalLM

    spec = embedded_specs()[name]
    tokenizer, tokenizer_json = build_embedded_tokenizer(spec.vocab_size)
    config = embedded_config(spec, len(tokenizer), tokenizer.eos_token_id, tokenizer.pad_token_id)
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95), weight_decay=0.01)
    data = PretrainingData(tokenizer, seed)
    warmup = max(1, steps // 20)
    started = time.perf_counter()
    for step in range(steps):
        scale = (step + 1) / warmup if step < warmup else 0.1 + 0.45 * (1 + math.cos(math.pi * step / steps))
        for group in optimizer.param_groups:
            group["lr"] = learning_rate * scale
        tokens = data.batch(batch_size, length)
        loss = model(input_ids=tokens, labels=tokens).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(f"step {step + 1}/{steps}  loss {loss.item():.3f}  {time.perf_counter() - started:.0f}s", flush=True)
    weights = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    metadata = {
        "model": name,
        "steps": str(steps),
        "batch_size": str(batch_size),
        "length": str(length),
        "learning_rate": str(learning_rate),
        "seed": str(seed),
        "tokenizer_sha256_16": tokenizer_hash(tokenizer_json),
    }
    return weights, metadata


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Pre-train an embedded model's base weights (offline).")
    parser.add_argument("name", help="embedded model name, e.g. debate-tiny")
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--length", type=int, default=256)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--out", type=Path, help="default: the package's data/pretrained/<name>.safetensors")
    args = parser.parse_args(argv)
    from safetensors.torch import save_file

    if args.threads:
        torch.set_num_threads(args.threads)
    weights, metadata = pretrain(
        args.name,
        steps=args.steps,
        batch_size=args.batch_size,
        length=args.length,
        learning_rate=args.learning_rate,
        seed=args.seed,
    )
    out = args.out or Path(str(pretrained_file(args.name)))
    out.parent.mkdir(parents=True, exist_ok=True)
    # tied embeddings: store the shared matrix once
    weights.pop("lm_head.weight", None)
    save_file({k: v.to(torch.bfloat16) for k, v in weights.items()}, str(out), metadata=metadata)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
