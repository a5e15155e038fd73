"""The records of one debate: parsed responses, comparisons, turns and the whole debate.

They are frozen and hold plain data only, so that the transcript format is their cattrs
unstructuring and reward plugins can be tested without any model.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import Literal

import attrs

ComparisonOp = Literal[">", "="]
"""``>``: the first agent's response is better; ``=``: the two are equally good."""

ConsensusRule = Literal["informed", "any", "never"]
"""When a round of YES ends a debate (docs/protocol.md#when-a-debate-ends):

* ``informed``: every agent of the round said YES *and* had seen the latest solution of every
  other agent when it answered (``Turn.informed``);
* ``any``: every agent of the round said YES (the literal rule of the peer recipe);
* ``never``: consensus never ends a debate; it always runs ``max_rounds``.
"""

CONSENSUS_RULES: tuple[ConsensusRule, ...] = ("informed", "any", "never")
"""Every consensus rule, as ``debate.stop_on_consensus`` and transcripts name them."""


@attrs.frozen
class Comparison:
    """One comparison line: ``Agent a > Agent b`` or ``Agent a = Agent b`` (ids unchecked)."""

    a: int
    op: ComparisonOp
    b: int


@attrs.frozen
class AuthoredComparison:
    """A valid comparison with its author and the turn it was made in (a vote)."""

    author: int
    a: int
    op: ComparisonOp
    b: int
    round: int
    turn_index: int


@attrs.frozen
class SectionSpan:
    """Character span ``[start, end)`` of one section's content inside the raw text.

    The span covers what is between the opening and closing tag; the tags themselves
    and any text outside the five sections belong to no span.
    """

    name: str
    start: int
    end: int


@attrs.frozen
class ParseError:
    """Why a response does not follow the output contract.

    ``code`` is one of ``empty``, ``missing_tag``, ``out_of_order``, ``unclosed_tag``,
    ``bad_consensus``, ``turn_failed`` (the agent failed before answering); ``message``
    is a sentence a person can act on.
    """

    code: str
    message: str


@attrs.frozen
class ParsedResponse:
    """One response parsed against the output contract.

    When ``error`` is set the response breaks the contract; the text fields then hold
    whatever could be recovered and must not be used for rewards.
    ``comparisons`` are every line that matched the comparison pattern (ids unchecked);
    ``invalid_comparison_lines`` counts non-empty lines of the comparison section that
    are neither ``N/A`` nor a comparison.
    """

    solution: str = ""
    evaluation: str = ""
    comparison: str = ""
    consensus: bool = False
    consensus_reason: str = ""
    comparisons: tuple[Comparison, ...] = ()
    invalid_comparison_lines: int = 0
    spans: tuple[SectionSpan, ...] = ()
    error: ParseError | None = None

    @property
    def ok(self) -> bool:
        """True when the response follows the output contract."""
        return self.error is None


@attrs.frozen
class Message:
    """One chat message."""

    role: str
    content: str


@attrs.frozen
class Turn:
    """One agent's turn in a debate, after authorship rules were applied.

    ``comparisons`` holds only the valid comparisons (ids in range, ``a != b``, author on
    neither side); the dropped ones are counted in ``self_comparisons`` and
    ``malformed_comparisons``. ``turn_index`` is the position in commit order (agent order
    within a round), ``step`` the agent's own turn count (0-based), and ``visible_turns`` how
    many turns, in commit order, the agent could see when it answered (all earlier turns
    under sequential turns, the earlier rounds' under parallel rounds). ``informed`` is True
    when the prompt showed the latest solution of every other agent: only then does its
    ``<consensus>YES</consensus>`` count toward ending the debate under the default stop rule
    (docs/protocol.md#when-a-debate-ends). ``grade`` is the correctness of the solution (1.0
    or 0.0) when the dataset is verifiable. ``prompt`` is what the agent was shown, as chat
    messages before rendering (system prompt, question, the history entries the history policy
    chose, the turn's instructions), so truncation and clipping can be read from a transcript;
    empty for turns read from transcripts that did not record it. ``seats`` is set when the turn's
    prompt seated it in a debate of another size (the ``runoff`` coordinator,
    docs/protocol.md#the-runoff): seat ``i`` was agent ``seats[i]`` (``-1``: a seat nobody
    held), the turn's own agent at one of them; its text and parsed comparisons name seats,
    ``comparisons`` the debate's agents. Empty: the prompt named every agent by its own id.
    """

    round: int
    agent: int
    step: int
    turn_index: int
    visible_turns: int
    text: str
    response: ParsedResponse
    persona: str = ""
    comparisons: tuple[Comparison, ...] = ()
    self_comparisons: int = 0
    malformed_comparisons: int = 0
    grade: float | None = None
    informed: bool = False
    prompt: tuple[Message, ...] = ()
    seats: tuple[int, ...] = ()

    @property
    def failed(self) -> bool:
        """True when this turn broke the output contract or the turn-taking (step reward -1)."""
        return self.response.error is not None

    def votes(self) -> Iterator[AuthoredComparison]:
        """The valid comparisons of this turn with their author attached."""
        for c in self.comparisons:
            yield AuthoredComparison(self.agent, c.a, c.op, c.b, self.round, self.turn_index)


