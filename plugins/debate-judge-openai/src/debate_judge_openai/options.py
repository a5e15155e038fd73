"""The options of the ``openai`` judge (``judge = { name = "openai", options = {...} }`` of
``judge_mix``); each is described in this distribution's README."""

from __future__ import annotations

import attrs
from attrs import validators as v

JUDGE_PROMPT = (
    "You compare two answers to the same question. Reply with one line and nothing else: "
    "'A > B' if answer A is better, 'B > A' if answer B is better, or 'A = B' if they are equally good."
)
"""The default system prompt: the same wording as debate-core's ``model`` judge."""


def _url(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"'{attribute.name}' must be an http:// or https:// URL, the API's base: {value[:80]!r}")


def _env_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value and not (value.replace("_", "a").isalnum() and value.isascii() and not value[0].isdigit()):
        raise ValueError(f"'{attribute.name}' must name an environment variable (letters, digits, '_'), not hold a key")


@attrs.frozen(kw_only=True)
class OpenAIJudgeOptions:
    """Options of the ``openai`` judge."""

    base_url: str = attrs.field(validator=_url)
    """The API's base URL, ``http://host:port/v1`` (what the ``openai`` client calls ``base_url``)."""
    model: str = attrs.field(validator=v.min_len(1))
    """The model name the endpoint serves (``/v1/models`` lists them)."""
    api_key_env: str = attrs.field(default="", validator=_env_name)
    """The name of the environment variable holding the API key (``OPENAI_API_KEY``); empty: no key
    (a local server). The key itself is read when the judge is built and never written anywhere."""
    max_tokens: int = attrs.field(default=16, validator=v.ge(1))
    """Tokens the judge may write for one verdict."""
    token_limit_name: str = attrs.field(default="max_tokens", validator=v.in_(("max_tokens", "max_completion_tokens")))
    """The request field that carries ``max_tokens`` (OpenAI's reasoning models take only ``max_completion_tokens``)."""
    temperature: float = attrs.field(default=0.0, validator=[v.ge(0.0), v.le(2.0)])
    seed: int = 0
    """Sent with every request (endpoints that sample by seed give the same verdict again)."""
    system_prompt: str = attrs.field(default=JUDGE_PROMPT, validator=v.min_len(1))
    both_orders: bool = True
    """Ask each pair in both orders; a verdict stands only when the two agree (else a tie, counted)."""
    concurrency: int = attrs.field(default=8, validator=[v.ge(1), v.le(256)])
    """Requests in flight at once."""
    timeout_s: float = attrs.field(default=60.0, validator=v.gt(0.0))
    """The time limit of one request, from sending to the whole answer."""
    max_retries: int = attrs.field(default=4, validator=[v.ge(0), v.le(20)])
    """Retries of a request after a timeout, a connection error, a 429, a 5xx or a garbled answer."""
    backoff_s: float = attrs.field(default=1.0, validator=v.ge(0.0))
    """The wait before the first retry; it doubles for each further one."""
    max_backoff_s: float = attrs.field(default=60.0, validator=v.ge(0.0))
    """The longest wait before a retry, a 429's ``Retry-After`` included."""
    failure_pause_s: float = attrs.field(default=60.0, validator=v.ge(0.0))
    """After a request failed on every try, requests starting within this many seconds are not sent
    (the pairs abstain at once), so a dead endpoint costs one request's retries per pause."""
    cache: bool = True
    """Keep every answer, keyed by its request, and answer a repeated request from it."""
    cache_path: str = ""
    """The cache file; empty: ``RUN_DIR/judges/openai-cache.jsonl`` in a training run (a resumed
    run reads it again), in memory only elsewhere."""
