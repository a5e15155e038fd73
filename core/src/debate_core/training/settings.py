"""The training-side sections of a run file: optimisation, warm-start, curriculum,
evaluation and logging. ``debate_core.config`` assembles them into ``RunConfig``."""

from __future__ import annotations

from typing import Any, Literal

import attrs
from attrs import validators as v

from debate_core.config_types import ComponentChoice

LOSS_OPTIONS: dict[str, frozenset[str]] = {
    "importance_sampling": frozenset(),
    "ppo": frozenset({"clip_low_threshold", "clip_high_threshold"}),
    "cispo": frozenset({"clip_low_threshold", "clip_high_threshold"}),
}
"""The ``loss_fn_config`` keys each policy-gradient loss of the Tinker API reads."""


def _check_loss_config(instance: Any, attribute: attrs.Attribute[dict[str, float]], value: dict[str, float]) -> None:
    allowed = LOSS_OPTIONS.get(instance.loss_fn, frozenset())
    unknown = sorted(set(value) - allowed)
    if unknown:
        accepted = ", ".join(sorted(allowed)) if allowed else "no options"
        raise ValueError(f"'loss_fn_config' has {', '.join(unknown)}, but loss {instance.loss_fn} takes {accepted}")
    low = value.get("clip_low_threshold")
    high = value.get("clip_high_threshold")
    if low is not None and high is not None and not 0 < low <= 1 <= high:
        raise ValueError(
            f"'loss_fn_config' needs 0 < clip_low_threshold <= 1 <= clip_high_threshold, got {low}, {high}"
        )


@attrs.frozen(kw_only=True)
class TrainingSettings:
    """How the policy is updated (seed 000 "Training Loop", seed 002 §2.3)."""

    batch_size: int = attrs.field(default=8, validator=v.ge(1))
    """Questions (debates) per iteration."""
    num_iterations: int = attrs.field(default=10, validator=v.ge(0))
    """RL iterations (ignored when a curriculum is given: its stages' iterations add up instead)."""
    learning_rate: float = attrs.field(default=1e-4, validator=v.gt(0.0))
    """Adam learning rate of the RL updates (seed 002 uses 3e-5 for LoRA on an 8B model)."""
    lr_schedule: Literal["constant", "linear", "cosine"] = "constant"
    """Decay over the RL iterations: ``linear`` and ``cosine`` fall from ``learning_rate`` towards 0."""
    loss_fn: Literal["importance_sampling", "ppo", "cispo"] = "importance_sampling"
    """The policy-gradient loss of the backend (Tinker's definitions; docs/training.md)."""
    loss_fn_config: dict[str, float] = attrs.field(factory=dict, validator=_check_loss_config)
    """Options of the loss, e.g. ``{clip_low_threshold = 0.8, clip_high_threshold = 1.2}`` for ppo and cispo."""
    num_substeps: int = attrs.field(default=1, validator=v.ge(1))
    """Optimizer steps per iteration; the batch's Datums are split into this many chunks."""
    adam_beta1: float = attrs.field(default=0.9, validator=[v.ge(0.0), v.lt(1.0)])
    """Adam's first-moment decay (``AdamParams.beta1``)."""
    adam_beta2: float = attrs.field(default=0.95, validator=[v.ge(0.0), v.lt(1.0)])
    """Adam's second-moment decay (``AdamParams.beta2``)."""
    adam_eps: float = attrs.field(default=1e-8, validator=v.gt(0.0))
    """Adam's denominator epsilon (``AdamParams.eps``)."""
    weight_decay: float = attrs.field(default=0.0, validator=v.ge(0.0))
    """Decoupled (AdamW) weight decay."""
    grad_clip_norm: float = attrs.field(default=0.0, validator=v.ge(0.0))
    """Clip the global gradient norm to this value (0: no clipping)."""
    save_every: int = attrs.field(default=5, validator=v.ge(0))
    """Checkpoint every this many RL iterations (and warm-start steps); 0: only at the end of each phase,
    on a stop signal and before a failure exits."""
    eval_every: int = attrs.field(default=0, validator=v.ge(0))
    """Evaluate every this many RL iterations (0: never during training)."""
    max_debates_in_flight: int = attrs.field(default=16, validator=v.ge(1))
    """Debates sampled concurrently at most."""
    advantage_normalisation: Literal["group", "global"] = "group"
    """``group`` centres within each debate (seed 000); ``global`` also divides by the batch's std (seed 002 §5.2)."""
    drop_uniform_groups: bool = False
    """Drop debates whose advantages are all zero (they carry no gradient)."""
    skip_zero_advantage_updates: bool = True
    """Leave out Datums whose advantages are all zero, and skip the optimizer step when none is left
    (Adam's momentum would otherwise keep moving the weights on a zero gradient)."""
    backend_retries: int = attrs.field(default=4, validator=v.ge(1))
    """Attempts for a backend call that fails with a transient error (connection, timeout, rate limit)."""
    backend_retry_delay_s: float = attrs.field(default=1.0, validator=v.ge(0.0))
    """Wait before the first retry; doubled after each further failure (at most 30 s)."""


