"""Fail the docs build when a generated page (configuration reference, API reference) is stale."""

from __future__ import annotations

import sys
from pathlib import Path

from debate_core.config.reference import config_reference_markdown
from debate_core.tools.api_reference import api_reference_markdown, undocumented

docs = Path(__file__).parent
for page, generated, command in (
    ("config-reference.md", config_reference_markdown(), "debate config reference > docs/config-reference.md"),
    ("api-reference.md", api_reference_markdown(), "python -m debate_core.tools.api_reference > docs/api-reference.md"),
):
    if (docs / page).read_text() != generated:
        sys.exit(f"docs/{page} is stale: run `{command}`")
    print(f"docs/{page} is up to date")
missing = undocumented()
if missing:
    sys.exit("public names without a docstring: " + ", ".join(missing))
