"""The SDK's training and sampling clients with each answer checked and made whole by
:mod:`debate_core.backends.tinker_replies` (a Tinker-compatible server answers some calls
differently from the Tinker service); every other attribute is the SDK client's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from debate_core.backends.tinker_replies import (
    Mapped,
    completed_forward_backward,
    completed_logprobs,
    missing_reply_field,
)

if TYPE_CHECKING:  # the SDK imports torch when it is installed: not at the CLI's start
    import tinker
    from tinker import types


class TinkerSamplingClient:
    """``tinker.SamplingClient``: ``sample``'s missing reply fields named, ``compute_logprobs``
    one value per prompt token."""

    def __init__(self, client: tinker.SamplingClient, server: str) -> None:
        self.client = client
        self.server = server

    def sample(
        self,
        prompt: types.ModelInput,
        num_samples: int,
        sampling_params: types.SamplingParams,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
    ) -> Mapped[types.SampleResponse, types.SampleResponse]:
        future = self.client.sample(prompt, num_samples, sampling_params, include_prompt_logprobs, topk_prompt_logprobs)
        return Mapped(future, lambda response: response, lambda error: missing_reply_field(error, self.server))

    def compute_logprobs(self, prompt: types.ModelInput) -> Mapped[list[float | None], list[float | None]]:
        length = prompt.length
        return Mapped(
            self.client.compute_logprobs(prompt), lambda values: completed_logprobs(values, length, self.server)
        )

    def __getattr__(self, name: str) -> Any:  # Any: any other attribute of the SDK's client, as it is
        return getattr(self.client, name)


class TinkerTrainingClient:
    """``tinker.TrainingClient``: ``forward_backward`` with ``loss:sum`` when the server reports
    none, and sampling clients that are :class:`TinkerSamplingClient`."""

    def __init__(self, client: tinker.TrainingClient, server: str) -> None:
        self.client = client
        self.server = server

    def forward_backward(
        self,
        data: list[types.Datum],
        loss_fn: types.LossFnType,
        loss_fn_config: Mapping[str, float] | None = None,
    ) -> Mapped[types.ForwardBackwardOutput, types.ForwardBackwardOutput]:
        future = self.client.forward_backward(data, loss_fn, loss_fn_config)
        return Mapped(
            future, lambda output: completed_forward_backward(output, loss_fn, data, loss_fn_config, self.server)
        )

    def save_weights_and_get_sampling_client(
        self, name: str | None = None
    ) -> Mapped[tinker.SamplingClient, TinkerSamplingClient]:
        saving = self.client.save_weights_and_get_sampling_client
        future = saving(name) if name is not None else saving()
        return Mapped(future, lambda client: TinkerSamplingClient(client, self.server))

    def __getattr__(self, name: str) -> Any:  # Any: any other attribute of the SDK's client, as it is
        return getattr(self.client, name)
