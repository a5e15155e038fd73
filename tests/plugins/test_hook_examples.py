"""Every hook kind is documented and tested like the others: docs/plugin-guide.md has a section
per hook of ``hookspecs.__all__`` with a complete example plugin, ``debate_core.testing`` has the
kind's contract suite, and each example, installed as a distribution with a ``debate`` entry
point, passes that suite."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

import debate_core.testing
from debate_core.plugin import _hookspecs as hookspecs
from debate_core.plugin import kind_label

from .fake_dists import make_distribution

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "plugin-guide.md"
EXAMPLE_MARK = "# example plugin: "


def hook_names() -> list[str]:
    """The hooks a plugin can implement: the ``debate_*`` names of ``hookspecs.__all__``."""
    return [name for name in hookspecs.__all__ if name.startswith("debate_")]


def guide_examples(guide: str) -> dict[str, str]:
    """Hook name -> the example plugin of its section: the ``### ...: `debate_x``` section's
    Python block that starts with ``# example plugin: debate_x``."""
    examples: dict[str, str] = {}
    for section in re.split(r"^### ", guide, flags=re.MULTILINE)[1:]:
        heading, _, body = section.partition("\n")
        named = re.search(r"`(debate_[a-z_]+)`", heading)
        body = re.split(r"^## ", body, maxsplit=1, flags=re.MULTILINE)[0]
        if named is None:
            continue
        for block in re.findall(r"^```python\n(.*?)^```$", body, flags=re.MULTILINE | re.DOTALL):
            if block.startswith(EXAMPLE_MARK + named.group(1) + "\n"):
                examples[named.group(1)] = block
    return examples


def contract_name(kind: str) -> str:
    """``persona_set`` -> ``PersonaSetContract``."""
    return "".join(part.title() for part in kind.split("_")) + "Contract"


EXAMPLES = guide_examples(GUIDE.read_text(encoding="utf-8"))


def missing_pieces(hook: str, examples: dict[str, str]) -> list[str]:
    """What the rule above finds missing for one hook."""
    kind = hookspecs.HOOK_KINDS.get(hook)
    if kind is None:
        return [f"{hook} has no kind in hookspecs.HOOK_KINDS"]
    missing = []
    if hook not in examples:
        missing.append(f"docs/plugin-guide.md has no '### ...: `{hook}`' section with an example plugin")
    if contract_name(kind) not in debate_core.testing.__all__:
        missing.append(f"debate_core.testing has no {contract_name(kind)}")
    if hook not in ENTRY_POINT_TESTED:
        missing.append(f"no test loads the {kind_label(kind)} example through an entry point")
    return missing


@pytest.mark.parametrize("hook", hook_names())
def test_every_hook_has_its_docs_section_contract_suite_and_entry_point_test(hook: str) -> None:
    assert missing_pieces(hook, EXAMPLES) == []


def test_the_meta_test_fails_without_a_docs_section() -> None:
    """The check above can fail: the guide with the judges' section deleted misses it."""
    guide = GUIDE.read_text(encoding="utf-8")
    start = guide.index("### Judges: `debate_judges`")
    without = guide[:start] + guide[guide.index("\n## ", start) + 1 :]
    assert missing_pieces("debate_judges", guide_examples(without)) == [
        "docs/plugin-guide.md has no '### ...: `debate_judges`' section with an example plugin"
    ]


def test_every_hook_function_is_in_all_and_has_a_kind() -> None:
    functions = {name for name, value in vars(hookspecs).items() if name.startswith("debate_") and callable(value)}
    assert functions == set(hook_names()) == set(hookspecs.HOOK_KINDS)


ENTRY_POINT_TESTED = sorted(EXAMPLES)

INNER_TEST = """
from debate_core.plugin import get_registry
from debate_core.testing import {contract}


def _only_component(kind, distribution):
    rows = [row for row in get_registry().listing(kind) if row.distribution == distribution]
    assert [row.status for row in rows] == ["active"], rows
    return rows[0].name


class Test_{hook}({contract}):
    {attribute} = _only_component({kind!r}, {distribution!r})
"""


@pytest.fixture(scope="module")
def example_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, int]]:
    """Every example installed as its own distribution with a ``debate`` entry point, and its kind's
    contract suite run on it, in one fresh pytest process (as a plugin author's tox env would):
    hook -> outcome -> count."""
    root = tmp_path_factory.mktemp("hook_examples")
    site = root / "site"
    tests = root / "tests"
    tests.mkdir()
    for hook, source in EXAMPLES.items():
        kind = hookspecs.HOOK_KINDS[hook]
        distribution = f"debate-example-{kind.replace('_', '-')}"
        make_distribution(site, distribution, {"main": source})
        attribute = {"reward": "reward_name", "parser": "parser_name"}.get(kind, "component_name")
        (tests / f"test_{hook}.py").write_text(
            INNER_TEST.format(
                contract=contract_name(kind), hook=hook, kind=kind, distribution=distribution, attribute=attribute
            ),
            encoding="utf-8",
        )
    report = root / "report.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    for var in ("DEBATE_STRICT_PLUGINS", "DEBATE_DISABLE_PLUGIN_AUTOLOAD", "DEBATE_PLUGINS"):
        env.pop(var, None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", str(tests)]
    subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)
    outcomes: dict[str, dict[str, int]] = {hook: {} for hook in EXAMPLES}
    for case in ElementTree.parse(report).iter("testcase"):
        hook = case.get("classname", "").rsplit("Test_", 1)[-1]
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        detail = next((child.get("message", "") for child in case if child.tag != "system-out"), "")
        counts = outcomes.setdefault(hook, {})
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome != "passed":
            counts[f"{outcome}: {case.get('name')}: {detail[:300]}"] = 1
    return outcomes


@pytest.mark.slow  # starts a Python subprocess: not in the quick loop
@pytest.mark.parametrize("hook", ENTRY_POINT_TESTED)
def test_the_example_passes_its_contract_suite_through_an_entry_point(
    hook: str, example_outcomes: dict[str, dict[str, int]]
) -> None:
    outcomes = example_outcomes[hook]
    assert outcomes.get("passed", 0) > 0 and set(outcomes) == {"passed"}, outcomes
