"""The error a dataset raises when its source cannot be read or does not fit its options."""

from __future__ import annotations

from debate_core.errors import DebateError


class DatasetError(DebateError):
    """A dataset file, record or library is missing or malformed; the message says where."""
