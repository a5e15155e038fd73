"""Workaround 1 of 3 (tests/tinker_server/skyrl_server.py): a stand-in ``uv`` that runs a module
with this interpreter, for SkyRL's Tinker API.

What it papers over: SkyRL 0.4.0's API process (``skyrl.tinker.api``) starts its engine as
``uv run <the API's own uv flags> --extra tinker --extra jax -m skyrl.tinker.engine ...``, and
reads those flags from its parent's command line, which it requires to look like
``uv run ... -m skyrl.tinker.api`` (else: "Unable to parse tinker API server startup command").
The tests install SkyRL with pip into the tox env, where there is no ``uv`` project to run. So
the launch is ``<python> <folder>/uv run -m skyrl.tinker.api ...`` with ``<folder>`` first on
``PATH``: this script is the API's parent (it waits for its child, it does not ``exec``) and the
engine's ``uv``. It drops ``run`` and ``--extra NAME`` and runs ``python -m MODULE ARGS`` with
the interpreter it runs under. Unnecessary with a SkyRL release that launches its engine with
``sys.executable`` (or when the server is run from a SkyRL checkout with ``uv``, as
docs/own-gpus.md shows).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence


def module_command(argv: Sequence[str]) -> list[str]:
    """``python -m MODULE ARGS`` for ``uv run [--extra NAME ...] -m MODULE ARGS``.

    Raises:
        SystemExit: the arguments are not of that form (a SkyRL release that starts its engine
            otherwise: the stand-in says so rather than guessing).
    """
    args = list(argv)
    if args[:1] == ["run"]:
        args = args[1:]
    while args[:1] == ["run"] or args[:1] == ["--extra"]:
        args = args[1:] if args[0] == "run" else args[2:]
    if args[:1] != ["-m"] or len(args) < 2:
        raise SystemExit(f"stand-in uv: expected 'uv run [--extra NAME ...] -m MODULE ...', got {list(argv)}")
    return [sys.executable, *args]


def main() -> int:
    child = subprocess.Popen(module_command(sys.argv[1:]))

    def forward(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(main())
