"""Every numeric command-line option that stands for a run-file key is checked as that key is
(docs/limits.md#numbers-on-the-command-line): the same refusal of ``nan`` and ``inf``, the same
types and ranges, in one line naming the option, exit status 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.config import load_run_config
from debate_core.errors import ConfigError

OPTIONS = [
    # (command line before the option, option, the run-file key it stands for)
    (("run", "RUN_FILE", "--question", "What is 2 + 2?"), "--temperature", "evaluation.temperature"),
    (("parse", "RESPONSE", "--author", "0"), "--num-agents", "debate.num_agents"),
    (("preflight", "RUN_FILE"), "--num-problems", "evaluation.num_problems"),
]
BAD_VALUES = ["nan", "inf", "-inf", "-1", "1e999", "abc", "2.5", "1" + "0" * 5000]


def _config_reason(key: str, value: str) -> str | None:
    """What a run file gets for ``key = value``: the reason after the key path, or None if accepted."""
    try:
        load_run_config(None, [f"{key}={value}"], registry=None)
    except ConfigError as exc:
        line = str(exc).splitlines()[0]
        return line.removeprefix(f"{key}: ").removeprefix(f"override {key!r}: ")
    return None


@pytest.mark.parametrize("value", BAD_VALUES)
@pytest.mark.parametrize(("before", "option", "key"), OPTIONS, ids=[o[1] for o in OPTIONS])
def test_a_bad_number_is_refused_as_its_config_key_is(
    before: tuple[str, ...],
    option: str,
    key: str,
    value: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DEBATE_DEBUG", raising=False)
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    response = tmp_path / "response.txt"
    response.write_text("<solution>4</solution>", encoding="utf-8")
    argv = [{"RUN_FILE": str(run_file), "RESPONSE": str(response)}.get(a, a) for a in before]
    reason = _config_reason(key, value)
    code = main([*argv, f"{option}={value}"])
    err = capsys.readouterr().err
    if reason is None:  # the key takes it (2.5 as a temperature): the option must not refuse it as a number
        assert option not in err
        return
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"debate: error: {option} ") and f"{reason} (as {key} in a run file)" in err, err
