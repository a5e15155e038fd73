"""The run file: one TOML document structured into frozen attrs classes.

Loading goes in three steps, each failing with a ``ConfigError`` that names the key path:
parse the TOML, apply ``section.key=value`` overrides, structure into :class:`RunConfig`
(unknown keys are errors), then validate every chosen component's options with that
component's own options class. Nothing heavy is imported: a run file is fully checked
before any model or dataset is loaded.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import tomli_w
from attrs import validators as v

from debate_core.config_types import ComponentChoice
from debate_core.errors import ConfigError, DebateError
from debate_core.structuring import structure, unstructure
from debate_core.training.settings import (
    CurriculumStage,
    EvaluationSettings,
    LoggingSettings,
    TrainingSettings,
    WarmstartSettings,
)

__all__ = [
    "ComponentChoice",
    "DebateSettings",
    "ModelSettings",
    "RunConfig",
    "RunSettings",
    "component_choices",
    "load_run_config",
    "parse_override",
    "resolved_config_dict",
    "validate_components",
    "write_resolved_config",
]


@attrs.frozen(kw_only=True)
class RunSettings:
    """Identity and randomness of a run."""

    name: str = "debate"
    """A label for the run; the default run directory is ``runs/<name>``."""
    seed: int = 0
    """The one seed behind data order, persona assignment, weight init and sampling seeds."""


@attrs.frozen(kw_only=True)
class ModelSettings:
    """The policy being trained, as the backend names it."""

    base_model: str = "embedded:debate-tiny"
    """A model name the backend understands: ``embedded:<name>`` or a local directory for ``local``,
    a hosted model such as ``Qwen/Qwen3-8B`` for ``tinker``."""
    lora_rank: int = attrs.field(default=0, validator=v.ge(0))
    """LoRA rank; 0 trains every weight (``local`` only; ``tinker`` needs a rank of at least 1)."""
    train_mlp: bool = True
    """Adapt the MLP layers (LoRA)."""
    train_attn: bool = True
    """Adapt the attention layers (LoRA)."""
    train_unembed: bool = True
    """Adapt the unembedding layer (LoRA)."""


@attrs.frozen(kw_only=True)
class DebateSettings:
    """The shape of one debate and the components that run it."""

    num_agents: int = attrs.field(default=3, validator=v.ge(1))
    """Agents per debate (N); all are the same policy with different personas."""
    max_rounds: int = attrs.field(default=3, validator=v.ge(1))
    """Rounds at most; a debate also ends when every agent of a round says YES to consensus."""
    max_tokens: int = attrs.field(default=256, validator=v.ge(1))
    """Sampled tokens per turn at most."""
    temperature: float = attrs.field(default=1.0, validator=v.ge(0.0))
    """Sampling temperature unless the agent's persona sets its own."""
    coordinator: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="sequential"))
    """Turn protocol: ``sequential`` (seed 000) or ``parallel`` rounds (seed 002)."""
    parser: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="xml"))
    """Output parser for the XML contract."""
    personas: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="default"))
    """Persona set: system prompt and temperature per agent."""
    history: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="all"))
    """History policy: which earlier rounds each prompt shows."""
    renderer: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="role_colon"))
    """Renderer: messages to tokens, and the stop conditions."""


@attrs.frozen(kw_only=True)
class RunConfig:
    """A whole run file. Every section and key has a default, so an empty file is valid."""

    run: RunSettings = attrs.field(factory=RunSettings)
    backend: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="local"))
    """Training backend: ``local`` (torch, this machine) or ``tinker`` (the Tinker service)."""
    model: ModelSettings = attrs.field(factory=ModelSettings)
    debate: DebateSettings = attrs.field(factory=DebateSettings)
    reward: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="win_rate"))
    """Reward function scoring each finished debate."""
    dataset: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="arithmetic"))
    """Questions for training and evaluation."""
    grader: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="boxed"))
    """Checks solutions against the dataset's answers (``none`` for open-ended prompts)."""
    training: TrainingSettings = attrs.field(factory=TrainingSettings)
    warmstart: WarmstartSettings = attrs.field(factory=WarmstartSettings)
    curriculum: tuple[CurriculumStage, ...] = ()
    """Dataset stages trained in order; empty: train on ``dataset`` for ``training.num_iterations``."""
    evaluation: EvaluationSettings = attrs.field(factory=EvaluationSettings)
    logging: LoggingSettings = attrs.field(factory=LoggingSettings)


