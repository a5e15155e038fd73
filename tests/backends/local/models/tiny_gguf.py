"""A tiny GGUF model made in the test (a 2-layer Llama of width 32 with random float32 weights and a
byte-level BPE tokenizer with a chat template), loadable by ``transformers`` with the ``gguf`` package."""

from __future__ import annotations

from pathlib import Path

import numpy as np

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
"""The model's own chat template (kept by an export: only a tokenizer without one gets the renderer's)."""


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-to-character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs, strict=True)}


def write_tiny_gguf(path: Path) -> Path:
    """Write the model to ``path`` and return it."""
    import gguf

    table = bytes_to_unicode()
    tokens = [table[b] for b in range(256)] + ["<|endoftext|>", "\u0120\u0120"]
    types = [gguf.TokenType.NORMAL] * 256 + [gguf.TokenType.CONTROL, gguf.TokenType.NORMAL]
    vocab, dim, ff, layers, heads, kv = len(tokens), 32, 64, 2, 4, 2
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny")
    w.add_context_length(4096)
    w.add_embedding_length(dim)
    w.add_block_count(layers)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_rope_dimension_count(dim // heads)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(vocab)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_scores([0.0] * vocab)
    w.add_token_merges(["\u0120 \u0120"])
    w.add_bos_token_id(256)
    w.add_eos_token_id(256)
    w.add_chat_template(CHAT_TEMPLATE)
    rng = np.random.default_rng(0)

    def t(name: str, shape: tuple[int, ...]) -> None:
        w.add_tensor(name, (rng.standard_normal(shape) * 0.1).astype(np.float32))

    t("token_embd.weight", (vocab, dim))
    for i in range(layers):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(dim, np.float32))
        t(f"blk.{i}.attn_q.weight", (dim, dim))
        t(f"blk.{i}.attn_k.weight", (kv * dim // heads, dim))
        t(f"blk.{i}.attn_v.weight", (kv * dim // heads, dim))
        t(f"blk.{i}.attn_output.weight", (dim, dim))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(dim, np.float32))
        t(f"blk.{i}.ffn_gate.weight", (ff, dim))
        t(f"blk.{i}.ffn_up.weight", (ff, dim))
        t(f"blk.{i}.ffn_down.weight", (dim, ff))
    w.add_tensor("output_norm.weight", np.ones(dim, np.float32))
    t("output.weight", (vocab, dim))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
