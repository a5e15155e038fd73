"""``LocalSamplingClient``: the Tinker ``SamplingClient`` surface over one frozen weight snapshot.

A sampling client never changes: later training steps build new snapshots, and this one
keeps sampling the weights it was made from (the snapshot property the RL loop relies on).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from tinker import types

from debate_core.backends.local.futures import AwaitableConcurrentFuture, failed
from debate_core.backends.local.sampling.engine import SamplerEngine, SampleRequest, SamplerSnapshot


class LocalSamplingClient:
    """Samples from a snapshot through the service client's batching engine."""

    def __init__(self, snapshot: SamplerSnapshot, engine: SamplerEngine) -> None:
        self._snapshot = snapshot
        self._engine = engine

    @property
    def snapshot(self) -> SamplerSnapshot:
        return self._snapshot

    def sample(
        self,
        prompt: types.ModelInput,
        num_samples: int,
        sampling_params: types.SamplingParams,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
        topk_sample_logprobs: int = 0,
        target_prompt_logprobs: types.TensorData | None = None,
        prompt_alt_tokens_k: int = 0,
        prompt_logprobs_last_n: int | None = None,
    ) -> AwaitableConcurrentFuture[types.SampleResponse]:
        """Generate ``num_samples`` continuations of ``prompt`` (see ``tinker.SamplingClient.sample``).

        Top-k logprobs, target prompt logprobs and alternative prompt tokens are service
        features the local backend does not provide; asking for them fails the future.
        """
        unsupported = {
            "topk_prompt_logprobs": topk_prompt_logprobs,
            "topk_sample_logprobs": topk_sample_logprobs,
            "target_prompt_logprobs": target_prompt_logprobs,
            "prompt_alt_tokens_k": prompt_alt_tokens_k,
        }
        asked = [name for name, value in unsupported.items() if value]
        if asked:
            return failed(ValueError(f"the local backend does not support {', '.join(asked)}"))
        try:
            tokens = prompt.to_ints()
        except ValueError as exc:
            return failed(ValueError(f"the local backend samples from token prompts only: {exc}"))
        future: Future[types.SampleResponse] = Future()
        request = SampleRequest(
            snapshot=self._snapshot,
            prompt=list(tokens),
            num_samples=num_samples,
            params=sampling_params,
            include_prompt_logprobs=include_prompt_logprobs,
            future=future,
        )
        self._engine.submit(request)
        if prompt_logprobs_last_n is not None:
            return AwaitableConcurrentFuture(_keep_last(future, prompt_logprobs_last_n))
        return AwaitableConcurrentFuture(future)

    def compute_logprobs(
        self, prompt: types.ModelInput, prompt_logprobs_last_n: int | None = None
    ) -> AwaitableConcurrentFuture[list[float | None]]:
        """Logprob of every prompt token given the ones before it; ``None`` for the first."""
        response = self.sample(
            prompt,
            1,
            types.SamplingParams(max_tokens=1),
            include_prompt_logprobs=True,
            prompt_logprobs_last_n=prompt_logprobs_last_n,
        )
        result: Future[list[float | None]] = Future()

        def done(source: Future[types.SampleResponse]) -> None:
            error = source.exception()
            if error is not None:
                result.set_exception(error)
            else:
                result.set_result(list(source.result().prompt_logprobs or []))

        response.future().add_done_callback(done)
        return AwaitableConcurrentFuture(result)

    def get_tokenizer(self) -> Any:  # Any: the Hugging Face tokenizer itself (untyped), more than records.Tokenizer
        return self._snapshot.tokenizer

    def get_base_model(self) -> str:
        return self._snapshot.base_model


def _keep_last(source: Future[types.SampleResponse], last_n: int) -> Future[types.SampleResponse]:
    """The response with only the last ``last_n`` prompt logprobs kept (the others ``None``)."""
    result: Future[types.SampleResponse] = Future()

    def done(finished: Future[types.SampleResponse]) -> None:
        error = finished.exception()
        if error is not None:
            result.set_exception(error)
            return
        response = finished.result()
        values = response.prompt_logprobs_np
        if values is not None:
            if not 1 <= last_n <= len(values) - 1:
                result.set_exception(
                    ValueError(f"prompt_logprobs_last_n must be between 1 and {len(values) - 1}, got {last_n}")
                )
                return
            values = values.copy()
            values[: len(values) - last_n] = float("nan")
        result.set_result(types.SampleResponse(sequences=response.sequences, prompt_logprobs_np=values))

    source.add_done_callback(done)
    return result
