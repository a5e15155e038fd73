"""Performance of the local backend, each figure measured against its baseline in the same run.

    python benchmarks/local_backend.py                  # every part (about 10 minutes on 2 cores)
    python benchmarks/local_backend.py sampler prefix   # some parts: sampler | debate | overhead | prefix

Every part prints its measured figures, the ratio, the target and PASS or MISS; a summary
table closes the run.

* ``sampler``: tokens/s of ``LocalSamplingClient.sample`` with 1, 3, 9 and 48 concurrent requests
  (256-token prompts, 64 new tokens each, prefill included), against a bare batched decode loop
  with a preallocated KV cache on the same weights (the practical limit; target >= 0.9x) and
  against ``transformers``' ``generate`` (target >= 1.5x).
* ``debate``: wall time of one 3-agent, 3-round debate with parallel rounds against sequential
  turns (target <= 0.5x).
* ``overhead``: the share of RL iterations spent outside the model, i.e. while neither the sampler
  engine nor the training worker is busy: prompt building, parsing, rewards, Datum assembly
  (target <= 5%).
* ``prefix``: prompt tokens run through the model in one debate against the final transcript
  length, with the prefix cache (target <= 1.2x, our reading of "close to 1x") and without it.

The debate, overhead and prefix parts need debates that parse and run all their rounds, which
a model not trained on the output format does not do (its first answer is a parse error and
the debate aborts). So the script first trains ``embedded:debate-tiny`` with cross-entropy, in
batches of 2 debate prompts, until its greedy benchmark debates answer one fixed, well-formed
response that never agrees (``RESPONSE``) exactly (50 steps from the pretrained base weights,
about 250 from random ones; ``--responder-steps`` at most): the "responder". Its debates run
the real sampler on real prompts; only the text is canned. The RL iterations of ``overhead``
start from it.

Timings are the best of ``--repeats`` runs after a warm-up (the run least disturbed by other
load on a shared machine); ratios are the median of the ratios of runs made back to back.
Read the ratios; absolute figures drift with the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL = "embedded:debate-tiny"
PARTS = ("sampler", "debate", "overhead", "prefix")
SERVICE_OPTIONS: dict[str, Any] = {}
"""Options of every ``LocalServiceClient`` made here (``--threads`` sets ``num_threads``)."""


@dataclass(frozen=True)
class Result:
    part: str
    figure: str
    ratio: float
    target: str
    passed: bool


RESULTS: list[Result] = []


def _judge(part: str, figure: str, ratio: float, *, at_least: float | None = None, at_most: float | None = None) -> str:
    """Record one ratio against its target; returns ``"PASS"`` or ``"MISS"``."""
    if at_least is not None:
        target, passed = f">= {at_least:g}x", ratio >= at_least
    else:
        assert at_most is not None
        target, passed = f"<= {at_most:g}x", ratio <= at_most
    RESULTS.append(Result(part, figure, ratio, target, passed))
    return "PASS" if passed else "MISS"


def _service(**options: Any) -> Any:
    from debate_core.backends.local.service import LocalServiceClient

    return LocalServiceClient(**{**SERVICE_OPTIONS, **options})


def _best(samples: list[float]) -> float:
    return min(samples)


def _prompts(tokenizer: Any, count: int, length: int) -> list[list[int]]:
    """``count`` different prompts of exactly ``length`` tokens (debate-like text)."""
    from debate_core.debate import XML_CONTRACT, DefaultPersonas, system_prompt

    prompts = []
    for i in range(count):
        persona = DefaultPersonas().persona(i % 5, 3)
        text = system_prompt(persona, XML_CONTRACT, i % 5) + f"\n\nQuestion: What is {i} + {2 * i + 7}?\n" * 8
        tokens = tokenizer.encode(text, add_special_tokens=False)
        prompts.append(tokens[len(tokens) - length :])
    return prompts


# ------------------------------------------------------------------ sampler


def _bare_loop(weights: Any, prompts: list[list[int]], new_tokens: int, seed: int) -> float:
    """The practical limit: prefill, then one fused forward per step, one vectorised draw per step."""
    import torch

    from debate_core.backends.local import fast_decoder as fd

    start = time.perf_counter()
    with torch.no_grad():
        rows, length = len(prompts), len(prompts[0])
        cache = fd.KVBatch.allocate(weights, rows, length + new_tokens)
        tokens = torch.tensor(prompts)
        positions = torch.arange(length).expand(rows, length)
        last = torch.zeros((rows, length), dtype=torch.bool)
        last[:, -1] = True
        logits = fd.logits_of(weights, fd.forward(weights, tokens, positions, cache, output_rows=last))
        generator = torch.Generator().manual_seed(seed)
        for step in range(new_tokens):
            # One generator for the batch, inverse-CDF draw (cheaper than torch.multinomial).
            cdf = torch.softmax(logits, dim=-1).double().cumsum(dim=-1)
            uniform = torch.rand((rows, 1), generator=generator, dtype=torch.float64)
            chosen = torch.searchsorted(cdf, uniform * cdf[:, -1:], right=True).clamp_(max=cdf.shape[1] - 1)
            if step == new_tokens - 1:
                break
            position = torch.full((rows, 1), length + step)
            logits = fd.logits_of(weights, fd.forward(weights, chosen, position, cache))[:, 0]
    return time.perf_counter() - start


def _sampler(client: Any, prompts: list[list[int]], new_tokens: int) -> float:
    from tinker import types

    start = time.perf_counter()
    futures = [
        client.sample(
            types.ModelInput.from_ints(p),
            1,
            types.SamplingParams(max_tokens=new_tokens, temperature=1.0, seed=i, stop=[]),
        )
        for i, p in enumerate(prompts)
    ]
    for future in futures:
        assert len(future.result().sequences[0].tokens) == new_tokens
    return time.perf_counter() - start


def _generate(module: Any, prompts: list[list[int]], new_tokens: int) -> float:
    import torch

    start = time.perf_counter()
    with torch.no_grad():
        out = module.generate(
            torch.tensor(prompts),
            attention_mask=torch.ones((len(prompts), len(prompts[0])), dtype=torch.long),
            do_sample=True,
            top_k=0,
            top_p=1.0,
            temperature=1.0,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            pad_token_id=0,
        )
    assert out.shape[1] == len(prompts[0]) + new_tokens
    return time.perf_counter() - start


def bench_sampler(repeats: int) -> None:
    import torch

    from debate_core.backends.local.fast_decoder import extract_weights

    service = _service()
    trainer = service.create_lora_training_client(MODEL, rank=0, seed=0).result()
    module = trainer.module
    weights = extract_weights(module)
    client = trainer.save_weights_and_get_sampling_client().result()
    new_tokens, length = 64, 256
    print(
        f"\nsampler: {MODEL}, {length}-token prompts, {new_tokens} new tokens a row, tokens/s (best of {repeats}; "
        f"ratios: median over {repeats} back-to-back rounds)"
    )
    header = f"{'batch':>6}{'bare loop':>11}{'sampler':>9}{'generate':>10}   "
    print(header + f"{'vs bare (>= 0.9x)':<19}vs generate (>= 1.5x)")
    torch.manual_seed(0)
    for batch in (1, 3, 9, 48):
        prompts = _prompts(trainer.get_tokenizer(), batch, length)
        times: dict[str, list[float]] = {"bare": [], "sampler": [], "generate": []}
        for r in range(repeats + 1):
            client.snapshot.prefix_cache.clear()  # no reuse between repeats: each run computes its prompts
            measured = {
                "bare": _bare_loop(weights, prompts, new_tokens, r),
                "sampler": _sampler(client, prompts, new_tokens),
                "generate": _generate(module, prompts, new_tokens),
            }
            if r:  # the first round warms up
                for key, value in measured.items():
                    times[key].append(value)
        rate = {k: batch * new_tokens / _best(v) for k, v in times.items()}
        # Ratios of the runs made back to back (less exposed to drifting load than ratios of bests).
        vs_bare = statistics.median(b / s for b, s in zip(times["bare"], times["sampler"], strict=True))
        vs_generate = statistics.median(g / s for g, s in zip(times["generate"], times["sampler"], strict=True))
        bare_verdict = _judge("sampler", f"batch {batch}: sampler / bare loop", vs_bare, at_least=0.9)
        generate_verdict = _judge("sampler", f"batch {batch}: sampler / generate", vs_generate, at_least=1.5)
        print(
            f"{batch:>6}{rate['bare']:>11.0f}{rate['sampler']:>9.0f}{rate['generate']:>10.0f}   "
            f"{f'{vs_bare:.2f}x {bare_verdict}':<19}{vs_generate:.2f}x {generate_verdict}"
        )
    service.close()


# ------------------------------------------------------------------ the responder and debates


RESPONSE = (
    "<solution>57 + 8 = 65. The answer is \\boxed{65}.</solution>\n"
    "<evaluation>The other agents' solutions look correct.</evaluation>\n"
    "<comparison>N/A</comparison>\n<consensus>NO</consensus>\n"
    "<consensus_reason>I want to check once more.</consensus_reason>"
)
"""What the responder answers to every debate prompt: a well-formed response that never
agrees, so a debate always runs all its rounds."""


def _debate_config(coordinator: str, max_tokens: int, personas: str = "plain", rounds: int = 3) -> list[str]:
    return [
        f"model.base_model={MODEL}",
        f"debate.coordinator.name={coordinator}",
        f"debate.max_rounds={rounds}",
        "debate.num_agents=3",
        f"debate.max_tokens={max_tokens}",
        f"debate.persona_set.name={personas}",
    ]


def _debate_setup(coordinator: str, tokenizer: Any, max_tokens: int, personas: str = "plain") -> Any:
    """3 agents, 3 rounds, at temperature 0 (the same sampled tokens under either protocol),
    the other components as a run file's defaults."""
    from debate_core.config import load_run_config
    from debate_core.debate.episode import build_debate_setup
    from debate_core.plugins import get_registry

    overrides = [*_debate_config(coordinator, max_tokens, personas), "debate.temperature=0.0"]
    if personas == "default":
        overrides.append("debate.persona_set.options.use_persona_temperatures=false")
    config = load_run_config(None, overrides, registry=get_registry())
    return build_debate_setup(config.debate, get_registry(), tokenizer)


