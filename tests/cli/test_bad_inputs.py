"""Every command over a corpus of bad inputs (docs/limits.md#what-a-bad-input-gets): each run must
end within its time and memory limits with a non-zero status and one error line, never a
traceback, a hang or a silent failure.

The subprocess corpus covers what only a real process shows (an endless file, output to a full
device, an ASCII terminal, memory and CPU limits); many more inputs run in-process through
``main`` (same handlers, no start-up cost)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import unicodedata
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import pytest

from debate_core.cli import main

pytestmark = pytest.mark.slow  # starts subprocesses or runs end to end: not in the quick loop

MEMORY_BYTES = 3 * 1024**3
"""Address space each command may use: far less than the allocations the limits prevent."""
CPU_SECONDS = 60
"""CPU time each command may use: an endless read or a runaway loop is stopped by this limit,
which load on the machine does not shorten."""
WALL_SECONDS = 300
"""A command still running after this long hangs (blocked, since ``CPU_SECONDS`` ends a busy one);
the slowest case, a command that imports torch, needs a small part of it on a loaded machine."""


def _limit_resources() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


@attrs.frozen
class Case:
    """One command line with a bad input; ``expect`` is a piece of the error line."""

    name: str
    argv: tuple[str, ...]
    expect: str
    env: tuple[tuple[str, str], ...] = ()
    stdout_to: str | None = None
    stdin_from: str | None = None


def _write(path: Path, data: str | bytes) -> str:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return str(path)


def _turn(round_: int, agent: int, text: str = "<solution>4</solution>") -> dict[str, object]:
    return {"round": round_, "agent": agent, "text": text}


def _corpus(tmp: Path) -> list[Case]:
    deep_json = _write(tmp / "deep.json", "[" * 200_000 + "]" * 200_000)
    big_int = _write(tmp / "bigint.json", '{"num_agents": 1' + "0" * 5000 + ', "turns": []}')
    agents = _write(tmp / "agents.json", json.dumps({"num_agents": 10_000_000, "turns": [_turn(1, 0)]}))
    with (tmp / "huge.json").open("w", encoding="utf-8") as handle:  # 17 MB of turns
        handle.write('{"num_agents": 3, "turns": [')
        handle.write(",".join(json.dumps(_turn(1 + k // 3, k % 3, "x" * 5000)) for k in range(3400)))
        handle.write("]}")
    huge = str(tmp / "huge.json")
    good = _write(tmp / "good.json", json.dumps({"num_agents": 2, "turns": [_turn(1, 0), _turn(1, 1)]}))
    deep_toml = _write(tmp / "deep.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    int_toml = _write(tmp / "int.toml", "[run]\nseed = 1" + "0" * 5000 + "\n")
    latin = _write(tmp / "latin.toml", b'[run]\nname = "caf\xe9"\n')
    unicode_name = _write(tmp / "unicode.toml", '[run]\nname = "d\u00e9bat \u2713"\n')
    questions = _write(tmp / "q.jsonl", '["not", "an", "object"]\n')
    response = _write(tmp / "r.txt", "<solution>\u00e9\u2713</solution>")
    return [
        Case("config check /dev/zero", ("config", "check", "/dev/zero"), "DEBATE_MAX_INPUT_BYTES"),
        Case("config show /dev/zero", ("config", "show", "/dev/zero"), "DEBATE_MAX_INPUT_BYTES"),
        Case("parse /dev/zero", ("parse", "/dev/zero"), "DEBATE_MAX_INPUT_BYTES"),
        Case("parse endless stdin", ("parse", "-"), "standard input", stdin_from="/dev/zero"),
        Case("score deep JSON", ("score", deep_json, "--reward", "v2"), "nested too deeply"),
        Case("score huge integer", ("score", big_int, "--reward", "v2"), "5001 digits"),
        Case("score 10 million agents", ("score", agents, "--reward", "v2"), "DEBATE_MAX_AGENTS"),
        Case("score 17 MB of turns", ("score", huge, "--reward", "v2"), "DEBATE_MAX_INPUT_BYTES"),
        Case("score --indent 100000000", ("score", good, "--reward", "v2", "--indent", "100000000"), "--indent"),
        Case("score to a full device", ("score", good, "--reward", "v2"), "No space left", stdout_to="/dev/full"),
        Case("config check deep TOML", ("config", "check", deep_toml), "nested too deeply"),
        Case("config check huge integer", ("config", "check", int_toml), "5001 digits"),
        Case("config check non-UTF-8", ("config", "check", latin), "not UTF-8"),
        Case("config show to a full device", ("config", "show", unicode_name), "No space left", stdout_to="/dev/full"),
        Case("plugins to a full device", ("plugins", "--json"), "No space left", stdout_to="/dev/full"),
        Case("train 10000 agents", ("train", "/dev/null", "debate.num_agents=10000"), "DEBATE_MAX_AGENTS"),
        Case("train past the context", ("train", "/dev/null", "debate.max_tokens=4096"), "debate.max_tokens"),
        Case("eval missing run file", ("eval", str(tmp / "missing.toml")), "no such run file"),
        Case("preflight deep override", ("preflight", "/dev/null", "run.seed=" + "[" * 500), "nested too deeply"),
        Case("run wrong JSON shape", ("run", "/dev/null", "--questions", questions), "expected a JSON object"),
        Case("score unknown reward", ("score", good, "--reward", "nope"), "nope"),
        Case("parse bad option", ("parse", response, "--num-agents", "1" + "0" * 5000), "--num-agents"),
        Case(
            "parse, ASCII terminal",
            ("parse", response),
            "<evaluation> is missing",
            env=(("PYTHONIOENCODING", "ascii"), ("LANG", "C"), ("LC_ALL", "C")),
        ),
    ]


def _run(case: Case) -> tuple[Case, int | None, str, str]:
    env = {key: value for key, value in os.environ.items() if key != "DEBATE_DEBUG"}
    env = {**env, "PYTHONIOENCODING": "utf-8", **dict(case.env)}
    stdout = open(case.stdout_to, "w") if case.stdout_to else subprocess.PIPE  # noqa: SIM115
    stdin = open(case.stdin_from, "rb") if case.stdin_from else subprocess.DEVNULL  # noqa: SIM115
    try:
        done = subprocess.run(
            [sys.executable, "-m", "debate_core.cli", *case.argv],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=env,
            timeout=WALL_SECONDS,
            preexec_fn=_limit_resources,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return case, None, "", ""
    finally:
        for handle in (stdout, stdin):
            if not isinstance(handle, int):
                handle.close()
    out = done.stdout.decode("utf-8", "replace") if isinstance(done.stdout, bytes) else ""
    return case, done.returncode, out, done.stderr.decode("utf-8", "replace")


def _problem(case: Case, code: int | None, out: str, err: str) -> str | None:
    lines = [line for line in err.splitlines() if not line.startswith("debate: warning:")]
    if code is None:
        return f"{case.name}: hung (no exit within {WALL_SECONDS} s)"
    if "Traceback" in err or "Exception ignored" in err:
        return f"{case.name}: traceback: {err[-600:]}"
    if case.name == "parse, ASCII terminal":  # a broken response: exit 1, the JSON says why
        return None if code == 1 and case.expect in out and not lines else f"{case.name}: {code} {out!r} {err!r}"
    if code == 0:
        return f"{case.name}: accepted (exit 0)"
    if len(lines) != 1:
        return f"{case.name}: exit {code} with {len(lines)} error lines: {err[-600:]!r}"
    if case.expect not in lines[0] or "error" not in lines[0]:
        return f"{case.name}: the line does not say {case.expect!r}: {lines[0]!r}"
    return None


def test_every_command_refuses_the_bad_input_corpus_in_one_line(tmp_path: Path) -> None:
    cases = _corpus(tmp_path)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_run, cases))
    problems = [p for p in (_problem(*result) for result in results) if p]
    assert not problems, "\n".join(problems)


def test_debate_debug_shows_the_traceback(tmp_path: Path) -> None:
    deep = _write(tmp_path / "deep.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    case, code, _, err = _run(Case("debug", ("config", "check", deep), ""))
    env_case = attrs.evolve(case, env=(("DEBATE_DEBUG", "1"),))
    _, debug_code, _, debug_err = _run(env_case)
    assert code == debug_code == 1
    assert "Traceback" not in err and "Traceback" in debug_err
    assert debug_err.splitlines()[-1] == err.splitlines()[-1]


# ------------------------------------------------------------------ in-process: many more inputs


def _transcripts() -> list[tuple[str, object, str]]:
    turn = _turn(1, 0)
    return [
        ("an empty list", [], "holds no transcripts"),
        ("a string", "x", "a transcript is a JSON object"),
        ("no turns", {"num_agents": 2}, "missing required key 'turns'"),
        ("agents a string", {"num_agents": "2", "turns": []}, "expected an integer"),
        ("agents a float", {"num_agents": 2.5, "turns": []}, "expected an integer"),
        ("agents zero", {"num_agents": 0, "turns": []}, "at least 1"),
        ("agents a list", {"num_agents": list(range(10_000)), "turns": []}, "a list of 10000 items"),
        ("turns an object", {"num_agents": 2, "turns": {"a": 1}}, "expected a list"),
        ("turn a number", {"num_agents": 2, "turns": [3]}, "expected an object"),
        ("round a huge integer", {"num_agents": 2, "turns": [{**turn, "round": 10**4000}]}, "about 4000 digits"),
        ("round past the limit", {"num_agents": 2, "turns": [{**turn, "round": 101}]}, "DEBATE_MAX_ROUNDS"),
        ("too many turns", {"num_agents": 2, "turns": [turn] * 10_001}, "DEBATE_MAX_TURNS"),
        ("a huge response", {"num_agents": 2, "turns": [{**turn, "text": "x" * 1_000_001}]}, "RESPONSE_CHARS"),
        ("text a huge list", {"num_agents": 2, "turns": [{**turn, "text": [0] * 100_000}]}, "a list of 100000"),
        ("agent out of range", {"num_agents": 2, "turns": [{**turn, "agent": 2}]}, "the debate has 2 agents"),
        ("max_rounds huge", {"num_agents": 2, "turns": [turn], "max_rounds": 10**100}, "DEBATE_MAX_ROUNDS"),
        ("parsed wrong", {"num_agents": 2, "turns": [{**turn, "parsed": [1]}]}, "expected an object"),
        ("format wrong", {"format": "x" * 10_000, "num_agents": 2, "turns": []}, "expected 'debate-transcript'"),
    ]


@pytest.mark.parametrize(("name", "data", "expect"), _transcripts(), ids=[t[0] for t in _transcripts()])
def test_score_refuses_each_wrong_transcript_in_one_short_line(
    name: str, data: object, expect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "t.json", json.dumps(data))
    code = main(["score", path, "--reward", "v2"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and expect in err and len(err) < 400, err


RUN_FILES: list[tuple[str, str, str]] = [
    ("a negative seed", "[run]\nseed = -5\n", "run.seed: must be >= 0"),
    ("unclosed table", "[run\n", "not valid TOML"),
    ("unknown key", "[debate]\nagents = 3\n", "unknown key"),
    ("string for int", '[debate]\nnum_agents = "many"\n', "expected an integer"),
    ("agents past the limit", "[debate]\nnum_agents = 101\n", "DEBATE_MAX_AGENTS"),
    ("rounds past the limit", "[debate]\nmax_rounds = 1000000\n", "DEBATE_MAX_ROUNDS"),
    ("tokens past the limit", "[debate]\nmax_tokens = 10000000\n", "DEBATE_MAX_TOKENS_PER_TURN"),
    ("a huge list for an int", "[debate]\nnum_agents = [" + "1," * 50_000 + "]\n", "a list of 50000 items"),
    ("a huge integer", "[debate]\nnum_agents = " + "9" * 4000 + "\n", "about 4000 digits"),
    ("deep options", "[reward]\nname = 'v2'\noptions = {a = " + "[" * 70 + "]" * 70 + "}\n", "nested too deeply"),
    ("a section that is a value", "debate = 3\n", "debate"),
]


@pytest.mark.parametrize(("name", "text", "expect"), RUN_FILES, ids=[r[0] for r in RUN_FILES])
def test_config_check_refuses_each_wrong_run_file_in_one_short_line(
    name: str, text: str, expect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "run.toml", text)
    code = main(["config", "check", path])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and expect in err and len(err) < 500, err


FAILURES: list[tuple[str, Callable[[], BaseException], str]] = [
    ("out of memory", MemoryError, "out of memory"),
    ("recursion", lambda: RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
    ("a full device", lambda: OSError(28, "No space left on device", "out.json"), "out.json: No space left on device"),
    ("a bug", lambda: KeyError("x" * 10_000), "internal error: KeyError"),
]


@pytest.mark.parametrize(("name", "make", "expect"), FAILURES, ids=[f[0] for f in FAILURES])
def test_any_failure_of_a_command_is_one_line(
    name: str,
    make: Callable[[], BaseException],
    expect: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from debate_core.cli import config_cmd

    def fail(args: object) -> int:
        raise make()

    monkeypatch.setattr(config_cmd, "run_reference", fail)
    monkeypatch.delenv("DEBATE_DEBUG", raising=False)
    code = main(["config", "reference"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and expect in err and "Traceback" not in err and len(err) < 400, err


# ------------------------------------------------------------------ hostile files: every command that reads one

HOSTILE_READERS: dict[str, tuple[str, ...]] = {
    "show": ("show", "{file}"),
    "score": ("score", "{file}", "--reward", "v2"),
    "parse": ("parse", "{file}"),
    "config check": ("config", "check", "{file}"),
    "run --questions": ("run", "/dev/null", "--questions", "{file}"),
    "report": ("report", "{run}"),
    "compare": ("compare", "{run}", "{run}", "--markdown"),
}
"""Every command that reads a file someone else may have written; ``{run}`` is a run directory whose
``config.toml`` and ``metrics.jsonl`` are both the hostile file."""
HOSTILE_CPU_SECONDS = 120
"""CPU time the driver of one hostile file may use for all the commands together."""
DRIVER = """
import contextlib, io, json, sys, time
from debate_core.cli import main
for name, argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    started = time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    print(json.dumps([name, code, out.getvalue(), err.getvalue(), time.process_time() - started]), flush=True)
"""
"""Runs each command line through ``main`` in one process (one start-up for all of them), under the
memory and CPU limits of the process."""


def _hostile_files(tmp: Path) -> dict[str, Path]:
    turns = [_turn(1, 0), _turn(1, 1)]
    transcript = json.dumps({"num_agents": 2, "question": "What is 2+2?", "turns": turns})
    contents: dict[str, str | bytes] = {
        "a huge integer (JSON)": '{"num_agents": 1' + "0" * 5000 + ', "turns": []}',
        "a huge integer (TOML)": "[run]\nseed = 1" + "0" * 5000 + "\n",
        "a float past the range": '{"num_agents": 1e999, "question": 1e999, "turns": []}',
        "deep nesting (JSON)": "[" * 200_000 + "]" * 200_000,
        "deep nesting (TOML)": "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
        "a UTF-8 byte order mark": b"\xef\xbb\xbf" + transcript.encode(),
        "UTF-16": transcript.encode("utf-16"),
        "Latin-1": b'{"num_agents": 2, "question": "caf\xe9", "turns": []}\n[run]\nname = "caf\xe9"\n',
        "NUL bytes": transcript.encode() + b"\x00" * 1000,
        "escape sequences": b'{"num_agents": 2, "question": "\x1b]0;pwned\x07\x1b[2J", "turns": [\x1b[31m',
        "a 17 MB line": '{"question": "' + "x" * (17 * 1024 * 1024) + '"}',
        "not JSON, not TOML": "{num_agents: 2,\n[run\nseed = = 3\n",
    }
    files = {}
    for index, (name, data) in enumerate(contents.items()):
        files[name] = Path(_write(tmp / f"hostile-{index}", data))
    zero = tmp / "hostile-zero"
    zero.symlink_to("/dev/zero")
    files["a symlink to /dev/zero"] = zero
    return files


def _hostile_run_directory(file: Path) -> Path:
    run = file.parent / f"{file.name}-run"
    run.mkdir()
    for name in ("config.toml", "metrics.jsonl"):
        if file.is_symlink():
            (run / name).symlink_to(file.resolve())
        else:
            (run / name).write_bytes(file.read_bytes())
    return run


def _drive(name: str, file: Path) -> list[tuple[str, str, int | None, str, str]]:
    """Every reader on ``file`` in one limited process: (file, command, exit status, out, err)."""
    run = _hostile_run_directory(file)
    argvs = [(command, [a.format(file=file, run=run) for a in argv]) for command, argv in HOSTILE_READERS.items()]
    env = {key: value for key, value in os.environ.items() if key != "DEBATE_DEBUG"}

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
        resource.setrlimit(resource.RLIMIT_CPU, (HOSTILE_CPU_SECONDS, HOSTILE_CPU_SECONDS))

    try:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, json.dumps(argvs)],
            capture_output=True,
            env={**env, "PYTHONIOENCODING": "utf-8"},
            timeout=WALL_SECONDS,
            preexec_fn=limits,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [(name, "(all)", None, "", f"hung: no exit within {WALL_SECONDS} s")]
    results = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    ran = [(name, command, code, out, err) for command, code, out, err, _ in results]
    if len(ran) < len(argvs):  # the process died: a limit, a crash
        ran.append((name, argvs[len(ran)][0], done.returncode, "", done.stderr.decode("utf-8", "replace")[-600:]))
    return ran


def _hostile_problem(file: str, command: str, code: int | None, out: str, err: str) -> str | None:
    where = f"{command} on {file}"
    lines = [line for line in err.splitlines() if not line.startswith("debate: warning:")]
    if code is None or "Traceback" in err or "Exception ignored" in err:
        return f"{where}: {err[-600:]}"
    shown = [c for c in out + err if unicodedata.category(c) == "Cc" and c not in "\n\t"]
    if shown:
        return f"{where}: control characters printed raw: {shown[:5]}"
    if command == "parse" and code == 1 and not lines and '"error"' in out:
        return None  # a broken response: its JSON says why
    if code == 0:
        return f"{where}: accepted (exit 0): {out[:200]!r}"
    if len(lines) != 1 or "error" not in lines[0]:
        return f"{where}: exit {code} with {len(lines)} error lines: {err[-600:]!r}"
    return None


def test_every_reader_refuses_every_hostile_file_in_one_line(tmp_path: Path) -> None:
    """Each file to ``show``, ``score``, ``parse``, ``config check``, ``run --questions``, ``report``
    and ``compare``: a non-zero exit, one error line (warnings aside), no traceback, nothing a
    terminal would obey, within the memory and CPU limits (docs/limits.md#hostile-files)."""
    files = _hostile_files(tmp_path)
    with ThreadPoolExecutor(max_workers=2) as pool:
        ran = [r for results in pool.map(_drive, files, files.values()) for r in results]
    assert {(file, command) for file, command, *_ in ran} == {(f, c) for f in files for c in HOSTILE_READERS}
    problems = [p for p in (_hostile_problem(*result) for result in ran) if p]
    assert not problems, "\n".join(problems)
