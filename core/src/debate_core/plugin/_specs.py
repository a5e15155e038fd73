"""The records a plugin returns from a registration hook: one frozen spec per kind of component.

A spec says what a component is called, what it does in one line, which attrs class
validates its section of a run file, and how to build it from an instance of that class.
Building is deferred so that listing plugins never imports heavy libraries.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeAlias, TypeVar, cast

import attrs

from debate_core.config.choices import ComponentChoice, normalise_name
from debate_core.errors import ConfigError, DebateError, PluginError
from debate_core.records import (
    AnswerRule,
    Dataset,
    Grader,
    HistoryPolicy,
    Judge,
    MetricSink,
    OutputParser,
    PersonaSet,
    Renderer,
    RewardFunction,
    Tokenizer,
)
from debate_core.records.json_values import JsonMapping

__all__ = [
    "KINDS",
    "SPEC_TYPES",
    "AnswerRuleSpec",
    "BackendSpec",
    "BuildContext",
    "ComponentBuilder",
    "ComponentSpec",
    "CoordinatorSpec",
    "DatasetSpec",
    "GraderSpec",
    "HistoryPolicySpec",
    "JudgeSpec",
    "MetricSinkSpec",
    "ParserSpec",
    "PersonaSetSpec",
    "RendererSpec",
    "RewardSpec",
    "build_choice",
]

T = TypeVar("T")

_NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


def _check_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not _NAME_PATTERN.match(value):
        raise ValueError(
            f"component name {value!r} must start with a letter and contain only lower-case letters, digits and '_'"
        )


def _check_options(instance: object, attribute: attrs.Attribute[type | None], value: type | None) -> None:
    if value is not None and not attrs.has(value):
        raise TypeError(f"options of a component must be an attrs class, got {value!r}")


class ComponentBuilder(Protocol):
    """Builds a component by kind and name from its raw options (``Registry.build``); ``path`` is
    the key path of the options in the run file, for error messages."""

    # Any: the component of kind ``kind`` (a string at run time): what that kind's spec builds
    def build(self, kind: str, name: str, options: JsonMapping | None = None, path: str = "") -> Any: ...


@attrs.frozen(kw_only=True)
class BuildContext:
    """What the host passes to a component's ``build`` besides its options.

    A component whose options choose other components (a wrapper reward's inner reward) builds
    them with :meth:`build`, through the same registry that is building it, never through the
    process-wide registry; errors then name the nested key path in the run file.

    Example (the ``build`` of a reward that wraps another)::

        def build_smoothed(options: SmoothedOptions, context: BuildContext) -> Smoothed:
            inner = context.build("reward", options.inner, "inner")  # [reward.options.inner]
            return Smoothed(inner, options)
    """

    kind: str
    """The kind of the component being built."""
    name: str
    """Its name."""
    path: str
    """The key path of its options in the run file (``reward.options``)."""
    builder: ComponentBuilder
    """What builds nested components (the registry that builds this one)."""

    def build(self, kind: str, choice: ComponentChoice, option: str) -> Any:  # Any: the kind's component (a string)
        """Build the component of ``kind`` that this component's option ``option`` chooses.

        Raises:
            ConfigError: the option chooses this very component (it would wrap itself).
        """
        where = f"{self.path}.{option}"
        if kind == self.kind and choice.name == self.name:
            raise ConfigError(f"{where}: the {kind} of {self.name} cannot be {self.name} itself")
        return build_choice(self.builder, kind, choice, where)


def _takes_context(build: Callable[..., object]) -> bool:
    """True when ``build`` accepts a second positional argument (the build context)."""
    import inspect  # not at module level: importing debate_core stays cheap

    try:
        parameters = inspect.signature(build).parameters.values()
    except (TypeError, ValueError):  # a callable without a signature: options only
        return False
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in parameters if p.kind in positional) >= 2


@attrs.frozen(kw_only=True)
class ComponentSpec(Generic[T]):
    """What every registration hook returns.

    ``build`` is called with an instance of ``options`` (or with ``None`` when the component has
    no options) and returns the working object. A ``build`` that takes a second positional
    parameter also gets a :class:`BuildContext` (how wrapper components build what they wrap);
    one that takes only the options is called with the options alone.
    """

    kind: ClassVar[str] = "component"

    name: str = attrs.field(converter=normalise_name, validator=_check_name)
    description: str
    build: Callable[[Any], T] | Callable[[Any, BuildContext], T]  # Any: each component's own options class, or None
    options: type | None = attrs.field(default=None, validator=_check_options)

    @property
    def takes_context(self) -> bool:
        """True when ``build`` takes a build context after the options."""
        return _takes_context(self.build)

    def make(self, options: object = None, context: BuildContext | None = None) -> T:
        """Build the component, with default options when none are given.

        Raises:
            PluginError: ``build`` needs a build context and none was given.
        """
        if options is None and self.options is not None:
            options = self.options()
        if not self.takes_context:
            # Any: the options class's, as in ``build``; which of the two ``build`` is, takes_context says
            return cast("Callable[[Any], T]", self.build)(options)
        if context is None:
            raise PluginError(f"{self.kind} '{self.name}' builds other components and needs a build context")
        # Any: as above
        return cast("Callable[[Any, BuildContext], T]", self.build)(options, context)


AnySpec: TypeAlias = ComponentSpec[Any]  # Any: a spec of any kind, what it builds named by the kind (a string)
"""A spec of whichever kind: the registry's, which looks them up by kind and name."""


@attrs.frozen(kw_only=True)
class ParserSpec(ComponentSpec[OutputParser]):
    """An output parser: raw model text to a ``ParsedResponse``, with its output contract (``records.OutputParser``)."""

    kind: ClassVar[str] = "parser"


@attrs.frozen(kw_only=True)
class RewardSpec(ComponentSpec[RewardFunction]):
    """A reward function: a finished debate to per-agent rewards (see ``records.RewardFunction``)."""

    kind: ClassVar[str] = "reward"


@attrs.frozen(kw_only=True)
class PersonaSetSpec(ComponentSpec[PersonaSet]):
    """A persona set: system prompts and sampling temperatures per agent id."""

    kind: ClassVar[str] = "persona_set"


@attrs.frozen(kw_only=True)
class HistoryPolicySpec(ComponentSpec[HistoryPolicy]):
    """A history policy: which earlier turns an agent sees, and how they are clipped."""

    kind: ClassVar[str] = "history_policy"


@attrs.frozen(kw_only=True)
class DatasetSpec(ComponentSpec[Dataset]):
    """A dataset: questions (and ground-truth answers when known) for training and evaluation."""

    kind: ClassVar[str] = "dataset"


@attrs.frozen(kw_only=True)
class GraderSpec(ComponentSpec[Grader]):
    """An answer grader: checks a solution against a dataset's ground truth."""

    kind: ClassVar[str] = "grader"


@attrs.frozen(kw_only=True)
# Any: the service client's type (backends.contract) sits in a layer above the specs.
class BackendSpec(ComponentSpec[Any]):
    """A training backend: a service client with the Tinker SDK's surface."""

    kind: ClassVar[str] = "backend"


@attrs.frozen(kw_only=True)
# Any: the coordinator's type (debate.coordinators) sits in a layer above the specs.
class CoordinatorSpec(ComponentSpec[Any]):
    """A turn protocol: who speaks when, and what each agent is told to do."""

    kind: ClassVar[str] = "coordinator"


@attrs.frozen(kw_only=True)
class RendererSpec(ComponentSpec[Callable[[Tokenizer], Renderer]]):
    """A renderer: chat messages to prompt tokens, and the stop conditions that fit them."""

    kind: ClassVar[str] = "renderer"


@attrs.frozen(kw_only=True)
class MetricSinkSpec(ComponentSpec[Callable[[Path], MetricSink]]):
    """A metric sink: where the trainer writes one record of metrics per iteration."""

    kind: ClassVar[str] = "metric_sink"


@attrs.frozen(kw_only=True)
class JudgeSpec(ComponentSpec[Judge]):
    """An external judge: its verdicts on the pairs the agents compared are mixed into the peer
    reward with a weight that falls to zero (docs/rewards.md#a-stronger-judge-phased-out)."""

    kind: ClassVar[str] = "judge"


@attrs.frozen(kw_only=True)
class AnswerRuleSpec(ComponentSpec[AnswerRule]):
    """An answer rule: how a finished debate becomes its answer (docs/answer-rules.md)."""

    kind: ClassVar[str] = "answer_rule"


SPEC_TYPES: tuple[type[AnySpec], ...] = (
    ParserSpec,
    RewardSpec,
    PersonaSetSpec,
    HistoryPolicySpec,
    DatasetSpec,
    GraderSpec,
    BackendSpec,
    CoordinatorSpec,
    RendererSpec,
    MetricSinkSpec,
    JudgeSpec,
    AnswerRuleSpec,
)
"""Every kind, in the order listings show them."""

KINDS: tuple[str, ...] = tuple(spec.kind for spec in SPEC_TYPES)
"""Every kind name (``parser``, ``reward``, ...), in the order listings show them."""


# Any: the component of kind ``kind`` (a string at run time), as ``ComponentBuilder.build``
def build_choice(builder: ComponentBuilder, kind: str, choice: ComponentChoice, path: str) -> Any:
    """Build the component a run file chooses at key path ``path`` (``reward``, ``debate.parser``).

    A plugin's own bug while building becomes a ``PluginError`` naming the plugin and the key path;
    user errors (``DebateError``) pass through unchanged.
    """
    try:
        return builder.build(kind, choice.name, choice.options, f"{path}.options")
    except DebateError:
        raise
    except Exception as exc:
        raise PluginError(
            f"{kind} plugin '{choice.name}' ({path}) could not be built: {type(exc).__name__}: {exc}"
        ) from exc
