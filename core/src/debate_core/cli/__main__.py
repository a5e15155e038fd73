"""`python -m debate_core.cli` runs the `debate` command."""

import sys

from debate_core.cli import main

sys.exit(main())
