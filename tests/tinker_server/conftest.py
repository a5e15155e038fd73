"""Fixtures of the end-to-end tests against SkyRL's Tinker API (tox env ``tinker-server``): the
embedded model exported as a Hugging Face folder, the server on 127.0.0.1 for the whole session,
a run file whose ``backend.options.base_url`` points at it, and ``debate`` commands run as a user
runs them (subprocesses, bounded in time)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tinker_server.skyrl_server import RunningServer, skyrl_server

COMMAND_LIMIT_S = 300
"""A ``debate`` command against the server that has not exited by then hangs (the longest, the
warm-started run, takes about a minute on a loaded 2-core machine, JAX's first compiles included)."""
REQUIRED = os.environ.get("DEBATE_TINKER_SERVER_REQUIRED") == "1"
"""Set in the tox env: SkyRL missing there is a failure, not a skip."""


@pytest.fixture(scope="session")
def exported_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``embedded:debate-tiny`` as a Hugging Face folder (debate_core.tools.export_embedded)."""
    from debate_core.tools.export_embedded import export_embedded

    return export_embedded("debate-tiny", tmp_path_factory.mktemp("model") / "debate-tiny")


@pytest.fixture(scope="session")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """SkyRL's Tinker API serving the exported model, started once and stopped after the session."""
    if importlib.util.find_spec("skyrl") is None:
        if REQUIRED:
            pytest.fail("SkyRL is not installed in this environment (tox -e tinker-server installs it)")
        pytest.skip("SkyRL is not installed here: tox -e tinker-server runs these tests")
    exported_model: Path = request.getfixturevalue("exported_model")
    with skyrl_server(exported_model, tmp_path_factory.mktemp("skyrl")) as running:
        yield running


def write_run_file(path: Path, server: RunningServer, *, warmstart: bool = False) -> Path:
    """A short 2-agent debate run on the server: ``backend.options.base_url`` and the exported
    folder as ``model.base_model`` are the two lines that point a run at it (docs/own-gpus.md)."""
    path.write_text(
        f"""
[run]
name = "skyrl"
seed = 0

[backend]
name = "tinker"
options = {{ base_url = "{server.url}" }}

[model]
base_model = "{server.base_model}"
lora_rank = 4

[dataset]
name = "arithmetic"
options = {{ difficulty = 1, num_train = 50, num_test = 10 }}

[grader]
name = "boxed"

[reward]
name = "win_rate"

[debate]
num_agents = 2
max_rounds = 1
max_tokens = 32
temperature = 1.0

[warmstart]
enabled = {str(warmstart).lower()}
steps = 1
batch_size = 2

[training]
batch_size = 2
num_iterations = 2
save_every = 1
learning_rate = 1e-4

[evaluation]
num_problems = 0
modes = ["direct"]

[logging]
progress = "off"
""",
        encoding="utf-8",
    )
    return path


def environment(home: Path) -> dict[str, str]:
    """The user's environment for a command: a placeholder key (the server takes any), nothing
    from a hub, no proxy between the command and 127.0.0.1."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TINKER_", "DEBATE_")) and not k.lower().endswith("_proxy")
    }
    env.update(TINKER_API_KEY="tml-skyrl-local", TINKER_TELEMETRY="0", HF_HUB_OFFLINE="1", HOME=str(home))
    return env


def debate(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``debate ARGS`` in ``cwd``, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "debate_core.cli", *map(str, args)],
        cwd=cwd,
        env=environment(cwd / "home"),
        capture_output=True,
        text=True,
        timeout=COMMAND_LIMIT_S,
    )


def spawn(*args: str | Path, cwd: Path) -> subprocess.Popen[str]:
    """``debate ARGS`` started in ``cwd`` (to be killed), its output to ``cwd/spawned.log``."""
    log = (cwd / "spawned.log").open("w", encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "debate_core.cli", *map(str, args)],
        cwd=cwd,
        env=environment(cwd / "home"),
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="session")
def trained(
    server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One warm-started run (a cross-entropy step, then an importance-sampling iteration) that
    the later tests start from, evaluate and compare with: its directory and its command."""
    where = tmp_path_factory.mktemp("trained")
    config = write_run_file(where / "run.toml", server, warmstart=True)
    done = debate("train", config, "training.num_iterations=1", "--run-dir", where / "run", cwd=where)
    return where / "run", done
