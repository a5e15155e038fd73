"""`python -m debate_core.cli` runs the `debate` command."""

from debate_core.cli import run

run()
