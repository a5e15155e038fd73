"""The reward contract suite over every reward plugin installed in this environment.

tox's ``contract`` env installs debate-core, debate-rewards-extra and the example plugin
together and sets ``DEBATE_EXPECT_DISTRIBUTIONS`` so that a plugin that failed to load
fails here instead of silently dropping out of the suite.
"""

from __future__ import annotations

import os

from debate_core.plugins import get_registry
from debate_core.testing import InstalledRewardContract


def test_expected_distributions_provide_rewards() -> None:
    expected = [d.strip() for d in os.environ.get("DEBATE_EXPECT_DISTRIBUTIONS", "debate-core").split(",") if d.strip()]
    active = {row.distribution for row in get_registry().listing("reward") if row.status == "active"}
    missing = [d for d in expected if d not in active]
    assert not missing, f"no active reward plugin from {missing}; active: {sorted(active)}"


class TestInstalledReward(InstalledRewardContract):
    """Every installed reward, through the class a third party's tox env uses too."""
