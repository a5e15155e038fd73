"""Tokens and dollars (docs/training.md#tokens-and-cost): what each step and evaluation asked the
backend to compute, priced by the run file's ``[pricing]``, what the run has cost so far and what
it will cost by its end at the rate of the steps done, and whether ``training.max_cost`` is spent.

The session's ``TokenMeter`` counts every token; a ``CostTracker`` reads it at the end of each step
(and around each evaluation) and keeps the run's ``CostLedger``, which every checkpoint carries so
that a resumed run goes on counting from what its checkpoint had spent.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from debate_core.config import PricingSettings
from debate_core.records.json_values import JsonMapping, JsonObject
from debate_core.records.metrics import MetricValue
from debate_core.runtime.token_meter import TokenCount, TokenMeter
from debate_core.stats import dollars


def price(tokens: TokenCount, pricing: PricingSettings) -> float:
    """US dollars of ``tokens`` at ``pricing`` (per million tokens of each kind); 0 unpriced."""
    if not pricing.priced:
        return 0.0
    return (
        tokens.prompt_sampled * (pricing.prompt_tokens or 0.0)
        + tokens.sampled * (pricing.sampled_tokens or 0.0)
        + tokens.trained * (pricing.trained_tokens or 0.0)
    ) / 1e6


@attrs.define
class CostLedger:
    """What the run has used up to its last finished step: tokens of each kind, dollars, and the
    steps and dollars of each phase (``warmstart``, ``rl``) that the projection reads."""

    tokens: TokenCount = attrs.field(factory=TokenCount)
    usd: float = 0.0
    phase_steps: dict[str, int] = attrs.field(factory=dict)
    phase_usd: dict[str, float] = attrs.field(factory=dict)

    def record(self, phase: str, tokens: TokenCount, usd: float) -> None:
        self.tokens = self.tokens + tokens
        self.usd += usd
        self.phase_steps[phase] = self.phase_steps.get(phase, 0) + 1
        self.phase_usd[phase] = self.phase_usd.get(phase, 0.0) + usd

    def projected(self, remaining: Mapping[str, int]) -> float | None:
        """The run's cost by its end: so far, plus each phase's remaining steps at the mean cost of
        its steps done (their evaluations included); ``None`` while a phase with steps left has none done."""
        total = self.usd
        for phase, steps in remaining.items():
            if steps <= 0:
                continue
            done = self.phase_steps.get(phase, 0)
            if not done:
                return None
            total += steps * self.phase_usd.get(phase, 0.0) / done
        return total

    def to_json(self) -> JsonObject:
        return {
            "tokens": self.tokens.to_json(),
            "usd": self.usd,
            "phase_steps": dict(self.phase_steps),
            "phase_usd": dict(self.phase_usd),
        }

    @classmethod
    def from_json(cls, raw: JsonMapping) -> CostLedger:
        """The ledger a checkpoint carried (``{}``, from a checkpoint written before costs were
        counted: nothing spent)."""
        return cls(
            TokenCount.from_json(raw.get("tokens") or {}),
            float(raw.get("usd", 0.0)),
            {str(k): int(v) for k, v in (raw.get("phase_steps") or {}).items()},
            {str(k): float(v) for k, v in (raw.get("phase_usd") or {}).items()},
        )


@attrs.define
class CostTracker:
    """Reads the session's meter step by step into the run's ledger and metrics records."""

    meter: TokenMeter
    pricing: PricingSettings
    max_cost: float | None = None
    ledger: CostLedger = attrs.field(factory=CostLedger)
    _mark: TokenCount = attrs.field(init=False)
    """The meter's reading when the step under way began."""
    _evaluations: TokenCount = attrs.field(factory=TokenCount)
    """Tokens of the evaluations recorded with the step under way."""
    _evaluation_mark: TokenCount | None = None
    _remaining: dict[str, int] = attrs.field(factory=dict)
    """The steps each phase had left after the last finished step (for the projection)."""

    def __attrs_post_init__(self) -> None:
        self._mark = self.meter.reading()

    def resume(self, ledger: CostLedger) -> None:
        """Go on counting from what a checkpoint had spent."""
        self.ledger = ledger

    def begin_evaluation(self) -> None:
        self._evaluation_mark = self.meter.reading()

    def end_evaluation(self) -> TokenCount:
        """The tokens of the evaluation just run (recorded with the step under way)."""
        spent = self.meter.reading() - (self._evaluation_mark or self.meter.reading())
        self._evaluation_mark = None
        self._evaluations = self._evaluations + spent
        return spent

    def step_done(self, phase: str, remaining: Mapping[str, int]) -> dict[str, MetricValue]:
        """The step's token and cost metrics (its evaluations' apart and included in ``cost/step``),
        recorded in the ledger; ``remaining`` steps per phase project the run's cost."""
        now = self.meter.reading()
        spent, evaluations = now - self._mark, self._evaluations
        self._mark, self._evaluations, self._remaining = now, TokenCount(), dict(remaining)
        own = spent - evaluations
        metrics: dict[str, MetricValue] = {
            "tokens/prompt_sampled": own.prompt_sampled,
            "tokens/sampled": own.sampled,
            "tokens/trained": own.trained,
        }
        if evaluations != TokenCount():
            metrics["tokens/eval_prompt_sampled"] = evaluations.prompt_sampled
            metrics["tokens/eval_sampled"] = evaluations.sampled
        usd = price(spent, self.pricing)
        self.ledger.record(phase, spent, usd)
        if self.pricing.priced:
            metrics["cost/step"] = usd
            if evaluations != TokenCount():
                metrics["cost/eval"] = price(evaluations, self.pricing)
            metrics["cost/total"] = self.ledger.usd
            projected = self.ledger.projected(remaining)
            if projected is not None:
                metrics["cost/projected"] = projected
        return metrics

    @property
    def budget_spent(self) -> bool:
        """True once the run's cost has reached ``training.max_cost``."""
        return self.max_cost is not None and self.pricing.priced and self.ledger.usd >= self.max_cost

    def budget_reason(self) -> str:
        """One line: what the run has cost against its budget."""
        return (
            f"the run has cost {dollars(self.ledger.usd)}, reaching training.max_cost = {dollars(self.max_cost or 0.0)}"
        )

    def step_note(self) -> str:
        """The step under way's cost so far, and the run's, for its progress line ('' unpriced)."""
        if not self.pricing.priced:
            return ""
        step = price(self.meter.reading() - self._mark - self._evaluations, self.pricing)
        return f"cost {dollars(step)}  {self.run_note()}"

    def evaluation_note(self, spent: TokenCount) -> str:
        """An evaluation's cost for its progress line ('' unpriced)."""
        return f"cost {dollars(price(spent, self.pricing))}" if self.pricing.priced else ""

    def run_note(self) -> str:
        """``run $1.23 of ~$4.56 projected``: the run's cost so far (its finished steps and what the
        step under way has spent) and its projection once known ('' unpriced)."""
        if not self.pricing.priced:
            return ""
        so_far = self.ledger.usd + price(self.meter.reading() - self._mark, self.pricing)
        projected = self.ledger.projected(self._remaining) if self._remaining else None
        ahead = f" of ~{dollars(max(projected, so_far))} projected" if projected is not None else ""
        budget = f" (budget {dollars(self.max_cost)})" if self.max_cost is not None else ""
        return f"run {dollars(so_far)}{ahead}{budget}"
