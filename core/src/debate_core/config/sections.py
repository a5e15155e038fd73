"""The sections of a run file, as frozen attrs classes, and ``RunConfig`` that holds them all.

Every field has a default and a docstring (the string under it), from which
``docs/config-reference.md`` is generated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeVar, get_args

import attrs
from attrs import validators as v

from debate_core.config.choices import ComponentChoice
from debate_core.limits import exceeded_message, limit_value, short_repr

LOSS_OPTIONS: dict[str, frozenset[str]] = {
    "importance_sampling": frozenset(),
    "ppo": frozenset({"clip_low_threshold", "clip_high_threshold"}),
    "cispo": frozenset({"clip_low_threshold", "clip_high_threshold"}),
}
"""The ``loss_fn_config`` keys each policy-gradient loss of the Tinker API reads."""

EvaluationMode = Literal["direct", "debate", "runoff", "judge"]
"""The evaluation modes (``evaluation.modes``), in the order they run."""
EVALUATION_MODES: tuple[EvaluationMode, ...] = get_args(EvaluationMode)

JudgeFamily = Literal["slip", "own", "far", "bare", "both_right"]
"""A family of the judge benchmark's pairs (docs/training.md#the-judge-benchmark)."""

JUDGE_FAMILIES: tuple[JudgeFamily, ...] = ("slip", "own", "far", "bare", "both_right")
"""Every judge-benchmark family, in the order the benchmark reports them."""


WarmstartFlaw = Literal["slip", "far", "bare"]
"""A kind of wrong first answer in the warm-start's reference debates (``warmstart.flaw_kinds``),
each written as the judge-benchmark family of the same name writes its wrong solution."""


NameT = TypeVar("NameT", bound=str)
"""The names a list-typed key holds (a ``Literal`` of them, or any string)."""


def _distinct(instance: object, attribute: attrs.Attribute[tuple[NameT, ...]], value: tuple[NameT, ...]) -> None:
    repeated = sorted({x for x in value if value.count(x) > 1})
    if repeated:
        raise ValueError(f"'{attribute.name}' names {', '.join(repeated)} more than once")


def _check_loss_config(
    instance: TrainingSettings, attribute: attrs.Attribute[dict[str, float]], value: dict[str, float]
) -> None:
    allowed = LOSS_OPTIONS.get(instance.loss_fn, frozenset())
    unknown = sorted(set(value) - allowed)
    if unknown:
        accepted = ", ".join(sorted(allowed)) if allowed else "no options"
        raise ValueError(f"'loss_fn_config' has {', '.join(unknown)}, but loss {instance.loss_fn} takes {accepted}")
    low = value.get("clip_low_threshold")
    high = value.get("clip_high_threshold")
    if low is not None and high is not None and not 0 < low <= 1 <= high:
        raise ValueError(
            f"'loss_fn_config' needs 0 < clip_low_threshold <= 1 <= clip_high_threshold, got {low}, {high}"
        )


