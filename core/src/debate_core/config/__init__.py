"""The run file: one TOML document structured into frozen attrs classes.

This package sits just above the records and errors: it imports nothing of the debate, the
rewards, the backends or the trainer. The installed components a run file may choose are
checked against a catalog passed in (the plugin registry).
"""

from __future__ import annotations

from debate_core.config.choices import ComponentChoice, normalise_name
from debate_core.config.environment import env_flag
from debate_core.config.loading import apply_overrides, load_run_config, parse_override, read_toml
from debate_core.config.sections import (
    CurriculumStage,
    DebateSettings,
    EvaluationSettings,
    LoggingSettings,
    ModelSettings,
    RunConfig,
    RunSettings,
    TrainingSettings,
    WarmstartSettings,
)
from debate_core.config.structuring import structure, unstructure
from debate_core.config.validation import (
    ComponentCatalog,
    component_choices,
    resolved_config_dict,
    resolved_config_toml,
    validate_components,
    write_resolved_config,
)

__all__ = [
    "ComponentCatalog",
    "ComponentChoice",
    "CurriculumStage",
    "DebateSettings",
    "EvaluationSettings",
    "LoggingSettings",
    "ModelSettings",
    "RunConfig",
    "RunSettings",
    "TrainingSettings",
    "WarmstartSettings",
    "apply_overrides",
    "component_choices",
    "env_flag",
    "load_run_config",
    "normalise_name",
    "parse_override",
    "read_toml",
    "resolved_config_dict",
    "resolved_config_toml",
    "structure",
    "unstructure",
    "validate_components",
    "write_resolved_config",
]
