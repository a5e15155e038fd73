"""The pytest plugin for debate plugin authors (the ``pytest11`` entry point ``debate_core``).

It holds only what a plugin author's tests use as fixtures, and imports nothing else at load:
pytest loads it in every session of every environment where debate-core is installed.

Fixtures:
    ``debate_registry_plugin``: ``register(plugin)`` adds a plugin object (a module or a class
        instance with ``@hookimpl`` functions) to the process-wide registry for one test.
    ``make_debate``: builds a ``DebateRecord`` without any model, from raw response texts
        (parsed as a coordinator would) or from ``TurnSpec`` records.
    ``installed_<kind>`` (``installed_reward``, ``installed_grader``, ...): the name of each
        installed component of that kind in turn (a test that takes it runs once per component).

The contract suites are imported by the test modules that use them (``from debate_core.testing
import RewardContract``), never by this plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING

import attrs
import pytest

from debate_core.plugin import KINDS

if TYPE_CHECKING:
    from debate_core.records import DebateRecord
    from debate_core.testing.synthetic import TurnProtocol, TurnSpec

__all__ = ["build_debate", "debate_registry_plugin", "installed_names", "make_debate", "pytest_generate_tests"]


def build_debate(
    turns: Sequence[str] | Sequence[TurnSpec],
    *,
    num_agents: int,
    protocol: TurnProtocol = "sequential",
    answer: str | None = None,
    question: str = "What is 6 * 7?",
    grades: Sequence[float | None] | None = None,
) -> DebateRecord:
    """A finished debate from its turns in commit order (agent ``k % num_agents`` at turn ``k``).

    ``turns`` are either raw response texts, parsed with the built-in XML parser and the
    coordinators' authorship rules (``debate_core.testing.scripted_debate``), or ``TurnSpec``
    records that need no parser. ``grades`` sets ``Turn.grade`` per turn.
    """
    from debate_core.testing.synthetic import TurnSpec, synthetic_debate

    if all(isinstance(t, TurnSpec) for t in turns):
        specs = [t for t in turns if isinstance(t, TurnSpec)]
        if grades is not None:
            if len(grades) != len(specs):
                raise ValueError(f"{len(grades)} grades for {len(specs)} turns")
            specs = [attrs.evolve(s, grade=g) for s, g in zip(specs, grades, strict=True)]
        return synthetic_debate(num_agents, specs, protocol=protocol, answer=answer, question=question)
    if not all(isinstance(t, str) for t in turns):
        raise TypeError("turns must be all response texts or all TurnSpec records")
    from debate_core.testing.scripted_debate import scripted_debate

    record = scripted_debate(
        [str(t) for t in turns], num_agents=num_agents, protocol=protocol, answer=answer, question=question
    )
    if grades is not None:
        if len(grades) != len(record.turns):
            raise ValueError(f"{len(grades)} grades for the {len(record.turns)} turns the debate ran")
        graded = tuple(attrs.evolve(t, grade=g) for t, g in zip(record.turns, grades, strict=True))
        record = attrs.evolve(record, turns=graded)
    return record


@pytest.fixture
def make_debate() -> Callable[..., DebateRecord]:
    """``make_debate(turns, num_agents=3, protocol="sequential", answer=None, grades=None)``:
    a ``DebateRecord`` from response texts or ``TurnSpec`` records, without a model."""
    return build_debate


@pytest.fixture
def debate_registry_plugin() -> Iterator[Callable[..., object]]:
    """``register(plugin, name=None)``: add a plugin object to the registry for this test only."""
    from debate_core.plugin import get_registry

    with ExitStack() as stack:

        def register(plugin: object, name: str | None = None) -> object:
            return stack.enter_context(get_registry().temporary_plugin(plugin, name=name))

        yield register


def installed_names(kind: str) -> list[str]:
    """The names of every installed component of ``kind`` (conflicting names left out)."""
    from debate_core.plugin import get_registry

    return [spec.name for spec in get_registry().specs(kind)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``installed_<kind>`` with the name of every installed component of that kind."""
    for kind in KINDS:
        fixture = f"installed_{kind}"
        if fixture in metafunc.fixturenames:
            names = installed_names(kind)
            metafunc.parametrize(fixture, names, ids=names)
