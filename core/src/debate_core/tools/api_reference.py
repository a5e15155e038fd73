"""The public API reference, generated from the public modules' ``__all__`` and docstrings.

The public API is the ``debate_core`` namespace (the plugin author's API, marked stable) and the
top-level modules and packages listed in :data:`PUBLIC_MODULES` (public); modules deeper inside
the packages are internal. ``docs/api-reference.md`` is this tool's output: per module a table
of names with their stability, then mkdocstrings blocks that render each name from its
docstring when the site is built. A test keeps the page current and checks that every public
name has a docstring:

    python -m debate_core.tools.api_reference > docs/api-reference.md
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import sys
from types import ModuleType

PUBLIC_MODULES: tuple[str, ...] = (
    "debate_core",
    "debate_core.records",
    "debate_core.errors",
    "debate_core.files",
    "debate_core.stats",
    "debate_core.limits",
    "debate_core.config",
    "debate_core.plugin",
    "debate_core.debate",
    "debate_core.rewards",
    "debate_core.tasks",
    "debate_core.backends",
    "debate_core.testing",
    "debate_core.hosting",
)
"""The modules whose ``__all__`` is the public API, in the order the reference shows them."""


def _summary(text: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join((text or "").strip().split("\n\n")[0].split())


def _assigned_docs(module: ModuleType) -> dict[str, str]:
    """``{name: docstring}`` of module-level assignments followed by a string literal."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return {}
    docs: dict[str, str] = {}
    for node, following in itertools.pairwise(tree.body):
        target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if (
            isinstance(target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[target.id] = following.value.value
    return docs


def _defining_module(module: ModuleType, name: str) -> ModuleType:
    """The module a re-exported constant is assigned in (followed through ``from X import name`` and
    ``from X import *``, also one under ``if TYPE_CHECKING:`` of a package that imports its names on
    first use)."""
    seen: set[str] = set()
    while module.__name__ not in seen:
        seen.add(module.__name__)
        if name in _assigned_docs(module):
            return module
        try:
            tree = ast.parse(inspect.getsource(module))
        except (OSError, TypeError):
            return module
        source = next(
            (
                node.module
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom)
                and node.module
                and any(a.name == name or (a.name == "*" and _star_exports(node.module, name)) for a in node.names)
            ),
            None,
        )
        if source is None:
            return module
        module = importlib.import_module(source)
    return module


def _star_exports(module_name: str, name: str) -> bool:
    """Whether ``from module_name import *`` brings ``name`` (it is in that module's ``__all__``)."""
    return name in getattr(importlib.import_module(module_name), "__all__", ())


def describe(module: ModuleType, name: str) -> tuple[str, str]:
    """``(kind, summary)`` of one public name."""
    value = getattr(module, name)
    if inspect.isclass(value):
        kind = "protocol" if getattr(value, "_is_protocol", False) else "class"
        return kind, _summary(inspect.getdoc(value))
    if inspect.isfunction(value):
        return "function", _summary(inspect.getdoc(value))
    if inspect.ismodule(value):
        return "module", _summary(value.__doc__)
    own = _assigned_docs(_defining_module(module, name)).get(name)
    if own is None and callable(value):  # a decorated function (a pytest fixture)
        return "function", _summary(inspect.getdoc(value))
    return ("function" if callable(value) else "constant"), _summary(own)


def public_names(module: ModuleType) -> list[str]:
    """The module's ``__all__`` without dunder names."""
    return [name for name in getattr(module, "__all__", ()) if not name.startswith("__")]


def undocumented() -> list[str]:
    """Every public name without a docstring summary (``module.name``)."""
    missing = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        missing += [f"{module_name}.{n}" for n in public_names(module) if not describe(module, n)[1]]
    return missing


STABLE_MODULE = "debate_core"
"""The namespace whose names are the stable API (the plugin author's API)."""


def stable_objects() -> dict[int, str]:
    """``id(object) -> name`` of every name of the stable namespace (a public module's name that
    is the same object is stable too)."""
    namespace = importlib.import_module(STABLE_MODULE)
    return {id(getattr(namespace, name)): name for name in public_names(namespace)}


def stability(module_name: str, name: str) -> str:
    """``stable`` for the namespace's names and the same objects elsewhere, ``public`` for the rest."""
    if module_name == STABLE_MODULE:
        return "stable"
    value = getattr(importlib.import_module(module_name), name)
    return "stable" if id(value) in stable_objects() and not isinstance(value, str | int | float) else "public"


def _directive(module_name: str, names: list[str]) -> list[str]:
    """The mkdocstrings block that renders ``names`` of a module from their docstrings."""
    return [
        f"::: {module_name}",
        "    options:",
        "      members:",
        *(f"        - {name}" for name in names),
        "",
    ]


def api_reference_markdown() -> str:
    """The whole reference as Markdown: per public module, a table of its names with their
    stability, then the names rendered in full by mkdocstrings."""
    out = [
        "# API reference",
        "",
        "Generated by `python -m debate_core.tools.api_reference` from the public modules' `__all__`; each",
        "name is rendered from its docstring by [mkdocstrings](https://mkdocstrings.github.io/).",
        "`tests/meta/test_api_reference.py` keeps this page in step and checks that every public name is",
        "documented. Plugins import from `debate_core` only; built-ins import from these modules only (the",
        "import contracts in `pyproject.toml` enforce both). Modules deeper inside the packages are internal.",
        "",
        "**Stability.** Names marked **stable** are the `debate_core` namespace, the plugin author's API:",
        "the records a reward reads (`DebateRecord`, `Turn`, `ParsedResponse`, `Comparison`), the spec",
        "records the hooks return, the component interfaces, the answer helpers (`extract_last_boxed`) and",
        "the errors. They keep working across minor releases; a rename keeps the old name with a",
        "deprecation warning for at least one minor release. Names marked **public** are the API the",
        "built-ins and the test kit use; they may change in a minor release.",
        "",
    ]
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names = sorted(public_names(module), key=str.lower)
        level = "stable" if module_name == STABLE_MODULE else "public"
        out += [
            f"## `{module_name}` ({level})",
            "",
            _summary(module.__doc__),
            "",
            "| name | kind | stability | what |",
            "|---|---|---|---|",
        ]
        for name in names:
            kind, summary = describe(module, name)
            mark = stability(module_name, name)
            shown = "**stable**" if mark == "stable" else "public"
            out.append(f"| `{name}` | {kind} | {shown} | {summary.replace('|', '/')} |")
        out += ["", *_directive(module_name, names)]
    return "\n".join(out)


def main() -> int:
    sys.stdout.write(api_reference_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