def _within_limit(name: str) -> Callable[[object, attrs.Attribute[int], int], None]:
    """A validator refusing values past the documented limit ``name`` (docs/limits.md)."""

    def check(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
        if value > limit_value(name):
            raise ValueError(f"'{attribute.name}' is {exceeded_message(name, short_repr(value))}")

    return check


@attrs.frozen(kw_only=True)
class RunSettings:
    """Identity and randomness of a run."""

    name: str = "debate"
    """A label for the run; the default run directory is ``runs/<name>``."""
    seed: int = attrs.field(default=0, validator=v.ge(0))
    """The one seed behind data order, persona assignment, weight init and sampling seeds (0 or more)."""


@attrs.frozen(kw_only=True)
class ModelSettings:
    """The policy being trained, as the backend names it."""

    base_model: str = "embedded:debate-tiny"
    """A model name the backend understands: ``embedded:<name>`` or a local directory for ``local``,
    a hosted model such as ``Qwen/Qwen3-8B`` for ``tinker``."""
    lora_rank: int = attrs.field(default=0, validator=v.ge(0))
    """LoRA rank; 0 trains every weight (``local`` only; ``tinker`` needs a rank of at least 1)."""
    train_mlp: bool = True
    """Adapt the MLP layers (LoRA)."""
    train_attn: bool = True
    """Adapt the attention layers (LoRA)."""
    train_unembed: bool = True
    """Adapt the unembedding layer (LoRA)."""
    init_from: str = ""
    """Start a new run from trained weights instead of the base model: a run directory (its latest
    checkpoint), a checkpoint manifest (``checkpoints/step_*.json``) or a backend's training state
    (``tinker://.../weights/<name>``, a local backend's state folder). The weights load as they were
    saved, LoRA (its rank and targets) or full, with a fresh optimizer; the run's resolved config records
    the backend path it resolved to (docs/training.md#starting-from-a-trained-policy). Empty: the base
    model."""


@attrs.frozen(kw_only=True)
class DebateSettings:
    """The shape of one debate and the components that run it."""

    num_agents: int = attrs.field(default=3, validator=[v.ge(1), _within_limit("agents")])
    """Agents per debate (N); all are the same policy with different personas. At most 100
    unless raised (docs/limits.md)."""
    max_rounds: int = attrs.field(default=3, validator=[v.ge(1), _within_limit("rounds")])
    """Rounds at most; a debate also ends earlier by consensus (``stop_on_consensus``). At most 100
    unless raised (docs/limits.md)."""
    stop_on_consensus: Literal["informed", "any", "never"] = "informed"
    """Which YES answers end a debate before ``max_rounds`` (docs/protocol.md#when-a-debate-ends):
    ``informed``: every agent of a round said YES after seeing the latest solution of every other
    agent; ``any``: every agent of a round said YES (the peer recipe's literal rule);
    ``never``: always play ``max_rounds``."""
    max_tokens: int = attrs.field(default=256, validator=[v.ge(1), _within_limit("tokens_per_turn")])
    """Sampled tokens per turn at most; the model's context must hold them after the prompt, which
    ``debate train``, ``run``, ``eval`` and ``preflight`` check before a model loads (docs/limits.md)."""
    temperature: float = attrs.field(default=1.0, validator=v.ge(0.0))
    """Sampling temperature unless the agent's persona sets its own."""
    show_answers: bool = False
    """State in each history entry the final answer the run's grader reads in that solution
    (``Answer: 65``), so that judging an answer does not first need finding it inside the
    solution (docs/protocol.md#what-an-agent-sees)."""
    instructions: Literal["full", "brief"] = "full"
    """Each turn's instructions (docs/protocol.md#what-an-agent-sees): ``full`` states the protocol's
    rules in a paragraph; ``brief`` states the same rules in a sentence or two, for small models
    that learn the debate in a warm-start (every prompt token is computed many times)."""
    recap: bool = False
    """End every prompt after an agent's first with two lines: the question, and each other agent's
    latest stated answer (``Stated answers: Agent 1 says 27.``, with ``show_answers``), next to
    where the agent writes (docs/protocol.md#what-an-agent-sees)."""
    coordinator: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="sequential"))
    """Turn protocol: ``sequential`` turns or ``parallel`` rounds (docs/protocol.md#turn-protocols)."""
    parser: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="xml"))
    """Output parser for the XML contract."""
    persona_set: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="default"))
    """Persona set: system prompt and temperature per agent."""
    history_policy: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="all"))
    """History policy: which earlier rounds each prompt shows."""
    renderer: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="role_colon"))
    """Renderer: messages to tokens, and the stop conditions."""
    final_answer: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="vote_winner"))
    """Answer rule: how a finished debate becomes its one answer, for evaluation, ``debate run``,
    ``debate show``, ``debate serve`` and the ``selected_answer`` reward (docs/answer-rules.md)."""


