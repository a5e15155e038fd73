"""What a run will need, checked by ``debate config check`` before anything loads, and by
``debate train`` before its first step (docs/config-reference.md#what-config-check-checks): every
split of every dataset the run opens (its files, its package, the split itself), each metric
sink's package, the model the backend must find (with a chat template where the renderer uses
it), trained weights named by ``model.init_from``,
at least two agents where the run asks for comparisons, and a judge's endpoint.

Each check that fails gives one line naming the key path; all of them are reported together.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from functools import partial

from debate_core.config import ComponentChoice, RunConfig
from debate_core.errors import ConfigError, DebateError
from debate_core.plugin import ComponentBuilder, PluginCall, build_choice, checked_problems
from debate_core.records import Dataset


def check_run_needs(config: RunConfig, registry: ComponentBuilder, *, datasets: bool = True) -> list[str]:
    """Raise one ``ConfigError`` listing everything the run would fail on later. ``datasets=False``
    leaves the datasets out, for a caller that reads every split itself before anything else.

    Returns:
        The warnings: what does not stop the run but changes it (a judge it cannot reach, with
        ``on_unavailable = "peer"``), one line each.

    Raises:
        ConfigError: a line per problem, each starting with its key path.
    """
    checks = _CHECKS if datasets else tuple(c for c in _CHECKS if c is not _datasets)
    problems = [line for check in checks for line in check(config, registry)]
    warnings: list[str] = []
    for line, fatal in _judge_endpoint(config, registry):
        (problems if fatal else warnings).append(line)
    if problems:
        raise ConfigError("\n".join(problems))
    return warnings


def evaluation_scheduled(config: RunConfig) -> bool:
    """True when the run evaluates at least once (at the start, after the warm-start, every
    ``eval_every`` iterations or at the end), so that it opens ``evaluation.split``."""
    evaluation, training = config.evaluation, config.training
    if evaluation.num_problems < 1:
        return False
    iterations = sum(s.iterations for s in config.curriculum) if config.curriculum else training.num_iterations
    rl_evaluates = iterations > 0 and (evaluation.at_end or training.eval_every > 0)
    warmstart_evaluates = config.warmstart.enabled and evaluation.after_warmstart
    return evaluation.at_start or rl_evaluates or warmstart_evaluates


def splits_opened(config: RunConfig) -> list[tuple[str, ComponentChoice, tuple[str, ...]]]:
    """``(key path, dataset choice, splits)`` of every dataset the run reads: the warm-start and RL
    read ``train`` (of the first curriculum stage and of each stage with iterations), evaluations
    read ``evaluation.split`` of ``[dataset]``."""
    warmstart = config.warmstart.enabled and config.warmstart.steps > 0
    main: list[str] = []
    out: list[tuple[str, ComponentChoice, tuple[str, ...]]] = []
    if config.curriculum:
        for index, stage in enumerate(config.curriculum):
            reads = stage.iterations > 0 or (index == 0 and warmstart)
            out.append((f"curriculum[{index}].dataset", stage.dataset, ("train",) if reads else ()))
    elif warmstart or config.training.num_iterations > 0:
        main.append("train")
    if evaluation_scheduled(config) and config.evaluation.split not in main:
        main.append(config.evaluation.split)
    return [("dataset", config.dataset, tuple(main)), *out]


def check_dataset(dataset: Dataset, name: str, splits: tuple[str, ...]) -> None:
    """Every split of ``splits`` that the run will read of ``dataset``: its own ``check(splits)``
    when it has one (a dataset on the network checks what it can without downloading), its
    problems read and checked against the dataset contract otherwise.

    Raises:
        DebateError: the first split that cannot be read, as the run would meet it.
    """
    check = getattr(dataset, "check", None)
    if callable(check):
        if _takes_an_argument(check):
            check(splits)
        else:  # a dataset plugin's check() that predates splits
            check()
        return
    for split in splits:
        call = PluginCall("dataset", name, "problems", f"split '{split}'")
        checked_problems(call, partial(dataset.problems, split))


def _takes_an_argument(function: Callable[..., object]) -> bool:
    try:
        return bool(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return True


def _datasets(config: RunConfig, registry: ComponentBuilder) -> Iterator[str]:
    """Every dataset the run reads, built, and each split it will read checked
    (:func:`check_dataset`); a dataset no split of which is read is only built."""
    for path, choice, splits in splits_opened(config):
        try:
            dataset = build_choice(registry, "dataset", choice, path)
            if splits:
                check_dataset(dataset, choice.name, splits)
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
    from debate_core.backends.local.models.model_context import check_loadable, has_chat_template

    try:
        check_loadable(config.model.base_model)
    except DebateError as exc:
        yield str(exc)
        return
    if config.debate.renderer.name == "hf_chat_template" and has_chat_template(config.model.base_model) is False:
        yield (
            f"debate.renderer: hf_chat_template renders with the tokenizer's chat template, and "
            f"{config.model.base_model!r} has none (a base model's file often lacks one); use "
            'debate.renderer = "role_colon", or a model that ships its chat template'
        )


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


def _judge_endpoint(config: RunConfig, registry: ComponentBuilder) -> Iterator[tuple[str, bool]]:
    """The judge of a ``judge_mix`` reward that will be asked (a weight above 0 at the first RL
    iteration), checked by its own ``check()`` (the ``openai`` judge: something answers at its
    URL): ``(line, fatal)``, fatal when the run would stop (``on_unavailable = "stop"``), a warning
    when it would fall back to the peer reward."""
    from debate_core.rewards.judge_mix import JudgeMixReward, judge_weight

    iterations = sum(s.iterations for s in config.curriculum) if config.curriculum else config.training.num_iterations
    if config.reward.name != "judge_mix" or iterations < 1:
        return
    try:
        reward = build_choice(registry, "reward", config.reward, "reward")
    except DebateError as exc:
        yield _at("reward", exc), True
        return
    if not isinstance(reward, JudgeMixReward):
        return
    options = reward.options
    if judge_weight(options.weight, options.decay_iterations, 0) <= 0.0:
        return
    try:
        reward.check_judge()
    except DebateError as exc:
        line = _at("reward.options.judge", exc)
        if options.on_unavailable == "stop":
            yield f'{line}; the run would stop at its first debate (reward.options.on_unavailable = "stop")', True
        else:
            yield f'warning: {line}; the run would train on the peer reward alone (on_unavailable = "peer")', False


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