@attrs.frozen(kw_only=True)
class WarmstartSettings:
    """Supervised warm-start on correct solutions in the output format (seed 002 §5.1, appendix A).

    Each step takes ``batch_size`` training problems that have an answer and runs a debate in which
    every agent answers with the reference solution through the debate's own prompts (so the
    observations are exactly those of RL), then trains ``cross_entropy`` on those responses.
    """

    enabled: bool = False
    """Run the warm-start before RL."""
    steps: int = attrs.field(default=100, validator=v.ge(0))
    """Optimizer steps of the warm-start."""
    batch_size: int = attrs.field(default=32, validator=v.ge(1))
    """Problems (reference debates) per step."""
    learning_rate: float = attrs.field(default=1e-3, validator=v.gt(0.0))
    """Adam learning rate of the warm-start (the Adam settings of ``[training]`` apply)."""
    lr_schedule: Literal["constant", "linear", "cosine"] = "cosine"
    """Decay over the warm-start steps."""
    solution_template: str = "The answer is \\boxed{{answer}}."
    """The solution text when a problem has no reference solution (``metadata["solution"]``);
    ``{answer}`` is replaced by the ground-truth answer. Solutions the grader rejects are skipped."""
    consensus_reason: str = "All solutions agree and are correct."
    """The ``<consensus_reason>`` of the reference responses."""


@attrs.frozen(kw_only=True)
class CurriculumStage:
    """One stage of a curriculum: a dataset and how many iterations to train on it."""

    dataset: ComponentChoice
    """The stage's dataset plugin and its options (its ``train`` split is used)."""
    iterations: int = attrs.field(validator=v.ge(1))
    """RL iterations on this stage."""


@attrs.frozen(kw_only=True)
class EvaluationSettings:
    """Held-out evaluation (seed 000 "Evaluation mode", seed 002 §3)."""

    num_problems: int = attrs.field(default=50, validator=v.ge(0))
    """Problems of ``split`` evaluated on (the first ones, the same every time)."""
    split: str = "test"
    """The dataset split evaluated on."""
    modes: tuple[Literal["direct", "debate"], ...] = ("direct", "debate")
    """``direct``: one answer per sample, no debate; ``debate``: a self-play debate per problem."""
    num_samples: int = attrs.field(default=0, validator=v.ge(0))
    """Direct answers per problem, the ``k`` of direct pass@k (0: the number of agents)."""
    role_averaged: bool = False
    """Also run role-averaged debates against a fixed opponent policy (seed 000)."""
    opponent: str = attrs.field(default="base", validator=v.min_len(1))
    """The fixed opponent: ``base`` (the untrained base model) or saved weights: a checkpoint manifest
    (``checkpoints/step_*.json``), a run directory (its latest checkpoint) or a backend path."""
    temperature: float | None = attrs.field(default=None, validator=v.optional(v.ge(0.0)))
    """Sampling temperature of evaluation debates (unset: the debate's own and the personas')."""
    at_start: bool = False
    """Evaluate the untrained policy before any update (a baseline for the later evaluations)."""
    at_end: bool = True
    """Evaluate after the last iteration."""
    after_warmstart: bool = True
    """Evaluate after the warm-start (when it runs)."""


@attrs.frozen(kw_only=True)
class LoggingSettings:
    """Where metrics and transcripts go."""

    sinks: tuple[ComponentChoice, ...] = (ComponentChoice(name="jsonl"),)
    """Metric sinks: ``jsonl`` writes RUN_DIR/metrics.jsonl; ``wandb`` and ``tensorboard`` when installed."""
    num_groups_to_log: int = attrs.field(default=2, validator=v.ge(0))
    """Full transcripts of this many debates per iteration go to RUN_DIR/transcripts/."""
    progress: Literal["auto", "bar", "lines", "off"] = "auto"
    """``auto``: a live bar on a terminal, plain lines otherwise."""