@attrs.frozen(kw_only=True)
class TrainingSettings:
    """How the policy is updated (docs/training.md#one-iteration)."""

    batch_size: int = attrs.field(default=8, validator=v.ge(1))
    """Questions (debates) per iteration."""
    num_iterations: int = attrs.field(default=10, validator=v.ge(0))
    """RL iterations (ignored when a curriculum is given: its stages' iterations add up instead)."""
    learning_rate: float = attrs.field(default=1e-4, validator=v.gt(0.0))
    """Adam learning rate of the RL updates (3e-5 is a common choice for LoRA on an 8B model)."""
    lr_schedule: Literal["constant", "linear", "cosine"] = "constant"
    """Decay over the RL iterations: ``linear`` and ``cosine`` fall from ``learning_rate`` towards 0."""
    loss_fn: Literal["importance_sampling", "ppo", "cispo"] = "importance_sampling"
    """The policy-gradient loss of the backend (Tinker's definitions; docs/training.md)."""
    loss_fn_config: dict[str, float] = attrs.field(factory=dict, validator=_check_loss_config)
    """Options of the loss, e.g. ``{clip_low_threshold = 0.8, clip_high_threshold = 1.2}`` for ppo and cispo."""
    num_substeps: int = attrs.field(default=1, validator=v.ge(1))
    """Optimizer steps per iteration; the batch's Datums are split into this many chunks."""
    adam_beta1: float = attrs.field(default=0.9, validator=[v.ge(0.0), v.lt(1.0)])
    """Adam's first-moment decay (``AdamParams.beta1``)."""
    adam_beta2: float = attrs.field(default=0.95, validator=[v.ge(0.0), v.lt(1.0)])
    """Adam's second-moment decay (``AdamParams.beta2``)."""
    adam_eps: float = attrs.field(default=1e-8, validator=v.gt(0.0))
    """Adam's denominator epsilon (``AdamParams.eps``)."""
    weight_decay: float = attrs.field(default=0.0, validator=v.ge(0.0))
    """Decoupled (AdamW) weight decay."""
    grad_clip_norm: float = attrs.field(default=0.0, validator=v.ge(0.0))
    """Clip the global gradient norm to this value (0: no clipping)."""
    save_every: int = attrs.field(default=5, validator=v.ge(0))
    """Checkpoint every this many RL iterations (and warm-start steps); 0: only at the end of each phase,
    on a stop signal and before a failure exits."""
    keep_last: int = attrs.field(default=0, validator=v.ge(0))
    """Keep only this many of the newest periodic checkpoints (``save_every``), deleting older ones with their
    backend states; the end of each phase, stops, failures and the best evaluation's checkpoint are always kept
    (0: keep every checkpoint)."""
    keep_best_by: str = "debate/cons@k"
    """The evaluation metric whose best checkpoint ``keep_last`` keeps, without its ``eval_<dataset>/`` prefix
    (higher is better; a trailing ``@k`` stands for any k: ``debate/cons@k`` is debate accuracy; empty: none is
    kept for it)."""
    eval_every: int = attrs.field(default=0, validator=v.ge(0))
    """Evaluate every this many RL iterations (0: never during training)."""
    max_debates_in_flight: int = attrs.field(default=16, validator=v.ge(1))
    """Debates sampled concurrently at most (the batches sampled ahead included)."""
    max_steps_off_policy: int = attrs.field(default=0, validator=v.ge(0))
    """Sample the next iterations' debates while the trainer updates, by weights at most this many
    updates older than those they train (docs/training.md#asynchronous-rollouts); the importance
    ratio corrects for the older sampler. Checkpoints and evaluations stay exact: the batch after
    one is sampled by the weights it saved. 0: every batch is sampled by the weights it trains."""
    advantage_normalisation: Literal["group", "global"] = "group"
    """``group`` centres within each debate; ``global`` also divides by the batch's std (docs/rewards.md#advantages)."""
    drop_uniform_groups: bool = False
    """Drop debates whose advantages are all zero (they carry no gradient)."""
    skip_zero_advantage_updates: bool = True
    """Leave out Datums whose advantages are all zero, and skip the optimizer step when none is left
    (Adam's momentum would otherwise keep moving the weights on a zero gradient)."""
    kl_penalty_coef: float = attrs.field(default=0.0, validator=v.ge(0.0))
    """Pull the policy towards the weights RL started from: each action token's advantage gains
    ``kl_penalty_coef × (d̄ − d)``, ``d`` being its sampled logprob minus the reference's and ``d̄`` the
    batch's mean (docs/training.md#kl-penalty); 0: no penalty and no reference."""
    backend_retries: int = attrs.field(default=4, validator=v.ge(1))
    """Attempts for a backend call that fails with a transient error (connection, timeout, rate limit)."""
    backend_retry_delay_s: float = attrs.field(default=1.0, validator=v.ge(0.0))
    """Wait before the first retry; doubled after each further failure (at most 30 s)."""
    max_cost: float | None = attrs.field(default=None, validator=v.optional(v.gt(0.0)))
    """Stop the run cleanly once what it has cost reaches this many US dollars, priced by ``[pricing]``
    (which it needs): after the step that reaches it, with a checkpoint, the command that continues
    the run and exit status 0 (docs/training.md#a-budget). Unset: no limit."""
    backend_timeout_s: float = attrs.field(default=600.0, validator=v.ge(0.0))
    """Give up on a backend call that has not answered after this many seconds, its retries
    included (the command stops with one line); 0: wait as long as it takes. A wait is announced
    after 10 s and every minute after that. Not applied to backends that compute in this process
    (``local``), nor to an address where nothing can answer: a port that refuses the connection or
    a host name that does not resolve fails at once."""


