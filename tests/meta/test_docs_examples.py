"""The brevity plugin shown in the README and the docs is the example package's real code."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "debate-reward-brevity" / "src" / "debate_reward_brevity" / "__init__.py"


@pytest.mark.parametrize("page", ["README.md", "docs/plugin-guide.md", "docs/rewards.md"])
def test_page_shows_the_example_plugin_verbatim(page: str) -> None:
    block = "```python\n# src/debate_reward_brevity/__init__.py\n" + PLUGIN.read_text(encoding="utf-8") + "```\n"
    assert block in (ROOT / page).read_text(encoding="utf-8"), (
        f"{page}: the brevity plugin's code block differs from {PLUGIN.relative_to(ROOT)}"
    )


def code_lines(source: str) -> int:
    """Lines of code: not blank, not a comment, not the module docstring."""
    body = source.split('"""', 2)[2] if source.startswith('"""') else source
    return sum(1 for line in body.splitlines() if line.strip() and not line.strip().startswith("#"))


def test_the_lines_claims_match_the_example() -> None:
    source = PLUGIN.read_text(encoding="utf-8")
    code, total = code_lines(source), len(source.splitlines())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"in {code} lines of code" in readme and f"{total} lines\nwith its docstring and blank lines" in readme
    example = (ROOT / "examples" / "debate-reward-brevity" / "README.md").read_text(encoding="utf-8")
    assert f"({code} lines of code, {total} with its docstring and blank lines)" in example
