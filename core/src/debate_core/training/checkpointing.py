"""The run's checkpoints: their names, the scheduled ones, and the one written on the way out
of a failure or a stop (docs/training.md#checkpoints-stops-faults)."""

from __future__ import annotations

import time

import attrs

from debate_core.rundir.evaluation_records import best_steps, read_evaluation_records
from debate_core.runtime.checkpoint_format import Checkpoint, DataPosition
from debate_core.runtime.manifests import capture_rng_state, prune_checkpoints, write_checkpoint
from debate_core.runtime.retries import BackendTimeout
from debate_core.runtime.session import SAMPLER_SUFFIX
from debate_core.training.run_context import RunContext, RunPosition


def due(count: int, every: int) -> bool:
    """True when a thing done every ``every`` counts (0: never) is due at ``count``."""
    return every > 0 and count % every == 0


@attrs.define
class Checkpointer:
    """Saves the training state and the sampler weights of ``position``, then the manifest."""

    context: RunContext
    position: RunPosition
    _names_used: set[str] = attrs.field(factory=set)
    """Checkpoint names saved (or tried) on this training client: a retry after a half-written
    checkpoint takes a fresh name, so the backend never sees one name twice."""
    _warned_best: bool = False
    """True once the run said that ``training.keep_best_by`` names no evaluation metric."""

    async def save(self, reason: str, *, keep: bool, periodic: bool = False) -> None:
        """Checkpoint the current step. ``keep``: the last checkpoint of the run, or one written
        on a stop or a failure (it never expires on the backend); the others live
        ``session.checkpoint_ttl_seconds``. A ``periodic`` one may be pruned later
        (``training.keep_last``); phase ends, stops and failures are kept."""
        started = time.perf_counter()
        session = self.context.session
        ttl = None if keep else session.checkpoint_ttl_seconds
        saved = await session.save_checkpoint(self._fresh_name(), ttl)
        position = self.position
        checkpoint = Checkpoint(
            step=position.step,
            warmstart_steps=position.warmstart_steps,
            iteration=position.iteration,
            backend_state=saved.state,
            data=self._data_position(),
            seed=self.context.config.run.seed,
            rng=capture_rng_state(),
            reason=reason,
            sampler_weights=saved.sampler,
            ttl_seconds=ttl,
            periodic=periodic,
            costs=self.context.costs.ledger.to_json(),
        )
        manifest = write_checkpoint(self.context.run_dir.checkpoints, checkpoint)
        position.last_checkpoint = position.step
        remote = f" (backend state {saved.state})" if "://" in saved.state else ""  # a local one lies beside it
        self.context.progress.message(
            f"checkpoint step {position.step} ({reason}) in {time.perf_counter() - started:.1f}s: {manifest}{remote}"
        )
        self._prune()

    async def before_exit(self, error: BaseException) -> None:
        """Checkpoint when the weights are those of a finished step, then let the error go."""
        position, progress = self.position, self.context.progress
        where = position.last_checkpoint_text
        if position.uncommitted:
            progress.message(
                f"debate: step {position.step + 1} failed before it was recorded; last checkpoint: {where}"
            )
            return
        # nothing trained since the last checkpoint, or nothing at all (a run that fails before its
        # first step leaves nothing behind)
        if position.last_checkpoint == position.step or position.step == 0:
            return
        if isinstance(error, BackendTimeout):
            progress.message(f"debate: the backend does not answer: no checkpoint attempted; last checkpoint: {where}")
            return
        try:
            await self.save(f"failure: {type(error).__name__}", keep=True)
        except Exception as exc:  # the backend, or the disk, may be the thing that failed: the first error goes on
            progress.message(f"debate: could not checkpoint before exiting: {exc}; last checkpoint: {where}")

    def _data_position(self) -> DataPosition:
        """The curriculum stage and the iteration within it where the run goes on."""
        components = self.context.components
        if self.position.iteration < components.total_iterations:
            return DataPosition(*components.stage_at(self.position.iteration))
        last_stage = components.stages[-1].iterations if components.stages else 0
        return DataPosition(len(components.stages) - 1, last_stage)

    def _prune(self) -> None:
        """Drop periodic checkpoints past ``training.keep_last``, keeping the best by
        ``training.keep_best_by`` (said once when that names no evaluation metric)."""
        training, run_dir, progress = self.context.config.training, self.context.run_dir, self.context.progress
        best = best_steps(run_dir.evaluations, training.keep_best_by)
        unknown = training.keep_last and training.keep_best_by and not best and not self._warned_best
        if unknown and read_evaluation_records(run_dir.evaluations):
            self._warned_best = True
            progress.message(
                f"warning: training.keep_best_by = {training.keep_best_by!r} names no metric of the evaluations "
                "(e.g. 'debate/cons@k', 'direct/correct'); no best checkpoint is kept"
            )
        for pruned in prune_checkpoints(run_dir.checkpoints, training.keep_last, best, run_dir.backend_states):
            progress.message(f"checkpoint step {pruned.step} pruned (keep_last = {training.keep_last})")

    def _fresh_name(self) -> str:
        """``step_NNNNNN``, or ``step_NNNNNN-2``, ``-3``, ... when that name was tried before: on
        this training client, or by an earlier process whose save a crash left without a manifest
        (a backend that keeps its states in ``RUN_DIR/checkpoints/backend``)."""
        base = name = f"step_{self.position.step:06d}"
        attempt = 1
        leftovers = self.context.run_dir.backend_states
        while name in self._names_used or (leftovers / name).exists() or (leftovers / (name + SAMPLER_SUFFIX)).exists():
            attempt += 1
            name = f"{base}-{attempt}"
        self._names_used.add(name)
        return name