EvaluationForm = Literal["verdict", "check", "verify"]
"""How a warm-start reference response judges another agent (``warmstart.evaluation_form``)."""


@attrs.frozen(kw_only=True)
class WarmstartSettings:
    """Supervised warm-start on reference debates (docs/training.md#warm-start).

    Each step takes ``batch_size`` training problems that have an answer and runs a reference
    debate through the debate's own prompts (so the observations are exactly those of RL):
    first answers are right or, with probability ``flawed_share``, plausibly wrong; every later
    response judges the others, compares them, revises to the right solution and says YES only
    when every answer it has seen agrees. Then it trains ``cross_entropy`` on those responses.
    """

    enabled: bool = False
    """Run the warm-start before RL."""
    steps: int = attrs.field(default=100, validator=v.ge(0))
    """Optimizer steps of the warm-start."""
    batch_size: int = attrs.field(default=32, validator=v.ge(1))
    """Problems (reference debates) per step."""
    learning_rate: float = attrs.field(default=1e-3, validator=v.gt(0.0))
    """Adam learning rate of the warm-start (the Adam settings of ``[training]`` apply)."""
    lr_schedule: Literal["constant", "linear", "cosine"] = "cosine"
    """Decay over the warm-start steps."""
    solution_template: str = "The answer is \\boxed{{answer}}."
    """The solution text when a problem has no worked solution (``metadata["solution"]``), and the
    sentence appended to a worked solution the grader does not accept; ``{answer}`` is replaced by
    the ground-truth answer. Problems whose reference solution the grader rejects are skipped."""
    flawed_share: float = attrs.field(default=0.5, validator=[v.ge(0.0), v.le(1.0)])
    """Share of first answers in the reference debates that are plausibly wrong, for the other
    agents to judge (0: every agent is right and nobody ever disagrees)."""
    flaw_kinds: tuple[WarmstartFlaw, ...] = attrs.field(default=("slip",), validator=[v.min_len(1), _distinct])
    """The kinds of wrong first answer, one drawn at random for each (docs/training.md#warm-start):
    ``slip``, the dataset's plausible slip (for a dataset without its own, the right working with a
    wrong final answer of the same form); ``far``, the right working with a final answer 11-39
    away (integer answers; a slip otherwise); ``bare``, a wrong answer stated with no working
    (``solution_template``). Each is written as the judge benchmark's family of that name writes it."""
    bare_right_share: float = attrs.field(default=0.0, validator=[v.ge(0.0), v.le(1.0)])
    """Share of the right first answers stated with no working (``solution_template``), so that the
    judges also meet two right answers of different forms and compare them ``=`` (the judge
    benchmark's ``both_right``). Such answers are never trained on: solving is shown worked."""
    train_on_flawed: bool = False
    """Also train on the flawed first answers (off: they are only what the other agents judge)."""
    solve_share: float = attrs.field(default=1.0, validator=[v.ge(0.0), v.le(1.0)])
    """Share of the right first answers that are trained on; the others stay in the debate as what
    later turns judge (docs/training.md#a-task-with-room). Below 1 the warm-start shows judging for
    all its steps but solving in fewer examples, so the policy can judge well and still have room
    to learn to solve."""
    evaluation_form: EvaluationForm = "verdict"
    """How the reference responses judge another agent (docs/training.md#warm-start): ``verdict``
    says right, or wrong and why (``Agent 1: 27 is wrong, the answer is 28.``); ``check`` states the
    judge's own answer, then checks each stated answer against it character by character before the
    verdict (``I say 28. Agent 1 says 27: 2-2 same, 7-8 differ: wrong.``); ``verify`` checks each
    stated answer by itself, with the dataset's check (the inverse operation for arithmetic:
    ``Agent 1 says 38: 38+27: 8+7=15 5-5 same, 3+2+1=6 6-6 same: right.`` for ``65-27``), so
    the verdict does not rest on the judge's own answer."""
    revision: Literal["worked", "answer"] = "worked"
    """What a reference response of a later turn writes as its solution: ``worked``, the problem's
    worked solution; ``answer``, the right final answer alone (``solution_template``), so worked
    solving is shown only in first answers while judging is shown in every later turn."""


