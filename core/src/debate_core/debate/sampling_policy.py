"""An ``AgentPolicy`` over a sampling client with the Tinker SDK's surface.

``sampling_client.sample(prompt=ModelInput, num_samples=1, sampling_params=SamplingParams)``
returns a future: awaitable (the SDK, async backends) or with a blocking ``result()``
(``concurrent.futures``-style); both are waited for without blocking the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from debate_core.records import Renderer, SampledAction, StopCondition


async def resolve_future(value: Any) -> Any:  # Any: the SDK's, ours or a concurrent future; the caller knows its result
    """The result of a backend call: await awaitables (repeatedly, for a coroutine that returns
    a future), wrap ``concurrent.futures.Future``, run any other ``result()`` in a thread."""
    while inspect.isawaitable(value):
        value = await value
    if isinstance(value, concurrent.futures.Future):
        return await asyncio.wrap_future(value)
    result = getattr(value, "result", None)
    if callable(result) and not hasattr(value, "sequences"):
        return await asyncio.to_thread(result)
    return value


class SamplingClientPolicy:
    """Samples one response per call from a sampling client.

    The text is decoded by ``renderer`` (a ``Renderer`` or any ``decode`` function), so section
    spans line up with the tokens; without one, by the client's own tokenizer
    (``sampling_client.get_tokenizer()``) with special tokens left out. ``run_debate`` always
    re-decodes with the debate's renderer, so the default only matters to other callers.
    """

    # Any: the backend's sampling client; its type (backends.contract) is in a layer above debate/
    def __init__(self, sampling_client: Any, renderer: Renderer | Callable[[Sequence[int]], str] | None = None) -> None:
        self.sampling_client = sampling_client
        self._decode: Callable[[Sequence[int]], str]
        if renderer is None:
            self._decode = self._tokenizer_decode
        elif isinstance(renderer, Renderer):
            self._decode = renderer.decode
        else:
            self._decode = renderer

    def _tokenizer_decode(self, tokens: Sequence[int]) -> str:
        tokenizer = self.sampling_client.get_tokenizer()
        return str(tokenizer.decode(list(tokens), skip_special_tokens=True))

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        """One sampled response with the sampler's logprobs."""
        from tinker import types

        stops = stop.as_sampling_stop()
        params = types.SamplingParams(
            max_tokens=max_tokens, seed=seed, stop=stops if stops else None, temperature=temperature
        )
        future = self.sampling_client.sample(
            prompt=types.ModelInput.from_ints(list(prompt)), num_samples=1, sampling_params=params
        )
        response = await resolve_future(future)
        sequences = getattr(response, "sequences", None)
        if not sequences:
            raise RuntimeError("the sampling client returned no sequence")
        sequence = sequences[0]
        tokens = tuple(int(t) for t in sequence.tokens)
        if sequence.logprobs is None:
            raise RuntimeError("the sampling client returned no logprobs; they are needed for training")
        logprobs = tuple(float(x) for x in sequence.logprobs)
        stop_reason = str(getattr(sequence, "stop_reason", "stop"))
        return SampledAction(tokens, logprobs, self._decode(tokens), stop_reason)
