"""The ``openai`` judge: each pair of solutions asked of a chat-completions endpoint, concurrently,
in both orders, through an answer cache; a pair it cannot get an answer for abstains."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import urllib.parse
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import openai

from debate_core import ConfigError, JudgeHost, JudgePair
from debate_judge_openai.cache import ResponseCache, request_key
from debate_judge_openai.endpoint import Failure, Sleep, ask
from debate_judge_openai.options import OpenAIJudgeOptions
from debate_judge_openai.prompts import both_orders_verdict, pair_messages, read_verdict

CACHE_FILE = "openai-cache.jsonl"
"""The cache's name in the run directory's ``judges/`` folder."""


def read_api_key(options: OpenAIJudgeOptions) -> str | None:
    """The key from the environment variable ``api_key_env`` names (None when it names none).

    Raises:
        ConfigError: the variable is named but not set.
    """
    if not options.api_key_env:
        return None
    name = options.api_key_env
    key = os.environ.get(name, "")
    if not key.strip():
        # a name in capitals is shown; anything else might be a key pasted in by mistake, and is not
        shown = repr(name) if name.isupper() and len(name) <= 64 else "(not shown: it is not in capitals)"
        raise ConfigError(
            f"judge 'openai': api_key_env = {shown}, but that environment variable is not set: "
            'export it before the run, or set api_key_env = "" for an endpoint without a key'
        )
    return key.strip()


class OpenAIJudge:
    """A judge behind an OpenAI-compatible endpoint (this distribution's README)."""

    def __init__(self, options: OpenAIJudgeOptions, *, sleep: Sleep = asyncio.sleep) -> None:
        self.options = options
        self._api_key = read_api_key(options)
        self._sleep = sleep
        self._counts: Counter[str] = Counter()
        self._caches: dict[Path | None, ResponseCache] = {}
        self._limit: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self._paused_until = 0.0
        self._failing = False

    def __repr__(self) -> str:  # never the key
        return f"OpenAIJudge(base_url={self.options.base_url!r}, model={self.options.model!r})"

    async def compare(self, pairs: Sequence[JudgePair], host: JudgeHost) -> list[int | None]:
        """One verdict per pair: +1, -1, 0, or None when the endpoint gave no answer for it."""
        if not pairs:
            return []
        cache = self._cache(getattr(host, "judge_dir", None))
        orders = (False, True) if self.options.both_orders else (False,)
        requests = {(i, swapped): self.request(pair, swapped) for i, pair in enumerate(pairs) for swapped in orders}
        keys = {slot: request_key(request) for slot, request in requests.items()}
        unique = {keys[slot]: request for slot, request in requests.items()}
        client = openai.AsyncOpenAI(base_url=self.options.base_url, api_key=self._api_key or "unused", max_retries=0)
        try:
            async with client, asyncio.TaskGroup() as group:  # a request that stops the run cancels the others
                tasks = {key: group.create_task(self._answer(client, cache, key, r)) for key, r in unique.items()}
        except ExceptionGroup as failed:  # the first error as it was raised (a ConfigError names the endpoint)
            raise failed.exceptions[0] from None
        replies = {key: task.result() for key, task in tasks.items()}
        return [self._verdict([replies[keys[(i, swapped)]] for swapped in orders]) for i in range(len(pairs))]

    def check(self) -> None:
        """Something answers at ``base_url`` (a TCP connection to its host and port, within
        ``timeout_s`` and at most 10 s): run before a run starts, so that a wrong host or port is
        found at once rather than after every request's retries.

        Raises:
            ConfigError: nothing answers there; the message names the URL and the reason.
        """
        url = urllib.parse.urlsplit(self.options.base_url)
        try:
            port = url.port or (443 if url.scheme == "https" else 80)
            with socket.create_connection((url.hostname or "", port), timeout=min(self.options.timeout_s, 10.0)):
                pass
        except (OSError, ValueError) as exc:
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise ConfigError(f"judge 'openai': nothing answers at {self.options.base_url} ({reason})") from None

    def request(self, pair: JudgePair, swapped: bool) -> dict[str, Any]:
        """The chat-completions request about ``pair`` (``swapped``: its second solution as ``A``)."""
        options = self.options
        return {
            "model": options.model,
            "messages": pair_messages(options.system_prompt, pair, swapped),
            options.token_limit_name: options.max_tokens,
            "temperature": options.temperature,
            "seed": options.seed,
        }

    def take_counts(self) -> dict[str, float]:
        """The counts since the last call (a ``CountingJudge``): requests, retries, each failure, the
        cache's hits, unreadable and inconsistent verdicts, tokens the endpoint reported."""
        counts, self._counts = self._counts, Counter()
        return {name: float(value) for name, value in sorted(counts.items())}

    def _cache(self, judge_dir: Path | None) -> ResponseCache:
        """The cache of this run: ``cache_path``, else the run directory's, else in memory."""
        options = self.options
        path: Path | None = None
        if options.cache and options.cache_path:
            path = Path(options.cache_path)
        elif options.cache and judge_dir is not None:
            path = Path(judge_dir) / CACHE_FILE
        if path not in self._caches:
            self._caches[path] = ResponseCache(path)
            self._counts["cache_damaged_lines"] += self._caches[path].damaged_lines
        return self._caches[path]

    def _semaphore(self) -> asyncio.Semaphore:
        """The concurrency limit of the running loop (a loop's semaphore cannot serve another)."""
        loop = asyncio.get_running_loop()
        if self._limit is None or self._limit[0] is not loop:
            self._limit = (loop, asyncio.Semaphore(self.options.concurrency))
        return self._limit[1]

    async def _answer(
        self, client: openai.AsyncOpenAI, cache: ResponseCache, key: str, request: Mapping[str, Any]
    ) -> str | None:
        """The reply to one request: from the cache, else from the endpoint (None when it failed)."""
        cached = cache.get(key) if self.options.cache else None
        if cached is not None:
            self._counts["cache_hits"] += 1
            return cached
        async with self._semaphore():
            if time.monotonic() < self._paused_until:
                self._counts["skipped"] += 1
                return None
            text, failure = await ask(client, request, self.options, self._counts, self._sleep)
        if text is None:
            self._failed(failure)
            return None
        self._failing = False
        if self.options.cache:
            cache.put(key, self.options.model, text)
        return text

    def _failed(self, failure: Failure | None) -> None:
        """A request failed for good: pause the endpoint, and say so once per outage."""
        self._paused_until = time.monotonic() + self.options.failure_pause_s
        if not self._failing and failure is not None:
            warnings.warn(
                f"judge 'openai': {self.options.base_url} failed after {self.options.max_retries + 1} tries "
                f"({failure.kind}: {failure.message[:200]}); its pairs get no verdict (judge_mix's on_unavailable "
                f"says what follows); requests pause for {self.options.failure_pause_s:g} s (judge/failed, "
                "judge/skipped)",
                stacklevel=2,
            )
        self._failing = True

    def _verdict(self, replies: Sequence[str | None]) -> int | None:
        """A pair's verdict from its replies (one per order asked): None when one is missing or
        cannot be read (counted ``unreadable``): a reply out of the verdict's format is no verdict,
        not a tie."""
        if any(reply is None for reply in replies):
            return None
        read = [read_verdict(reply or "") for reply in replies]
        unreadable = sum(v is None for v in read)
        self._counts["unreadable"] += unreadable
        if unreadable:
            return None
        verdicts = [v or 0 for v in read]
        if len(verdicts) == 1:
            return verdicts[0]
        verdict, consistent, flipped = both_orders_verdict(verdicts[0], verdicts[1])
        self._counts["inconsistent"] += int(not consistent)
        self._counts["flips"] += int(flipped)
        return verdict