@attrs.frozen(kw_only=True)
class CurriculumStage:
    """One stage of a curriculum: a dataset and how many iterations to train on it."""

    dataset: ComponentChoice
    """The stage's dataset plugin and its options (its ``train`` split is used)."""
    iterations: int = attrs.field(validator=v.ge(1))
    """RL iterations on this stage."""


@attrs.frozen(kw_only=True)
class EvaluationSettings:
    """Held-out evaluation (docs/training.md#evaluation)."""

    num_problems: int = attrs.field(default=50, validator=v.ge(0))
    """Problems of ``split`` evaluated on (the first ones, the same every time)."""
    split: str = "test"
    """The dataset split evaluated on."""
    modes: tuple[EvaluationMode, ...] = ("direct", "debate")
    """``direct``: one answer per sample, no debate; ``debate``: a self-play debate per problem;
    ``runoff``: the run's debate under the ``runoff`` coordinator, its judges judging between the
    two most held of ``runoff_candidates`` blind answers where they disagree
    (docs/answer-rules.md#the-runoff); ``judge``: the judge benchmark, the policy
    judging a correct and a plausibly wrong solution of each problem in both orders
    (docs/training.md#the-judge-benchmark)."""
    judge_families: tuple[JudgeFamily, ...] = attrs.field(default=("slip",), validator=_distinct)
    """The judge benchmark's families of pairs (docs/training.md#the-judge-benchmark): ``slip``, the
    warm-start's own slips (its figures are ``judge/accuracy``, ...); ``own``, wrong answers the policy
    itself gives; ``far``, the right working with a final answer 11-39 away; ``bare``, a wrong answer
    with no working; ``both_right``, two right answers (``=`` is right). Each other family adds its
    ``judge/<family>/...`` figures and its debates to the evaluation."""
    judge_own_answers: Literal["policy", "opponent"] = "policy"
    """Whose wrong answers the ``own`` family pairs with the reference solution: the evaluated
    policy's (``policy``), or the fixed opponent's (``opponent``, ``evaluation.opponent``), which
    gives every evaluation of a run the same pairs, so that a change in the family is the judge's
    and not its answers' (docs/training.md#the-judge-benchmark)."""
    num_samples: int = attrs.field(default=0, validator=v.ge(0))
    """Direct answers per problem, the ``k`` of direct pass@k (0: the number of agents)."""
    runoff_candidates: int = attrs.field(default=6, validator=v.ge(2))
    """Blind answers per problem that mode ``runoff`` chooses among (its debate's candidates)."""
    runoff_judges: int = attrs.field(default=1, validator=v.ge(1))
    """Judges in each order of the runoff's two finalists (``2 * runoff_judges`` more agents in its
    debate, answering only where the candidates disagree)."""
    debates_per_problem: int = attrs.field(default=1, validator=v.ge(1))
    """Self-play debates per problem in ``debate`` mode, each with its own seed: more decidable
    judge votes and a steadier debate accuracy for the same problems. A problem's debate figures
    are the mean over its debates, and standard errors still take problems as the unit."""
    role_averaged: bool = False
    """Also run role-averaged debates against a fixed opponent policy (docs/training.md#evaluation)."""
    opponent: str = attrs.field(default="base", validator=v.min_len(1))
    """The fixed opponent of role-averaged debates and of ``judge_own_answers = "opponent"``:
    ``base`` (the untrained base model) or saved weights: a checkpoint manifest
    (``checkpoints/step_*.json``), a run directory (its latest checkpoint) or a backend path."""
    temperature: float | None = attrs.field(default=None, validator=v.optional(v.ge(0.0)))
    """Sampling temperature of every agent in evaluation, persona temperatures included (unset: the personas'
    own, else ``debate.temperature``; docs/protocol.md#sampling-temperature)."""
    at_start: bool = False
    """Evaluate the untrained policy before any update (a baseline for the later evaluations)."""
    at_end: bool = True
    """Evaluate after the last iteration."""
    after_warmstart: bool = True
    """Evaluate after the warm-start (when it runs)."""

    @property
    def uses_opponent(self) -> bool:
        """Whether an evaluation samples the fixed opponent (``opponent``): role-averaged debates,
        or the ``own`` family of the judge benchmark drawn from its answers."""
        judges_its_answers = (
            self.judge_own_answers == "opponent" and "judge" in self.modes and "own" in self.judge_families
        )
        return self.num_problems > 0 and (self.role_averaged or judges_its_answers)


