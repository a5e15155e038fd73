"""Configuration is typed from the TOML to the sampler: no parameter or field that holds run-file
configuration is annotated ``Any`` (mypy strict then follows every value to where it is used)."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "core" / "src" / "debate_core"
CONFIG_NAMES = ("config", "settings")
"""Names that hold run-file configuration (``config``, ``settings``, ``loss_config``, ``training_settings``)."""
NOT_RUN_CONFIGURATION = {"model_config"}
"""A Hugging Face model's own config object (``transformers.PretrainedConfig``), not the run file."""


def _holds_configuration(name: str) -> bool:
    return name not in NOT_RUN_CONFIGURATION and any(name == n or name.endswith(f"_{n}") for n in CONFIG_NAMES)


def _mentions_any(annotation: ast.expr | None) -> bool:
    return annotation is not None and any(
        isinstance(node, ast.Name) and node.id == "Any" for node in ast.walk(annotation)
    )


def test_no_configuration_is_typed_any() -> None:
    offenders: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = node.args
                for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                    if _holds_configuration(arg.arg) and _mentions_any(arg.annotation):
                        offenders.append(f"{path.relative_to(SOURCE)}:{arg.lineno} parameter {arg.arg}")
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and _holds_configuration(node.target.id)
                and _mentions_any(node.annotation)
            ):
                offenders.append(f"{path.relative_to(SOURCE)}:{node.lineno} field {node.target.id}")
    assert offenders == []


def test_the_rule_sees_an_any_typed_configuration() -> None:
    """The check above can fail: a parameter named config typed Any is found."""
    tree = ast.parse("def f(config: Any, loss_config: dict[str, Any] | None) -> None: ...")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [a.arg for a in function.args.args if _holds_configuration(a.arg) and _mentions_any(a.annotation)] == [
        "config",
        "loss_config",
    ]


ANY_SPECS = {"backend": "the service client's type is in backends/", "coordinator": "its type is in debate/"}
"""Kinds whose spec builds ``Any``: what they build is typed in a layer above the specs module."""


def test_each_kinds_spec_says_what_its_build_returns() -> None:
    from typing import Any

    from debate_core.plugin import SPEC_TYPES

    built = {spec.kind: spec.__orig_bases__[0].__args__[0] for spec in SPEC_TYPES}  # type: ignore[attr-defined]
    assert {kind for kind, returns in built.items() if returns is Any} == set(ANY_SPECS)
