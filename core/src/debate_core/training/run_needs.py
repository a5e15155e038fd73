"""What a run will need, checked by ``debate config check`` before anything loads
(docs/config-reference.md#what-config-check-checks): each dataset's files and their first record,
each metric sink's package, the model the backend must find, trained weights named by
``model.init_from``, and at least two agents where the run asks for comparisons.

Each check that fails gives one line naming the key path; all of them are reported together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from debate_core.component_specs import ComponentBuilder, build_choice
from debate_core.config import ComponentChoice, RunConfig
from debate_core.errors import ConfigError, DebateError


def check_run_needs(config: RunConfig, registry: ComponentBuilder) -> None:
    """Raise one ``ConfigError`` listing everything the run would fail on later.

    Raises:
        ConfigError: a line per problem, each starting with its key path.
    """
    problems = [line for check in _CHECKS for line in check(config, registry)]
    if problems:
        raise ConfigError("\n".join(problems))


def _datasets(config: RunConfig, registry: ComponentBuilder) -> Iterator[str]:
    """Every dataset the run reads, built, with its own ``check()`` when it has one (a dataset of
    files reads that each file exists and its first record parses, without loading the rest)."""
    choices: list[tuple[str, ComponentChoice]] = [("dataset", config.dataset)]
    choices += [(f"curriculum[{i}].dataset", stage.dataset) for i, stage in enumerate(config.curriculum)]
    for path, choice in choices:
        try:
            dataset = build_choice(registry, "dataset", choice, path)
            check = getattr(dataset, "check", None)
            if callable(check):
                check()
        except DebateError as exc:
            yield _at(path, exc)


def _metric_sinks(config: RunConfig, registry: ComponentBuilder) -> Iterator[str]:
    """Every metric sink built (a sink whose package is missing says so when it is built)."""
    for index, choice in enumerate(config.logging.sinks):
        path = f"logging.sinks[{index}]"
        try:
            build_choice(registry, "metric_sink", choice, path)
        except DebateError as exc:
            yield _at(path, exc)


def _model(config: RunConfig, registry: ComponentBuilder) -> Iterator[str]:
    """The base model as the local backend would load it (other backends name hosted models)."""
    if config.backend.name != "local":
        return
    from debate_core.backends.local.models.model_context import check_loadable

    try:
        check_loadable(config.model.base_model)
    except DebateError as exc:
        yield str(exc)


def _initial_weights(config: RunConfig, registry: ComponentBuilder) -> Iterator[str]:
    """The trained weights ``model.init_from`` names, resolved as ``debate train`` will."""
    from debate_core.training.policy_weights import resolve_init_from

    try:
        resolve_init_from(config)
    except DebateError as exc:
        yield str(exc)


def comparison_uses(config: RunConfig) -> list[str]:
    """What in the run asks agents to compare each other's answers (each needs two agents or more)."""
    uses = []
    if config.curriculum or config.training.num_iterations > 0:
        uses.append(f"RL rewards from peer votes (reward '{config.reward.name}')")
    judge = config.reward.options.get("judge") if config.reward.name == "judge_mix" else None
    if isinstance(judge, dict) and judge.get("name"):
        uses.append(f"judge '{judge['name']}' (reward judge_mix) on the pairs the agents compared")
    evaluating = config.evaluation.num_problems > 0
    if evaluating and "debate" in config.evaluation.modes:
        uses.append("evaluation debates (evaluation.modes has 'debate')")
    if evaluating and "judge" in config.evaluation.modes:
        uses.append("the judge benchmark (evaluation.modes has 'judge')")
    if evaluating and config.evaluation.role_averaged:
        uses.append("role-averaged evaluation against a fixed opponent")
    return uses


def _agents(config: RunConfig, registry: ComponentBuilder) -> Iterator[str]:
    """At least two agents when anything compares them: one agent has nobody to judge."""
    uses = comparison_uses(config)
    if config.debate.num_agents < 2 and uses:
        yield (
            f"debate.num_agents: is {config.debate.num_agents}, but the run asks for comparisons, which need "
            f"2 or more agents: {'; '.join(uses)}"
        )


def _at(path: str, error: DebateError) -> str:
    """An error's message under the key path it belongs to (once: messages may name it already)."""
    text = " ".join(str(error).split())
    return text if text.startswith(path) else f"{path}: {text}"


_CHECKS: tuple[Callable[[RunConfig, ComponentBuilder], Iterator[str]], ...] = (
    _datasets,
    _metric_sinks,
    _model,
    _initial_weights,
    _agents,
)
