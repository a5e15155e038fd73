"""Fixtures of the wire-level contract test: a byte-level tokenizer directory the SDK loads with
``AutoTokenizer`` (the "model"), the fake service on loopback, and an environment in which the
SDK finds it through ``TINKER_BASE_URL`` and a sentinel API key through ``TINKER_API_KEY``."""

from __future__ import annotations

import gc
import json
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from debate_core.plugin import Registry
from debate_core.testing.tokenizer import EOS_TOKEN_ID
from tests.tinker_wire.fake_service import FakeTinkerService, LoopbackServer
from tests.tinker_wire.midrun import reference_run
from tests.training.trainer_harness import harness_registry, respond

SENTINEL_KEY = "tml-wire-sentinel-7Qf3xK9d"
CONTEXT_LENGTH = 4096
"""What the fake service states as the model's context."""


def byte_level_tokenizer_json() -> str:
    """A ``tokenizer.json`` whose ids are the UTF-8 bytes (0..255) and ``<eos>`` (256): the
    scripted backend's ``ByteTokenizer``, as a Hugging Face fast tokenizer."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    byte_to_char = _bytes_to_unicode()
    vocab = {byte_to_char[b]: b for b in range(256)}
    assert set(vocab) == set(alphabet)
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken("<eos>", special=True, normalized=False)])
    assert tokenizer.token_to_id("<eos>") == EOS_TOKEN_ID
    return tokenizer.to_str()


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-to-character table (the one ``ByteLevel`` uses)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The "base model": a directory the SDK's ``get_tokenizer`` loads offline."""
    directory = tmp_path_factory.mktemp("wire") / "byte-model"
    directory.mkdir()
    (directory / "tokenizer.json").write_text(byte_level_tokenizer_json(), encoding="utf-8")
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<eos>", "clean_up_tokenization_spaces": False}
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


@pytest.fixture
def service(tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTinkerService]:
    """A fresh fake service on loopback, found by the SDK through the environment only."""
    fake = FakeTinkerService(tmp_path / "service-states", SENTINEL_KEY, {str(model_dir): CONTEXT_LENGTH}, respond)
    with LoopbackServer(fake) as server:
        monkeypatch.setenv("TINKER_BASE_URL", server.url)
        monkeypatch.setenv("TINKER_API_KEY", SENTINEL_KEY)
        monkeypatch.delenv("TINKER_CREDENTIAL_CMD", raising=False)
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        monkeypatch.setenv("TINKER_TELEMETRY", "0")
        yield fake


@pytest.fixture
def reference(
    service: FakeTinkerService, registry: Registry, model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[list[dict[str, Any]], Any]:
    """The unfaulted short run of the mid-run fault tests (``midrun.SHORT``): metrics and final weights."""
    return reference_run(service, model_dir, tmp_path_factory.mktemp("reference"))


@pytest.fixture
def registry() -> Iterator[Registry]:
    """The process registry with the harness's ``tiny_sums`` dataset."""
    with harness_registry() as reg:
        yield reg


@pytest.fixture
def tinker_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every record of the SDK's loggers at WARNING or above."""
    caplog.set_level(logging.WARNING, logger="tinker")
    yield caplog


@pytest.fixture(autouse=True)
def sdk_warnings_are_errors() -> Iterator[None]:
    """A deprecation or any other warning raised while the SDK runs (in this thread or the SDK's
    own event-loop thread: the filters are process-wide) fails the test.

    ``ResourceWarning`` is the exception: ``tinker.RestClient`` (the model list, for the context
    guard) keeps a process-wide connection holder whose one-off client-config connection SDK 0.38
    leaves to the garbage collector, which reports it whenever it runs.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=ResourceWarning)
        yield
        gc.collect()
