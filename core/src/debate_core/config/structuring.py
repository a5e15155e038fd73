"""The cattrs converter for run files and component options, with error messages that
name the full key path and keep an attrs validator's own message (cattrs' default
formatting replaces it with "invalid value")."""

from __future__ import annotations

import difflib
import math
import re
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

import attrs
import cattrs
import cattrs.gen
from cattrs.cols import homogenous_tuple_structure_factory, list_structure_factory
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

from debate_core.config.choices import ComponentChoice
from debate_core.errors import ConfigError
from debate_core.limits import short_repr
from debate_core.records.json_values import JsonMapping, JsonValue

T = TypeVar("T")

_VALIDATOR_MESSAGE = re.compile(
    r"^'(?P<field>[A-Za-z_][A-Za-z0-9_]*)(?P<key>(\.[A-Za-z_][A-Za-z0-9_]*)*)' (?P<rest>.*)$", re.DOTALL
)
"""A validator's message naming the field it refused (``'seed' must be >= 0``), or a key inside
it (``'training.max_cost' needs ...``, from a check of one section against another)."""


def _make_converter() -> cattrs.Converter:
    """The converter: strict scalars, attrs classes from tables only, unknown keys refused, and one
    value accepted for a list."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(float, _structure_float)
    converter.register_structure_hook(int, _structure_int)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(str, _structure_str)
    converter.register_structure_hook_factory(attrs.has, _table_factory)
    converter.register_structure_hook_factory(_is_homogeneous_sequence, _one_or_many_factory)
    return converter


def _structure_float(value: object, _: type) -> float:
    """A finite number (an integer, float or numeric string; never a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f"expected a number, got {type(value).__name__} {short_repr(value)}")
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise TypeError(f"expected a number, got {short_repr(value)}") from None
    if not math.isfinite(number):
        # an infinite learning rate or temperature passes every bound check and then turns
        # every weight into NaN: no option takes a non-finite value (docs/config-reference.md)
        raise TypeError(f"expected a finite number, got {short_repr(value)}")
    return number


def _structure_int(value: object, _: type) -> int:
    """An integer (a whole float or an integer string too; never a bool)."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise TypeError(f"expected an integer, got {short_repr(value)}")
    if not isinstance(value, int | float | str):
        raise TypeError(f"expected an integer, got {type(value).__name__} {short_repr(value)}")
    try:
        return int(value)
    except ValueError:
        raise TypeError(f"expected an integer, got {short_repr(value)}") from None


def _structure_bool(value: object, _: type) -> bool:
    """``true`` or ``false``, as a boolean or (from the command line) a string in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise TypeError(f"expected true or false, got {short_repr(value)}")


