"""The run file: one TOML document structured into frozen attrs classes.

This package sits just above the records and errors: it imports nothing of the debate, the
rewards, the backends or the trainer. The installed components a run file may choose are
checked against a catalog passed in (the plugin registry).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debate_core.config.choices import ComponentChoice, normalise_name
from debate_core.config.environment import env_flag
from debate_core.config.sections import (
    AlarmSettings,
    CurriculumStage,
    DebateSettings,
    EvaluationSettings,
    LoggingSettings,
    ModelSettings,
    PricingSettings,
    RunConfig,
    RunSettings,
    TrainingSettings,
    WarmstartSettings,
)

if TYPE_CHECKING:
    from debate_core.config.loading import apply_overrides, load_run_config, option_value, parse_override, read_toml
    from debate_core.config.structuring import structure, unstructure
    from debate_core.config.validation import (
        ComponentCatalog,
        component_choices,
        resolved_config_dict,
        resolved_config_toml,
        validate_components,
        write_resolved_config,
    )

_LAZY = {
    "apply_overrides": "loading",
    "load_run_config": "loading",
    "option_value": "loading",
    "parse_override": "loading",
    "read_toml": "loading",
    "structure": "structuring",
    "unstructure": "structuring",
    "ComponentCatalog": "validation",
    "component_choices": "validation",
    "resolved_config_dict": "validation",
    "resolved_config_toml": "validation",
    "validate_components": "validation",
    "write_resolved_config": "validation",
}
"""Names imported on first use: loading and structuring need cattrs and tomli_w, which
``import debate_core`` (and ``debate --help``) should not pay for."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'debate_core.config' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"debate_core.config.{module}"), name)


__all__ = [
    "AlarmSettings",
    "ComponentCatalog",
    "ComponentChoice",
    "CurriculumStage",
    "DebateSettings",
    "EvaluationSettings",
    "LoggingSettings",
    "ModelSettings",
    "PricingSettings",
    "RunConfig",
    "RunSettings",
    "TrainingSettings",
    "WarmstartSettings",
    "apply_overrides",
    "component_choices",
    "env_flag",
    "load_run_config",
    "normalise_name",
    "option_value",
    "parse_override",
    "read_toml",
    "resolved_config_dict",
    "resolved_config_toml",
    "structure",
    "unstructure",
    "validate_components",
    "write_resolved_config",
]
