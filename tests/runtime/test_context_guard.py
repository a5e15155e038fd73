"""The context guard: a run whose last turn can never fit the model's context is refused before a
model loads; a prompt plus ``debate.max_tokens`` beyond the model's context stops training,
evaluation and ``debate run`` before the request is sent, naming the debate, the sizes and the
option to change."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from debate_core.cli import main
from debate_core.config import load_run_config
from debate_core.errors import ConfigError
from debate_core.plugin import Registry, get_registry
from debate_core.rundir.directory import RunDirectory
from debate_core.runtime.context_guard import (
    ContextGuardStop,
    ContextLengthError,
    check_prompt_fits,
    check_run_fits_context,
    context_hint,
)
from debate_core.training.progress import Progress
from debate_core.training.run import run_training
from tests.doubles.scripted_backend import ScriptedServiceClient
from tests.training.trainer_harness import BASE_OVERRIDES, SERVICES, make_config, service_setup

MAX_TOKENS = 400


def with_context(length: int | None) -> Any:
    def setup(service: ScriptedServiceClient) -> None:
        service.max_context_length = lambda base_model: length  # type: ignore[attr-defined]

    return setup


def train(registry: Registry, run_dir: Path, *overrides: str) -> Any:
    config = make_config("training.num_iterations=1", "evaluation.num_problems=0", *overrides)
    return asyncio.run(
        run_training(config, registry, RunDirectory(run_dir), progress=Progress("off"), handle_signals=False)
    )


def test_a_run_whose_last_turn_cannot_fit_is_refused_before_a_model_loads() -> None:
    """embedded:debate-micro reads 1024 positions; the last turn of 4 agents over 3 rounds under the
    ``all`` history shows the 11 earlier turns, one token each at the least."""
    micro = ("backend.name=local", "model.base_model=embedded:debate-micro", "debate.history_policy.name=all")

    def config(*overrides: str) -> Any:
        return load_run_config(None, [*micro, *overrides], registry=get_registry())

    with pytest.raises(ConfigError, match=r"debate\.max_tokens: 1024 sampled tokens do not fit"):
        check_run_fits_context(config("debate.max_tokens=1024"), get_registry())
    four = ("debate.num_agents=4", "debate.max_rounds=3")
    with pytest.raises(ConfigError, match=r"shows 11 earlier turns, so .* need at least 1025 positions"):
        check_run_fits_context(config(*four, "debate.max_tokens=1013"), get_registry())
    check_run_fits_context(config(*four, "debate.max_tokens=1012"), get_registry())  # 11 + 1 + 1012 = 1024
    check_run_fits_context(config("backend.name=tinker", "debate.max_tokens=100000"), get_registry())  # unknown


@pytest.mark.parametrize(
    ("prompt", "max_tokens", "context", "fits"),
    [
        (100, 28, 128, True),
        (100, 29, 128, False),
        (128, None, 128, False),
        (127, None, 128, True),
        (10**6, 1, None, True),
    ],
)
def test_the_rule(prompt: int, max_tokens: int | None, context: int | None, fits: bool) -> None:
    if fits:
        check_prompt_fits(prompt, max_tokens, context)
    else:
        with pytest.raises(ContextLengthError, match=f"beyond the model's context of {context}"):
            check_prompt_fits(prompt, max_tokens, context)


@pytest.mark.parametrize(
    ("history", "names"),
    [
        ("", ["debate.max_tokens (now 256)", "max_chars_per_field (now unset", 'name = "last_k"']),
        (
            'debate.history_policy={ name = "all", options = { max_chars_per_field = 800 } }',
            ["max_chars_per_field (now 800)"],
        ),
        ("debate.history_policy.name=last_k", ["debate.history_policy.options.rounds (now 1)", "max_chars_per_field"]),
        ("debate.history_policy.name=none", ["debate.max_tokens (now 256)"]),
    ],
)
def test_the_hint_names_the_options_that_shorten_prompts(history: str, names: list[str]) -> None:
    config = load_run_config(None, [history] if history else [], registry=get_registry())
    hint = context_hint(config)
    for name in names:
        assert name in hint
    if "none" in history:
        assert "max_chars_per_field" not in hint


def test_training_stops_before_the_request_naming_the_debate(registry: Registry, tmp_path: Path) -> None:
    train(registry, tmp_path / "free")  # no guard: learn the prompt sizes of this batch
    lengths = SERVICES[-1].sent_prompt_lengths
    context = min(lengths) + MAX_TOKENS  # the shortest prompt fits, the longest does not
    assert max(lengths) > min(lengths)
    with service_setup(with_context(context)), pytest.raises(ContextLengthError) as raised:
        train(registry, tmp_path / "guarded")
    message = str(raised.value)
    assert "debate 'step1-debate" in message and "(agent " in message and ", round " in message
    assert f"plus debate.max_tokens = {MAX_TOKENS}" in message and f"context of {context}" in message
    assert "debate.history_policy.options.max_chars_per_field" in message
    service = SERVICES[-1]
    assert all(length + MAX_TOKENS <= context for length in service.sent_prompt_lengths)
    assert service.sent_batches == []  # nothing trained on the broken batch


def test_the_batch_stops_quickly_once_one_prompt_overflowed() -> None:
    from debate_core.runtime.retries import RetryingSamplingClient, RetryPolicy

    sampler = RetryingSamplingClient(object(), RetryPolicy(), "x", context_length=10)  # type: ignore[arg-type]
    with pytest.raises(ContextLengthError):
        sampler._guard_context(8, 5)
    with pytest.raises(ContextGuardStop):
        sampler._guard_context(1, 1)  # would fit, but the batch is stopping
    assert len(sampler.failures) == 1


def test_an_unknown_context_checks_nothing(registry: Registry, tmp_path: Path) -> None:
    with service_setup(with_context(None)):
        outcome = train(registry, tmp_path / "run")
    assert outcome.iterations == 1


def test_eval_and_run_stop_with_one_line(
    registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    with service_setup(with_context(MAX_TOKENS + 10)):
        assert main(["eval", str(run_file), *BASE_OVERRIDES, "evaluation.num_problems=1"]) == 1
        err = capsys.readouterr().err
        assert "debate 'eval-direct-0-" in err and f"context of {MAX_TOKENS + 10}" in err
        assert main(["run", str(run_file), *BASE_OVERRIDES, "--question", "What is 1 + 2?"]) == 1
        err = capsys.readouterr().err
        assert "debate 'q0' (agent 0, round 1)" in err and "to fit, lower debate.max_tokens" in err
        assert len(err.strip().splitlines()) == 1
