"""Starting a run, or resuming one, and training it: the run directory's lock, the resume point
or the fresh run's files, the backend session, the components, then the loop
(``training.loop``)."""

from __future__ import annotations

import contextlib
import tomllib
from collections.abc import Callable

import attrs

from debate_core.backends.contract import SupportsEnvironment
from debate_core.config import RunConfig, resolved_config_dict, structure, write_resolved_config
from debate_core.errors import DebateError
from debate_core.plugin import Registry, installed_distributions
from debate_core.records import Tokenizer
from debate_core.records.json_values import JsonObject
from debate_core.rundir.directory import RunDirectory
from debate_core.rundir.environment import record_environment
from debate_core.rundir.lock import run_directory_lock
from debate_core.rundir.lost_history import LostHistory, lost_transcripts, transcripts_message
from debate_core.rundir.resume import choose_resume_point
from debate_core.runtime.checkpoint_format import Checkpoint
from debate_core.runtime.manifests import restore_rng_state
from debate_core.runtime.retries import retry_policy
from debate_core.runtime.session import BackendSession, open_session_async
from debate_core.training.loop import RunOutcome, Trainer
from debate_core.training.policy_weights import (
    PolicyWeights,
    check_not_expired,
    opponent_client,
    resolve_init_from,
    resolve_opponent,
)
from debate_core.training.progress import Progress
from debate_core.training.run_components import RunComponents, build_run_components, read_every_split
from debate_core.training.run_context import RunContext
from debate_core.training.signals import StopRequest, stop_on_signals
from debate_core.training.sinks import open_sinks

ComponentsFactory = Callable[[RunConfig, Registry, Tokenizer], RunComponents]


@attrs.frozen
class RunRequest:
    """What ``run_training`` was asked to do: the run's config and registry, its directory, and
    where its progress lines and stop requests go."""

    config: RunConfig
    registry: Registry
    run_dir: RunDirectory
    progress: Progress
    stop: StopRequest
    components_factory: ComponentsFactory
    handle_signals: bool
    resumed: bool = False
    """``debate train --resume``: the metric sinks are told where the run goes on from."""


async def run_training(
    config: RunConfig,
    registry: Registry,
    run_dir: RunDirectory,
    *,
    resume: bool = False,
    progress: Progress | None = None,
    stop: StopRequest | None = None,
    components_factory: ComponentsFactory = build_run_components,
    handle_signals: bool = True,
) -> RunOutcome:
    """Start a run in ``run_dir`` (or continue the one there with ``resume=True``) and train.

    The run directory's lock is held throughout (``rundir.lock``): a second writer is refused.

    Raises:
        RunLockedError: another live process writes ``run_dir``; the message names it.
        ComponentFailure: a plugin raised; the message names it and the debate, and the run
            was checkpointed first (when its weights were those of a finished step).
        BackendError: the backend failed for good (after retries).
        OutputWriteError: a file of the run could not be written (a full disk); the message names
            it, and the run was checkpointed first as for a ComponentFailure, where it could be.
    """
    progress = progress or Progress(config.logging.progress, line_interval_s=config.logging.progress_interval_s)
    # the fixed opponent is resolved once: a wrong checkpoint fails before any work, and a run
    # directory named as the opponent cannot change it halfway
    fixed_opponent = resolve_opponent(config.evaluation.opponent) if config.evaluation.uses_opponent else None
    with run_directory_lock(run_dir.root, progress.message):
        if resume:
            start = resume_point(config, registry, run_dir, progress)
        else:
            config, start = fresh_start(config, registry, run_dir, progress), None
        run_dir.create()
        lost = lost_history(config, run_dir, start, progress)
        session = await open_session_async(
            config,
            registry,
            state_path=start.backend_state if start else (config.model.init_from or None),
            with_optimizer=start is not None,
            state_directory=run_dir.backend_states,
            retry=retry_policy(config.training),
        )
        request = RunRequest(
            config, registry, run_dir, progress, stop or StopRequest(), components_factory, handle_signals, resume
        )
        return await train_on_session(request, session, start, lost, fixed_opponent)