@attrs.frozen(kw_only=True)
class LoggingSettings:
    """Where metrics and transcripts go."""

    sinks: tuple[ComponentChoice, ...] = (ComponentChoice(name="jsonl"),)
    """Extra destinations of the metrics records (RUN_DIR/metrics.jsonl is written whatever is listed):
    ``jsonl`` a copy under its ``filename`` (its default is metrics.jsonl itself: nothing more);
    ``wandb`` and ``tensorboard`` when installed."""
    num_groups_to_log: int = attrs.field(default=2, validator=v.ge(0))
    """Full transcripts of this many debates per iteration go to RUN_DIR/transcripts/."""
    progress: Literal["auto", "bar", "lines", "off"] = "auto"
    """``auto``: a live bar on a terminal, plain lines otherwise."""
    progress_interval_s: float = attrs.field(default=30.0, validator=v.gt(0.0))
    """Without a terminal (``lines``), a progress line this often: elapsed time, rate and ETA of the
    phase under way (warm-start, RL, evaluation; docs/training.md#progress)."""


def _check_prices(instance: PricingSettings, attribute: attrs.Attribute[float | None], value: float | None) -> None:
    """A table prices every kind of token or none: a kind left out would silently cost nothing."""
    given = [f.name for f in attrs.fields(PricingSettings) if getattr(instance, f.name) is not None]
    if value is None and given:
        raise ValueError(
            f"'{attribute.name}' is not given: a [pricing] table gives all three prices (prompt_tokens, "
            "sampled_tokens, trained_tokens; 0 for a kind that costs nothing)"
        )
    if value is not None and value < 0:
        raise ValueError(f"'{attribute.name}' must be >= 0 (US dollars per million tokens), got {value}")


