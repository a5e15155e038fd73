"""The backend contract against the Tinker SDK: every backend's methods take the SDK's
parameters (names, order, kinds, defaults), and everything the trainer sends is valid SDK data."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tinker
from tinker import types
from tinker.proto.request_conv import forward_backward_request_to_proto
from tinker.types.forward_backward_input import ForwardBackwardInput
from tinker.types.forward_backward_request import ForwardBackwardRequest

from debate_core.backends.contract import CONTRACT_METHODS, CONTRACT_PROTOCOLS
from debate_core.backends.tinker_backend import TinkerOptions, TinkerService, connect
from debate_core.errors import ConfigError
from debate_core.testing import sdk_mismatches
from tests.doubles.scripted_backend import ScriptedSamplingClient, ScriptedServiceClient, ScriptedTrainingClient

SDK_CLASSES: dict[str, type] = {
    "ServiceClient": tinker.ServiceClient,
    "TrainingClient": tinker.TrainingClient,
    "SamplingClient": tinker.SamplingClient,
}


def parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    params = list(inspect.signature(function).parameters.values())
    return params[1:] if params and params[0].name == "self" else params


def same(a: inspect.Parameter, b: inspect.Parameter) -> bool:
    return (a.name, a.kind, a.default) == (b.name, b.kind, b.default)


mismatches = sdk_mismatches  # the check the test kit ships (debate_core.testing.BackendContract)


@pytest.mark.parametrize("sdk_name", sorted(SDK_CLASSES))
def test_the_contract_protocols_are_the_sdk_signatures(sdk_name: str) -> None:
    sdk = SDK_CLASSES[sdk_name]
    for method in CONTRACT_METHODS[sdk_name]:
        contract = parameters(getattr(CONTRACT_PROTOCOLS[sdk_name], method))
        theirs = parameters(getattr(sdk, method))
        assert all(same(a, b) for a, b in zip(contract, theirs, strict=False)), method
        assert len(contract) <= len(theirs), method


@pytest.mark.parametrize(
    ("implementation", "sdk_name"),
    [
        (ScriptedServiceClient, "ServiceClient"),
        (ScriptedTrainingClient, "TrainingClient"),
        (ScriptedSamplingClient, "SamplingClient"),
        (TinkerService, "ServiceClient"),
    ],
)
def test_builtin_backends_match_the_sdk(implementation: type, sdk_name: str) -> None:
    assert mismatches(implementation, sdk_name) == []


def local_classes() -> list[tuple[type, str]]:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from debate_core.backends.local.sampling.client import LocalSamplingClient
    from debate_core.backends.local.service import LocalServiceClient
    from debate_core.backends.local.training_client import LocalTrainingClient

    return [
        (LocalServiceClient, "ServiceClient"),
        (LocalTrainingClient, "TrainingClient"),
        (LocalSamplingClient, "SamplingClient"),
    ]


def test_the_local_backend_matches_the_sdk() -> None:
    for implementation, sdk_name in local_classes():
        assert mismatches(implementation, sdk_name) == [], implementation.__name__


def test_a_departure_is_reported() -> None:
    class Renamed:
        def sample(self, prompt: Any, n: int, sampling_params: Any) -> None: ...

        def compute_logprobs(self, prompt: Any) -> None: ...

        def get_tokenizer(self) -> None: ...

    problems = mismatches(Renamed, "SamplingClient")
    assert any("'n' is not the SDK's" in p for p in problems)


def test_everything_the_trainer_sends_is_valid_sdk_data(tmp_path: Path) -> None:
    from debate_core.rundir.directory import RunDirectory
    from debate_core.training.progress import Progress
    from debate_core.training.run import run_training
    from tests.training.trainer_harness import SERVICES, harness_registry, make_config

    with harness_registry() as registry:
        config = make_config(
            "training.num_iterations=2",
            "warmstart.enabled=true",
            "warmstart.steps=1",
            "warmstart.batch_size=2",
            "evaluation.num_problems=0",
        )
        asyncio.run(
            run_training(
                config, registry, RunDirectory(tmp_path / "run"), progress=Progress("off"), handle_signals=False
            )
        )
    service = SERVICES[-1]
    assert len(service.sent_batches) == 3
    for index, (data, loss_fn, loss_config) in enumerate(service.sent_batches):
        request = ForwardBackwardRequest(
            forward_backward_input=ForwardBackwardInput(
                data=data,
                loss_fn=loss_fn,  # type: ignore[arg-type]
                loss_fn_config=loss_config or None,
            ),
            model_id="contract-test",
            seq_id=index + 1,
        )
        message = forward_backward_request_to_proto(request)
        assert len(message.data) == len(data) > 0
        for datum in data:
            assert isinstance(datum, types.Datum)
            length = datum.model_input.length
            expected = (
                {"target_tokens", "weights"}
                if loss_fn == "cross_entropy"
                else {"target_tokens", "logprobs", "advantages"}
            )
            assert set(datum.loss_fn_inputs) == expected
            for name, tensor in datum.loss_fn_inputs.items():
                assert tensor.dtype == ("int64" if name == "target_tokens" else "float32")
                assert len(tensor.data) == length
    for params in service.sent_adam:
        assert types.AdamParams.model_validate(params.model_dump()) == params
    for params in service.sent_sampling:
        assert types.SamplingParams.model_validate(params.model_dump()) == params
        assert params.seed is not None and params.max_tokens == 400


def test_the_tinker_backend_checks_the_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINKER_API_KEY", "tml-test")
    service = connect(TinkerOptions(base_url="http://127.0.0.1:9"))
    assert isinstance(service.client, tinker.ServiceClient)
    with pytest.raises(ConfigError, match=r"model\.lora_rank"):
        service.create_lora_training_client("Qwen/Qwen3-8B", rank=0)
