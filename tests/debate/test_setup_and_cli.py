"""``build_debate_setup`` from a run file, and the ``debate parse`` / ``debate run`` commands."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from debate_core.cli import main
from debate_core.config import load_run_config
from debate_core.debate.coordinators import ParallelCoordinator
from debate_core.debate.history_policies import LastRounds
from debate_core.debate.personas import PlainPersonas
from debate_core.debate.rendering import RoleColonRenderer
from debate_core.debate.setup import build_debate_setup
from debate_core.debate.transcripts import load_transcript
from debate_core.debate.xml_parser import XmlParser
from debate_core.errors import ConfigError
from debate_core.plugin import get_registry
from debate_core.runtime.session import BackendSession
from debate_core.testing.tokenizer import ByteTokenizer

from .helpers import response, sampled_future

RUN_FILE = """
[debate]
num_agents = 2
max_rounds = 2
max_tokens = 300
temperature = 0.5
coordinator = { name = "parallel", options = { blind_review = true } }
persona_set = { name = "plain" }
history_policy = { name = "last_k", options = { rounds = 1, max_chars_per_field = 50 } }
"""


def test_build_debate_setup_reads_the_debate_section(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(RUN_FILE, encoding="utf-8")
    setup = build_debate_setup(load_run_config(path, registry=get_registry()).debate, get_registry(), ByteTokenizer())
    assert (setup.num_agents, setup.max_rounds, setup.max_tokens, setup.temperature) == (2, 2, 300, 0.5)
    assert isinstance(setup.coordinator, ParallelCoordinator) and setup.coordinator.hide_comparisons
    assert isinstance(setup.persona_set, PlainPersonas) and isinstance(setup.parser, XmlParser)
    assert isinstance(setup.history_policy, LastRounds) and setup.history_policy.options.max_chars_per_field == 50
    assert isinstance(setup.renderer, RoleColonRenderer)


def test_bad_component_options_name_the_key_path() -> None:
    overrides = ["debate.history_policy.name=last_k", "debate.history_policy.options.rounds=0"]
    with pytest.raises(ConfigError, match=r"debate.history_policy.options.rounds: must be at least 1"):
        load_run_config(None, overrides, registry=get_registry())
    config = load_run_config(None, overrides, registry=None)
    with pytest.raises(ConfigError, match=r"debate.history_policy.options.rounds: must be at least 1"):
        build_debate_setup(config.debate, get_registry(), ByteTokenizer())


# ------------------------------------------------------------------ debate parse

TEXT = response("42", ["Agent 0 > Agent 1", "Agent 2 < Agent 1", "Agent 5 = Agent 0"])


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    try:
        code = main(argv)
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return code, out, err


def test_parse_prints_the_fields_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.txt"
    path.write_text(TEXT, encoding="utf-8")
    code, out, _ = run_cli(["parse", str(path)], capsys)
    data = json.loads(out)
    assert code == 0 and data["error"] is None
    assert data["solution"] == "42" and data["consensus"] is False and data["consensus_reason"] == "because"
    assert data["comparisons"] == [[0, ">", 1], [1, ">", 2], [5, "=", 0]]
    assert list(data["spans"]) == ["solution", "evaluation", "comparison", "consensus", "consensus_reason"]
    start, end = data["spans"]["solution"]
    assert TEXT[start:end] == "42"


def test_parse_reads_stdin_and_applies_authorship(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["parse", "-", "--author", "2", "--num-agents", "3"], capsys, stdin=TEXT)
    data = json.loads(out)
    assert code == 0 and data["comparisons"] == [[0, ">", 1]]
    assert (data["self_comparisons"], data["malformed_comparisons"]) == (1, 1)


def test_parse_reports_a_broken_response_with_exit_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["parse", "-"], capsys, stdin="<solution>1</solution>")
    data = json.loads(out)
    assert code == 1 and "<evaluation> is missing" in data["error"] and data["error_code"] == "missing_tag"


def test_parse_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["parse", str(tmp_path / "nope.txt")], capsys)
    assert code == 1 and "nope.txt: no such response file" in err and "Traceback" not in err
    code, _, err = run_cli(["parse", "-", "--author", "3", "--num-agents", "3"], capsys, stdin=TEXT)
    assert code == 1 and "--author 3 is not an agent of a 3-agent debate" in err


# ------------------------------------------------------------------ debate run


class FakeSession:
    """What ``open_session`` returns, over a scripted sampler that answers by agent persona."""

    backend_name = "fake"
    context_length = None

    def __init__(self) -> None:
        from debate_core.runtime.retries import RetryPolicy
        from debate_core.runtime.token_meter import TokenMeter

        self.tokenizer = ByteTokenizer()
        self.retry = RetryPolicy(max_attempts=1)
        self.tokens = TokenMeter()

    def sampling_client(self) -> Any:
        return FakeSamplingClient(self.tokenizer)

    sampler = BackendSession.sampler  # the one construction of a retrying sampler, over sampling_client()

    async def close(self, status: str = "success") -> None:
        self.closed = status


class FakeSamplingClient:
    def __init__(self, tokenizer: ByteTokenizer) -> None:
        self.tokenizer = tokenizer

    def sample(
        self,
        prompt: Any,
        num_samples: int,
        sampling_params: Any,
        include_prompt_logprobs: bool = False,
        topk_prompt_logprobs: int = 0,
    ) -> Any:
        text = self.tokenizer.decode(prompt.to_ints())
        agent = int(text.split("You are Agent ", 1)[1][0])
        solution = "\\boxed{42}" if agent != 2 else "\\boxed{41}"
        comparisons = {1: ["Agent 0 > Agent 2"], 2: ["Agent 0 > Agent 2", "Agent 1 = Agent 0"]}.get(agent, [])
        tokens = self.tokenizer.encode(response(solution, comparisons))
        return sampled_future(tokens)


@pytest.fixture
def fake_backend(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    from debate_core.cli import run_cmd

    opened: list[tuple[Any, ...]] = []

    def open_session(config: Any, registry: Any, checkpoint: str | None) -> FakeSession:
        opened.append((config, checkpoint))
        return FakeSession()

    monkeypatch.setattr(run_cmd, "_open_session", open_session)
    return opened


def test_run_prints_transcript_tally_and_final_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_backend: list[tuple[Any, ...]]
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text("[debate]\nmax_rounds = 1\n", encoding="utf-8")
    out_file = tmp_path / "t.json"
    code, out, err = run_cli(
        ["run", str(run_file), "grader.name=boxed", "--question", "6 * 7?", "--answer", "42", "--out", str(out_file)],
        capsys,
    )
    assert code == 0, err
    assert "--- Round 1, Agent 0 (Methodical Analyst) ---" in out and "\\boxed{41}" in out
    assert "Agent 0: 1 wins, 0 losses, 1 ties (2 votes)" in out and "Agent 2: 0 wins, 1 losses, 0 ties (1 votes)" in out
    # agent 2 calls agents 0 and 1 equal: half a vote each (agent 1 named agent 2 before it had answered)
    assert "Final answer: 42 (2 of 3 agents; vote_winner, vote score 0.5) [correct]" in out
    record = load_transcript(out_file)
    assert record.question == "6 * 7?" and record.answer == "42" and len(record.turns) == 3
    assert [t.grade for t in record.turns] == [1.0, 1.0, 0.0]
    assert fake_backend[0][1] is None


def test_run_many_questions_writes_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_backend: list[tuple[Any, ...]]
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "a?", "id": "first"}\n\n{"question": "b?", "answer": "42"}\n', encoding="utf-8")
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    out_file = tmp_path / "out.jsonl"
    code, out, _ = run_cli(
        [
            "run",
            str(run_file),
            "--questions",
            str(questions),
            "--set",
            "debate.max_rounds=1",
            "--quiet",
            "--out",
            str(out_file),
        ],
        capsys,
    )
    assert code == 0 and "=== Debate 2 of 2 (q1) ===" in out and "--- Round" not in out
    lines = out_file.read_text(encoding="utf-8").splitlines()
    assert [load_transcript(json.loads(line)).debate_id for line in lines] == ["first", "q1"]


def test_run_rejects_bad_questions_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_backend: Any) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "a?"}\n{"answer": 1}\n', encoding="utf-8")
    run_file = tmp_path / "run.toml"
    run_file.write_text("", encoding="utf-8")
    code, _, err = run_cli(["run", str(run_file), "--questions", str(questions)], capsys)
    assert code == 1 and "q.jsonl:2: 'question' must be a non-empty string" in err


class RecordingSamplingClient(FakeSamplingClient):
    """Records the temperature of every sample call."""

    temperatures: ClassVar[list[float]] = []

    def sample(self, prompt: Any, num_samples: int, sampling_params: Any, *rest: Any) -> Any:
        RecordingSamplingClient.temperatures.append(sampling_params.temperature)
        return super().sample(prompt, num_samples, sampling_params)


@pytest.mark.parametrize(
    ("run_file_text", "flag", "expected"),
    [
        ("[evaluation]\ntemperature = 0.7\n", [], 0.7),  # the evaluation temperature, as in `debate eval`
        ("[evaluation]\ntemperature = 0.7\n", ["--temperature", "0.2"], 0.2),  # unless told otherwise
        ("[debate]\ntemperature = 0.9\n", [], 0.9),  # no evaluation temperature: the run's own
    ],
)
def test_run_samples_at_the_evaluation_temperature_unless_told_otherwise(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    run_file_text: str,
    flag: list[str],
    expected: float,
) -> None:
    from debate_core.cli import run_cmd

    session = FakeSession()
    monkeypatch.setattr(session, "sampling_client", lambda: RecordingSamplingClient(session.tokenizer))
    monkeypatch.setattr(run_cmd, "_open_session", lambda config, registry, checkpoint: session)
    RecordingSamplingClient.temperatures = []
    run_file = tmp_path / "run.toml"
    run_file.write_text(
        run_file_text + "[debate.persona_set]\nname = 'default'\noptions = { use_persona_temperatures = false }\n"
    )
    code, _, err = run_cli(["run", str(run_file), "debate.max_rounds=1", "--question", "6 * 7?", *flag], capsys)
    assert code == 0, err
    assert RecordingSamplingClient.temperatures and set(RecordingSamplingClient.temperatures) == {expected}


def test_a_negative_temperature_flag_is_refused_at_config_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--temperature`` is the override ``evaluation.temperature``, checked with the run file before
    any backend opens."""
    from debate_core.cli import run_cmd

    def no_session(*args: Any) -> Any:
        raise AssertionError("a backend was opened")

    monkeypatch.setattr(run_cmd, "_open_session", no_session)
    run_file = tmp_path / "run.toml"
    run_file.write_text("")
    code, _, err = run_cli(["run", str(run_file), "--question", "6 * 7?", "--temperature", "-1"], capsys)
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert "evaluation.temperature" in err and "-1" in err, err


def test_run_shows_escape_sequences_in_model_text_without_obeying_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_backend: list[tuple[Any, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A policy that writes a window title, a cleared screen and a colour (docs/limits.md#text-on-a-terminal)."""
    import tests.debate.test_setup_and_cli as this

    plain = response

    def hostile(solution: str, comparisons: list[str]) -> str:
        return plain(solution + "\x1b]0;pwned\x07\x1b[2J\x1b[31m \u2713", comparisons)

    monkeypatch.setattr(this, "response", hostile)
    run_file = tmp_path / "run.toml"
    run_file.write_text("[debate]\nmax_rounds = 1\n", encoding="utf-8")
    code, out, err = run_cli(["run", str(run_file), "--question", "6 * 7?\x1b[5m", "--answer", "42"], capsys)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "\\boxed{42}\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m \u2713" in out and "Question: 6 * 7?\\x1b[5m" in out
