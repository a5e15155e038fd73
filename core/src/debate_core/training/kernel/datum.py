"""Agent trajectories to ``tinker.types.Datum``s (docs/training.md#from-trajectories-to-datums).

Each trajectory (one agent's turns in one debate) is walked in order, keeping a running
full sequence ``x``:

* if ``x`` is empty, the whole observation is appended;
* if ``x`` is a prefix of the new observation, only the observation's suffix (the delta)
  is appended, so a whole debate whose prompts extend each other is one sequence;
* otherwise the current sequence is finished and a new one starts from this observation
  (history truncation, clipped fields or round-dependent instructions make this happen).

Observation tokens get sampler logprob 0, advantage 0 and mask 0; action tokens get the
sampler's logprobs, the advantage of the stream their section belongs to, and mask 1. The
sequence is then shifted to next-token form (inputs ``x[:-1]``, targets ``x[1:]``, every
per-token array sliced to match). The mask is not sent to the backend (its built-in losses do
not read it); it stays beside the Datum for the action-token metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import attrs
from tinker import types

from debate_core.records import AgentTrajectory, Transition


class TokenAdvantages(Protocol):
    """Per-token advantages of one turn's action (``rewards.advantages.DebateAdvantages``)."""

    def token_advantages(self, agent: int, step: int, action_sections: Sequence[str | None]) -> list[float]: ...


@attrs.frozen
class TokenSequence:
    """One running full sequence ``x`` with its token-aligned arrays, before the shift."""

    tokens: tuple[int, ...]
    logprobs: tuple[float, ...]
    advantages: tuple[float, ...]
    mask: tuple[float, ...]


@attrs.frozen
class AssembledDatum:
    """A Datum for the backend and the action mask that stays local.

    ``mask[i]`` is 1.0 when ``target_tokens[i]`` is an action token. ``agent`` and
    ``debate_index`` say where it came from (for metrics and error messages).
    """

    datum: types.Datum
    mask: tuple[float, ...]
    agent: int = 0
    debate_index: int = 0

    @property
    def num_tokens(self) -> int:
        """Length of the model input (= number of targets)."""
        return len(self.mask)

    @property
    def num_action_tokens(self) -> int:
        """Targets that are action tokens."""
        return int(sum(self.mask))

    def has_signal(self) -> bool:
        """False when every advantage is zero: the policy-gradient losses give no gradient."""
        advantages = self.datum.loss_fn_inputs.get("advantages")
        return advantages is None or any(a != 0.0 for a in advantages.data)


def is_prefix(prefix: Sequence[int], sequence: Sequence[int]) -> bool:
    """True when ``sequence`` starts with ``prefix`` (equal sequences included)."""
    return len(prefix) <= len(sequence) and tuple(sequence[: len(prefix)]) == tuple(prefix)


