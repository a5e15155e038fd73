"""Run-file loading: every bad input gets one message with the key path and the reason."""

from __future__ import annotations

import tomllib
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core import ComponentChoice, RewardSpec, hookimpl
from debate_core.config import (
    RunConfig,
    load_run_config,
    parse_override,
    resolved_config_dict,
    write_resolved_config,
)
from debate_core.errors import ConfigError
from debate_core.plugin import get_registry


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


def test_empty_file_gives_every_default(tmp_path: Path) -> None:
    config = load_run_config(write(tmp_path, ""), registry=None)
    assert config == RunConfig()


def test_default_component_choices_are_not_shared() -> None:
    # ComponentChoice holds a mutable options dict: each config must get its own.
    first, second = RunConfig(), RunConfig()
    first.reward.options["scale"] = 2.0
    assert second.reward.options == {} and first.debate.parser is not second.debate.parser


def test_values_and_overrides_are_typed_by_the_schema(tmp_path: Path) -> None:
    path = write(tmp_path, "[training]\nbatch_size = 4\n[debate]\ncoordinator = 'parallel'\n")
    config = load_run_config(
        path, ["training.learning_rate=3e-5", "debate.num_agents=5", "reward.name=v2"], registry=None
    )
    assert config.training.batch_size == 4
    assert config.training.learning_rate == pytest.approx(3e-5)
    assert config.debate.num_agents == 5
    assert config.debate.coordinator.name == "parallel"
    assert config.reward.name == "v2"


def test_malformed_toml_names_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "[training]\nbatch_size = = 4\n")
    with pytest.raises(ConfigError, match=r"run\.toml: not valid TOML: .*line 2"):
        load_run_config(path, registry=None)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: no such run file"):
        load_run_config(tmp_path / "nope.toml", registry=get_registry())


def test_unknown_key_names_its_path_and_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, "[training]\nbatch_sise = 4\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path, registry=None)
    assert "training.batch_sise: unknown key (did you mean 'batch_size'?)" in str(info.value)


def test_validator_message_is_kept_with_the_full_path(tmp_path: Path) -> None:
    path = write(tmp_path, "[training]\nbatch_size = 0\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path, registry=None)
    assert "training.batch_size: must be >= 1" in str(info.value)


def test_wrong_type_and_bad_choice_are_both_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "[training]\nbatch_size = 'many'\nlr_schedule = 'cos'\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path, registry=None)
    lines = str(info.value).splitlines()
    assert any("training.batch_size: expected an integer, got 'many'" in line for line in lines)
    assert any("training.lr_schedule: cos is not one of 'constant', 'linear', 'cosine'" in line for line in lines)


def test_override_into_a_value_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"training\.batch_size is a value, not a section"):
        load_run_config(None, ["training.batch_size=3", "training.batch_size.x=1"], registry=None)


def test_override_without_equals_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"expected section\.key=value"):
        parse_override("training.batch_size")


@given(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans()))
def test_override_values_round_trip_as_toml(value: object) -> None:
    text = tomllib.loads(f"v = {str(value).lower() if isinstance(value, bool) else repr(value)}")["v"]
    assert parse_override(f"a.b={str(value).lower() if isinstance(value, bool) else repr(value)}") == (["a", "b"], text)


@attrs.frozen
class _ProbeOptions:
    weight: float = attrs.field(default=1.0)

    @weight.validator
    def _check(self, attribute: attrs.Attribute[float], value: float) -> None:
        if value <= 0:
            raise ValueError(f"weight must be positive so rewards keep their sign, got {value}")


class _ProbePlugin:
    @staticmethod
    @hookimpl
    def debate_rewards() -> list[RewardSpec]:
        return [RewardSpec(name="probe_reward", description="probe", build=lambda o: o, options=_ProbeOptions)]


_probe_plugin = _ProbePlugin()


