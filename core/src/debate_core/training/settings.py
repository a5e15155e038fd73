"""The training-side sections of a run file: optimisation, warm-start, curriculum,
evaluation and logging. ``debate_core.config`` assembles them into ``RunConfig``."""

from __future__ import annotations

from typing import Literal

import attrs
from attrs import validators as v

from debate_core.config_types import ComponentChoice


@attrs.frozen(kw_only=True)
class TrainingSettings:
    """How the policy is updated (seed 000 "Training Loop", seed 002 §2.3)."""

    batch_size: int = attrs.field(default=8, validator=v.ge(1))
    """Questions (debates) per iteration."""
    num_iterations: int = attrs.field(default=10, validator=v.ge(0))
    learning_rate: float = attrs.field(default=1e-4, validator=v.gt(0.0))
    lr_schedule: Literal["constant", "linear", "cosine"] = "constant"
    loss_fn: Literal["importance_sampling", "ppo", "cispo"] = "importance_sampling"
    loss_fn_config: dict[str, float] = attrs.field(factory=dict)
    """Options of the loss, e.g. ``{clip_low_threshold = 0.8, clip_high_threshold = 1.2}`` for ppo."""
    num_substeps: int = attrs.field(default=1, validator=v.ge(1))
    """Optimizer steps per iteration; the batch's Datums are split into this many chunks."""
    adam_beta1: float = attrs.field(default=0.9, validator=[v.ge(0.0), v.lt(1.0)])
    adam_beta2: float = attrs.field(default=0.95, validator=[v.ge(0.0), v.lt(1.0)])
    adam_eps: float = attrs.field(default=1e-8, validator=v.gt(0.0))
    weight_decay: float = attrs.field(default=0.0, validator=v.ge(0.0))
    grad_clip_norm: float = attrs.field(default=0.0, validator=v.ge(0.0))
    save_every: int = attrs.field(default=5, validator=v.ge(0))
    """Checkpoint every this many iterations (0: only at the end)."""
    eval_every: int = attrs.field(default=0, validator=v.ge(0))
    """Evaluate every this many iterations (0: never during training)."""
    max_debates_in_flight: int = attrs.field(default=16, validator=v.ge(1))
    advantage_normalisation: Literal["group", "global"] = "group"
    """``group`` centres within each debate (seed 000); ``global`` also divides by the batch's std (seed 002 §5.2)."""
    drop_uniform_groups: bool = False
    """Drop debates whose returns are all equal (they carry no gradient)."""


@attrs.frozen(kw_only=True)
class WarmstartSettings:
    """Supervised warm-start on correct solutions in the output format (seed 002 §5.1, appendix A)."""

    enabled: bool = False
    steps: int = attrs.field(default=100, validator=v.ge(0))
    batch_size: int = attrs.field(default=32, validator=v.ge(1))
    learning_rate: float = attrs.field(default=1e-3, validator=v.gt(0.0))
    lr_schedule: Literal["constant", "linear", "cosine"] = "cosine"


@attrs.frozen(kw_only=True)
class CurriculumStage:
    """One stage of a curriculum: a dataset and how many iterations to train on it."""

    dataset: ComponentChoice
    iterations: int = attrs.field(validator=v.ge(1))


@attrs.frozen(kw_only=True)
class EvaluationSettings:
    """Held-out evaluation (seed 000 "Evaluation mode", seed 002 §3)."""

    num_problems: int = attrs.field(default=50, validator=v.ge(0))
    modes: tuple[Literal["direct", "debate"], ...] = ("direct", "debate")
    role_averaged: bool = False
    """Also run role-averaged debates against a fixed opponent policy (seed 000)."""
    opponent: Literal["base"] = "base"
    temperature: float = attrs.field(default=1.0, validator=v.ge(0.0))
    at_end: bool = True


@attrs.frozen(kw_only=True)
class LoggingSettings:
    """Where metrics and transcripts go."""

    sinks: tuple[ComponentChoice, ...] = (ComponentChoice(name="jsonl"),)
    num_groups_to_log: int = attrs.field(default=2, validator=v.ge(0))
    progress: Literal["auto", "bar", "lines", "off"] = "auto"


