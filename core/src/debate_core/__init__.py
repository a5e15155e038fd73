"""debate-core: multi-agent debate self-play training with plugins for every part.

Importing this package is cheap: it never imports torch, transformers or datasets.
"""

from __future__ import annotations

from debate_core.components import (
    BackendSpec,
    BuildContext,
    ComponentSpec,
    CoordinatorSpec,
    DatasetSpec,
    GraderSpec,
    HistoryPolicySpec,
    MetricSinkSpec,
    ParserSpec,
    PersonaSetSpec,
    RendererSpec,
    RewardSpec,
)
from debate_core.config.choices import ComponentChoice
from debate_core.hookspecs import hookimpl
from debate_core.records import (
    AuthoredComparison,
    Comparison,
    DebateRecord,
    ParsedResponse,
    ParseError,
    RewardResult,
    SectionSpan,
    Turn,
)

__version__ = "0.1.0"

__all__ = [
    "AuthoredComparison",
    "BackendSpec",
    "BuildContext",
    "Comparison",
    "ComponentChoice",
    "ComponentSpec",
    "CoordinatorSpec",
    "DatasetSpec",
    "DebateRecord",
    "GraderSpec",
    "HistoryPolicySpec",
    "MetricSinkSpec",
    "ParserSpec",
    "ParseError",
    "ParsedResponse",
    "PersonaSetSpec",
    "RendererSpec",
    "RewardResult",
    "RewardSpec",
    "SectionSpan",
    "Turn",
    "__version__",
    "hookimpl",
]
