"""``debate plugins`` and ``debate config`` from the outside, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from debate_core.plugin import KINDS

from .fake_dists import make_distribution, reward_plugin

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop


def debate(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATE_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "debate_core.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=120,
    )


def test_plugins_json_lists_builtins_of_every_kind() -> None:
    result = debate("plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert all({"kind", "name", "distribution", "version", "status"} <= row.keys() for row in rows)
    builtin_kinds = {r["kind"] for r in rows if r["distribution"] == "debate-core" and r["status"] == "active"}
    assert builtin_kinds == set(KINDS)
    assert not [r for r in rows if r["distribution"] == "debate-core" and r["status"] != "active"]


def test_broken_distribution_is_listed_as_failed_and_exit_is_zero(tmp_path: Path) -> None:
    make_distribution(tmp_path, "fake-broken", {"bad": "raise ImportError('needs libfoo')\n"})
    make_distribution(tmp_path, "fake-good", {"main": reward_plugin("constant_reward")})
    result = debate("plugins", "--json", env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    broken = [r for r in rows if r["distribution"] == "fake-broken"]
    assert [(r["status"], "needs libfoo" in r["reason"]) for r in broken] == [("failed", True)]
    good = [r for r in rows if r["distribution"] == "fake-good"]
    assert [(r["kind"], r["name"], r["version"], r["status"]) for r in good] == [
        ("reward", "constant_reward", "1.0", "active")
    ]
    warning_lines = [line for line in result.stderr.splitlines() if "fake-broken" in line]
    assert len(warning_lines) == 1 and warning_lines[0].startswith("debate: warning: ")
    assert "Traceback" not in result.stderr


def test_plugins_table_filters_by_kind() -> None:
    result = debate("plugins", "--kind", "reward")
    assert result.returncode == 0, result.stderr
    body = result.stdout.splitlines()[1:]
    assert body and all(line.split()[0] == "reward" for line in body)


def test_config_errors_print_one_message_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text("[training]\nbatch_size = 0\n")
    result = debate("config", "check", str(path))
    assert result.returncode == 1
    assert "training.batch_size: must be >= 1" in result.stderr
    assert "Traceback" not in result.stderr
    debug = debate("config", "check", str(path), env={"DEBATE_DEBUG": "1"})
    assert "Traceback" in debug.stderr


def test_config_show_prints_the_resolved_file(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text("[debate]\nnum_agents = 2\n")
    result = debate("config", "show", str(path), "training.batch_size=3")
    assert result.returncode == 0, result.stderr
    import tomllib

    shown = tomllib.loads(result.stdout)
    assert shown["debate"]["num_agents"] == 2 and shown["training"]["batch_size"] == 3
    assert "options" in shown["reward"] and "options" in shown["debate"]["coordinator"]
    assert debate("config", "check", str(path)).stdout.strip().endswith(": ok")


def test_a_failed_plugin_shows_under_its_kind_and_its_name_says_why(tmp_path: Path) -> None:
    make_distribution(tmp_path, "fake-broken", {"brevity2": "raise ImportError('needs libfoo')\n"})
    env = {"PYTHONPATH": str(tmp_path)}
    result = debate("plugins", "--kind", "reward", env=env)
    assert result.returncode == 0, result.stderr
    failed = [line for line in result.stdout.splitlines() if "fake-broken" in line]
    assert len(failed) == 1 and "failed" in failed[0] and "needs libfoo" in failed[0]
    (tmp_path / "transcript.json").write_text(
        (Path(__file__).parents[2] / "examples/transcripts/full.json").read_text()
    )
    result = debate("score", "--reward", "brevity2", str(tmp_path / "transcript.json"), env=env)
    assert result.returncode == 1
    error = [line for line in result.stderr.splitlines() if line.startswith("debate: error:")]
    assert error == [
        "debate: error: reward 'brevity2' is not available: plugin 'brevity2' from fake-broken 1.0 failed to load: "
        "could not be loaded (fake_broken_brevity2): ImportError: needs libfoo"
    ]
    # any other unknown name still lists what is there, and mentions the failed plugin
    result = debate("score", "--reward", "nothing_like_it", str(tmp_path / "transcript.json"), env=env)
    assert (
        "unknown reward 'nothing_like_it'" in result.stderr and "1 plugin(s) failed to load (brevity2)" in result.stderr
    )


def test_a_plugin_whose_hook_raises_is_listed_under_that_kind_only(tmp_path: Path) -> None:
    source = "from debate_core import hookimpl\n@hookimpl\ndef debate_rewards():\n    raise RuntimeError('bad hook')\n"
    make_distribution(tmp_path, "fake-hook", {"hooky": source})
    env = {"PYTHONPATH": str(tmp_path)}
    rewards = debate("plugins", "--kind", "reward", env=env).stdout
    graders = debate("plugins", "--kind", "grader", env=env).stdout
    assert "fake-hook" in rewards and "bad hook" in rewards
    assert "fake-hook" not in graders
