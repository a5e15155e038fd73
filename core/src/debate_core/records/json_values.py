"""The names of JSON (and TOML) values as debate-core reads and writes them: transcripts, metrics
lines, manifests, sidecars, the run file before it is structured, the HTTP API's bodies.

``JsonValue`` is ``Any`` on purpose, and this is the one place that says so. A precise recursive
type (``None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]``) would make
every read of a field an ``isinstance`` check or a ``cast`` under mypy strict, though each file is
already checked where it is read: the run file by cattrs structuring, a transcript by
``debate.transcript_fields``, a manifest by its version's reader, the others by the code that reads
them with a default. The aliases document the shape (an object, an array, a value) and where the
data comes from, without forcing a cast at every read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

JsonValue: TypeAlias = Any
"""Any JSON value: an object, an array, a string, a number, a boolean or null."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object (or a TOML table) as ``json.loads`` or ``tomllib`` returns it, or as it is built to be written."""

JsonMapping: TypeAlias = Mapping[str, JsonValue]
"""A JSON object that is only read."""

JsonArray: TypeAlias = list[JsonValue]
"""A JSON array."""
