"""The reward contract suite over every reward plugin installed in this environment.

tox's ``contract`` env installs debate-core, debate-rewards-extra, debate-judge-openai and the example plugin
together and sets ``DEBATE_EXPECT_DISTRIBUTIONS`` so that a plugin that failed to load
fails here instead of silently dropping out of the suite.
"""

from __future__ import annotations

import os

from debate_core.plugin import get_registry
from debate_core.testing import InstalledRewardContract


def test_expected_distributions_load() -> None:
    """Each distribution tox installed provides at least one active component (of any kind:
    debate-judge-openai provides a judge, not a reward) and none of its components failed."""
    expected = [d.strip() for d in os.environ.get("DEBATE_EXPECT_DISTRIBUTIONS", "debate-core").split(",") if d.strip()]
    rows = get_registry().listing()
    active = {row.distribution for row in rows if row.status == "active"}
    missing = [d for d in expected if d not in active]
    assert not missing, f"no active plugin from {missing}; active: {sorted(active)}"
    broken = [(row.distribution, row.kind, row.name, row.status) for row in rows if row.status != "active"]
    assert not [b for b in broken if b[0] in expected], broken


def test_core_provides_rewards() -> None:
    active = {row.distribution for row in get_registry().listing("reward") if row.status == "active"}
    assert "debate-core" in active


class TestInstalledReward(InstalledRewardContract):
    """Every installed reward, through the class a third party's tox env uses too."""
