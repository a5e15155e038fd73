"""A byte-level tokenizer for tests: no model, no vocabulary file, every string round-trips."""

from __future__ import annotations

from collections.abc import Sequence

EOS_TOKEN_ID = 256
VOCAB_SIZE = 257


class ByteTokenizer:
    """UTF-8 bytes as token ids 0..255 and ``<eos>`` as 256; no BOS. Enough of a Hugging Face
    tokenizer for the renderers and the scripted backend (``encode``, ``decode``, the special
    token ids, ``len``)."""

    eos_token = "<eos>"
    eos_token_id = EOS_TOKEN_ID
    bos_token_id: int | None = None
    pad_token_id = EOS_TOKEN_ID
    vocab_size = VOCAB_SIZE
    name_or_path = "bytes"

    def __len__(self) -> int:
        return VOCAB_SIZE

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        """The UTF-8 bytes of ``text`` (unencodable characters, such as lone surrogates, become ``?``)."""
        return list(text.encode("utf-8", errors="replace"))

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """The text of byte tokens; ``<eos>`` is written out where it stands unless skipped."""
        out: list[str] = []
        chunk = bytearray()
        for token in token_ids:
            if 0 <= token < 256:
                chunk.append(token)
                continue
            out.append(chunk.decode("utf-8", errors="replace"))
            chunk = bytearray()
            if token == self.eos_token_id and not skip_special_tokens:
                out.append(self.eos_token)
        out.append(chunk.decode("utf-8", errors="replace"))
        return "".join(out)
