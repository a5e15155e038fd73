"""Shared test settings: hypothesis profiles (``HYPOTHESIS_PROFILE=ci`` in tox)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# no time limits: the suites must hold on a loaded machine (no deadline per example, and no
# health check on how long generating the examples takes)
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
