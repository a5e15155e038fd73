"""A reward named by import path (``my_rewards:majority``) in a run file or ``debate score``,
validated like an entry-point plugin, and ``reward.name=X`` switching components."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.config import apply_overrides, load_run_config
from debate_core.errors import ConfigError, PluginError, UnknownComponentError
from debate_core.plugin import get_registry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "transcripts"

MODULE = '''
import attrs
from debate_core import RewardResult, RewardSpec, extract_last_boxed


def majority(debate):
    """1 for agents whose final boxed answer is the most common one (the first such on a tie)."""
    finals = [debate.final_turn(i) for i in range(debate.num_agents)]
    answers = [extract_last_boxed(t.response.solution) if t else None for t in finals]
    given = [a for a in answers if a is not None]
    best = max(given, key=given.count) if given else None
    return RewardResult(agent_rewards=[float(a is not None and a == best) for a in answers])


@attrs.frozen
class ScaleOptions:
    scale: float = attrs.field(default=1.0, validator=attrs.validators.gt(0))


class Scaled:
    def __init__(self, options):
        self.scale = options.scale

    def __call__(self, debate):
        return RewardResult(agent_rewards=[self.scale] * debate.num_agents)


scaled = RewardSpec(name="scaled", description="a constant", build=Scaled, options=ScaleOptions)


def wrong_length(debate):
    return RewardResult(agent_rewards=[1.0])


class NotAFunction:
    pass


not_a_reward = 42
'''


@pytest.fixture
def my_rewards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_rewards.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def score(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["score", *args, str(EXAMPLES / "full.json")]) == 0, capsys.readouterr().err
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_debate_score_takes_a_function_by_import_path(my_rewards: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = score(capsys, "--reward", "my_rewards:majority")
    assert out["reward"] == "my_rewards:majority"
    assert out["rewards"] == [1.0, 1.0, 1.0]  # every agent ends on \boxed{42}


def test_a_spec_by_import_path_keeps_its_options_and_their_validation(
    my_rewards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert score(capsys, "--reward", "my_rewards:scaled", "--set", "scale=2")["rewards"] == [2.0, 2.0, 2.0]
    assert main(["score", "--reward", "my_rewards:scaled", "--set", "scale=0", str(EXAMPLES / "full.json")]) == 1
    assert "scale" in capsys.readouterr().err
    # a plain function takes no options
    assert main(["score", "--reward", "my_rewards:majority", "--set", "x=1", str(EXAMPLES / "full.json")]) == 1
    assert "takes no options" in capsys.readouterr().err


def test_a_result_of_the_wrong_shape_is_caught_as_for_a_plugin(
    my_rewards: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", "--reward", "my_rewards:wrong_length", str(EXAMPLES / "full.json")]) == 1
    err = capsys.readouterr().err
    assert "my_rewards:wrong_length" in err and "1 agent rewards for 3 agents" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_such_module:f", "cannot import module 'no_such_module'"),
        ("my_rewards:missing", "module 'my_rewards' has no attribute 'missing'"),
        ("my_rewards:NotAFunction", "is a class"),
        ("my_rewards:not_a_reward", "is int"),
        ("my_rewards:", "an import path is module:attribute"),
    ],
)
def test_bad_import_paths_say_what_is_wrong(my_rewards: Path, path: str, message: str) -> None:
    with pytest.raises((PluginError, UnknownComponentError), match=message):
        get_registry().resolve("reward", path)


def test_a_run_file_names_a_reward_by_import_path(my_rewards: Path) -> None:
    run_file = my_rewards / "run.toml"
    run_file.write_text('[reward]\nname = "my_rewards:scaled"\noptions = { scale = 3.0 }\n')
    config = load_run_config(run_file, registry=get_registry())
    assert config.reward.name == "my_rewards:scaled"  # kept as written, not normalised
    run_file.write_text('[reward]\nname = "my_rewards:scaled"\noptions = { scale = -1.0 }\n')
    with pytest.raises(ConfigError, match=r"reward\.options"):
        load_run_config(run_file, registry=get_registry())


def test_reward_name_override_switches_component_and_drops_the_old_options(tmp_path: Path) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text(
        '[reward]\nname = "v2"\noptions = { lambda_judge = 0.5 }\n\n[debate]\ncoordinator = "parallel"\n'
    )
    config = load_run_config(run_file, ["reward.name=win_rate"], registry=get_registry())
    assert (config.reward.name, config.reward.options) == ("win_rate", {})
    # the same name keeps its options; options given before the switch in the same command are kept
    same = load_run_config(run_file, ["reward.name=v2"], registry=get_registry())
    assert same.reward.options == {"lambda_judge": 0.5}
    raw = apply_overrides(
        {"reward": {"name": "v2", "options": {"lambda_judge": 0.5}}}, ["reward.options.x=1", "reward.name=y"]
    )
    assert raw["reward"] == {"name": "y", "options": {"lambda_judge": 0.5, "x": 1}}
    # a component chosen by a plain string takes name overrides too
    switched = load_run_config(run_file, ["debate.coordinator.name=sequential"], registry=get_registry())
    assert switched.debate.coordinator.name == "sequential"
