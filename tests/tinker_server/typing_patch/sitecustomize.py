"""Workaround 2 of 3 (tests/tinker_server/skyrl_server.py): ``typing.TypedDict`` is
``typing_extensions.TypedDict`` in SkyRL's server processes.

What it papers over: SkyRL 0.4.0 declares ``skyrl.tinker.types.MultiModalKwargs`` with
``typing.TypedDict`` and uses it in pydantic models; pydantic refuses ``typing.TypedDict`` below
Python 3.12 ("Please use `typing_extensions.TypedDict` instead of `typing.TypedDict` on Python <
3.12"), and SkyRL requires Python 3.12 (installed here with ``--ignore-requires-python``, because
torch 2.13.0's CPU build is found for 3.11 only on these machines). Unnecessary once the server
runs on Python 3.12 or later, or with a SkyRL release that imports ``TypedDict`` from
``typing_extensions``.

Only the server's processes see this folder (``PYTHONPATH`` of the launch); the tests' own process
is never patched.
"""

import sys

if sys.version_info < (3, 12):
    import typing

    import typing_extensions

    typing.TypedDict = typing_extensions.TypedDict  # type: ignore[misc]