async def train_on_session(
    request: RunRequest,
    session: BackendSession,
    start: Checkpoint | None,
    lost: LostHistory,
    fixed_opponent: PolicyWeights | None,
) -> RunOutcome:
    """Build the components and the metric sinks, train, and close the session with the run's
    status (``success``, ``interrupted`` or ``errored``)."""
    config = request.config
    status = "errored"
    try:
        service = session.service_client
        backend_facts = service.environment() if isinstance(service, SupportsEnvironment) else {}
        record_environment(request.run_dir.environment_path, start.step if start else 0, backend_facts)
        opponent = opponent_client(session, fixed_opponent) if config.evaluation.uses_opponent else None
        if start is not None:
            restore_rng_state(start.rng)
        components = request.components_factory(config, request.registry, session.tokenizer)
        read_every_split(components, config)
        sink = open_sinks(config.logging, request.registry, request.run_dir)
        context = RunContext(config, components, session, request.run_dir, request.progress, request.stop)
        trainer = Trainer(context, sink, opponent=opponent, lost_history=lost)
        try:
            if request.resumed:
                for line in sink.resume(start.step if start is not None else 0):
                    request.progress.message(line)
            outcome = await _run_trainer(trainer, start, request)
        finally:
            sink.close()
        status = "interrupted" if outcome.stopped_by else "success"
        return outcome
    finally:
        await session.close(status)


async def _run_trainer(trainer: Trainer, start: Checkpoint | None, request: RunRequest) -> RunOutcome:
    """``trainer.run``, with SIGINT and SIGTERM turned into stop requests when asked."""
    if not request.handle_signals:
        return await trainer.run(start)
    with stop_on_signals(request.stop):
        return await trainer.run(start)


def resume_point(config: RunConfig, registry: Registry, run_dir: RunDirectory, progress: Progress) -> Checkpoint | None:
    """The checkpoint a resume starts from (None: none yet, start over), with what it found said,
    and the config written beside the run's when it differs."""
    point = choose_resume_point(run_dir, config)
    for line in point.messages():
        progress.message(line)
    start = point.checkpoint
    if start is not None:
        check_not_expired(start, f"--resume {run_dir.root}")
    differences = resume_differences(run_dir, resolved_config_dict(config, registry), registry)
    if differences:
        progress.message("debate: resuming with a config that differs from the run's at: " + ", ".join(differences))
        write_resolved_config(
            config, run_dir.root / f"config.resumed_step_{start.step if start else 0:06d}.toml", registry
        )
    progress.message(
        f"resuming {run_dir.root} from step {start.step}"
        if start
        else f"resuming {run_dir.root}: no checkpoint yet, starting over"
    )
    return start


def fresh_start(config: RunConfig, registry: Registry, run_dir: RunDirectory, progress: Progress) -> RunConfig:
    """The config of a new run (``model.init_from`` resolved), written with the installed plugins."""
    config = resolve_init_from(config)
    if config.model.init_from:
        progress.message(f"starting from the trained weights {config.model.init_from}")
    write_resolved_config(config, run_dir.config_path, registry)
    run_dir.write_plugins(installed_distributions())
    return config


def lost_history(config: RunConfig, run_dir: RunDirectory, start: Checkpoint | None, progress: Progress) -> LostHistory:
    """Metrics records and transcripts of the steps up to ``start`` that are gone (said aloud):
    the metrics file is repaired to end at ``start``."""
    repair = run_dir.repair_metrics(start.step if start else 0)
    for line in repair.messages():
        progress.message(line)
    gone_transcripts: tuple[int, ...] = ()
    if start is not None and config.logging.num_groups_to_log > 0:
        gone_transcripts = lost_transcripts(run_dir, start.warmstart_steps + 1, start.step)
        if gone_transcripts:
            progress.message(transcripts_message(run_dir, gone_transcripts, start.step))
    return LostHistory(repair.missing, gone_transcripts)


def config_differences(old: JsonObject, new: JsonObject, prefix: str = "") -> list[str]:
    """Key paths whose values differ between two resolved configs."""
    out: list[str] = []
    for key in sorted(set(old) | set(new)):
        path = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(config_differences(a, b, path + "."))
        elif a != b:
            out.append(path)
    return out


def resume_differences(run_dir: RunDirectory, new: JsonObject, registry: Registry | None = None) -> list[str]:
    """Key paths where ``new`` differs from the run's resolved config (with ``registry``, a key
    that config predates read as its default, so a setting added since is no difference); none
    when that file cannot be read."""
    try:
        old = tomllib.loads(run_dir.config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if registry is not None:
        with contextlib.suppress(DebateError):  # a key it no longer knows: compared as written
            old = resolved_config_dict(structure(old, RunConfig), registry)
    return config_differences(old, new)
