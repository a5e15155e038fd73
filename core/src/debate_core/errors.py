"""User-facing errors: each carries one message that says where and what went wrong.

The CLI prints ``DebateError`` messages without a traceback (unless ``DEBATE_DEBUG=1``);
any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

__all__ = [
    "ComponentFailure",
    "ConfigError",
    "ConflictingPluginsError",
    "DebateError",
    "LimitExceeded",
    "OutputWriteError",
    "PluginError",
    "TranscriptError",
    "UnknownComponentError",
]


class DebateError(Exception):
    """Base class of every error a user can cause and fix."""


class ConfigError(DebateError):
    """A run file or an override is invalid; the message names the key path."""


class PluginError(DebateError):
    """A plugin could not be loaded, registered or resolved."""


class UnknownComponentError(PluginError):
    """A name was looked up that no installed plugin provides."""


class ConflictingPluginsError(PluginError):
    """Two plugins register the same name for the same kind of component."""


class TranscriptError(DebateError):
    """A transcript file does not follow the transcript format."""


class ComponentFailure(DebateError):
    """A plugin raised while the trainer or a command was using it."""


class LimitExceeded(DebateError):
    """An input is past one of the documented limits (docs/limits.md); the message names the
    limit and the environment variable that raises it."""


class OutputWriteError(DebateError):
    """A file could not be written: a full disk, a quota, a read-only or forbidden folder. The
    message names the file and the system's reason (``cannot write PATH: No space left on
    device``); the file is left as it was."""
