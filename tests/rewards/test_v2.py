"""v2 against docs/rewards.md#v2: hand-computed debates and random ones."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debate_core.config.structuring import structure
from debate_core.errors import ConfigError
from debate_core.records import GENERATOR_STREAM, JUDGE_STREAM, DebateRecord
from debate_core.rewards.v2 import UNSCORED_STREAM, V2Options, V2Reward
from debate_core.testing import RewardContract
from debate_core.testing.synthetic import TurnSpec, synthetic_debate

from .strategies import debates

G, J = GENERATOR_STREAM, JUDGE_STREAM


class TestV2OthersRankingContract(RewardContract):
    reward_name = "v2"
    reward_options: ClassVar[Mapping[str, Any]] = {"judge_consensus": "others_ranking", "evaluation_stream": "judge"}


class TestV2PeersChoiceContract(RewardContract):
    reward_name = "v2"
    reward_options: ClassVar[Mapping[str, Any]] = {
        "judge_consensus": "others_ranking",
        "evaluation_stream": "judge",
        "revisions": "peers_choice",
    }


def votes(*lines: str) -> tuple[tuple[int, str, int], ...]:
    out = []
    for line in lines:
        op = ">" if ">" in line else "="
        a, b = line.split(op)
        out.append((int(a), op, int(b)))
    return tuple(out)


def debate_of(n: int, *turn_votes: tuple[str, ...], protocol: str = "sequential") -> DebateRecord:
    specs = [TurnSpec(comparisons=votes(*v)) for v in turn_votes]  # type: ignore[arg-type]
    return synthetic_debate(n, specs, protocol=protocol)  # type: ignore[arg-type]


def test_sequential_hand_example() -> None:
    debate = debate_of(3, (), ("0>2",), ("0>1",), ("1>2",), ("2>0",), ())
    result = V2Reward()(debate)
    assert result.step_streams[G] == ((1.0, -1.0), (0.0, 0.0), (0.0, 0.0))
    assert result.step_streams[J] == ((0.0, 1.0), (0.0, 1.0), (1.0, -0.5))
    assert result.agent_rewards == (0.0, 0.0, 0.0)
    assert result.metrics["v2/total_votes"] == 3
    assert result.metrics["v2/unresolved_comparisons"] == 1
    assert result.metrics["v2/missing_comparisons"] == 1
    assert result.section_streams == {"solution": G, "evaluation": G, "comparison": J}
    assert result.default_stream == UNSCORED_STREAM
    loo = V2Reward(V2Options(judge_leave_one_out=True))(debate)
    assert loo.step_streams[J] == ((0.0, 0.0), (0.0, 0.0), (0.0, -0.5))
    off = V2Reward(V2Options(format_penalty=False))(debate)
    assert off.step_streams[J][2] == (1.0, 0.0)
    assert off.metrics["v2/missing_comparisons"] == 1  # counted whether or not it is penalised


def test_parallel_majority_and_leave_one_out() -> None:
    round_two = (("3>4",), ("3>4",), ("4>3",), (), ())
    debate = debate_of(5, *([()] * 5), *round_two, protocol="parallel")
    result = V2Reward()(debate)
    assert [row[0] for row in result.step_streams[G]] == pytest.approx([0, 0, 0, 1 / 3, -1 / 3])
    assert [row[1] for row in result.step_streams[J]] == [1.0, 1.0, -1.0, -0.5, -0.5]
    # round one: nothing visible, so no penalty
    assert [row[0] for row in result.step_streams[J]] == [0.0] * 5
    loo = V2Reward(V2Options(judge_leave_one_out=True))(debate)
    assert [row[1] for row in loo.step_streams[J]] == [0.0, 0.0, -1.0, -0.5, -0.5]


def lone_judges(ops: list[str]) -> DebateRecord:
    """3 agents, parallel: in round 2 agent j compares the two others, a < b, by ``ops[j]``
    (``>``: a better, ``<``: b better, ``=``): each pair of round-1 responses has one judge."""

    def line(judge: int) -> str:
        a, b = (i for i in range(3) if i != judge)
        op = ops[judge]
        return f"{b}>{a}" if op == "<" else f"{a}{op}{b}"

    return debate_of(3, (), (), (), *((line(j),) for j in range(3)), protocol="parallel")


@given(st.lists(st.sampled_from([">", "<", "="]), min_size=3, max_size=3))
def test_leave_one_out_gives_three_parallel_agents_no_judge_signal(ops: list[str]) -> None:
    # docs/rewards.md#who-judges-a-pair: each pair of round-1 responses has one judge only
    debate = lone_judges(ops)
    loo = V2Reward(V2Options(judge_leave_one_out=True, format_penalty=False))(debate)
    assert [row[1] for row in loo.step_streams[J]] == [0.0, 0.0, 0.0]
    everyone = V2Reward(V2Options(format_penalty=False))(debate)
    strict = [0.0 if op == "=" else 1.0 for op in ops]
    assert [row[1] for row in everyone.step_streams[J]] == strict


def test_others_ranking_checks_a_lone_judge_against_the_rest_of_the_debate_by_hand() -> None:
    # 3 agents, parallel: agent 0 calls 1 and 2 equal, agent 1 prefers 0 to 2, agent 2 prefers 1 to 0.
    # Agent 1's vote: the others rate response 0 at 0 (it lost agent 2's vote) and 2 at 1/2 (agent
    # 0's tie), so preferring 0 goes against them: -1. Agent 2's vote: the others rate 0 at 1 (it
    # won agent 1's vote) and 1 at 1/2 (agent 0's tie), so preferring 1 goes against them: -1.
    debate = debate_of(3, (), (), (), ("1=2",), ("0>2",), ("1>0",), protocol="parallel")
    pair = V2Reward(V2Options(format_penalty=False))(debate)
    ranking = V2Reward(V2Options(format_penalty=False, judge_consensus="others_ranking"))(debate)
    assert [row[1] for row in pair.step_streams[J]] == [0.0, 1.0, 1.0]  # a lone judge agrees with itself
    assert [row[1] for row in ranking.step_streams[J]] == [0.0, -1.0, -1.0]
    assert ranking.step_streams[G] == pair.step_streams[G]  # the generator stream is the same
    agreeing = debate_of(3, (), (), (), ("1=2",), ("2>0",), ("1>0",), protocol="parallel")
    assert [row[1] for row in V2Reward(V2Options(judge_consensus="others_ranking"))(agreeing).step_streams[J]] == [
        0.0,
        1.0,
        1.0,
    ]


@given(st.lists(st.sampled_from([">", "<", "="]), min_size=3, max_size=3))
def test_others_ranking_with_three_parallel_agents_is_the_two_other_verdicts(ops: list[str]) -> None:
    # docs/rewards.md#judging-against-the-others-ranking: with 3 agents, judge j's vote on {a, b} is
    # scored by how a fared against j in b's vote and how b fared against j in a's vote
    def points(judge: int, response: int) -> float:
        """What ``response`` scored in ``judge``'s vote (a win 1, a tie 1/2)."""
        a, _ = (i for i in range(3) if i != judge)
        op = ops[judge]
        if op == "=":
            return 0.5
        first_won = op == ">"
        return float(first_won == (response == a))

    debate = lone_judges(ops)
    result = V2Reward(V2Options(format_penalty=False, judge_consensus="others_ranking"))(debate)
    for j in range(3):
        a, b = (i for i in range(3) if i != j)
        if ops[j] == "=":
            expected = 0.0
        else:
            rate_a, rate_b = points(b, a), points(a, b)
            preferred_a = ops[j] == ">"
            expected = 0.0 if rate_a == rate_b else (1.0 if (rate_a > rate_b) == preferred_a else -1.0)
        assert result.step_streams[J][j][1] == expected