class _Builder:
    """The running sequence and its arrays."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.logprobs: list[float] = []
        self.advantages: list[float] = []
        self.mask: list[float] = []

    def add_observation(self, tokens: Sequence[int]) -> None:
        self.tokens.extend(tokens)
        self.logprobs.extend([0.0] * len(tokens))
        self.advantages.extend([0.0] * len(tokens))
        self.mask.extend([0.0] * len(tokens))

    def add_action(self, tokens: Sequence[int], logprobs: Sequence[float], advantages: Sequence[float]) -> None:
        self.tokens.extend(tokens)
        self.logprobs.extend(float(x) for x in logprobs)
        self.advantages.extend(float(x) for x in advantages)
        self.mask.extend([1.0] * len(tokens))

    def finish(self) -> TokenSequence:
        return TokenSequence(tuple(self.tokens), tuple(self.logprobs), tuple(self.advantages), tuple(self.mask))


def build_sequences(
    transitions: Sequence[Transition], advantages_of: Callable[[Transition], Sequence[float]]
) -> list[TokenSequence]:
    """The full sequences of one trajectory, split where an observation does not extend the context.

    ``advantages_of(transition)`` gives one advantage per action token.

    Raises:
        ValueError: a transition whose logprobs or advantages do not match its action's length.
    """
    sequences: list[TokenSequence] = []
    current = _Builder()
    for transition in transitions:
        action = transition.action
        if len(transition.logprobs) != len(action):
            raise ValueError(
                f"turn {transition.turn_index}: {len(action)} action tokens but {len(transition.logprobs)} logprobs"
            )
        advantages = list(advantages_of(transition))
        if len(advantages) != len(action):
            raise ValueError(
                f"turn {transition.turn_index}: {len(action)} action tokens but {len(advantages)} advantages"
            )
        observation = transition.observation
        if not current.tokens:
            delta: Sequence[int] = observation
        elif is_prefix(current.tokens, observation):
            delta = observation[len(current.tokens) :]
        else:
            sequences.append(current.finish())
            current = _Builder()
            delta = observation
        current.add_observation(delta)
        current.add_action(action, transition.logprobs, advantages)
    if current.tokens:
        sequences.append(current.finish())
    return sequences


def shift_to_datum(
    sequence: TokenSequence, *, loss: str = "policy_gradient", agent: int = 0, debate_index: int = 0
) -> AssembledDatum | None:
    """Next-token form: inputs ``x[:-1]``, targets ``x[1:]``, arrays without their first entry.

    ``loss="policy_gradient"`` sends ``target_tokens``, ``logprobs`` and ``advantages``
    (importance_sampling, ppo, cispo); ``loss="cross_entropy"`` sends ``target_tokens`` and
    ``weights``, the sequence's per-token values (``supervised_datums`` puts each action
    token's training weight there, 0 on observations). ``None`` for sequences shorter than 2.
    """
    if len(sequence.tokens) < 2:
        return None
    inputs = list(sequence.tokens[:-1])
    targets = list(sequence.tokens[1:])
    mask = sequence.mask[1:]
    if loss == "cross_entropy":
        weights = list(sequence.advantages[1:])
        loss_fn_inputs: dict[str, list[int] | list[float]] = {"target_tokens": targets, "weights": weights}
    elif loss == "policy_gradient":
        loss_fn_inputs = {
            "target_tokens": targets,
            "logprobs": list(sequence.logprobs[1:]),
            "advantages": list(sequence.advantages[1:]),
        }
    else:
        raise ValueError(f"unknown datum kind {loss!r}: expected 'policy_gradient' or 'cross_entropy'")
    datum = types.Datum(
        model_input=types.ModelInput.from_ints(inputs),
        loss_fn_inputs=loss_fn_inputs,  # type: ignore[arg-type]
    )
    return AssembledDatum(datum=datum, mask=mask, agent=agent, debate_index=debate_index)


def trajectory_datums(
    trajectory: AgentTrajectory,
    advantages: TokenAdvantages,
    *,
    debate_index: int = 0,
) -> list[AssembledDatum]:
    """The policy-gradient Datums of one agent's trajectory, advantages per token from its streams."""

    def advantages_of(transition: Transition) -> list[float]:
        return advantages.token_advantages(trajectory.agent, transition.step, transition.action_sections)

    sequences = build_sequences(trajectory.transitions, advantages_of)
    out = (shift_to_datum(s, agent=trajectory.agent, debate_index=debate_index) for s in sequences)
    return [d for d in out if d is not None]


def supervised_datums(
    trajectory: AgentTrajectory,
    *,
    debate_index: int = 0,
    weight_of: Callable[[Transition], float] = lambda transition: 1.0,
) -> list[AssembledDatum]:
    """Cross-entropy Datums of one trajectory: ``weight_of(transition)`` on each action token
    (1 unless told otherwise), 0 on observations."""
    sequences = build_sequences(trajectory.transitions, lambda t: [weight_of(t)] * len(t.action))
    out = (
        shift_to_datum(s, loss="cross_entropy", agent=trajectory.agent, debate_index=debate_index) for s in sequences
    )
    return [d for d in out if d is not None]
