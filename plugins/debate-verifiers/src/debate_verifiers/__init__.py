"""debate-core's debate as a verifiers v1 environment (docs/verifiers.md): ``vf-eval
debate_verifiers --taskset.run-file RUN.toml ...`` plays the run file's debate against any
OpenAI-compatible endpoint, each agent rewarded by the run's reward plugin."""

from __future__ import annotations

# verifiers finds the harness by this package's name while env.py declares the seats (which
# name it): __all__ and the harness come first.
__all__ = [
    "DebateEnv",
    "DebateEnvConfig",
    "DebateHarness",
    "DebateHarnessConfig",
    "DebateTaskset",
    "DebateTasksetConfig",
]

# isort: off
from debate_verifiers.harness import DebateHarness, DebateHarnessConfig
from debate_verifiers.taskset import DebateTaskset, DebateTasksetConfig
from debate_verifiers.env import DebateEnv, DebateEnvConfig
# isort: on
