"""The embedded tokenizer (trained offline, the same on every machine, lossless) and the
``local`` backend plugin's registration and options."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.backends.local.models.tokenizer import CONTRACT_TAGS, build_embedded_tokenizer, token_byte_table
from debate_core.builtin.backend_local import LocalBackendOptions, build_local_backend, debate_backends

_TOKENIZER, _ = build_embedded_tokenizer(1024)
_TABLE = token_byte_table(_TOKENIZER)


@pytest.mark.slow  # starts a Python subprocess: not in the quick loop
def test_training_is_deterministic_across_processes() -> None:
    script = (
        "import hashlib; from debate_core.backends.local.models.tokenizer import train_tokenizer_json as t; "
        "print(hashlib.sha256(t(1024).encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    _, text = build_embedded_tokenizer(1024)
    assert digests == {hashlib.sha256(text.encode()).hexdigest()}


@given(st.text(max_size=200))
def test_every_text_round_trips(text: str) -> None:
    ids = _TOKENIZER.encode(text, add_special_tokens=False)
    assert _TOKENIZER.decode(ids) == text
    assert _TABLE is not None
    assert b"".join(_TABLE[i] for i in ids) == text.encode("utf-8")


def test_digits_are_single_tokens_and_tags_are_whole() -> None:
    ids = _TOKENIZER.encode("12345", add_special_tokens=False)
    assert [_TOKENIZER.decode([i]) for i in ids] == list("12345")
    for tag in CONTRACT_TAGS:
        assert len(_TOKENIZER.encode(tag, add_special_tokens=False)) == 1
    assert _TOKENIZER.eos_token_id is not None and _TOKENIZER.decode([_TOKENIZER.eos_token_id]) == "<|endoftext|>"


def test_the_plugin_registers_local_with_validated_options() -> None:
    (spec,) = debate_backends()
    assert spec.name == "local" and spec.options is LocalBackendOptions
    with pytest.raises(ValueError, match="max_batch_rows"):
        LocalBackendOptions(max_batch_rows=0)
    client = build_local_backend(LocalBackendOptions(prefix_cache_mb=8))
    try:
        assert client.settings.prefix_cache_mb == 8
        assert attrs.asdict(LocalBackendOptions()).keys() == attrs.asdict(client.settings).keys()
    finally:
        client.close()


@pytest.mark.slow  # starts a Python subprocess: not in the quick loop
def test_the_plugin_module_does_not_import_torch() -> None:
    script = "import sys, debate_core.builtin.backend_local; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
