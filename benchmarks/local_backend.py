"""Performance of the local backend, each figure measured against its baseline in the same run.

    python benchmarks/local_backend.py            # everything (a few minutes on 2 cores)
    python benchmarks/local_backend.py sampler    # one part: sampler | debate | overhead | prefix

* ``sampler``: tokens/s of ``LocalSamplingClient.sample`` with 1, 3, 9 and 48 concurrent requests,
  against a bare batched decode loop with a preallocated KV cache on the same weights (the
  practical limit; target >= 0.9x) and against ``transformers``' ``generate`` (target >= 1.5x).
* ``debate``: wall time of one 3-agent, 3-round debate with parallel rounds against sequential
  turns (target <= 0.5x).
* ``overhead``: the share of RL iterations spent outside the model, i.e. outside the sampler
  and the training worker: prompt building, parsing, rewards, Datum assembly (target <= 5%).
* ``prefix``: prompt tokens run through the model per debate against the final transcript
  length, with and without the prefix cache (reuse keeps it close to 1x).

Timings drift by 20% on shared machines: read the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODEL = "embedded:debate-tiny"


def _service(**options: Any) -> Any:
    from debate_core.backends.local.service import LocalServiceClient

    return LocalServiceClient(**options)


def _prompts(tokenizer: Any, count: int, length: int) -> list[list[int]]:
    """``count`` different prompts of exactly ``length`` tokens (debate-like text)."""
    from debate_core.protocol.personas import DefaultPersonas

    prompts = []
    for i in range(count):
        text = DefaultPersonas().persona(i % 5, 3).system_prompt + f"\n\nQuestion: What is {i} + {2 * i + 7}?\n" * 8
        tokens = tokenizer.encode(text, add_special_tokens=False)
        prompts.append(tokens[len(tokens) - length :])
    return prompts


# ------------------------------------------------------------------ sampler


def _bare_loop(weights: Any, prompts: list[list[int]], new_tokens: int, seed: int) -> float:
    """The practical limit: prefill, then one fused forward per step, multinomial sampling."""
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
            probs = torch.softmax(logits, dim=-1)
            chosen = torch.multinomial(probs, 1, generator=generator)
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
    client.snapshot.prefix_cache.clear()
    new_tokens, length = 64, 256
    print(f"\nsampler: {MODEL}, {length}-token prompts, {new_tokens} new tokens a row, tokens/s, median of {repeats}")
    print(f"{'batch':>6}{'bare loop':>12}{'sampler':>10}{'generate':>10}{'vs bare':>9}{'vs generate':>13}")
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
        rate = {k: batch * new_tokens / statistics.median(v) for k, v in times.items()}
        print(
            f"{batch:>6}{rate['bare']:>12.0f}{rate['sampler']:>10.0f}{rate['generate']:>10.0f}"
            f"{rate['sampler'] / rate['bare']:>8.2f}x{rate['sampler'] / rate['generate']:>12.2f}x"
        )
    service.close()


# ------------------------------------------------------------------ debates


def _debate_setup(coordinator: str, tokenizer: Any, max_tokens: int, rounds: int = 3) -> Any:
    """3 agents, ``rounds`` rounds, plain personas at temperature 0 (the same sampled tokens
    under either protocol), the other components as a run file's defaults."""
    from debate_core.config import load_run_config
    from debate_core.plugins import get_registry
    from debate_core.protocol.episode import build_debate_setup

    overrides = [
        f"debate.coordinator.name={coordinator}",
        f"debate.max_rounds={rounds}",
        "debate.num_agents=3",
        f"debate.max_tokens={max_tokens}",
        "debate.personas.name=plain",
        "debate.temperature=0.0",
    ]
    config = load_run_config(None, overrides)
    return build_debate_setup(config, get_registry(), tokenizer)