def test_component_options_are_validated_by_their_own_class(tmp_path: Path) -> None:
    path = write(tmp_path, "[reward]\nname = 'probe_reward'\n[reward.options]\nweight = -1\nwieght = 2\n")
    with get_registry().temporary_plugin(_probe_plugin), pytest.raises(ConfigError) as info:
        load_run_config(path, registry=get_registry())
    message = str(info.value)
    assert "reward.options.wieght: unknown key (did you mean 'weight'?)" in message
    assert all(line.startswith(f"{path}: ") for line in message.splitlines())


def test_custom_validator_message_reaches_the_user(tmp_path: Path) -> None:
    path = write(tmp_path, "[reward]\nname = 'probe_reward'\n[reward.options]\nweight = -1\n")
    with get_registry().temporary_plugin(_probe_plugin), pytest.raises(ConfigError) as info:
        load_run_config(path, registry=get_registry())
    assert "reward.options: weight must be positive so rewards keep their sign, got -1.0" in str(info.value)


def test_unknown_component_name_is_reported_at_its_path(tmp_path: Path) -> None:
    path = write(tmp_path, "[reward]\nname = 'probe_rewrd'\n")
    with get_registry().temporary_plugin(_probe_plugin), pytest.raises(ConfigError) as info:
        load_run_config(path, registry=get_registry())
    assert "reward.name: unknown reward 'probe_rewrd'. Did you mean 'probe_reward'?" in str(info.value)


def test_resolved_config_fills_component_defaults_and_reloads(tmp_path: Path) -> None:
    path = write(tmp_path, "[reward]\nname = 'probe_reward'\n")
    with get_registry().temporary_plugin(_probe_plugin):
        config = load_run_config(path, registry=get_registry())
        resolved = resolved_config_dict(config, get_registry())
        assert resolved["reward"] == {"name": "probe_reward", "options": {"weight": 1.0}}
        out = tmp_path / "resolved.toml"
        write_resolved_config(config, out, get_registry())
        again = load_run_config(out, registry=get_registry())
    assert again.reward.options == {"weight": 1.0}
    assert again.training == config.training


def test_keys_of_no_release_are_unknown_keys(tmp_path: Path) -> None:
    """debate-core 0.1 reads no older spelling: ``debate.personas`` and a ``[judge]`` section are
    unknown keys, each named with its key path."""
    path = write(tmp_path, '[debate]\npersonas = "plain"\n')
    with pytest.raises(ConfigError, match=r"debate\.personas"):
        load_run_config(path, registry=None)
    judge = write(tmp_path, '[judge]\nname = "oracle"\n')
    with pytest.raises(ConfigError, match=r"judge"):
        load_run_config(judge, registry=None)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("logging.sinks=wandb", ("wandb",)),
        ("logging.sinks={ name = 'wandb', options = { mode = 'offline' } }", ("wandb",)),
        ("logging.sinks=['jsonl', 'wandb']", ("jsonl", "wandb")),
    ],
)
def test_one_value_for_a_list_key_is_a_one_element_list(override: str, expected: tuple[str, ...]) -> None:
    config = load_run_config(None, [override], registry=None)
    assert tuple(sink.name for sink in config.logging.sinks) == expected


@given(st.sampled_from(["direct", "debate"]))
def test_one_evaluation_mode_is_that_mode_alone(mode: str) -> None:
    assert load_run_config(None, [f"evaluation.modes={mode}"], registry=None).evaluation.modes == (mode,)


def test_one_value_for_a_list_key_in_a_run_file_is_a_one_element_list(tmp_path: Path) -> None:
    path = write(tmp_path, "[evaluation]\nmodes = 'debate'\n[logging]\nsinks = 'jsonl'\n")
    config = load_run_config(path, registry=get_registry())
    assert config.evaluation.modes == ("debate",)
    assert config.logging.sinks == (ComponentChoice(name="jsonl"),)


def test_a_wrong_single_value_for_a_list_key_is_named_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_run_config(None, ["evaluation.modes=debat"], registry=None)
    assert str(info.value).splitlines() == [
        "evaluation.modes[0]: debat is not one of 'direct', 'debate', 'runoff', 'judge'"
    ]