def _structure_str(value: object, _: type) -> str:
    """A string; a number is read as its text (``model.name = 7`` from the command line)."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise TypeError(f"expected a string, got {type(value).__name__} {short_repr(value)}")
    return str(value)


def _table_factory(cls: type, converter: cattrs.Converter) -> Callable[[object, type], object]:
    """An attrs class is structured from a table only: any other value is named by its type and
    value (cattrs' own hook fails on it with "'str' object has no attribute 'keys'")."""
    inner: cattrs.SimpleStructureHook[JsonMapping, object] = cattrs.gen.make_dict_structure_fn(
        cls, converter, _cattrs_forbid_extra_keys=True
    )

    def structure_attrs(value: object, target: type) -> object:
        if not isinstance(value, Mapping):
            raise TypeError(
                f"expected a table of {target.__name__} keys, got {type(value).__name__} {short_repr(value)}"
            )
        return inner(value, target)

    return structure_attrs


def _is_homogeneous_sequence(target: object) -> bool:
    """``tuple[X, ...]`` or ``list[X]``: the list-typed keys of a run file and of component options."""
    origin, args = typing.get_origin(target), typing.get_args(target)
    return (origin is tuple and len(args) == 2 and args[1] is Ellipsis) or (origin is list and len(args) == 1)


def _one_or_many_factory(target: type, converter: cattrs.Converter) -> Callable[[object, object], object]:
    """A list-typed key given one value (``logging.sinks=wandb``, ``sinks = {name = "wandb"}``) holds that one
    value: a string, number or table is a one-element list, never split into its characters or keys
    (docs/config-reference.md#lists-tables-and-strings-on-the-command-line)."""
    if typing.get_origin(target) is tuple:
        inner = homogenous_tuple_structure_factory(target, converter)
    else:
        inner = list_structure_factory(target, converter)

    def structure_one_or_many(value: object, type_: object) -> object:
        if isinstance(value, str | int | float | bool | Mapping):
            value = [value]
        return inner(value, type_)

    return structure_one_or_many


converter = _make_converter()
"""The one converter for run files and component options (unknown keys are errors)."""


def _structure_choice(value: object, _: type) -> ComponentChoice:
    """Accept ``reward = "v2"`` as shorthand for ``[reward] name = "v2"``."""
    if isinstance(value, str):
        return ComponentChoice(name=value)
    if not isinstance(value, dict):
        raise TypeError(f"expected a component name or a table with 'name' and 'options', got {short_repr(value)}")
    return _structure_choice_table(value, ComponentChoice)


_structure_choice_table = converter.gen_structure_attrs_fromdict(ComponentChoice)
converter.register_structure_hook(ComponentChoice, _structure_choice)


def _field_names(cls: type | None) -> list[str]:
    if cls is None or not attrs.has(cls):
        return []
    return [a.name for a in attrs.fields(cls)]


def _join(path: str, part: str) -> str:
    if part.startswith("["):
        return f"{path}{part}"
    return f"{path}.{part}" if path else part


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, cattrs.errors.CattrsError) and " not in literal " in text:
        value, _, literal = text.partition(" not in literal ")
        choices = literal.removeprefix("typing.Literal[").removesuffix("]")
        return f"{value!s} is not one of {choices}"
    if isinstance(exc, KeyError):
        return f"missing required key {text}"
    return text or type(exc).__name__


def iter_errors(exc: BaseException, path: str, cls: type | None = None) -> Iterator[str]:
    """Yield one ``path: message`` line per leaf error of a cattrs structuring failure."""
    if isinstance(exc, ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            yield from iter_errors(sub, _join(path, note.name), note.type)
        for sub in without:
            yield from iter_errors(sub, path, exc.cl)
        return
    if isinstance(exc, IterableValidationError):
        with_indices, unindexed = exc.group_exceptions()
        for sub, item in with_indices:
            yield from iter_errors(sub, _join(path, f"[{item.index}]"), item.type)
        for sub in unindexed:
            yield from iter_errors(sub, path)
        return
    if isinstance(exc, ForbiddenExtraKeysError):
        known = _field_names(exc.cl)
        for key in sorted(exc.extra_fields):
            hint = difflib.get_close_matches(key, known, n=1)
            suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
            allowed = ", ".join(known) if known else "none"
            yield f"{_join(path, key)}: unknown key{suggestion}; allowed keys: {allowed}"
        return
    if isinstance(exc, cattrs.BaseValidationError):
        for sub in exc.exceptions:
            yield from iter_errors(sub, path)
        return
    message = _describe(exc)
    match = _VALIDATOR_MESSAGE.match(message)
    if match and match.group("field") in _field_names(cls):
        yield f"{_join(path, match.group('field') + match.group('key'))}: {match.group('rest')}"
        return
    yield f"{path or '<root>'}: {message}"


def structure(raw: object, cls: type[T], path: str = "") -> T:
    """Structure ``raw`` into ``cls``; raise one ``ConfigError`` listing every problem by key path."""
    try:
        return converter.structure(raw, cls)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        lines = [_clip(line) for line in iter_errors(exc, path, cls)]
        raise ConfigError("\n".join(lines)) from exc


def _clip(line: str, limit: int = 300) -> str:
    """A message line cut to ``limit`` characters (a huge value must not make a huge message)."""
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def unstructure(value: object) -> JsonValue:
    """Plain data (dicts, lists, scalars) for a record, for TOML or JSON output."""
    return converter.unstructure(value)
