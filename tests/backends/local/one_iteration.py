"""The shortest local training run the tests make: one RL iteration of two one-round debates of
twelve tokens on the embedded ``debate-tiny`` model, no evaluation (a checkpoint in seconds)."""

from __future__ import annotations

ONE_ITERATION = (
    "backend.name=local",
    "backend.options.num_threads=1",
    "model.base_model=embedded:debate-tiny",
    "debate.num_agents=2",
    "debate.max_rounds=1",
    "debate.max_tokens=12",
    "training.batch_size=2",
    "training.num_iterations=1",
    "training.learning_rate=0.05",
    "training.skip_zero_advantage_updates=false",
    "evaluation.num_problems=0",
    "logging.progress=off",
)
"""Overrides for ``debate train`` on an empty run file; a later override of the same key wins."""
