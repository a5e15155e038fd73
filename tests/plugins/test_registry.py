"""Registry behaviour: resolution, suggestions, duplicates, broken plugins, environment switches."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from debate_core import BuildContext, ComponentChoice, hookimpl
from debate_core.errors import ConfigError, ConflictingPluginsError, PluginError, UnknownComponentError
from debate_core.plugin import HOOK_KINDS, PluginLoadWarning, get_registry, load_registry, reset_registry
from debate_core.plugin import _specs as component_specs

from .fake_dists import make_distribution, reward_plugin


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh directory on sys.path for fake distributions; the registry is reloaded after."""
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    for var in ("DEBATE_STRICT_PLUGINS", "DEBATE_DISABLE_PLUGIN_AUTOLOAD", "DEBATE_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    reset_registry()
    yield path
    for name in [m for m in sys.modules if m.startswith("fake_")]:
        del sys.modules[name]
    reset_registry()


def _load_quietly() -> tuple[object, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = load_registry()
        registry.listing()
    return registry, [w for w in caught if issubclass(w.category, PluginLoadWarning)]


def test_third_party_reward_resolves_and_builds_with_its_options(site: Path) -> None:
    make_distribution(site, "fake-good", {"main": reward_plugin("constant_reward")})
    registry, _ = _load_quietly()
    reward = registry.build("reward", "constant-reward", {"scale": 2.0})  # normalised name
    assert reward.options.scale == 2.0
    row = next(r for r in registry.listing("reward") if r.name == "constant_reward")
    assert (row.distribution, row.version, row.status) == ("fake-good", "1.0", "active")


def test_unknown_name_lists_available_names_and_closest_match(site: Path) -> None:
    make_distribution(site, "fake-good", {"main": reward_plugin("constant_reward")})
    registry, _ = _load_quietly()
    with pytest.raises(UnknownComponentError) as info:
        registry.resolve("reward", "constant_rewrd")
    message = str(info.value)
    assert "unknown reward 'constant_rewrd'" in message
    assert "Did you mean 'constant_reward'?" in message
    assert "constant_reward" in message.split("Available rewards:")[1]
    with pytest.raises(UnknownComponentError, match="Available history policies:"):
        registry.resolve("history_policy", "no_such_policy")


def test_duplicate_names_name_both_distributions(site: Path) -> None:
    make_distribution(site, "fake-one", {"a": reward_plugin("twin")})
    make_distribution(site, "fake-two", {"b": reward_plugin("twin")})
    registry, _ = _load_quietly()
    with pytest.raises(ConflictingPluginsError) as info:
        registry.resolve("reward", "twin")
    assert "fake-one" in str(info.value) and "fake-two" in str(info.value)
    statuses = {(r.distribution, r.status) for r in registry.listing("reward") if r.name == "twin"}
    assert statuses == {("fake-one", "conflict"), ("fake-two", "conflict")}


@pytest.mark.parametrize(
    ("source", "reason_part"),
    [
        (None, "ModuleNotFoundError"),
        ("raise ImportError('needs libfoo')\n", "needs libfoo"),
        (
            "from debate_core import hookimpl\n@hookimpl\ndef debate_rewards(extra_arg):\n    return []\n",
            "extra_arg",
        ),
        (
            "from debate_core import hookimpl\n@hookimpl\ndef debate_rewardz():\n    return []\n",
            "did you mean 'debate_rewards'",
        ),
        (
            "from debate_core import hookimpl\n@hookimpl\ndef debate_rewards():\n    raise RuntimeError('boom')\n",
            "boom",
        ),
        (
            "from debate_core import hookimpl\n@hookimpl\ndef debate_rewards():\n    return ['not a spec']\n",
            "expected RewardSpec",
        ),
    ],
    ids=["missing-module", "import-error", "unknown-hook-argument", "misspelt-hook", "hook-raises", "wrong-type"],
)
def test_broken_plugin_warns_and_the_rest_keeps_working(site: Path, source: str | None, reason_part: str) -> None:
    make_distribution(site, "fake-broken", {"bad": source})  # type: ignore[dict-item]
    make_distribution(site, "fake-good", {"main": reward_plugin("constant_reward")})
    registry, caught = _load_quietly()
    assert registry.resolve("reward", "constant_reward").name == "constant_reward"  # type: ignore[attr-defined]
    failed = [r for r in registry.listing() if r.distribution == "fake-broken"]
    assert [r.status for r in failed] == ["failed"]
    assert reason_part in (failed[0].reason or "")
    assert any("fake-broken" in str(w.message) and "'bad'" in str(w.message) for w in caught)


def test_strict_mode_makes_a_broken_plugin_fatal(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_distribution(site, "fake-broken", {"bad": "raise ImportError('needs libfoo')\n"})
    monkeypatch.setenv("DEBATE_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match=r"fake-broken.*needs libfoo"):
        load_registry().listing()


def test_disabled_autoload_loads_builtins_only(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_distribution(site, "fake-good", {"main": reward_plugin("constant_reward")})
    monkeypatch.setenv("DEBATE_DISABLE_PLUGIN_AUTOLOAD", "1")
    registry, _ = _load_quietly()
    assert "constant_reward" not in registry.names("reward")
    row = next(r for r in registry.listing() if r.distribution == "fake-good")
    assert row.status == "disabled" and "DEBATE_DISABLE_PLUGIN_AUTOLOAD" in (row.reason or "")
    assert all(s.distribution == "debate-core" for s in registry.sources() if s.status == "active")


def test_only_listed_distributions_load(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_distribution(site, "fake-one", {"a": reward_plugin("one")})
    make_distribution(site, "fake-two", {"b": reward_plugin("two")})
    monkeypatch.setenv("DEBATE_PLUGINS", "fake_one")
    registry, _ = _load_quietly()
    assert "one" in registry.names("reward") and "two" not in registry.names("reward")


@pytest.mark.parametrize("hook_name", sorted(HOOK_KINDS))
def test_every_hook_registers_its_kind(site: Path, hook_name: str) -> None:
    kind = HOOK_KINDS[hook_name]
    spec_type = next(t for t in component_specs.SPEC_TYPES if t.kind == kind)
    spec = spec_type(name=f"probe_{kind}", description="probe", build=lambda options: ("built", options))

    def implementation() -> list[component_specs.ComponentSpec[object]]:
        return [spec]

    implementation.__name__ = hook_name
    plugin = type("Probe", (), {hook_name: staticmethod(hookimpl(implementation))})()
    registry = get_registry()
    with registry.temporary_plugin(plugin):
        assert registry.resolve(kind, f"probe_{kind}") is spec
        assert registry.build(kind, f"probe_{kind}") == ("built", None)
        with pytest.raises(PluginError, match="takes no options"):
            registry.build(kind, f"probe_{kind}", {"x": 1})
    assert f"probe_{kind}" not in registry.names(kind)


def test_unknown_kind_is_named() -> None:
    with pytest.raises(PluginError, match="unknown kind of component 'rewards'"):
        get_registry().names("rewards")


def test_spec_names_are_normalised_and_checked() -> None:
    spec = component_specs.RewardSpec(name="My-Reward", description="d", build=lambda o: o)
    assert spec.name == "my_reward"
    with pytest.raises(ValueError, match="must start with a letter"):
        component_specs.RewardSpec(name="9lives", description="d", build=lambda o: o)


@attrs.frozen
class WrapOptions:
    inner: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="win_rate"))


def test_builds_with_a_second_parameter_get_a_build_context_and_old_builds_still_work() -> None:
    """docs/plugin-guide.md#wrapping-another-component: a wrapper builds what it wraps through the
    context the host passes, at the nested key path; builds of the options alone are unchanged."""
    seen: list[BuildContext] = []

    def build_wrapper(options: WrapOptions, context: BuildContext) -> object:
        seen.append(context)
        return ("wrapped", context.build("reward", options.inner, "inner"))

    class Plugin:
        @hookimpl
        def debate_rewards(self) -> list[component_specs.RewardSpec]:
            return [
                component_specs.RewardSpec(name="wrapper", description="d", build=build_wrapper, options=WrapOptions),
                component_specs.RewardSpec(name="options_only", description="d", build=lambda options: "plain"),
            ]

    registry = get_registry()
    with registry.temporary_plugin(Plugin()):
        kind, inner = registry.build("reward", "wrapper", {"inner": {"name": "v2"}}, "reward.options")
        assert kind == "wrapped" and type(inner).__name__ == "V2Reward"
        assert (seen[-1].kind, seen[-1].name, seen[-1].path) == ("reward", "wrapper", "reward.options")
        assert seen[-1].builder is registry
        assert registry.build("reward", "options_only") == "plain"
        with pytest.raises(ConfigError, match=r"reward\.options\.inner\.options\.lambda_judge"):
            registry.build(
                "reward", "wrapper", {"inner": {"name": "v2", "options": {"lambda_judge": -1}}}, "reward.options"
            )
        with pytest.raises(
            ConfigError, match=r"reward\.options\.inner: the reward of wrapper cannot be wrapper itself"
        ):
            registry.build("reward", "wrapper", {"inner": {"name": "wrapper"}}, "reward.options")
        spec = registry.resolve("reward", "wrapper")
        assert spec.takes_context and not registry.resolve("reward", "options_only").takes_context
        with pytest.raises(PluginError, match="needs a build context"):
            spec.make()


def _reward_plugin_object(name: str, **marks: bool) -> object:
    """A plugin object whose ``debate_rewards`` hook (with pluggy ``marks``) registers ``name``."""
    spec = component_specs.RewardSpec(name=name, description="probe", build=lambda options: None)

    class Plugin:
        @staticmethod
        @hookimpl(**marks)
        def debate_rewards() -> list[component_specs.RewardSpec]:
            return [spec]

    return Plugin()


def test_pluggy_tracing_shows_a_reward_hook_call() -> None:
    """Hooks are called through pluggy, so its tracing sees each call and what it returned."""
    registry = load_registry()
    manager = registry.plugin_manager
    lines: list[str] = []
    manager.trace.root.setwriter(lines.append)
    undo = manager.enable_tracing()
    try:
        with registry.temporary_plugin(_reward_plugin_object("traced_reward")):
            assert "traced_reward" in registry.names("reward")
    finally:
        undo()
    calls = [line for line in lines if "debate_rewards" in line]
    assert any("finish debate_rewards" in line and "traced_reward" in line for line in calls), lines


def test_tryfirst_and_trylast_order_the_hook_calls() -> None:
    """pluggy's call order holds: a ``tryfirst`` implementation is called before one registered
    later, a ``trylast`` one after; conflicting providers are named in that order."""
    registry = load_registry()
    called: list[str] = []
    undo = registry.plugin_manager.add_hookcall_monitoring(
        lambda hook_name, impls, kwargs: called.extend(i.plugin_name for i in impls if hook_name == "debate_rewards"),
        lambda outcome, hook_name, impls, kwargs: None,
    )
    try:
        with (
            registry.temporary_plugin(_reward_plugin_object("twin", tryfirst=True), name="first", distribution="a"),
            registry.temporary_plugin(_reward_plugin_object("twin"), name="middle", distribution="b"),
            registry.temporary_plugin(_reward_plugin_object("twin", trylast=True), name="last", distribution="c"),
            pytest.raises(ConflictingPluginsError) as info,
        ):
            registry.resolve("reward", "twin")
    finally:
        undo()
    ours = [name for name in called if name in ("first", "middle", "last")]
    assert ours == ["first", "middle", "last"]
    message = str(info.value)
    assert message.index("a (entry point 'first')") < message.index("b (entry point 'middle')")
    assert message.index("b (entry point 'middle')") < message.index("c (entry point 'last')")


def test_a_deprecated_hook_warns_its_implementer() -> None:
    """A hook spec marked with pluggy's ``warn_on_impl`` warns when a plugin implements it."""
    import pluggy

    from debate_core.plugin import _hookspecs as hookspecs

    class Specs:
        @hookspecs.hookspec(warn_on_impl=DeprecationWarning("debate_old_rewards is going; use debate_rewards"))
        def debate_old_rewards(self) -> list[component_specs.RewardSpec]:
            return []

    registry = load_registry()
    registry.plugin_manager.add_hookspecs(Specs)

    def debate_old_rewards() -> list[component_specs.RewardSpec]:
        return []

    plugin = type("Old", (), {"debate_old_rewards": staticmethod(hookimpl(debate_old_rewards))})()
    with pytest.warns(DeprecationWarning, match="use debate_rewards"):
        registry.plugin_manager.register(plugin, name="old")
    assert isinstance(registry.plugin_manager, pluggy.PluginManager)
