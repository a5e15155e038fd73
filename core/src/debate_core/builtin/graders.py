"""Built-in graders: ``boxed``, ``none`` and ``math_verify`` (when math-verify is installed)."""

from __future__ import annotations

from debate_core.plugin import GraderSpec, hookimpl
from debate_core.tasks import build_boxed, build_math_verify, build_none


@hookimpl
def debate_graders() -> list[GraderSpec]:
    return [
        GraderSpec(
            name="boxed",
            description="the last \\boxed{...} of the solution, numbers and whitespace normalised",
            build=build_boxed,
        ),
        GraderSpec(name="none", description="no ground truth (open-ended prompts): never correct", build=build_none),
        GraderSpec(
            name="math_verify",
            description="symbolic equivalence with the math-verify package (pip install math-verify)",
            build=build_math_verify,
        ),
    ]