def _run_debate(client: Any, setup: Any, seed: int) -> Any:
    from debate_core.protocol.episode import run_debate
    from debate_core.protocol.sampling_policy import SamplingClientPolicy
    from debate_core.protocol.tasks import Problem

    policy = SamplingClientPolicy(client, setup.renderer)
    problem = Problem(id="bench", question="What is 57 + 8?", answer="65")
    return asyncio.run(run_debate(problem, setup, [policy] * setup.num_agents, seed=seed))


RESPONSE = (
    "<solution>57 + 8 = 65. The answer is \\boxed{65}.</solution>\n"
    "<evaluation>The other agents' solutions look correct.</evaluation>\n"
    "<comparison>N/A</comparison>\n<consensus>NO</consensus>\n"
    "<consensus_reason>I want to check once more.</consensus_reason>"
)
"""What the benchmark model is trained to answer to every debate prompt: a well-formed
response that never agrees, so a debate always runs all its rounds."""


class _Canned:
    """A policy that answers ``RESPONSE`` (for collecting debate prompts to train on)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokens = tuple(tokenizer.encode(RESPONSE, add_special_tokens=False))

    async def sample(self, prompt: Any, *, stop: Any, temperature: float, max_tokens: int, seed: Any) -> Any:
        from debate_core.protocol.interfaces import SampledAction

        return SampledAction(self.tokens, tuple(0.0 for _ in self.tokens), RESPONSE, "stop")


def _responder(service: Any, steps: int = 150) -> Any:
    """A training client of ``MODEL`` trained for a few seconds to answer ``RESPONSE`` to the
    prompts of every round, so that benchmark debates parse and run their full length."""
    import numpy as np
    from tinker import types

    from debate_core.protocol.episode import run_debate
    from debate_core.protocol.tasks import Problem

    trainer = service.create_lora_training_client(MODEL, rank=0, seed=0).result()
    tokenizer = trainer.get_tokenizer()
    data = []
    for coordinator in ("sequential", "parallel"):
        setup = _debate_setup(coordinator, tokenizer, 96)
        canned = _Canned(tokenizer)
        for i in range(3):
            problem = Problem(id=f"warm-{i}", question=f"What is {40 + i} + {i + 3}?", answer=str(43 + 2 * i))
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
    loss = 0.0
    for _ in range(steps):
        batch = [data[i] for i in rng.choice(len(data), size=8, replace=False)]
        output = trainer.forward_backward(batch, "cross_entropy")
        trainer.optim_step(types.AdamParams(learning_rate=3e-3))
        loss = output.result().metrics["loss:sum"] / (8 * len(canned.tokens))
    print(f"  (benchmark model: {steps} steps to answer a fixed response, final loss/token {loss:.3f})")
    return trainer


def _sampled(episode: Any) -> int:
    return sum(len(t.action) for trajectory in episode.trajectories for t in trajectory.transitions)


def bench_debate(repeats: int) -> None:
    service = _service()
    trainer = _responder(service)
    client = trainer.save_weights_and_get_sampling_client().result()
    tokenizer = trainer.get_tokenizer()
    print(f"\ndebate: 3 agents, 3 rounds, 96 tokens per turn at most, {MODEL}, median of {repeats}")
    results = {}
    for name in ("sequential", "parallel"):
        setup = _debate_setup(name, tokenizer, 96)
        _run_debate(client, setup, seed=99)  # warm-up
        seconds, tokens = [], []
        for r in range(repeats):
            client.snapshot.prefix_cache.clear()
            start = time.perf_counter()
            episode = _run_debate(client, setup, seed=r)
            seconds.append(time.perf_counter() - start)
            tokens.append(_sampled(episode))
        results[name] = (statistics.median(seconds), statistics.median(tokens))
        print(f"  {name:<11} {results[name][0]:7.2f} s   {results[name][1]:6.0f} sampled tokens")
    ratio = results["parallel"][0] / results["sequential"][0]
    print(f"  parallel / sequential wall time: {ratio:.2f}x (target <= 0.5x)")
    service.close()


# ------------------------------------------------------------------ overhead


def _union(intervals: list[tuple[float, float]], start: float, end: float) -> float:
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
    import debate_core.builtin.backend_local as plugin
    from debate_core.config import load_run_config
    from debate_core.plugins import get_registry
    from debate_core.training.loop import run_training
    from debate_core.training.progress import Progress
    from debate_core.training.run_dir import fresh_run_directory

    built: list[Any] = []
    original = plugin.build_local_backend

    def keep(options: Any) -> Any:
        service = original(options)
        built.append(service)
        return service

    overrides = [
        f"model.base_model={MODEL}",
        "debate.coordinator.name=parallel",
        "debate.max_rounds=2",
        "debate.max_tokens=64",
        "reward.name=v2",
        "training.batch_size=8",
        f"training.num_iterations={iterations}",
        "training.save_every=0",
        "evaluation.num_problems=0",
        "logging.progress=off",
        "logging.num_groups_to_log=0",
    ]
    config = load_run_config(None, overrides)
    registry = get_registry()
    spec = registry.resolve("backend", "local")
    object.__setattr__(spec, "build", keep)
    with tempfile.TemporaryDirectory() as scratch:
        run_dir = fresh_run_directory(Path(scratch) / "run")
        start = time.perf_counter()
        asyncio.run(run_training(config, registry, run_dir, progress=Progress("off"), handle_signals=False))
        end = time.perf_counter()
        import json

        records = [json.loads(line) for line in (run_dir.root / "metrics.jsonl").read_text().splitlines()]
    object.__setattr__(spec, "build", original)
    service = built[0]
    iteration_time = sum(float(r.get("time/total", 0.0)) for r in records)
    # The training worker of the (only) training client and the sampler engine.
    from debate_core.backends.local.futures import OrderedWorker

    intervals = list(service.engine.busy_intervals)
    for worker in OrderedWorker.instances():
        if worker.name.startswith("debate-local-train"):
            intervals += list(worker.busy_intervals)
    model_time = _union(intervals, start, end)
    outside = max(iteration_time - model_time, 0.0)
    print(f"\noverhead: {iterations} RL iterations, 8 debates x 3 agents x 2 rounds, {MODEL}")
    print(f"  iteration time {iteration_time:.2f} s, inside the model {model_time:.2f} s")
    print(f"  share outside the model: {outside / iteration_time:.1%} (target <= 5%)")
    service.close()


# ------------------------------------------------------------------ prefix reuse


def bench_prefix() -> None:
    print(f"\nprefix reuse: one parallel debate, 3 agents x 3 rounds, {MODEL}")
    for label, megabytes in (("prefix cache on", 256), ("prefix cache off", 0)):
        service = _service(prefix_cache_mb=megabytes)
        trainer = _responder(service)
        client = trainer.save_weights_and_get_sampling_client().result()
        setup = _debate_setup("parallel", trainer.get_tokenizer(), 64)
        client.snapshot.prefix_cache.clear()
        cache = client.snapshot.prefix_cache
        cache.hit_tokens = cache.computed_tokens = 0
        episode = _run_debate(client, setup, seed=3)
        final = sum(
            len(trajectory.transitions[-1].observation) + len(trajectory.transitions[-1].action)
            for trajectory in episode.trajectories
        )
        computed = cache.computed_tokens
        print(
            f"  {label:<17} prompt tokens computed {computed:6d}, reused {cache.hit_tokens:6d}, "
            f"final transcript {final:6d}: {computed / final:.2f}x"
        )
        service.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", choices=["sampler", "debate", "overhead", "prefix"], default=[])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    parts = args.parts or ["sampler", "debate", "overhead", "prefix"]
    if "sampler" in parts:
        bench_sampler(args.repeats)
    if "debate" in parts:
        bench_debate(args.repeats)
    if "overhead" in parts:
        bench_overhead(iterations=4)
    if "prefix" in parts:
        bench_prefix()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