def test_an_equal_judgement_is_a_vote_for_neither_side_and_earns_zero() -> None:
    # two "=" and one ">" on the pair (3, 4): the consensus is the lone strict vote, 3 better
    debate = debate_of(5, *([()] * 5), ("3=4",), ("3=4",), ("3>4",), (), (), protocol="parallel")
    result = V2Reward(V2Options(format_penalty=False))(debate)
    assert [row[1] for row in result.step_streams[J]] == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert [row[0] for row in result.step_streams[G]] == [0.0, 0.0, 0.0, 1.0, -1.0]


def test_a_lone_equal_judgement_earns_zero() -> None:
    debate = debate_of(3, *([()] * 3), (), (), ("0=1",), protocol="parallel")
    result = V2Reward(V2Options(format_penalty=False))(debate)
    assert result.step_streams[J] == ((0.0, 0.0), (0.0, 0.0), (0.0, 0.0))
    assert result.metrics["v2/total_votes"] == 1


def test_equal_judgements_cannot_outvote_a_strict_majority() -> None:
    # three "=" and one "4 > 5" on the pair (4, 5): the ">" judge sides with the consensus
    judges = (("4=5",), ("4=5",), ("4=5",), ("4>5",), (), ())
    debate = debate_of(6, *([()] * 6), *judges, protocol="parallel")
    result = V2Reward(V2Options(format_penalty=False))(debate)
    assert [row[1] for row in result.step_streams[J]] == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def test_tied_consensus_gives_zero() -> None:
    # one "3 > 4", one "4 > 3", one "=": the strict votes cancel, so every vote earns 0
    debate = debate_of(5, *([()] * 5), ("3>4",), ("4>3",), ("3=4",), (), (), protocol="parallel")
    result = V2Reward(V2Options(format_penalty=False))(debate)
    assert [row[1] for row in result.step_streams[J]] == [0.0] * 5
    assert result.metrics["v2/tied_consensus_votes"] == 2


