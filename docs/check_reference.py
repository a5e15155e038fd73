"""Fail the docs build when docs/config-reference.md no longer matches the attrs classes."""

from __future__ import annotations

import sys
from pathlib import Path

from debate_core.config.reference import config_reference_markdown

page = Path(__file__).with_name("config-reference.md")
if page.read_text() != config_reference_markdown():
    sys.exit("docs/config-reference.md is stale: run `debate config reference > docs/config-reference.md`")
print("docs/config-reference.md is up to date")
