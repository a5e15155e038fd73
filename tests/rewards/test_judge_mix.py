"""A stronger judge, phased out (docs/rewards.md#a-stronger-judge-phased-out): the weight
schedule, the mixed reward by hand, the built-in judges, and the trainer's use of them."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import attrs
import pytest

from debate_core.records import (
    GENERATOR_STREAM,
    JUDGE_STREAM,
    AgentPolicy,
    DebateRecord,
    JudgePair,
    Renderer,
    SampledAction,
    StopCondition,
)
from debate_core.rewards.external_judges import ModelJudge, ModelJudgeOptions, OracleJudge, read_verdict
from debate_core.rewards.judge_mix import (
    compared_pairs,
    judge_mixed_reward,
    judge_pairs,
    judge_weight,
    judged_record,
)
from debate_core.rewards.v2 import V2Reward
from debate_core.testing.scripted_debate import scripted_setup
from debate_core.testing.synthetic import TurnSpec, synthetic_debate

G, J = GENERATOR_STREAM, JUDGE_STREAM


def test_the_weight_falls_linearly_to_zero() -> None:
    assert [judge_weight(1.0, 20, i) for i in (0, 10, 19, 20, 30)] == [1.0, 0.5, pytest.approx(0.05), 0.0, 0.0]
    assert judge_weight(0.6, 3, 1) == pytest.approx(0.4)
    assert judge_weight(1.0, 0, 0) == 0.0  # no decay iterations: never used


def graded() -> DebateRecord:
    # parallel, 3 agents. Round 1: agent 0 right, agent 1 wrong, agent 2 right.
    # Round 2: agent 0 says 1 > 2 (the wrong one over the right one), agent 1 says 0 > 2 (two right
    # answers), agent 2 says 0 > 1 (the right one over the wrong one).
    grades = [1.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    votes = [(), (), (), ((1, ">", 2),), ((0, ">", 2),), ((0, ">", 1),)]
    specs = [TurnSpec(grade=g, comparisons=c) for g, c in zip(grades, votes, strict=True)]  # type: ignore[arg-type]
    return synthetic_debate(3, specs, answer="42", protocol="parallel")


def oracle_verdicts(record: DebateRecord) -> dict:
    pairs = compared_pairs(record)
    return dict(zip(pairs, asyncio.run(OracleJudge().compare(judge_pairs(record, pairs), None)), strict=True))  # type: ignore[arg-type]


def test_the_oracle_judges_by_the_grades() -> None:
    verdicts = oracle_verdicts(graded())
    # pairs as first compared: (a1, a2) wrong vs right; (a0, a2) right vs right; (a0, a1) right vs wrong
    assert verdicts == {((1, 0), (2, 0)): -1, ((0, 0), (2, 0)): 0, ((0, 0), (1, 0)): 1}


def test_judged_record_replaces_each_vote_by_the_verdict_on_its_pair() -> None:
    record = graded()
    judged = judged_record(record, oracle_verdicts(record))
    assert [[(c.a, c.op, c.b) for c in t.comparisons] for t in judged.turns[3:]] == [
        [(2, ">", 1)],
        [(0, "=", 2)],
        [(0, ">", 1)],
    ]
    assert [t.text for t in judged.turns] == [t.text for t in record.turns]


def test_the_mixed_reward_by_hand() -> None:
    record = graded()
    peer = V2Reward()(record)
    # v2 of the debate: generator a0 +1 (two votes for), a1 0 (one for, one against), a2 -1;
    # judge: each pair has a single judge, so each strict vote earns +1
    assert peer.step_streams[G] == ((1.0, 0.0), (0.0, 0.0), (-1.0, 0.0))
    assert peer.step_streams[J] == ((0.0, 1.0), (0.0, 1.0), (0.0, 1.0))
    mixed = judge_mixed_reward(record, peer, V2Reward(), oracle_verdicts(record), 0.5)
    # judged copy: generator a0 +1 (0 > 1), a1 -1 (2 > 1, 0 > 1), a2 +1 (2 > 1; 0 = 2 counts for neither);
    # agreement with the judge: agent 0 went against it (-1), agent 1 judged a pair it calls equal (0),
    # agent 2 agreed (+1)
    assert mixed.step_streams[G] == ((1.0, 0.0), (-0.5, 0.0), (0.0, 0.0))
    assert mixed.step_streams[J] == ((0.0, 0.0), (0.0, 0.5), (0.0, 1.0))
    assert mixed.agent_rewards == pytest.approx((0.5, -0.25, 0.0))
    assert mixed.metrics["judge/weight"] == 0.5 and mixed.metrics["judge/pairs"] == 3
    assert mixed.metrics["judge/votes_on_split_pairs"] == 2 and mixed.metrics["judge/agreement"] == 0.5
    assert judge_mixed_reward(record, peer, V2Reward(), oracle_verdicts(record), 0.0) is peer


def test_the_judge_mix_reward_mixes_by_its_schedule_in_training_and_is_its_peer_elsewhere() -> None:
    """``judge_mix`` at RL iteration i is ``judge_mixed_reward`` at ``judge_weight(weight, decay, i)``;
    called as a plain reward (evaluation) it is the peer reward."""
    from debate_core.config.choices import ComponentChoice
    from debate_core.records import TrainingRound, TrainingTimeReward
    from debate_core.rewards.judge_mix import JudgeMixOptions, JudgeMixReward

    record = graded()
    options = JudgeMixOptions(judge=ComponentChoice(name="oracle"), weight=0.6, decay_iterations=3)
    reward = JudgeMixReward(V2Reward(), OracleJudge(), options)
    assert isinstance(reward, TrainingTimeReward)
    peer = V2Reward()(record)
    assert reward(record) == peer
    for iteration in range(5):
        scored = asyncio.run(reward.score_in_training(record, TrainingRound(iteration, None)))  # type: ignore[arg-type]
        weight = judge_weight(0.6, 3, iteration)
        if iteration >= 3:
            assert scored == peer
            continue
        expected = judge_mixed_reward(record, peer, V2Reward(), oracle_verdicts(record), weight)
        assert scored.metrics == {**expected.metrics, "judge/fallback": 0.0, "judge/abstained": 0.0}
        assert attrs.evolve(scored, metrics=expected.metrics) == expected


def test_a_judge_that_breaks_its_contract_is_named_with_the_debate() -> None:
    from debate_core.config.choices import ComponentChoice
    from debate_core.errors import ComponentFailure
    from debate_core.records import TrainingRound
    from debate_core.rewards.judge_mix import JudgeMixOptions, JudgeMixReward

    class TwoVerdicts:
        async def compare(self, pairs: Sequence[JudgePair], host: object) -> list[int]:
            return [1, 1]

    record = graded()
    options = JudgeMixOptions(judge=ComponentChoice(name="two"))
    reward = JudgeMixReward(V2Reward(), TwoVerdicts(), options)
    named = r"judge plugin 'two' returned .*: 2 verdicts for 3 pairs, in compare on 3 pairs of debate 'synthetic'"
    with pytest.raises(ComponentFailure, match=named):
        asyncio.run(reward.score_in_training(record, TrainingRound(0, None)))  # type: ignore[arg-type]


def test_read_verdict() -> None:
    assert read_verdict("A > B") == 1
    assert read_verdict(" B > A\n") == -1
    assert read_verdict("A = B") == 0
    assert read_verdict("A < B") == -1
    assert read_verdict("B<A") == 1
    assert read_verdict("I think answer A") is None
    assert read_verdict("A > A") is None


class Replies:
    """A policy replying with canned texts, recording the prompts."""

    def __init__(self, replies: Sequence[str], renderer: Renderer) -> None:
        self.replies = list(replies)
        self.renderer = renderer
        self.prompts: list[str] = []

    async def sample(
        self, prompt: Sequence[int], *, stop: StopCondition, temperature: float, max_tokens: int, seed: int | None
    ) -> SampledAction:
        self.prompts.append(self.renderer.decode(prompt))
        tokens = self.renderer.tokenizer.encode(self.replies.pop(0))  # type: ignore[attr-defined]
        return SampledAction(tuple(tokens), (0.0,) * len(tokens), "")


class Host:
    def __init__(self, policy: Replies) -> None:
        self.policy = policy
        self.asked: list[tuple[str, str | None]] = []

    async def sampling_policy(self, base_model: str, weights: str | None) -> tuple[AgentPolicy, Renderer]:
        self.asked.append((base_model, weights))
        return self.policy, self.policy.renderer


def test_the_model_judge_asks_a_served_model_once_per_pair() -> None:
    record = graded()
    renderer = scripted_setup(3, 1).renderer
    host = Host(Replies(["B > A", "A = B", "no idea"], renderer))
    judge = ModelJudge(ModelJudgeOptions(base_model="embedded:debate-tiny", weights="runs/x/step_10"))
    verdicts = asyncio.run(judge.compare(judge_pairs(record, compared_pairs(record)), host))
    assert list(verdicts) == [-1, 0, 0]
    assert judge.unreadable == 1
    assert host.asked == [("embedded:debate-tiny", "runs/x/step_10")]  # one policy for the whole run
    assert "Answer A:" in host.policy.prompts[0] and "Which answer is better?" in host.policy.prompts[0]


def test_a_judge_pair_carries_the_question_and_the_two_turns() -> None:
    record = graded()
    pair = judge_pairs(record, compared_pairs(record))[0]
    assert isinstance(pair, JudgePair)
    assert (pair.question, pair.answer) == (record.question, "42")
    assert (pair.first.agent, pair.second.agent) == (1, 2)


class Abstaining:
    """A judge that abstains on the pairs whose index is in ``abstain`` and prefers the second
    response of the others, counting what it was asked."""

    def __init__(self, abstain: set[int]) -> None:
        self.abstain = abstain
        self.asked = 0

    async def compare(self, pairs: Sequence[JudgePair], host: object) -> list[int | None]:
        self.asked += len(pairs)
        return [None if i in self.abstain else -1 for i in range(len(pairs))]

    def take_counts(self) -> Mapping[str, float]:
        asked, self.asked = self.asked, 0
        return {"asked": asked}


def mix_reward(judge: object, weight: float = 0.6, on_unavailable: str = "peer") -> object:
    from debate_core.config.choices import ComponentChoice
    from debate_core.rewards.judge_mix import JudgeMixOptions, JudgeMixReward

    options = JudgeMixOptions(
        judge=ComponentChoice(name="abstaining"),
        weight=weight,
        decay_iterations=3,
        on_unavailable=on_unavailable,  # type: ignore[arg-type]
    )
    return JudgeMixReward(V2Reward(), judge, options)  # type: ignore[arg-type]


def test_by_default_a_pair_without_a_verdict_stops_the_run_in_one_line() -> None:
    """docs/rewards.md#when-the-judge-gives-no-verdict: ``on_unavailable = "stop"``, the default."""
    from debate_core.records import TrainingRound
    from debate_core.rewards.judge_mix import JudgeMixOptions, JudgeUnavailable

    assert JudgeMixOptions().on_unavailable == "stop"
    reward = mix_reward(Abstaining({1}), on_unavailable="stop")
    with pytest.raises(JudgeUnavailable) as raised:
        asyncio.run(reward.score_in_training(graded(), TrainingRound(0, None)))  # type: ignore[attr-defined]
    message = str(raised.value)
    assert "\n" not in message and "judge 'abstaining' gave no verdict on 1 of the 3 pairs" in message
    assert 'on_unavailable = "stop"' in message
    # a judge that gives every verdict stops nothing
    answering = mix_reward(Abstaining(set()), on_unavailable="stop")
    asyncio.run(answering.score_in_training(graded(), TrainingRound(0, None)))  # type: ignore[attr-defined]


