"""How many training sequences a 3-agent, 3-round debate gives each agent, per history policy.

A new sequence starts whenever an observation does not strictly extend the agent's previous
observation + action (docs/training.md#from-trajectories-to-datums). The numbers
are documented in docs/protocol.md; ``-s`` prints the table.
"""

from __future__ import annotations

import pytest

from debate_core.debate.history_policies import (
    AllRounds,
    HistoryOptions,
    LastRounds,
    LastRoundsOptions,
    NoHistory,
)
from debate_core.debate.rendering import ChatTemplateOptions, ChatTemplateRenderer
from debate_core.records import HistoryPolicy
from debate_core.testing.scripted_debate import run_scripted_debate, run_sync, scripted_setup

from .helpers import QwenLikeTokenizer, count_sequences, response

POLICIES: dict[str, tuple[HistoryPolicy, int]] = {
    "all": (AllRounds(), 1),
    "all, max_chars_per_field=8": (AllRounds(HistoryOptions(max_chars_per_field=8)), 1),
    "all, blind": (AllRounds(HistoryOptions(blind=True)), 1),
    "none": (NoHistory(), 3),
    "last_k, rounds=1": (LastRounds(LastRoundsOptions(rounds=1)), 2),
    "last_k, rounds=2": (LastRounds(LastRoundsOptions(rounds=2)), 1),
}
TEXTS = [
    response(f"solution {k} is long enough to be clipped", ["Agent 1 > Agent 2"] if k % 3 == 0 else ())
    for k in range(9)
]


@pytest.mark.parametrize("renderer", ["role_colon", "hf_chat_template"])
@pytest.mark.parametrize("protocol", ["sequential", "parallel"])
@pytest.mark.parametrize("name", list(POLICIES))
def test_sequences_per_agent_in_a_3x3_debate(name: str, protocol: str, renderer: str) -> None:
    history, expected = POLICIES[name]
    chat = ChatTemplateRenderer(QwenLikeTokenizer(), ChatTemplateOptions(enable_thinking=False))
    setup = scripted_setup(
        3,
        3,
        protocol=protocol,
        history=history,
        renderer=chat if renderer == "hf_chat_template" else None,  # type: ignore[arg-type]
    )
    episode = run_sync(run_scripted_debate(TEXTS, 3, setup=setup))
    assert len(episode.record.turns) == 9 and not episode.record.aborted
    counts = [count_sequences(t.transitions) for t in episode.trajectories]
    print(f"{name:28s} {protocol:10s} {renderer:16s} sequences per agent: {counts}")
    assert counts == [expected] * 3


def test_count_sequences_detects_a_non_extension() -> None:
    from debate_core.records import Transition

    def tr(obs: tuple[int, ...], act: tuple[int, ...]) -> Transition:
        return Transition(0, 0, obs, act, (0.0,) * len(act), (None,) * len(act))

    assert count_sequences([tr((1, 2), (3,)), tr((1, 2, 3, 4), (5,)), tr((1, 2, 3, 4, 5, 6), ())]) == 1
    assert count_sequences([tr((1, 2), (3,)), tr((1, 2, 4), (5,))]) == 2
    assert count_sequences([tr((1, 2), (3,)), tr((1, 2, 3), (5,))]) == 2  # equal is not a strict extension


def test_rendering_the_whole_chat_template_each_turn_loses_the_extension() -> None:
    """What docs/protocol.md#renderers-and-stop-conditions avoids: a template that strips the earlier
    turns' think blocks makes every turn its own sequence; the segment-wise renderer keeps one per agent."""

    class WholeTemplate(ChatTemplateRenderer):
        def build_prompt(self, messages):  # type: ignore[no-untyped-def]
            return self.tokenizer.encode(self._render(messages))

    naive = WholeTemplate(QwenLikeTokenizer(), ChatTemplateOptions(enable_thinking=False))
    setup = scripted_setup(3, 3, history=AllRounds(), renderer=naive)
    episode = run_sync(run_scripted_debate(TEXTS, 3, setup=setup))
    assert [count_sequences(t.transitions) for t in episode.trajectories] == [3, 3, 3]
