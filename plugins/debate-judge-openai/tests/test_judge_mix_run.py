"""Training runs with ``judge_mix`` and the ``openai`` judge (README: in a run): the phase-out
schedule, the judge's counters in metrics.jsonl, the cache in the run directory and a resumed run
that pays nothing again, the key in no file, a run through each outage (slow, down, garbage,
rate-limited, failing) that falls back to the peer reward, counted, and a run through each fault
that clears within the retries, equal to a healthy run, the retries counted. The runs use
debate-core's trainer harness (a scripted backend whose agents compare each other), so these tests
need a clone of the repository; they skip elsewhere."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stub_endpoint import StubEndpoint

REPOSITORY = Path(__file__).resolve().parents[3]
if not (REPOSITORY / "tests" / "training" / "trainer_harness.py").is_file():
    pytest.skip("the trainer harness is in debate-core's repository, not installed", allow_module_level=True)
sys.path.insert(0, str(REPOSITORY))

from tests.training.trainer_harness import harness_registry, make_config, read_metrics, train_quietly  # noqa: E402

SECRET = "sk-judge-" + os.urandom(8).hex()


def run_config(url: str, *extra: str, judge: str = "", on_unavailable: str = "stop") -> Any:
    judge_options = (
        f"base_url='{url}', model='judge', api_key_env='JUDGE_TEST_KEY', backoff_s=0.0, failure_pause_s=0.0{judge}"
    )
    return make_config(
        "reward.name=judge_mix",
        f"reward.options={{peer={{name='v2'}}, judge={{name='openai', options={{{judge_options}}}}}, "
        f"weight=1.0, decay_iterations=2, on_unavailable='{on_unavailable}'}}",
        "training.num_iterations=3",
        "training.save_every=1",
        "training.max_debates_in_flight=1",
        "evaluation.num_problems=0",
        "debate.coordinator=parallel",
        *extra,
    )


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("JUDGE_TEST_KEY", SECRET)
    with harness_registry() as reg:
        yield reg


def test_the_judge_is_phased_out_counted_cached_and_its_key_written_nowhere(
    registry: Any, stub: StubEndpoint, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    train_quietly(run_config(stub.url), registry, run)
    records = read_metrics(run / "metrics.jsonl")
    assert [r.get("judge/weight") for r in records] == [pytest.approx(1.0), pytest.approx(0.5), None]
    asked = [r for r in records if "judge/weight" in r]
    assert all(r["judge/requests"] > 0 and r["judge/fallback"] == 0 and r["judge/pairs"] > 0 for r in asked)
    assert all(r["judge/prompt_tokens"] > 0 for r in asked)
    assert not any(k.startswith("judge/") for k in records[2])  # weight 0: the peer reward alone, no request
    assert set(stub.keys) == {f"Bearer {SECRET}"}
    cache = run / "judges" / "openai-cache.jsonl"
    assert len(cache.read_text().splitlines()) == len({str(r["messages"]) for r in stub.requests})
    written = [p for p in run.rglob("*") if p.is_file()]
    assert written and not [p for p in written if SECRET.encode() in p.read_bytes()]
    assert 'api_key_env = "JUDGE_TEST_KEY"' in (run / "config.toml").read_text()


def test_a_resumed_run_pays_nothing_twice(registry: Any, stub: StubEndpoint, tmp_path: Path) -> None:
    run = tmp_path / "run"
    train_quietly(run_config(stub.url), registry, run)
    paid = len(stub.requests)
    for step in (2, 3):  # as if stopped after the checkpoint of step 1: iterations 1 and 2 are done again
        (run / "checkpoints" / f"step_{step:06d}.json").unlink()
    train_quietly(run_config(stub.url), registry, run, resume=True)
    assert len(stub.requests) == paid  # iteration 1's debates again: every answer from the cache
    redone = read_metrics(run / "metrics.jsonl")[1]
    assert redone["judge/weight"] == pytest.approx(0.5) and redone["judge/cache_hits"] > 0
    assert "judge/requests" not in redone


OUTAGES = {
    "hang": "timeouts",
    "down": "connection_errors",
    "garbage": "garbage",
    "429": "rate_limited",
    "503": "server_errors",
}
"""The endpoint slow (no answer within ``timeout_s``), down (nothing listens on its port), answering
garbage, rate-limited (HTTP 429), failing (HTTP 503), on every try: what each try counts as."""

TRANSIENT = {"hang": "timeouts", "reset": "connection_errors", "garbage": "garbage", "429": "rate_limited"}
"""The same faults clearing within the retries (a reset: the connection dropped, then answered)."""

REWARDS = ("reward/configured", "env/all/reward/total")


def rewards_of(records: list[dict[str, Any]]) -> list[list[Any]]:
    return [[r[k] for k in REWARDS] for r in records]


@pytest.mark.parametrize("fault", list(OUTAGES))
def test_a_run_through_an_outage_falls_back_to_the_peer_reward_when_asked_to(
    registry: Any, stub: StubEndpoint, tmp_path: Path, fault: str, capsys: pytest.CaptureFixture[str]
) -> None:
    counter = OUTAGES[fault]
    if fault == "down":
        stub.close()  # nothing listens on its port any more
    else:
        stub.default = fault
    run = tmp_path / "down"
    with pytest.warns(UserWarning, match=rf"judge 'openai': .* failed after 2 tries \({counter}"):
        # a hang is never answered, so its time limit is short; the others are answered at once
        limit = 0.25 if fault == "hang" else 10.0
        config = run_config(stub.url, judge=f", max_retries=1, timeout_s={limit}", on_unavailable="peer")
        train_quietly(config, registry, run)
    # every iteration the judge was asked in: one line, and judge/silent in its record (the report's note)
    silent = [line for line in capsys.readouterr().err.splitlines() if "gave no verdict on any of its" in line]
    assert [line.split(":")[2].strip() for line in silent] == ["RL iteration 1", "RL iteration 2"]
    assert all("every debate got the peer reward alone" in line for line in silent)
    records = read_metrics(run / "metrics.jsonl")
    assert [r.get("judge/silent") for r in records] == [1.0, 1.0, None]
    if fault == "down":  # and the report says so at its top
        from debate_core.cli import main

        assert main(["report", str(run)]) == 0
        page = (run / "report.html").read_text(encoding="utf-8")
        assert "The external judge gave no verdict</b> on any of its pairs at 2 RL iterations (steps 1–2)" in page
    for record in records[:2]:  # judge/fallback: the share of debates that fell back (those with pairs to judge)
        assert record["judge/fallback"] > 0 and record["judge/weight"] < 1.0 - record["judge/fallback"] + 1e-9
        assert record["judge/failed"] > 0 and record[f"judge/{counter}"] == 2 * record["judge/failed"]
        assert record["judge/retries"] == record["judge/failed"]  # one retry each, max_retries = 1
    peer = tmp_path / "peer"
    train_quietly(make_config(*PEER_ONLY), registry, peer)
    assert rewards_of(records) == rewards_of(read_metrics(peer / "metrics.jsonl"))


@pytest.mark.parametrize("fault", list(TRANSIENT))
def test_a_fault_that_clears_within_the_retries_leaves_the_run_as_a_healthy_one_counted(
    registry: Any, stub: StubEndpoint, tmp_path: Path, fault: str
) -> None:
    # long enough for a healthy answer on a loaded machine, short enough for two hung tries
    judge = f", max_retries=2, timeout_s={1.0 if fault == 'hang' else 10.0}"
    healthy = tmp_path / "healthy"
    train_quietly(run_config(stub.url, judge=judge), registry, healthy)
    stub.faults = [fault, fault]  # the first two tries of the run's first request
    faulted = tmp_path / "faulted"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing failed for good: no warning line
        train_quietly(run_config(stub.url, judge=judge), registry, faulted)
    records, expected = read_metrics(faulted / "metrics.jsonl"), read_metrics(healthy / "metrics.jsonl")
    assert rewards_of(records) == rewards_of(expected)
    first = records[0]
    assert first[f"judge/{TRANSIENT[fault]}"] > 0 and first["judge/retries"] == first[f"judge/{TRANSIENT[fault]}"]
    assert "judge/retries" not in expected[0]
    assert all(r.get("judge/fallback", 0) == 0 and "judge/failed" not in r for r in records)
    verdicts = ("judge/pairs", "judge/agreement", "judge/weight")
    assert [[r.get(k) for k in verdicts] for r in records] == [[r.get(k) for k in verdicts] for r in expected]


PEER_ONLY = (
    "reward.name=v2",
    "training.num_iterations=3",
    "training.save_every=1",
    "training.max_debates_in_flight=1",
    "evaluation.num_problems=0",
    "debate.coordinator=parallel",
)
"""The same run with the peer reward alone: what a run whose judge is down must equal."""


def cli_overrides(url: str) -> list[str]:
    from tests.training.trainer_harness import BASE_OVERRIDES

    options = f"base_url='{url}', model='judge', api_key_env='JUDGE_TEST_KEY', backoff_s=0.0"
    return [
        *BASE_OVERRIDES,
        *PEER_ONLY[1:],
        "reward.name=judge_mix",
        f"reward.options={{judge={{name='openai', options={{{options}}}}}, decay_iterations=2}}",
    ]


def test_a_refused_key_stops_the_run_in_one_line_and_the_fixed_run_goes_through(
    registry: Any, stub: StubEndpoint, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from debate_core.cli import main

    run_file, run = tmp_path / "run.toml", tmp_path / "run"
    run_file.write_text("", encoding="utf-8")
    command = ["train", str(run_file), *cli_overrides(stub.url), "--run-dir", str(run)]
    stub.default = "401"
    assert main(command) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("debate: error:")]
    refused = f"judge 'openai': the endpoint {stub.url} (model 'judge') refuses the API key: HTTP 401"
    assert len(errors) == 1 and refused in errors[0] and SECRET not in errors[0]
    assert len(stub.requests) == len({str(r["messages"]) for r in stub.requests})  # none retried
    stub.default = "ok"
    assert main(command) == 0  # a start that failed before its first step leaves the run directory free
    assert [r.get("judge/weight") for r in read_metrics(run / "metrics.jsonl")] == [1.0, 0.5, None]


def test_an_unset_key_variable_stops_the_run_at_its_start(
    registry: Any, stub: StubEndpoint, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    from debate_core.cli import main

    monkeypatch.delenv("JUDGE_TEST_KEY")
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    assert main(["train", str(run_file), *cli_overrides(stub.url), "--run-dir", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "api_key_env = 'JUDGE_TEST_KEY', but that environment variable is not set" in err
    assert stub.requests == [] and not (tmp_path / "run" / "metrics.jsonl").exists()


def test_by_default_a_judge_that_gives_no_verdict_stops_the_run_in_one_line(
    registry: Any, stub: StubEndpoint, tmp_path: Path
) -> None:
    from debate_core.errors import DebateError
    from debate_core.runtime.manifests import latest_checkpoint

    # issue 44: a policy behind debate serve answers out of the verdict's format; every verdict
    # unreadable, the run went on to rc 0 on peer votes alone, and nothing said so
    stub.answer = lambda request: "Both answers look fine to me."
    run = tmp_path / "run"
    with pytest.raises(DebateError, match=r"judge 'openai' gave no verdict on \d+ of the \d+ pairs .*unreadable"):
        train_quietly(run_config(stub.url), registry, run)
    assert latest_checkpoint(run / "checkpoints") is None  # it stopped in its first iteration: nothing trained


def test_a_url_where_nothing_listens_fails_at_once_in_config_check_and_train(
    registry: Any, stub: StubEndpoint, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from debate_core.cli import main

    url = stub.url
    stub.close()
    run_file, run = tmp_path / "run.toml", tmp_path / "run"
    run_file.write_text("", encoding="utf-8")
    assert main(["config", "check", str(run_file), *cli_overrides(url)]) == 1
    err = capsys.readouterr().err
    assert f"reward.options.judge: judge 'openai': nothing answers at {url}" in err
    assert 'the run would stop at its first debate (reward.options.on_unavailable = "stop")' in err
    assert main(["train", str(run_file), *cli_overrides(url), "--run-dir", str(run)]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("debate: error:")]
    assert len(errors) == 1 and f"nothing answers at {url}" in errors[0] and not run.exists()
    peer = [*cli_overrides(url), "reward.options.on_unavailable=peer"]
    assert main(["config", "check", str(run_file), *peer]) == 0
    captured = capsys.readouterr()
    assert f"warning: reward.options.judge: judge 'openai': nothing answers at {url}" in captured.err
    assert "the run would train on the peer reward alone" in captured.err and captured.out.endswith(": ok\n")
