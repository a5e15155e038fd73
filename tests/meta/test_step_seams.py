"""Only the phase steps the loop schedules take the whole ``RunContext``; the steps they are made
of take what they use (docs/architecture.md#narrow-seams)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "core" / "src" / "debate_core"

PHASE_STEPS = {
    "training/loop.py::Trainer",
    "training/checkpointing.py::Checkpointer",
    "training/rl/iteration.py::rl_iteration",
    "training/rl/iteration.py::sample_debates",
    "training/warmstart/step.py::warmstart_step",
    "training/evaluation/scheduled.py::evaluate_weights",
}
"""What reads the run's context as a whole: the loop, the checkpointer and the steps the loop
schedules, which hand each of their parts the fields it uses (``sample_debates`` waits on the run's
stop request while batches sampled ahead are in flight)."""


def _annotated_run_context(annotation: ast.expr | None) -> bool:
    return annotation is not None and any(
        isinstance(node, ast.Name) and node.id == "RunContext" for node in ast.walk(annotation)
    )


def takers(tree: ast.Module, module: str) -> set[str]:
    """``module::name`` of every function with a parameter, and every class with a field, of type ``RunContext``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            if any(
                _annotated_run_context(a.annotation)
                for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            ):
                found.add(f"{module}::{node.name}")
        elif isinstance(node, ast.ClassDef):
            fields = [s for s in node.body if isinstance(s, ast.AnnAssign)]
            if any(_annotated_run_context(f.annotation) for f in fields):
                found.add(f"{module}::{node.name}")
    return found


def test_only_the_phase_steps_take_the_whole_run_context() -> None:
    found: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        found |= takers(ast.parse(path.read_text(encoding="utf-8")), path.relative_to(PACKAGE).as_posix())
    assert found == PHASE_STEPS


def test_the_rule_sees_a_step_that_takes_the_context() -> None:
    """The check can fail: a function taking ``RunContext`` and a class holding one are found."""
    tree = ast.parse(
        "def penalise(context: RunContext, datums: list[int]) -> None: ...\n"
        "class Holder:\n    context: RunContext\n"
        "def narrow(session: BackendSession) -> None: ...\n"
    )
    assert takers(tree, "m.py") == {"m.py::penalise", "m.py::Holder"}
