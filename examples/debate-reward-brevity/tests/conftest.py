"""Runs first: a pytest from another environment (one on the PATH without debate-core) stops with
one line saying what to install, instead of an import error in every test module."""

import sys

try:
    import debate_core.testing  # noqa: F401  (the contract suites; its fixtures come with it)
except ImportError as missing:
    raise SystemExit(  # not an error of pytest's: no traceback, the line alone
        f"{missing}: install debate-core[testing] into the environment that runs pytest ({sys.executable}), "
        "or run `python -m pytest` with the Python that has debate-core"
    ) from None
