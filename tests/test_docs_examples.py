"""The brevity plugin shown in the README and the docs is the example package's real code."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "debate-reward-brevity" / "src" / "debate_reward_brevity" / "__init__.py"


@pytest.mark.parametrize("page", ["README.md", "docs/plugin-guide.md", "docs/rewards.md"])
def test_page_shows_the_example_plugin_verbatim(page: str) -> None:
    block = "```python\n# src/debate_reward_brevity/__init__.py\n" + PLUGIN.read_text(encoding="utf-8") + "```\n"
    assert block in (ROOT / page).read_text(encoding="utf-8"), (
        f"{page}: the brevity plugin's code block differs from {PLUGIN.relative_to(ROOT)}"
    )