def test_zero_earning_votes_count_in_the_mean() -> None:
    # agent 4 judges two pairs in round 2: it agrees with a strict consensus on (0, 1) and
    # calls (2, 3) equal: (1 + 0) / 2
    judges = (("1>2",), ("0>2",), (), ("0>1",), ("0>1", "2=3"))
    debate = debate_of(5, *([()] * 5), *judges, protocol="parallel")
    result = V2Reward(V2Options(format_penalty=False))(debate)
    assert result.step_streams[J][4][1] == 0.5


def test_a_response_whose_only_comparisons_are_ties_is_not_penalised() -> None:
    debate = debate_of(3, *([()] * 3), ("1=2",), ("0=2",), ("0=1",), protocol="parallel")
    result = V2Reward()(debate)
    assert result.metrics["v2/missing_comparisons"] == 0
    assert [row[1] for row in result.step_streams[J]] == [0.0, 0.0, 0.0]


def test_votes_refer_to_the_latest_visible_step() -> None:
    # sequential, 2 agents + judge: agent 2 at round 2 judges agent 0's and 1's round-2 steps
    debate = debate_of(3, (), (), ("0>1",), (), (), ("1>0",))
    result = V2Reward()(debate)
    assert result.step_streams[G] == ((1.0, -1.0), (-1.0, 1.0), (0.0, 0.0))


def test_failed_turn_casts_no_vote_and_gets_no_penalty() -> None:
    specs = [TurnSpec(), TurnSpec(), TurnSpec(failed=True, comparisons=((0, ">", 1),))]
    result = V2Reward()(synthetic_debate(3, specs))
    assert result.step_streams[G] == ((0.0,), (0.0,), (0.0,))
    assert result.step_streams[J] == ((0.0,), (0.0,), (0.0,))