# ------------------------------------------------------------------ loading


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML file; a missing file or a syntax error is a ``ConfigError`` naming the file."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such run file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot be read: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``section.key=value`` into its key path and value.

    The value is read as a TOML value when it is one (``3``, ``1e-4``, ``true``,
    ``[1, 2]``, ``{ name = "v2" }``) and as a plain string otherwise, so
    ``debate.coordinator.name=parallel`` needs no quotes; the schema then types it.
    """
    key, sep, value = text.partition("=")
    keys = [k.strip() for k in key.strip().split(".")]
    if not sep or not all(keys):
        raise ConfigError(f"override {text!r}: expected section.key=value")
    try:
        parsed: Any = tomllib.loads(f"value = {value.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    return keys, parsed


def apply_overrides(raw: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """A copy of ``raw`` with each ``section.key=value`` override set."""
    result = _deep_copy(raw)
    for text in overrides:
        keys, value = parse_override(text)
        node = result
        for depth, key in enumerate(keys[:-1]):
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                where = ".".join(keys[: depth + 1])
                raise ConfigError(f"override {text!r}: {where} is a value, not a section")
            node = child
        node[keys[-1]] = value
    return result


def _deep_copy(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(val) if isinstance(val, Mapping) else val for k, val in raw.items()}


def load_run_config(
    path: str | os.PathLike[str] | None,
    overrides: Sequence[str] = (),
    *,
    check_components: bool = True,
) -> RunConfig:
    """Read, override, structure and (by default) validate a run file against the installed plugins.

    ``path=None`` starts from the defaults. Raises ``ConfigError`` listing every problem by key path.
    """
    raw = read_toml(path) if path is not None else {}
    raw = apply_overrides(raw, overrides)
    where = f"{path}: " if path is not None else ""
    try:
        config = structure(raw, RunConfig)
    except ConfigError as exc:
        raise ConfigError(_prefix_lines(where, str(exc))) from None
    if check_components:
        try:
            validate_components(config)
        except ConfigError as exc:
            raise ConfigError(_prefix_lines(where, str(exc))) from None
    return config


def _prefix_lines(prefix: str, text: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


# ------------------------------------------------------------------ components


def component_choices(config: RunConfig) -> Iterator[tuple[str, str, ComponentChoice]]:
    """Every component a run file picks: ``(key path, kind, choice)``."""
    yield "backend", "backend", config.backend
    yield "debate.coordinator", "coordinator", config.debate.coordinator
    yield "debate.parser", "parser", config.debate.parser
    yield "debate.personas", "persona_set", config.debate.personas
    yield "debate.history", "history_policy", config.debate.history
    yield "debate.renderer", "renderer", config.debate.renderer
    yield "reward", "reward", config.reward
    yield "dataset", "dataset", config.dataset
    yield "grader", "grader", config.grader
    for i, stage in enumerate(config.curriculum):
        yield f"curriculum[{i}].dataset", "dataset", stage.dataset
    for i, sink in enumerate(config.logging.sinks):
        yield f"logging.sinks[{i}]", "metric_sink", sink


def validate_components(config: RunConfig, registry: Any = None) -> dict[str, Any]:
    """Resolve every chosen component and structure its options; return ``{key path: options}``.

    Every problem is collected, so one run of ``debate config check`` reports them all.
    """
    from debate_core.plugins import get_registry

    registry = registry or get_registry()
    problems: list[str] = []
    resolved: dict[str, Any] = {}
    for path, kind, choice in component_choices(config):
        try:
            spec = registry.resolve(kind, choice.name)
        except DebateError as exc:
            problems.append(f"{path}.name: {exc}")
            continue
        try:
            resolved[path] = registry.structure_options(spec, choice.options, f"{path}.options")
        except DebateError as exc:
            problems.extend(str(exc).splitlines())
    if problems:
        raise ConfigError("\n".join(problems))
    return resolved


def resolved_config_dict(config: RunConfig, registry: Any = None) -> dict[str, Any]:
    """The run file with every default filled in, component options included."""
    options = validate_components(config, registry)
    data: dict[str, Any] = unstructure(config)
    for path, value in options.items():
        node = _node_at(data, path)
        node["options"] = unstructure(value) if value is not None else {}
    return _drop_none_in_table(data)


def _node_at(data: dict[str, Any], path: str) -> dict[str, Any]:
    node: Any = data
    for part in path.replace("[", ".[").split("."):
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    assert isinstance(node, dict)
    return node


def _drop_none_in_table(table: dict[str, Any]) -> dict[str, Any]:
    """The table without its ``None`` values, at every depth (TOML has no null)."""
    return {k: _drop_none(x) for k, x in table.items() if x is not None}


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return _drop_none_in_table(value)
    if isinstance(value, list | tuple):
        return [_drop_none(x) for x in value]
    return value


def resolved_config_toml(config: RunConfig, registry: Any = None) -> str:
    """The resolved run file as TOML text."""
    return tomli_w.dumps(resolved_config_dict(config, registry))


def write_resolved_config(config: RunConfig, path: str | os.PathLike[str], registry: Any = None) -> None:
    """Write the resolved run file atomically (a crash never leaves half a file)."""
    atomic_write_text(Path(path), resolved_config_toml(config, registry))


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