def _run_debate(client: Any, setup: Any, seed: int, question: str = "What is 57 + 8?", answer: str = "65") -> Any:
    from debate_core.debate.episode import run_debate
    from debate_core.debate.sampling_policy import SamplingClientPolicy
    from debate_core.records import Problem

    policy = SamplingClientPolicy(client, setup.renderer)
    problem = Problem(id="bench", question=question, answer=answer)
    return asyncio.run(run_debate(problem, setup, [policy] * setup.num_agents, seed=seed))


class _Canned:
    """A policy that answers ``RESPONSE`` (to collect the debate prompts the responder trains on)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokens = tuple(tokenizer.encode(RESPONSE, add_special_tokens=False))

    async def sample(self, prompt: Any, *, stop: Any, temperature: float, max_tokens: int, seed: Any) -> Any:
        from debate_core.records import SampledAction

        return SampledAction(self.tokens, tuple(0.0 for _ in self.tokens), RESPONSE, "stop")


_RESPONDER: dict[str, Any] = {"max_steps": 600}
RESPONDER_LR = 3e-3
RESPONDER_BATCH = 2
RESPONDER_CHECK_EVERY = 50


def _responder_path() -> str:
    """The responder's checkpoint (trained on first use, once per process)."""
    if "path" not in _RESPONDER:
        _RESPONDER["path"] = _train_responder(_RESPONDER["max_steps"])
    return str(_RESPONDER["path"])