def test_a_debate_with_a_pair_the_judge_abstained_on_gets_the_peer_reward_counted() -> None:
    """docs/rewards.md#when-the-judge-gives-no-verdict: one abstention, and the debate falls back to the peer
    reward alone (its effective judge weight 0), with the judge's counts beside."""
    from debate_core.records import TrainingRound

    record = graded()
    peer = V2Reward()(record)
    fell_back = asyncio.run(mix_reward(Abstaining({1})).score_in_training(record, TrainingRound(0, None)))  # type: ignore[attr-defined]
    assert fell_back.agent_rewards == peer.agent_rewards and fell_back.step_streams == peer.step_streams
    assert fell_back.metrics == {
        **peer.metrics,
        "judge/asked": 3.0,
        "judge/weight": 0.0,
        "judge/pairs": 3.0,
        "judge/fallback": 1.0,
        "judge/abstained": 1,
    }
    judged = asyncio.run(mix_reward(Abstaining(set())).score_in_training(record, TrainingRound(0, None)))  # type: ignore[attr-defined]
    assert judged.agent_rewards != peer.agent_rewards
    assert judged.metrics["judge/fallback"] == 0.0 and judged.metrics["judge/asked"] == 3.0
    assert judged.metrics["judge/weight"] == 0.6


@pytest.mark.parametrize(
    ("counts", "named"),
    [(["asked"], "not a mapping"), ({"asked": float("nan")}, "counter 'asked' is not"), ({"x": True}, "counter 'x'")],
)
def test_a_judge_whose_counts_are_not_numbers_by_name_is_named(counts: object, named: str) -> None:
    from debate_core.errors import ComponentFailure
    from debate_core.records import TrainingRound

    class BadCounts(Abstaining):
        def take_counts(self) -> Mapping[str, float]:
            return counts  # type: ignore[return-value]

    reward = mix_reward(BadCounts(set()))
    with pytest.raises(ComponentFailure, match=rf"judge plugin 'abstaining' returned .*{named}.*take_counts on debate"):
        asyncio.run(reward.score_in_training(graded(), TrainingRound(0, None)))  # type: ignore[attr-defined]


def test_the_model_judge_counts_its_unreadable_replies_since_it_was_last_asked() -> None:
    record = graded()
    renderer = scripted_setup(3, 1).renderer
    judge = ModelJudge(ModelJudgeOptions(base_model="embedded:debate-tiny"))
    host = Host(Replies(["no idea", "A > B", "?", "B > A", "A = B", "A > B"], renderer))
    pairs = judge_pairs(record, compared_pairs(record))
    asyncio.run(judge.compare(pairs, host))
    assert judge.take_counts() == {"unreadable": 2.0}
    asyncio.run(judge.compare(pairs, host))
    assert judge.take_counts() == {"unreadable": 0.0}
