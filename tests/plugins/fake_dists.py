"""Installs fake distributions (a ``.dist-info`` folder and a module) on ``sys.path`` so
registry tests see real entry points without running pip."""

from __future__ import annotations

import textwrap
from pathlib import Path


def make_distribution(site: Path, name: str, modules: dict[str, str], version: str = "1.0") -> None:
    """Create distribution ``name`` in ``site`` whose ``debate`` entry points are ``modules``
    (entry-point name -> module source; a source of ``None`` points at a missing module)."""
    site.mkdir(parents=True, exist_ok=True)
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = ["[debate]"]
    for ep_name, source in modules.items():
        module = f"{name.replace('-', '_')}_{ep_name}"
        lines.append(f"{ep_name} = {module}")
        if source is not None:
            (site / f"{module}.py").write_text(textwrap.dedent(source))
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n")


REWARD_PLUGIN = """
    import attrs
    from debate_core import RewardSpec, RewardResult, hookimpl

    @attrs.frozen
    class Options:
        scale: float = attrs.field(default=1.0, validator=attrs.validators.gt(0.0))

    class Constant:
        def __init__(self, options):
            self.options = options
        def __call__(self, debate):
            return RewardResult(agent_rewards=[self.options.scale] * debate.num_agents)

    @hookimpl
    def debate_rewards():
        return [RewardSpec(name="{name}", description="constant reward", build=Constant, options=Options)]
"""


def reward_plugin(name: str) -> str:
    """Source of a plugin module registering a reward called ``name``."""
    return REWARD_PLUGIN.replace("{name}", name)