def _responder(service: Any) -> Any:
    """A training client of ``service`` with the responder's weights."""
    return service.create_training_client_from_state(_responder_path()).result()


def _train_responder(max_steps: int) -> str:
    """Train ``MODEL`` to answer ``RESPONSE`` to the prompts of every round (sequential and
    parallel turns, plain and default personas, the benchmark's question and two others);
    returns the checkpoint path. Every ``RESPONDER_CHECK_EVERY`` steps it plays the benchmark's
    sequential and parallel debates greedily, and stops once every answer is ``RESPONSE``
    exactly (on other questions, as in the RL iterations, it is right almost always)."""
    import numpy as np
    from tinker import types

    from debate_core.debate.episode import run_debate
    from debate_core.records import Problem

    started = time.perf_counter()
    directory = tempfile.mkdtemp(prefix="debate-bench-responder-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    service = _service(state_directory=directory)
    trainer = service.create_lora_training_client(MODEL, rank=0, seed=0).result()
    tokenizer = trainer.get_tokenizer()
    canned = _Canned(tokenizer)
    data = []
    for coordinator, personas in (("sequential", "plain"), ("parallel", "plain"), ("parallel", "default")):
        setup = _debate_setup(coordinator, tokenizer, 96, personas)
        for i, (a, b) in enumerate(((57, 8), (40, 3), (53, 10))):  # the first is the benchmark debates' question
            problem = Problem(id=f"warm-{i}", question=f"What is {a} + {b}?", answer=str(a + b))
            episode = asyncio.run(run_debate(problem, setup, [canned] * 3, seed=i))
            for trajectory in episode.trajectories:
                for transition in trajectory.transitions:
                    full = list(transition.observation) + list(canned.tokens)
                    weights = [0.0] * (len(transition.observation) - 1) + [1.0] * len(canned.tokens)
                    data.append(
                        types.Datum(
                            model_input=types.ModelInput.from_ints(full[:-1]),
                            loss_fn_inputs={"target_tokens": full[1:], "weights": np.asarray(weights, np.float32)},
                        )
                    )
    rng = np.random.default_rng(0)
    loss, batch = 0.0, RESPONDER_BATCH
    steps, exact = 0, False
    while steps < max_steps and not exact:
        for _ in range(RESPONDER_CHECK_EVERY):
            chosen = [data[i] for i in rng.choice(len(data), size=batch, replace=False)]
            output = trainer.forward_backward(chosen, "cross_entropy")
            trainer.optim_step(types.AdamParams(learning_rate=RESPONDER_LR))
            steps += 1
        loss = output.result().metrics["loss:sum"] / (batch * len(canned.tokens))
        client = trainer.save_weights_and_get_sampling_client().result()
        exact = all(
            _answers_exactly(_run_debate(client, _debate_setup(name, tokenizer, 96), seed=0))
            for name in ("sequential", "parallel")
        )
    path = trainer.save_state("responder").result().path
    service.close()
    print(
        f"\n(responder: {MODEL} trained {steps} cross-entropy steps of {batch} debate prompts to answer a fixed "
        f"well-formed response, final loss {loss:.3f}/token, {time.perf_counter() - started:.0f} s; "
        + ("its benchmark debates answer it exactly)" if exact else "WARNING: its benchmark debates still differ)")
    )
    return path


def _answers_exactly(episode: Any) -> bool:
    record = episode.record
    full = not record.aborted and record.rounds_played == record.max_rounds
    return full and all(turn.text == RESPONSE for turn in record.turns)


def _sampled(episode: Any) -> int:
    return sum(len(t.action) for trajectory in episode.trajectories for t in trajectory.transitions)


def _check_full_length(episode: Any, label: str) -> None:
    record = episode.record
    if record.aborted or record.rounds_played < record.max_rounds:
        print(
            f"  WARNING: the {label} debate played {record.rounds_played}/{record.max_rounds} rounds "
            f"(aborted: {record.abort_reason}); the responder did not learn its answer"
        )


def bench_debate(repeats: int) -> None:
    service = _service()
    trainer = _responder(service)
    client = trainer.save_weights_and_get_sampling_client().result()
    tokenizer = trainer.get_tokenizer()
    print(
        f"\ndebate: one debate, 3 agents x 3 rounds, the responder at temperature 0, wall time "
        f"(best of {repeats}; ratio: median over {repeats} back-to-back pairs)"
    )
    setups = {name: _debate_setup(name, tokenizer, 96) for name in ("sequential", "parallel")}
    seconds: dict[str, list[float]] = {name: [] for name in setups}
    episodes: dict[str, Any] = {}
    for r in range(repeats + 1):
        for name, setup in setups.items():
            client.snapshot.prefix_cache.clear()  # a new debate: nothing of it is cached yet
            start = time.perf_counter()
            episode = _run_debate(client, setup, seed=r)
            if r:  # the first pair warms up
                seconds[name].append(time.perf_counter() - start)
                episodes[name] = episode
                _check_full_length(episode, name)
    for name, episode in episodes.items():
        print(
            f"  {name:<11} {_best(seconds[name]):6.2f} s   {_sampled(episode):4d} sampled tokens, "
            f"{episode.record.rounds_played} rounds"
        )
    ratio = statistics.median(p / s for p, s in zip(seconds["parallel"], seconds["sequential"], strict=True))
    verdict = _judge("debate", "parallel / sequential wall time", ratio, at_most=0.5)
    print(f"  parallel / sequential wall time: {ratio:.2f}x (target <= 0.5x) {verdict}")
    service.close()


# ------------------------------------------------------------------ overhead


def _union(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Total length of the union of ``intervals`` clipped to ``[start, end]``."""
    clipped = sorted((max(a, start), min(b, end)) for a, b in intervals if b > start and a < end)
    total, current_start, current_end = 0.0, None, None
    for a, b in clipped:
        if current_end is None or a > current_end:
            if current_end is not None and current_start is not None:
                total += current_end - current_start
            current_start, current_end = a, b
        else:
            current_end = max(current_end, b)
    if current_end is not None and current_start is not None:
        total += current_end - current_start
    return total


def bench_overhead(iterations: int) -> None:
    """RL iterations through ``run_training`` on the local backend, starting from the responder.

    Each iteration's window is timed around ``Trainer._iteration``; the model's time is the
    union of the sampler engine's and the training worker's busy intervals within those
    windows; the rest (the asyncio thread building prompts, parsing, scoring, assembling
    Datums, and waiting for it) is outside the model.
    """
    import debate_core.builtin.backend_local as plugin
    from debate_core.backends.local.futures import OrderedWorker
    from debate_core.config import load_run_config
    from debate_core.plugins import get_registry
    from debate_core.training.loop import Trainer, run_training
    from debate_core.training.progress import Progress
    from debate_core.training.run_dir import fresh_run_directory

    path = _responder_path()
    built: list[Any] = []
    original_build = plugin.build_local_backend

    def from_responder(options: Any) -> Any:
        """The local backend, whose new training clients start from the responder's weights."""
        service = original_build(options)
        service.create_lora_training_client = lambda *args, **kwargs: service.create_training_client_from_state(path)
        built.append(service)
        return service

    windows: list[tuple[float, float]] = []
    original_iteration = Trainer._iteration

    async def timed(self: Any, iteration: int) -> Any:
        start = time.perf_counter()
        try:
            return await original_iteration(self, iteration)
        finally:
            windows.append((start, time.perf_counter()))

    overrides = [
        *_debate_config("parallel", 96, personas="default"),
        "reward.name=v2",
        "training.batch_size=8",
        f"training.num_iterations={iterations}",
        "training.save_every=0",
        "evaluation.num_problems=0",
        "logging.progress=off",
        "logging.num_groups_to_log=0",
    ]
    if SERVICE_OPTIONS.get("num_threads"):
        overrides += ["backend.name=local", f"backend.options.num_threads={SERVICE_OPTIONS['num_threads']}"]
    config = load_run_config(None, overrides, registry=get_registry())
    registry = get_registry()
    spec = registry.resolve("backend", "local")
    object.__setattr__(spec, "build", from_responder)
    Trainer._iteration = timed  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as scratch:
            run_dir = fresh_run_directory(Path(scratch) / "run")
            asyncio.run(run_training(config, registry, run_dir, progress=Progress("off"), handle_signals=False))
            records = [json.loads(line) for line in (run_dir.root / "metrics.jsonl").read_text().splitlines()]
    finally:
        object.__setattr__(spec, "build", original_build)
        Trainer._iteration = original_iteration  # type: ignore[method-assign]
    service = built[0]
    intervals = list(service.engine.busy_intervals)
    for worker in OrderedWorker.instances():
        if worker.name.startswith("debate-local-train"):
            intervals += list(worker.busy_intervals)
    total = sum(end - start for start, end in windows)
    model = sum(_union(intervals, start, end) for start, end in windows)
    rl = [r for r in records if r.get("phase") == "rl"]
    parse_errors = statistics.mean(float(r.get("parse_error", 0.0)) for r in rl) if rl else float("nan")
    rounds = statistics.mean(float(r.get("debate/rounds_played", float("nan"))) for r in rl) if rl else float("nan")
    share = max(total - model, 0.0) / total
    verdict = _judge("overhead", "share of RL iteration time outside the model", share * 100, at_most=5)
    print(
        f"\noverhead: {iterations} RL iterations from the responder (8 debates x 3 agents x 3 rounds, parallel, "
        f"default personas, reward v2, importance_sampling)"
    )
    print(f"  parse errors {parse_errors:.2f} a turn, {rounds:.1f} rounds a debate")
    print(f"  iteration time {total:.2f} s, inside the model {model:.2f} s, outside {total - model:.2f} s")
    print(f"  share outside the model: {share:.1%} (target <= 5%) {verdict}")
    service.close()


# ------------------------------------------------------------------ prefix reuse


def bench_prefix() -> None:
    print("\nprefix reuse: one parallel debate of the responder, 3 agents x 3 rounds")
    for label, megabytes in (("prefix cache on", 256), ("prefix cache off", 0)):
        service = _service(prefix_cache_mb=megabytes)
        trainer = _responder(service)
        client = trainer.save_weights_and_get_sampling_client().result()
        setup = _debate_setup("parallel", trainer.get_tokenizer(), 96)
        cache = client.snapshot.prefix_cache
        cache.clear()
        cache.hit_tokens = cache.computed_tokens = 0
        episode = _run_debate(client, setup, seed=3)
        _check_full_length(episode, "prefix")
        final = sum(
            len(trajectory.transitions[-1].observation) + len(trajectory.transitions[-1].action)
            for trajectory in episode.trajectories
        )
        computed = cache.computed_tokens
        ratio = computed / final
        verdict = ""
        if megabytes:
            figure = "prompt tokens computed / final transcript"
            verdict = " (target <= 1.2x) " + _judge("prefix", figure, ratio, at_most=1.2)
        print(
            f"  {label:<17} prompt tokens computed {computed:5d}, reused {cache.hit_tokens:5d}, "
            f"final transcripts {final:5d}: {ratio:.2f}x{verdict}"
        )
        service.close()


# ------------------------------------------------------------------ main


def _summary() -> None:
    if not RESULTS:
        return
    print("\nsummary")
    width = max(len(r.figure) for r in RESULTS)
    for r in RESULTS:
        unit = "%" if r.part == "overhead" else "x"
        value = f"{r.ratio:.1f}%" if unit == "%" else f"{r.ratio:.2f}x"
        target = r.target.replace("x", "%") if unit == "%" else r.target
        print(f"  {r.part:<9} {r.figure:<{width}}  {value:>7}  target {target:<8} {'PASS' if r.passed else 'MISS'}")


def main(argv: list[str]) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", metavar="part", help=f"any of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per figure, after one warm-up")
    parser.add_argument("--iterations", type=int, default=4, help="RL iterations of the overhead part")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: the backend default)")
    parser.add_argument("--responder-steps", type=int, default=600, help="training steps of the responder at most")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown parts {unknown}; the parts are {', '.join(PARTS)}")
    parts = args.parts or list(PARTS)
    _RESPONDER["max_steps"] = args.responder_steps
    if args.threads:
        SERVICE_OPTIONS["num_threads"] = args.threads
    _service().close()  # applies the thread settings
    print(
        f"local backend benchmark: {MODEL}, torch {torch.__version__}, {torch.get_num_threads()} CPU threads, "
        f"parts: {', '.join(parts)}"
    )
    steps: dict[str, Callable[[], None]] = {
        "sampler": lambda: bench_sampler(args.repeats),
        "debate": lambda: bench_debate(args.repeats),
        "overhead": lambda: bench_overhead(args.iterations),
        "prefix": bench_prefix,
    }
    for part in PARTS:
        if part in parts:
            steps[part]()
    _summary()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
