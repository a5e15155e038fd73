"""``debate score`` on the example transcripts, for every installed reward."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debate_core.cli import main
from debate_core.debate.transcripts import load_transcript
from debate_core.plugin import get_registry
from debate_core.rewards.v2 import V2Options, V2Reward

TRANSCRIPTS = sorted((Path(__file__).parents[2] / "examples" / "transcripts").glob("*.json"))


def score(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["score", *args]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


def test_example_transcripts_exist() -> None:
    assert {p.name for p in TRANSCRIPTS} >= {"full.json", "minimal.json"}


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda p: p.name)
@pytest.mark.parametrize("reward", [spec.name for spec in get_registry().specs("reward")])
def test_every_reward_scores_every_example(capsys: pytest.CaptureFixture[str], reward: str, transcript: Path) -> None:
    out = score(capsys, "--reward", reward, str(transcript))
    record = load_transcript(transcript)
    rewards, advantages = out["rewards"], out["advantages"]
    assert isinstance(rewards, list) and isinstance(advantages, list)
    assert len(rewards) == len(advantages) == record.num_agents
    assert sum(advantages) == pytest.approx(0.0, abs=1e-9)
    streams = out["streams"]
    assert isinstance(streams, dict)
    for rows in streams.values():
        assert [len(r) for r in rows] == [len(record.turns_of(i)) for i in range(record.num_agents)]
    assert isinstance(out["metrics"], dict)


def test_options_are_passed_and_match_a_direct_computation(capsys: pytest.CaptureFixture[str]) -> None:
    path = TRANSCRIPTS[0]
    out = score(capsys, "--reward", "v2", "--set", "lambda_judge=0.5", "--set", "format_penalty=false", str(path))
    direct = V2Reward(V2Options(lambda_judge=0.5, format_penalty=False))(load_transcript(path))
    assert out["rewards"] == list(direct.agent_rewards)
    assert out["streams"] == {k: [list(r) for r in rows] for k, rows in direct.step_streams.items()}
    assert out["section_streams"] == {"solution": "generator", "evaluation": "generator", "comparison": "judge"}
    assert out["metrics"] == pytest.approx(dict(direct.metrics))


def test_nested_options_of_a_wrapper(capsys: pytest.CaptureFixture[str]) -> None:
    out = score(capsys, "--reward", "gt_mix", "--set", "peer.name=win_rate", str(TRANSCRIPTS[0]))
    assert out["streams"] == {} and "pairwise_total_votes" in out["metrics"]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reward", "v2", "--set", "lambda_gen=-1"], "reward.options.lambda_gen: must be >= 0.0"),
        (["--reward", "v2", "--set", "lambda"], "expected key=value"),
        (["--reward", "no_such_reward"], "unknown reward 'no_such_reward'"),
    ],
)
def test_bad_input_is_one_clear_message(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    assert main(["score", *args, str(TRANSCRIPTS[0])]) == 1
    assert message in capsys.readouterr().err


def test_missing_transcript(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["score", "--reward", "win_rate", str(tmp_path / "none.json")]) == 1
    assert "no such transcript file" in capsys.readouterr().err