@attrs.frozen
class DebateRecord:
    """A finished debate: what reward plugins score and what transcripts store.

    ``turns`` are in commit order. ``aborted`` is set when a turn failed (the debate stops
    at that turn, docs/protocol.md#turn-protocols); ``consensus_reached`` when every agent of
    the last round said YES and each YES counted under ``consensus_rule``
    (docs/protocol.md#when-a-debate-ends).
    """

    question: str
    num_agents: int
    turns: tuple[Turn, ...]
    protocol: str = "sequential"
    max_rounds: int = 1
    answer: str | None = None
    debate_id: str = ""
    consensus_reached: bool = False
    aborted: bool = False
    abort_reason: str | None = None
    consensus_rule: ConsensusRule = "informed"

    def turns_of(self, agent: int) -> tuple[Turn, ...]:
        """The turns of one agent in order (its steps)."""
        return tuple(t for t in self.turns if t.agent == agent)

    def votes(self) -> Iterator[AuthoredComparison]:
        """Every comparison the turns hold, in commit order, with its author (as recorded:
        ``records.votes.tally_votes`` checks them again against the authorship rules)."""
        for turn in self.turns:
            yield from turn.votes()

    def final_turn(self, agent: int) -> Turn | None:
        """The agent's final answer: its latest turn that followed the output contract (a failed
        turn is no answer, so an agent whose last turn failed answers with its previous one;
        docs/protocol.md#the-final-answer). ``None`` when it has none."""
        return next((t for t in reversed(self.turns) if t.agent == agent and not t.failed), None)

    def history_index(self) -> HistoryIndex:
        """A :class:`HistoryIndex` of these turns: what any prefix of them holds, per query in
        logarithmic time (so scoring every turn of a debate stays near-linear in its turns)."""
        return HistoryIndex(tuple(t.agent for t in self.turns))

    def visible_responses(self, turn: Turn) -> dict[int, int]:
        """Which response of each agent a vote made at ``turn`` refers to: agent -> position in
        ``turns`` of its latest turn among the ``turn.visible_turns`` turns the judge could see
        (docs/rewards.md#which-response-a-vote-refers-to). Agents it had not seen are absent."""
        latest: dict[int, int] = {}
        for position, earlier in enumerate(self.turns[: turn.visible_turns]):
            latest[earlier.agent] = position
        return latest

    @property
    def rounds_played(self) -> int:
        """The number of rounds with at least one turn."""
        return max((t.round for t in self.turns), default=0)

    @property
    def malformed_comparisons(self) -> int:
        """Comparisons dropped for ids out of range or ``a == b``."""
        return sum(t.malformed_comparisons for t in self.turns)

    @property
    def self_comparisons(self) -> int:
        """Comparisons dropped because the author was on either side."""
        return sum(t.self_comparisons for t in self.turns)


class HistoryIndex:
    """Who has a turn among the first ``visible`` turns of a debate, without rescanning them.

    Built in one pass over the turns' agents (in commit order). ``latest(agent, visible)`` is
    the position of ``agent``'s latest turn among the first ``visible`` turns (what
    ``DebateRecord.visible_responses`` maps it to), ``others_seen(agent, visible)`` the number of
    other agents with a turn among them.
    """

    def __init__(self, agents: Sequence[int]) -> None:
        self._length = len(agents)
        self._positions: dict[int, list[int]] = {}
        self._distinct = [0]
        for position, agent in enumerate(agents):
            self._positions.setdefault(agent, []).append(position)
            self._distinct.append(len(self._positions))

    def _prefix(self, visible: int) -> int:
        return max(0, min(visible, self._length))

    def latest(self, agent: int, visible: int) -> int | None:
        """Position of ``agent``'s latest turn among the first ``visible`` turns; ``None`` if it has none."""
        positions = self._positions.get(agent)
        if not positions:
            return None
        k = bisect.bisect_left(positions, self._prefix(visible)) - 1
        return positions[k] if k >= 0 else None

    def others_seen(self, agent: int, visible: int) -> int:
        """How many agents other than ``agent`` have a turn among the first ``visible`` turns."""
        prefix = self._prefix(visible)
        positions = self._positions.get(agent)
        seen_self = positions is not None and positions[0] < prefix
        return self._distinct[prefix] - (1 if seen_self else 0)


def counts_as_consensus(turn: Turn, rule: ConsensusRule) -> bool:
    """Whether this turn's answer counts as a YES toward ending the debate under ``rule``."""
    if rule == "never" or turn.failed or not turn.response.consensus:
        return False
    return rule == "any" or turn.informed


def round_reaches_consensus(round_turns: Sequence[Turn], num_agents: int, rule: ConsensusRule) -> bool:
    """Whether a complete round ends the debate by consensus under ``rule``."""
    return len(round_turns) == num_agents and all(counts_as_consensus(t, rule) for t in round_turns)