def test_lambdas_are_stream_weights_only() -> None:
    debate = debate_of(3, (), (), ("0>1",))
    base = V2Reward()(debate)
    weighted = V2Reward(V2Options(lambda_gen=0.5, lambda_judge=1.5))(debate)
    assert weighted.step_streams == base.step_streams
    assert weighted.stream_weights == {G: 0.5, J: 1.5}


def test_options_are_validated_with_a_clear_message() -> None:
    with pytest.raises(ConfigError, match="format_penalty_value"):
        structure({"format_penalty_value": 0.5}, V2Options, "reward.options")
    with pytest.raises(ConfigError, match="lambda_gen"):
        structure({"lambda_gen": -1}, V2Options, "reward.options")


Reference = tuple[Counter[tuple[int, int]], Counter[tuple[int, int]], set[tuple[int, int]]]


def reference(debate: DebateRecord) -> Reference:
    """(for - against) and (for + against) per response, and the responses owing a
    comparison, straight from the definition."""
    net: Counter[tuple[int, int]] = Counter()
    total: Counter[tuple[int, int]] = Counter()
    missing: set[tuple[int, int]] = set()
    position = {t.turn_index: (t.agent, [u for u in debate.turns if u.agent == t.agent].index(t)) for t in debate.turns}
    for t in debate.turns:
        if t.failed:
            continue
        seen = sorted((u for u in debate.turns if u.turn_index < t.visible_turns), key=lambda u: u.turn_index)
        latest = {u.agent: position[u.turn_index] for u in seen}
        resolved = [c for c in t.comparisons if c.a in latest and c.b in latest]
        for c in resolved:
            if c.op == ">":
                net[latest[c.a]] += 1
                net[latest[c.b]] -= 1
                total[latest[c.a]] += 1
                total[latest[c.b]] += 1
        if t.turn_index >= 2 and not resolved and len(set(latest) - {t.agent}) >= 2:
            missing.add(position[t.turn_index])
    return net, total, missing


@given(debates, st.booleans(), st.booleans())
def test_random_debates_fit_the_definition(debate: DebateRecord, penalty: bool, loo: bool) -> None:
    options = V2Options(format_penalty=penalty, judge_leave_one_out=loo)
    result = V2Reward(options)(debate)
    n = debate.num_agents
    for stream in (G, J):
        assert [len(row) for row in result.step_streams[stream]] == [len(debate.turns_of(i)) for i in range(n)]
    net, total, missing = reference(debate)
    assert result.metrics["v2/missing_comparisons"] == len(missing)
    for i in range(n):
        for s, (g, j) in enumerate(zip(result.step_streams[G][i], result.step_streams[J][i], strict=True)):
            assert -1.0 <= g <= 1.0
            assert g == pytest.approx(net[(i, s)] / total[(i, s)] if total[(i, s)] else 0.0)
            if (i, s) in missing:
                assert j == (options.format_penalty_value if penalty else 0.0)
            else:
                assert -1.0 <= j <= 1.0
        steps = result.step_streams[G][i]
        assert result.agent_rewards[i] == pytest.approx(sum(steps) / len(steps) if steps else 0.0)


def reference_judge(debate: DebateRecord, leave_one_out: bool) -> dict[tuple[int, int], float]:
    """Judge reward per response before the penalty, straight from the definition: the mean
    over its resolved votes of +1/-1 against the strict consensus of "a better" against
    "b better" counts, 0 for "=" and for a tied consensus."""
    position = {t.turn_index: (t.agent, [u for u in debate.turns if u.agent == t.agent].index(t)) for t in debate.turns}
    judged: list[tuple[int, tuple[int, int], frozenset[tuple[int, int]], object]] = []
    for t in debate.turns:
        if t.failed:
            continue
        seen = sorted((u for u in debate.turns if u.turn_index < t.visible_turns), key=lambda u: u.turn_index)
        latest = {u.agent: position[u.turn_index] for u in seen}
        for c in t.comparisons:
            if c.a in latest and c.b in latest:
                verdict: object = "equal" if c.op == "=" else latest[c.a]  # the better response
                judged.append((t.agent, position[t.turn_index], frozenset((latest[c.a], latest[c.b])), verdict))
    signals: dict[tuple[int, int], list[float]] = {}
    for agent, judge_ref, pair, verdict in judged:
        if verdict == "equal":
            signals.setdefault(judge_ref, []).append(0.0)
            continue
        strict = Counter(
            v for (a, _, p, v) in judged if p == pair and v != "equal" and not (leave_one_out and a == agent)
        )
        against = sum(n for v, n in strict.items() if v != verdict)
        margin = strict[verdict] - against
        signals.setdefault(judge_ref, []).append(0.0 if margin == 0 else (1.0 if margin > 0 else -1.0))
    return {ref: sum(v) / len(v) for ref, v in signals.items()}


