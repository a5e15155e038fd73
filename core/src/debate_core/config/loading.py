"""Reading a run file: TOML, ``section.key=value`` overrides, then the schema.

Loading goes in steps, each failing with a ``ConfigError`` that names the key path: parse
the TOML, apply the overrides, structure into :class:`~debate_core.config.sections.RunConfig`
(unknown keys are errors), then, when a component catalog (the plugin registry) is given,
validate every chosen component's options with that component's own options class. Nothing
heavy is imported: a run file is fully checked before any model or dataset is loaded.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

from debate_core.config.sections import RunConfig
from debate_core.config.structuring import structure
from debate_core.config.validation import ComponentCatalog, SpecT, validate_components
from debate_core.errors import ConfigError, DebateError, LimitExceeded
from debate_core.limits import check_nesting, long_integer_message, nesting_message, read_limited_text, short_repr
from debate_core.records.json_values import JsonMapping, JsonObject, JsonValue


def read_toml(path: str | os.PathLike[str]) -> JsonObject:
    """Read a TOML file; a missing file, one past the ``input_bytes`` limit, a syntax error or values
    nested past the ``nesting`` limit (docs/limits.md) is a ``ConfigError`` naming the file."""
    file = Path(path)
    try:
        text = read_limited_text(file, "run file")
    except LimitExceeded:
        raise
    except DebateError as exc:
        raise ConfigError(str(exc)) from None
    return _loads_toml(text, f"{file}: ")


def _loads_toml(text: str, where: str) -> JsonObject:
    """Decode TOML text; every failure is a one-line ``ConfigError`` starting with ``where``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{where}not accepted: nested too deeply {nesting_message()}") from None
    except ValueError as exc:  # an integer with more digits than int() converts
        raise ConfigError(f"{where}{long_integer_message(exc)}") from None
    check_nesting(data, lambda depth: ConfigError(f"{where}not accepted: nested too deeply {nesting_message()}"))
    return data


def parse_override(text: str) -> tuple[list[str], JsonValue]:
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
        parsed: JsonValue = tomllib.loads(f"value = {value.strip()}")["value"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    except (RecursionError, ValueError):  # nested or too many digits: a one-line error below
        parsed = _loads_toml(f"value = {value.strip()}", f"override {key.strip()!r}: ")["value"]
    where = f"override {key.strip()!r}: "
    check_nesting(parsed, lambda depth: ConfigError(f"{where}not accepted: nested too deeply {nesting_message()}"))
    return keys, parsed


def apply_overrides(raw: JsonObject, overrides: Sequence[str]) -> JsonObject:
    """A copy of ``raw`` with each ``section.key=value`` override set.

    A component chosen by name (``reward = "v2"`` or a ``[reward]`` table) takes ``reward.name=X``
    and ``reward.options.k=v`` too. Switching the name to another component drops the options of
    the old one, which would not fit the new one, except those set by earlier overrides of the
    same command (``reward.options.k=v reward.name=X`` keeps ``k``).
    """
    result = _deep_copy(raw)
    touched: list[list[str]] = []
    for text in overrides:
        keys, value = parse_override(text)
        node = result
        for depth, key in enumerate(keys[:-1]):
            child = node.setdefault(key, {})
            if isinstance(child, str) and keys[depth + 1] in ("name", "options"):
                child = node[key] = {"name": child}  # `reward = "v2"` is `[reward] name = "v2"`
            if not isinstance(child, dict):
                where = ".".join(keys[: depth + 1])
                raise ConfigError(f"override {text!r}: {where} is a value, not a section")
            node = child
        if keys[-1] == "name" and "options" in node and node.get("name") != value:
            options_path = [*keys[:-1], "options"]
            if not any(path[: len(options_path)] == options_path for path in touched):
                del node["options"]
        node[keys[-1]] = value
        touched.append(keys)
    return result


def _deep_copy(raw: JsonMapping) -> JsonObject:
    return {k: _deep_copy(val) if isinstance(val, Mapping) else val for k, val in raw.items()}


def load_run_config(
    path: str | os.PathLike[str] | None,
    overrides: Sequence[str] = (),
    *,
    registry: ComponentCatalog[SpecT] | None,
) -> RunConfig:
    """Read, override and structure a run file, and validate its components against ``registry``.

    ``path=None`` starts from the defaults. ``registry`` is the plugin registry
    (``debate_core.plugin.get_registry()``) whose components the file may choose; ``None``
    checks the schema only. Raises ``ConfigError`` listing every problem by key path.
    """
    file_raw = read_toml(path) if path is not None else {}
    where = f"{path}: " if path is not None else ""
    raw = apply_overrides(file_raw, overrides)
    try:
        config = structure(raw, RunConfig)
    except ConfigError as exc:
        raise ConfigError(_place_lines(where, str(exc), overrides, file_raw)) from None
    if registry is not None:
        try:
            validate_components(config, registry)
        except ConfigError as exc:
            raise ConfigError(_place_lines(where, str(exc), overrides, file_raw)) from None
    return config


def _place_lines(where: str, text: str, overrides: Sequence[str], file_raw: JsonMapping) -> str:
    """Each line of an error prefixed with where it comes from: the command-line override that set
    its key (``override 'trainig.batch_size=2' on the command line: ...``), else the run file
    (``where``; without a run file, ``""``, the lines are returned as they are)."""
    if not where:  # no run file to blame: the lines stand as they are
        return text
    lines = []
    for line in text.splitlines():
        override = _override_of(line.partition(": ")[0], overrides, file_raw)
        lines.append(f"override {override!r} on the command line: {line}" if override else where + line)
    return "\n".join(lines)


def _override_of(key_path: str, overrides: Sequence[str], file_raw: JsonMapping) -> str | None:
    """The last override that set ``key_path`` or a key inside it, or a key under ``key_path``
    when the run file does not have ``key_path`` (an unknown section only the override made)."""
    path = key_path.replace("[", ".[").split(".")
    for text in reversed(overrides):
        keys = text.partition("=")[0].strip().split(".")
        keys = [k.strip() for k in keys]
        if path[: len(keys)] == keys:
            return text
        if keys[: len(path)] == path and not _has_path(file_raw, path):
            return text
    return None


def _has_path(raw: JsonMapping, path: Sequence[str]) -> bool:
    node: object = raw
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return True


def option_value(option: str, text: str, key: str) -> object:
    """The value of the command-line option ``option`` (``--temperature``), given as ``text``,
    checked exactly as the run-file key ``key`` (``evaluation.temperature``) is: the same types,
    the same refusal of ``nan`` and ``inf``, the same ranges.

    Raises:
        ConfigError: one line naming the option, its value and why (``--temperature nan: expected
            a finite number, got nan (as evaluation.temperature in a run file)``).
    """
    where = f"{option} {short_repr(text)}"
    try:
        config = structure(apply_overrides({}, [f"{key}={text}"]), RunConfig)
    except ConfigError as exc:
        reason = str(exc).splitlines()[0].removeprefix(f"{key}: ").removeprefix(f"override {key!r}: ")
        raise ConfigError(f"{where}: {reason} (as {key} in a run file)") from None
    value: object = config
    for part in key.split("."):
        value = getattr(value, part)
    return value
