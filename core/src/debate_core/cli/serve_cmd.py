"""``debate serve CHECKPOINT [section.key=value ...] [--host H] [--port P]``: a checkpoint's policy
behind an OpenAI-compatible HTTP API (docs/training.md#serving-a-policy)."""

from __future__ import annotations

import argparse
import signal
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from debate_core.cli.arguments import bounded_int
from debate_core.errors import DebateError

if TYPE_CHECKING:
    from debate_core.serve import EventLoopThread, PolicyServer, ServedPolicy


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve a checkpoint's policy over an OpenAI-compatible HTTP API",
        description=(
            "Serve a checkpoint's policy over HTTP as an OpenAI-compatible API (/v1/models, "
            "/v1/chat/completions, no streaming): the model 'debate' answers with a test-time debate's final "
            "answer, the policy's own name (the run directory's) with one sample, both as `debate run` would "
            "(the run's config.toml: backend, debate components, evaluation temperature). The first line "
            "printed is the URL. Ctrl-C stops it (docs/training.md#serving-a-policy)."
        ),
    )
    parser.add_argument(
        "checkpoint",
        metavar="CHECKPOINT",
        help="a run directory (its latest checkpoint), a manifest (checkpoints/step_*.json) or a backend path",
    )
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="overrides of the run's config")
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="the run file (default: the config.toml of CHECKPOINT's run)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=bounded_int(0, 65535), default=8000, help="the port (default 8000; 0 picks a free one)"
    )
    parser.add_argument("--name", help="the model name of one sample (default: the run directory's name)")
    parser.add_argument("--quiet", action="store_true", help="no line per request on standard error")
    parser.set_defaults(handler=run)


def run_directory_of(checkpoint: str) -> Path | None:
    """The run directory holding ``checkpoint`` (itself, or one of its parents with ``config.toml``
    beside ``checkpoints/``), None for a checkpoint outside any run directory."""
    if "://" in checkpoint:
        return None
    argument = Path(checkpoint)
    for candidate in [argument, *list(argument.parents)[:3]]:
        if (candidate / "config.toml").is_file() and (candidate / "checkpoints").is_dir():
            return candidate
    return None


def served_name(args: argparse.Namespace, run_dir: Path | None) -> str:
    """The model name of one plain sample: ``--name``, else the run directory's name."""
    from debate_core.serve import DEBATE_MODEL

    name = args.name if args.name is not None else (run_dir.resolve().name if run_dir is not None else "policy")
    if not name.strip() or not name.isprintable() or len(name) > 200:
        raise DebateError(f"--name {name[:40]!r}: a model name must be 1 to 200 printable characters")
    if name == DEBATE_MODEL:
        raise DebateError(f"the policy's name '{DEBATE_MODEL}' is the debate's model name: choose another with --name")
    return name


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    from debate_core.config import load_run_config
    from debate_core.plugin import get_registry
    from debate_core.runtime.context_guard import check_run_fits_context
    from debate_core.serve import EventLoopThread, ServedPolicy
    from debate_core.serve.http_server import print_log

    run_dir = run_directory_of(args.checkpoint)
    config_file = args.config if args.config is not None else (run_dir / "config.toml" if run_dir else None)
    if config_file is None:
        raise DebateError(
            f"{args.checkpoint}: no run directory holds this checkpoint (config.toml beside checkpoints/): "
            "give its run file with --config"
        )
    registry = get_registry()
    config = load_run_config(config_file, args.overrides, registry=registry)
    check_run_fits_context(config, registry)
    name = served_name(args, run_dir)
    loop = EventLoopThread()
    policy: ServedPolicy | None = None
    try:
        policy = loop.run(ServedPolicy.open(config, registry, args.checkpoint, name))
        server = _listen(policy, loop, args, None if args.quiet else print_log)
        _serve(server, policy)
    finally:
        if policy is not None:
            loop.run(policy.close())
        loop.stop()
    return 0


def _listen(
    policy: ServedPolicy, loop: EventLoopThread, args: argparse.Namespace, log: Callable[[str], None] | None
) -> PolicyServer:
    from debate_core.serve import PolicyServer

    try:
        return PolicyServer(policy, loop, args.host, args.port, log)
    except OSError as exc:
        raise DebateError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None


def _serve(server: PolicyServer, policy: ServedPolicy) -> None:
    """Print the URL first, then answer until Ctrl-C or SIGTERM."""
    models = ", ".join(policy.models)
    print(f"{server.url}  (debate serve: models {models}; Ctrl-C stops it)", flush=True)
    print(
        f"  try: curl {server.url}/chat/completions -H 'Content-Type: application/json' "
        f'-d \'{{"model": "{policy.models[1]}", "messages": [{{"role": "user", "content": "What is 2+3?"}}]}}\'',
        flush=True,
    )
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("debate serve: stopped", flush=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
