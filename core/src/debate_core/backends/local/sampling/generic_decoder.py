"""The sampler's fallback for architectures the fast decoder does not know: the model's own
``transformers`` forward with its dynamic cache, left-padded rows, one batch at a time.

Slower than ``fast_decoder`` (the cache grows by concatenation), but it runs any causal
language model that ``transformers`` can load. No prefix reuse and no joining a running
batch: requests that arrive during a generation wait for the next one.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from debate_core.backends.local.models.loading import hold_frozen_in
from debate_core.backends.local.sampling.prefix_cache import PrefixCache
from debate_core.backends.local.torch_settings import no_grad


@dataclass
class GenericState:
    """The running batch: the model's cache, the attention mask over every position so far,
    and the position id of each row's next token."""

    cache: Any  # Any: the model's own cache object (transformers' Cache or legacy tuples)
    attention_mask: torch.Tensor
    next_positions: torch.Tensor

    @property
    def rows(self) -> int:
        return int(self.next_positions.shape[0])


@no_grad
def snapshot_model(model: torch.nn.Module, dtype: torch.dtype | None = None) -> torch.nn.Module:
    """A frozen copy of ``model`` with any peft adapter merged into its weights, held in ``dtype``
    (``None``: as they are).

    A tied unembedding is untied first: merging an adapter of the output layer must not
    change the input embeddings, which the adapter never touched during training.
    """
    clone = copy.deepcopy(model)
    merge = getattr(clone, "merge_and_unload", None)
    if callable(merge):
        core = clone.get_base_model()
        output = core.get_output_embeddings()
        output_base = getattr(output, "base_layer", output)
        embeddings = core.get_input_embeddings()
        if output_base is not None and output_base.weight is embeddings.weight:
            output_base.weight = torch.nn.Parameter(embeddings.weight.detach().clone())
        clone = merge()
    clone.eval()
    for parameter in clone.parameters():
        parameter.requires_grad_(False)
    return clone if dtype is None else hold_frozen_in(clone, dtype)


class GenericDecoder:
    """Prefill and step through a ``transformers`` causal LM's forward."""

    supports_join = False

    def __init__(self, model: torch.nn.Module, pad_token_id: int) -> None:
        self.model = model
        self._pad = pad_token_id
        config = model.config
        self._max_positions = int(
            getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None) or 1 << 20
        )

    @property
    def max_positions(self) -> int:
        return self._max_positions

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_input_embeddings().weight.shape[0])

    @no_grad
    def prefill(
        self, prompts: Sequence[Sequence[int]], capacity: int, prefix_cache: PrefixCache
    ) -> tuple[GenericState, torch.Tensor]:
        from transformers import DynamicCache

        width = max(len(p) for p in prompts)
        tokens = torch.full((len(prompts), width), self._pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, prompt in enumerate(prompts):
            tokens[row, width - len(prompt) :] = torch.tensor(list(prompt), dtype=torch.long)
            mask[row, width - len(prompt) :] = 1
            prefix_cache.computed_tokens += len(prompt)
        tokens, mask = tokens.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(1) - 1).clamp(min=0)
        cache = DynamicCache()
        output = self.model(
            input_ids=tokens, attention_mask=mask, position_ids=positions, past_key_values=cache, use_cache=True
        )
        state = GenericState(output.past_key_values, mask, mask.sum(1))
        return state, output.logits[:, -1].float()

    @no_grad
    def step(self, state: GenericState, tokens: torch.Tensor, active: torch.Tensor) -> torch.Tensor:
        state.attention_mask = torch.cat([state.attention_mask, torch.ones_like(state.attention_mask[:, :1])], dim=1)
        output = self.model(
            input_ids=tokens.view(-1, 1),
            attention_mask=state.attention_mask,
            position_ids=state.next_positions.view(-1, 1),
            past_key_values=state.cache,
            use_cache=True,
        )
        state.cache = output.past_key_values
        state.next_positions = state.next_positions + 1
        return output.logits[:, -1].float()

    def select(self, state: GenericState, rows: torch.Tensor) -> GenericState:
        state.cache.batch_select_indices(rows)
        return GenericState(state.cache, state.attention_mask.index_select(0, rows), state.next_positions[rows])

    def extend(self, state: GenericState, other: GenericState) -> GenericState:
        raise RuntimeError("the generic decoder cannot join rows to a running batch")

    def remember(self, state: GenericState, row: int, tokens: Sequence[int], prefix_cache: PrefixCache) -> None:
        """Prefix reuse needs the fast decoder's per-row cache; nothing is kept here."""

    @no_grad
    def prompt_logprobs(self, prompt: Sequence[int]) -> list[float | None]:
        tokens = torch.tensor([list(prompt)], device=self.device)
        logits = self.model(input_ids=tokens).logits[0, :-1].float()
        picked = torch.log_softmax(logits, dim=-1).gather(1, tokens[0, 1:].unsqueeze(1)).squeeze(1)
        return [None, *picked.tolist()]