@given(debates, st.booleans())
def test_random_judge_streams_fit_the_definition(debate: DebateRecord, loo: bool) -> None:
    result = V2Reward(V2Options(format_penalty=False, judge_leave_one_out=loo))(debate)
    expected = reference_judge(debate, loo)
    for i in range(debate.num_agents):
        for s, value in enumerate(result.step_streams[J][i]):
            assert value == pytest.approx(expected.get((i, s), 0.0))


def _boxed(answer: str, *lines: str) -> TurnSpec:
    return TurnSpec(solution=f"so \\boxed{{{answer}}}", comparisons=votes(*lines))  # type: ignore[arg-type]


def _read_boxed(solution: str) -> str | None:
    from debate_core.tasks import extract_last_boxed

    return extract_last_boxed(solution)


def test_peers_choice_pays_a_revision_for_the_answer_the_other_agents_votes_rank_highest_by_hand() -> None:
    """docs/rewards.md#revisions-and-the-peers-choice. Round 1: 5, 7, 7. Round 2: agent 0 keeps 5
    and calls the two 7s equal (left out: one answer); agent 1 prefers agent 0's 5 and revises to
    5; agent 2 prefers agent 1's 7 and keeps 7. Agent 0's revision: the others' votes give 5 and 7
    one win each, no single answer, 0. Agent 1's (5): agent 2's vote alone counts, 7 ranks highest,
    -1. Agent 2's (7): agent 1's vote alone counts, 5 ranks highest, -1. Round 1 keeps its vote
    ratios: agent 0's 5 won one vote and lost one (0), agent 1's 7 won one (1), agent 2's lost one."""
    record = synthetic_debate(
        3,
        [_boxed("5"), _boxed("7"), _boxed("7"), _boxed("5", "1=2"), _boxed("5", "0>2"), _boxed("7", "1>0")],
        protocol="parallel",
    )
    options = structure({"revisions": "peers_choice"}, V2Options, "v2")
    result = V2Reward(options, _read_boxed)(record)
    assert result.step_streams[G] == ((0.0, 0.0), (1.0, -1.0), (-1.0, -1.0))
    unscored = V2Reward(V2Options(), _read_boxed)(record)
    assert unscored.step_streams[G] == ((0.0, 0.0), (1.0, 0.0), (-1.0, 0.0))
    with pytest.raises(ValueError, match="needs an answer reader"):
        V2Reward(options)(record)


def test_peers_choice_reads_no_ground_truth() -> None:
    """The same debate graded against another answer, or with grades changed, pays the same."""
    turns = [_boxed("5"), _boxed("7"), _boxed("7"), _boxed("5", "1=2"), _boxed("5", "0>2"), _boxed("7", "1>0")]
    reward = V2Reward(structure({"revisions": "peers_choice"}, V2Options, "v2"), _read_boxed)
    first = reward(synthetic_debate(3, turns, protocol="parallel", answer="5"))
    second = reward(synthetic_debate(3, turns, protocol="parallel", answer="7"))
    assert first.step_streams == second.step_streams
