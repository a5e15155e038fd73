"""The embedded models' tokenizer: a byte-level BPE trained, at build time and offline, on a
text the package ships (``data/corpus.txt``), wrapped as a ``transformers`` fast tokenizer.

Byte level means every string round-trips, whatever it contains. Digits are always split
one per token, which is what lets a small model learn arithmetic. The ten XML tags of the
output contract are whole tokens, so a stop on ``</consensus_reason>`` is one token and a
formatted answer is short. The trained tokenizer is saved beside every checkpoint, so a
checkpoint never depends on this module producing the same merges later.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

from debate_core.debate.xml_parser import XML_TAGS

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

EOS_TOKEN = "<|endoftext|>"
PAD_TOKEN = "<|pad|>"
SPECIAL_TOKENS = (EOS_TOKEN, PAD_TOKEN)
CONTRACT_TAGS = XML_TAGS
"""The XML output contract's tags (the default parser's), each one token."""


def _corpus_text() -> str:
    return resources.files("debate_core.backends.local").joinpath("data/corpus.txt").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=4)
def train_tokenizer_json(vocab_size: int) -> str:
    """Train the byte-level BPE on the shipped corpus; returns the ``tokenizer.json`` text.

    The ``tokenizers`` BPE trainer breaks ties by the pair itself, so the result is the
    same on every machine (a test checks it across processes).
    """
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\d"), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_corpus_text().splitlines(keepends=True), trainer=trainer)
    tokenizer.add_tokens([AddedToken(tag, single_word=False, normalized=False) for tag in CONTRACT_TAGS])
    return tokenizer.to_str()


def wrap_tokenizer(tokenizer_json: str) -> PreTrainedTokenizerFast:
    """A ``transformers`` tokenizer around a ``tokenizer.json`` text (no hub, no files)."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(tokenizer_json),
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        clean_up_tokenization_spaces=False,
    )


def build_embedded_tokenizer(vocab_size: int) -> tuple[PreTrainedTokenizerFast, str]:
    """The tokenizer of an embedded model with this target vocabulary, and its JSON text."""
    text = train_tokenizer_json(vocab_size)
    return wrap_tokenizer(text), text


def token_byte_table(tokenizer: Any) -> list[bytes] | None:  # Any: a Hugging Face tokenizer (untyped)
    """The exact bytes each token id decodes to, for byte-level BPE tokenizers; else ``None``.

    With it, stop strings are matched on bytes as tokens arrive, without decoding.
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    spec = json.loads(backend.to_str())
    decoder = spec.get("decoder") or {}
    kinds = {decoder.get("type")} | {d.get("type") for d in decoder.get("decoders", []) or []}
    if "ByteLevel" not in kinds or (spec.get("model") or {}).get("type") != "BPE":
        return None
    byte_of_char = {char: byte for byte, char in _bytes_to_unicode().items()}
    size = backend.get_vocab_size(with_added_tokens=True)
    table: list[bytes] = [b""] * size
    for piece, index in backend.get_vocab(with_added_tokens=False).items():
        if index < size:
            try:
                table[index] = bytes(byte_of_char[c] for c in piece)
            except KeyError:
                return None
    for added in spec.get("added_tokens", []):
        if added["id"] < size:
            table[added["id"]] = added["content"].encode("utf-8")
    return table


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters (what byte-level BPE stores)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in chars), strict=True))
