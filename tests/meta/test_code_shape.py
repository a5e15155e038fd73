"""Every function of debate_core is under 60 lines and every module at most 500, except those
docs/architecture.md#size-exceptions lists with a reason (docs/architecture.md states the rule)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "core" / "src" / "debate_core"
PAGE = ROOT / "docs" / "architecture.md"
MAX_FUNCTION_LINES = 59
MAX_MODULE_LINES = 500


def listed_exceptions() -> dict[str, str]:
    """The size-exceptions table: ``where`` (a module or ``module::qualified.function``) -> reason."""
    section = PAGE.read_text(encoding="utf-8").split("\n## Size exceptions\n", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([^`]+)` \| (.+?) \|$", section, flags=re.MULTILINE))


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """Every function and method below ``node``, as its qualified name and its length in lines."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{child.name}"
            if not isinstance(child, ast.ClassDef):
                yield name, (child.end_lineno or child.lineno) - child.lineno + 1
            yield from _functions(child, f"{name}.")
        else:
            yield from _functions(child, prefix)


def oversized() -> dict[str, str]:
    """Every module and function over its size: where -> what and how long."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            found[module] = f"module, {lines} lines (limit: at most {MAX_MODULE_LINES})"
        for name, length in _functions(ast.parse(text)):
            if length > MAX_FUNCTION_LINES:
                found[f"{module}::{name}"] = f"function, {length} lines (limit: under {MAX_FUNCTION_LINES + 1})"
    return found


def test_functions_and_modules_are_within_their_sizes() -> None:
    allowed = listed_exceptions()
    offenders = [f"  {where}: {what}" for where, what in oversized().items() if where not in allowed]
    assert not offenders, (
        f"{len(offenders)} functions or modules of core/src/debate_core are too long:\n"
        + "\n".join(offenders)
        + "\nSplit each along its seams, or list a justified exception with its reason in the table under"
        " '## Size exceptions' in docs/architecture.md (| `module.py::function` | reason |)."
    )


def test_every_listed_exception_is_still_needed() -> None:
    stale = sorted(set(listed_exceptions()) - set(oversized()))
    assert not stale, f"docs/architecture.md#size-exceptions lists what is no longer over its size: {stale}; remove it"


def test_the_sizes_are_measured_as_documented() -> None:
    """A nested function counts inside its parent and on its own, by its qualified name."""
    tree = ast.parse("class A:\n    def f(self):\n        def g():\n            pass\n\n        return g\n")
    assert dict(_functions(tree)) == {"A.f": 5, "A.f.g": 2}