@attrs.frozen(kw_only=True)
class PricingSettings:
    """What the backend charges, in US dollars per million tokens of each kind; gives each step,
    evaluation and the run its cost (docs/training.md#tokens-and-cost). Give all three or none
    (none: tokens are counted, nothing is priced)."""

    prompt_tokens: float | None = attrs.field(default=None, validator=_check_prices)
    """Per million prompt tokens of sampling requests (prefill), counted once per request."""
    sampled_tokens: float | None = attrs.field(default=None, validator=_check_prices)
    """Per million tokens sampled."""
    trained_tokens: float | None = attrs.field(default=None, validator=_check_prices)
    """Per million tokens trained (every input token of a Datum sent to ``forward_backward``)."""

    @property
    def priced(self) -> bool:
        return self.prompt_tokens is not None


def _check_budget(instance: RunConfig, attribute: attrs.Attribute[PricingSettings], value: PricingSettings) -> None:
    if instance.training.max_cost is not None and not value.priced:
        raise ValueError(
            "'training.max_cost' needs a [pricing] table to count what the run costs (docs/training.md#tokens-and-cost)"
        )


@attrs.frozen(kw_only=True)
class AlarmSettings:
    """Collapse alarms of RL (docs/training.md#collapse-alarms): a line naming the failure mode when
    a label-free figure of the training debates, averaged over the last ``window`` iterations,
    passes its threshold. A threshold of 1 for a ``max_`` (0 for a ``min_``) turns its alarm off."""

    enabled: bool = True
    """Check the alarms after every RL iteration (their figures are recorded either way)."""
    window: int = attrs.field(default=3, validator=v.ge(1))
    """Iterations whose figures are averaged before they are compared with a threshold."""
    repeat_every: int = attrs.field(default=0, validator=v.ge(0))
    """Say an alarm that keeps tripping again after this many iterations (0: once per run)."""
    max_degenerate_consensus: float = attrs.field(default=0.9, validator=[v.ge(0.0), v.le(1.0)])
    """Degenerate consensus: above this share of debates whose agents all agree from round 1 to the end."""
    max_no_signal: float = attrs.field(default=0.9, validator=[v.ge(0.0), v.le(1.0)])
    """No signal: above this share of debates whose rewards do not vary across the agents."""
    max_answer_diversity: float = attrs.field(default=0.9, validator=[v.ge(0.0), v.le(1.0)])
    """Random noise: answer diversity (distinct final answers per agent) above this."""
    max_unreadable_answers: float = attrs.field(default=0.5, validator=[v.ge(0.0), v.le(1.0)])
    """Format collapse: above this share of agents without a readable final answer..."""
    min_comparison_rate: float = attrs.field(default=0.5, validator=[v.ge(0.0), v.le(1.0)])
    """... or a comparison rate below this."""
    max_top_answer_share: float = attrs.field(default=0.5, validator=[v.ge(0.0), v.le(1.0)])
    """Constant answer: the batch's most common final answer holding above this share of all answers."""


@attrs.frozen(kw_only=True)
class RunConfig:
    """A whole run file. Every section and key has a default, so an empty file is valid."""

    run: RunSettings = attrs.field(factory=RunSettings)
    backend: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="local"))
    """Training backend: ``local`` (torch, this machine) or ``tinker`` (the Tinker service)."""
    model: ModelSettings = attrs.field(factory=ModelSettings)
    debate: DebateSettings = attrs.field(factory=DebateSettings)
    reward: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="win_rate"))
    """Reward function scoring each finished debate."""
    dataset: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="arithmetic"))
    """Questions for training and evaluation."""
    grader: ComponentChoice = attrs.field(factory=lambda: ComponentChoice(name="boxed"))
    """Checks solutions against the dataset's answers (``none`` for open-ended prompts)."""
    training: TrainingSettings = attrs.field(factory=TrainingSettings)
    warmstart: WarmstartSettings = attrs.field(factory=WarmstartSettings)
    curriculum: tuple[CurriculumStage, ...] = ()
    """Dataset stages trained in order; empty: train on ``dataset`` for ``training.num_iterations``."""
    evaluation: EvaluationSettings = attrs.field(factory=EvaluationSettings)
    logging: LoggingSettings = attrs.field(factory=LoggingSettings)
    alarms: AlarmSettings = attrs.field(factory=AlarmSettings)
    pricing: PricingSettings = attrs.field(factory=PricingSettings, validator=_check_budget)
