from __future__ import annotations

from collections.abc import Iterator

import pytest

from debate_core.plugins import Registry
from tests.training.trainer_harness import harness_registry


@pytest.fixture
def registry() -> Iterator[Registry]:
    """The process registry with the scripted backend and the test plugins of the harness."""
    with harness_registry() as reg:
        yield reg
