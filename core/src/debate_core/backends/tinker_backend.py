"""The ``tinker`` backend: the real Tinker SDK against the Tinker service (or any server that
speaks its API, through ``base_url`` or ``TINKER_BASE_URL``).

The SDK's ``ServiceClient`` already is the contract; :class:`TinkerService` adds the checks
that turn the service's late errors into early, clear ones (a credential the SDK can use, a
LoRA rank of at least 1), the model's context length for the trainer's context guard, and the
lifetime of periodic checkpoints on the service.

Credentials are the SDK's: the key in ``api_key_env`` when that variable is set, otherwise
whatever the SDK finds itself (``TINKER_API_KEY``, ``TINKER_CREDENTIAL_CMD``, a key stored by
``tinker auth login``). The key is handed to the SDK and never written anywhere.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import attrs
from attrs import validators as v

from debate_core.backends.off_thread import OffThread
from debate_core.backends.reachability import check_reachable
from debate_core.backends.tinker_clients import TinkerSamplingClient, TinkerTrainingClient
from debate_core.backends.tinker_restore import restored_training_client
from debate_core.errors import ConfigError, PluginError

if TYPE_CHECKING:
    import tinker

    from debate_core.backends.contract import APIFutureLike, SamplingClientLike, TrainingClientLike

S = TypeVar("S")

logger = logging.getLogger(__name__)

API_KEY_PREFIX = "tml-"
SDK_KEY_VARIABLE = "TINKER_API_KEY"
MIN_TTL_S = 3600
"""The service keeps a checkpoint at least an hour (``ttl_seconds`` between 1 hour and 10 years)."""
MAX_TTL_S = 10 * 365 * 24 * 3600
DEFAULT_CHECKPOINT_TTL_S = 7 * 24 * 3600
DEFAULT_SERVER_ERROR_LIMIT_S = 120.0


def _check_ttl(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value != 0 and not MIN_TTL_S <= value <= MAX_TTL_S:
        raise ValueError(
            f"'{attribute.name}' must be 0 (never expire) or between {MIN_TTL_S} (one hour) and "
            f"{MAX_TTL_S} (ten years) seconds, got {value}"
        )


@attrs.frozen(kw_only=True)
class TinkerOptions:
    """Options of the ``tinker`` backend (``[backend.options]``)."""

    base_url: str | None = None
    """The service URL; unset: ``TINKER_BASE_URL`` or the SDK's default (the Tinker service)."""
    api_key_env: str = attrs.field(default=SDK_KEY_VARIABLE, validator=v.min_len(1))
    """The environment variable that holds the API key (never put keys in run files). When it is
    unset, the SDK looks for a credential itself: ``TINKER_API_KEY``, ``TINKER_CREDENTIAL_CMD``,
    or a key stored with ``tinker auth login``."""
    project_id: str | None = None
    """A Tinker project to bill; unset: ``TINKER_PROJECT_ID`` or the account default."""
    checkpoint_ttl_s: int = attrs.field(default=DEFAULT_CHECKPOINT_TTL_S, validator=_check_ttl)
    """Seconds the service keeps the periodic checkpoints (training state and sampler weights);
    0 keeps them until deleted. The last checkpoint of a run, and those written on a stop signal or
    before a failure exits, never expire."""
    server_error_limit_s: float = attrs.field(default=DEFAULT_SERVER_ERROR_LIMIT_S, validator=v.ge(0))
    """Give up once every answer of the server to a request has been a server error (HTTP 5xx) for this many
    seconds (0: never; a server that is slow, or does not answer, keeps ``training.backend_timeout_s``):
    one line naming the server and its last answer, instead of the SDK's retries for the whole wait."""
    max_context_length: int | None = attrs.field(default=None, validator=v.optional(v.ge(1)))
    """The model's context in tokens, for the context guard; unset: the length the service states
    for the model (``RestClient.get_server_capabilities``), or no guard when it states none."""


def credential_problem(api_key: str | None, api_key_env: str) -> str | None:
    """Why the SDK would find no usable credential, in one line; ``None`` when it finds one.

    Asks the SDK's own resolver, so the answer is the SDK's: an explicit key first, then
    ``TINKER_API_KEY``, ``TINKER_CREDENTIAL_CMD`` and the key stored by ``tinker auth login``.
    """
    from tinker import TinkerError
    from tinker.lib._auth_token_provider import MISSING_API_KEY_MESSAGE, resolve_auth_provider

    try:
        resolve_auth_provider(api_key, enforce_cmd=False)
    except TinkerError as exc:
        if str(exc) == MISSING_API_KEY_MESSAGE:
            named = "" if api_key_env == SDK_KEY_VARIABLE else f"{api_key_env} or "
            return (
                f"backend 'tinker': no Tinker credential found; set {named}{SDK_KEY_VARIABLE} to an API key "
                f"('{API_KEY_PREFIX}...'), set TINKER_CREDENTIAL_CMD to a command that prints one, "
                "or store one with `tinker auth login`"
            )
        source = api_key_env if api_key is not None else SDK_KEY_VARIABLE
        return (
            f"backend 'tinker': {source} does not hold a Tinker credential (API keys start with "
            f"'{API_KEY_PREFIX}', JWT credentials with 'eyJ'): {exc}"
        )
    except Exception as exc:  # a stored credentials file that cannot be read, say
        first_line = (str(exc).splitlines() or [""])[0]
        return f"backend 'tinker': the Tinker credentials could not be read: {type(exc).__name__}: {first_line}"
    return None


class TinkerService:
    """``tinker.ServiceClient`` with early checks; every other attribute is the SDK client's. Its
    ``create_*`` calls run on a daemon thread when awaited (:mod:`debate_core.backends.off_thread`):
    the SDK opens its session with the service inside them, which blocks while the service is down.
    The first of them checks that something can answer at the service's address
    (:mod:`debate_core.backends.reachability`): a refused port or a name that does not resolve
    fails at once instead of after ``training.backend_timeout_s``."""

    def __init__(
        self, client: tinker.ServiceClient, options: TinkerOptions | None = None, api_key: str | None = None
    ) -> None:
        self.client = client
        self.options = options or TinkerOptions()
        self._api_key = api_key
        self._address_checked = False

    def service_address(self) -> tuple[str, str]:
        """The service's URL and where it comes from: the option, ``TINKER_BASE_URL`` or the SDK's
        default (the SDK's own order)."""
        if self.options.base_url:
            return self.options.base_url, f"backend.options.base_url = {self.options.base_url}"
        from_environment = os.environ.get("TINKER_BASE_URL")
        if from_environment:
            return from_environment, f"TINKER_BASE_URL={from_environment}"
        from tinker.lib.base_url import resolve_base_url

        default = resolve_base_url(None)
        return default, f"the Tinker SDK's default address {default}"

    # Any: a wrapped SDK client; TinkerTrainingClient forwards TrainingClientLike by __getattr__, unseen by mypy
    def _first_checked(self, call: Callable[[], object], then: Callable[[S], Any]) -> OffThread[Any]:
        """``call`` on a daemon thread, the service's address checked first the first time; its
        value passes through ``then`` (the client wrappers of :mod:`debate_core.backends.tinker_clients`)."""

        def start() -> object:
            if not self._address_checked:
                check_reachable(*self.service_address())
                self._address_checked = True
            return call()

        return OffThread(start, then)

    def _rest_client(self) -> tinker.RestClient:
        """A ``tinker.RestClient`` of this service's URL and key. The SDK keeps one REST connection
        per (base URL, key) for the whole process: name the URL this service uses, so a changed
        TINKER_BASE_URL never reaches an earlier server."""
        import tinker

        base_url = self.options.base_url or os.environ.get("TINKER_BASE_URL") or None
        return tinker.RestClient(base_url=base_url, api_key=self._api_key)

    def _training(self, client: tinker.TrainingClient) -> TinkerTrainingClient:
        return TinkerTrainingClient(client, self.service_address()[0])

    def _sampling(self, client: tinker.SamplingClient) -> TinkerSamplingClient:
        return TinkerSamplingClient(client, self.service_address()[0])

    def __repr__(self) -> str:  # never show the key
        return f"TinkerService(base_url={self.options.base_url!r})"

    def environment(self) -> dict[str, str]:
        """The SDK's version and the service's address (``backends.contract.SupportsEnvironment``)."""
        from importlib.metadata import version

        return {"tinker": version("tinker"), "base_url": self.service_address()[0]}

    @property
    def checkpoint_ttl_seconds(self) -> int | None:
        """Lifetime of periodic checkpoints on the service (``None``: never expire)."""
        return self.options.checkpoint_ttl_s or None

    def max_context_length(self, base_model: str) -> int | None:
        """The model's context in tokens: ``max_context_length`` when set, else what the service
        states for ``base_model``; ``None`` when neither says."""
        if self.options.max_context_length is not None:
            return self.options.max_context_length
        import tinker

        # The SDK keeps one REST connection per (base URL, key) for the whole process: name the URL
        # this service uses, so a changed TINKER_BASE_URL never reaches an earlier server.
        base_url = self.options.base_url or os.environ.get("TINKER_BASE_URL") or None
        try:
            rest = tinker.RestClient(base_url=base_url, api_key=self._api_key)
            capabilities = rest.get_server_capabilities().result()
        except Exception as exc:
            logger.info("backend 'tinker': the service's model list could not be read (%s)", exc)
            return None
        for model in capabilities.supported_models:
            if model.model_name == base_model and model.max_context_length:
                return int(model.max_context_length)
        return None

    def on_failed_request(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call ``listener`` with each request the SDK sends again after a failed attempt
        (``SupportsFailedRequests``; :mod:`debate_core.backends.tinker_requests`)."""
        from debate_core.backends.tinker_requests import sdk_request_watch

        return sdk_request_watch().listen(listener)

    def server_failure(self) -> str | None:
        """Why to give up now (``SupportsServerFailure``): every answer of the server to a request
        has been a server error for longer than ``server_error_limit_s``; ``None`` otherwise."""
        limit = self.options.server_error_limit_s
        if not limit:
            return None
        from debate_core.backends.tinker_requests import sdk_request_watch

        url, source = self.service_address()
        failing = sdk_request_watch().server_errors_for(urlsplit(url).netloc)
        if failing is None or failing[0] < limit:
            return None
        seconds, last = failing
        return (
            f"the server at {url} ({source}) has answered nothing but server errors for "
            f"{seconds:.0f} s (last: {last}); gave up (backend.options.server_error_limit_s = {limit:g}); "
            "see the server's log"
        )

    # Any: the trainer's training client (TrainingClientLike), the SDK's, whose model_id names its run
    def saved_path(self, training_client: Any, name: str, kind: str) -> str | None:
        """The service's path of a checkpoint ``name`` of the training client's run, when the
        service lists one (``SupportsSavedLookup``): the state (``kind="state"``,
        ``tinker://RUN/weights/NAME``) or the sampler weights (``"sampler"``,
        ``tinker://RUN/sampler_weights/NAME``)."""
        import tinker

        segment = "weights" if kind == "state" else "sampler_weights"
        base_url = self.options.base_url or os.environ.get("TINKER_BASE_URL") or None
        rest = tinker.RestClient(base_url=base_url, api_key=self._api_key)
        listed = rest.list_checkpoints(training_client.model_id).result()
        for checkpoint in listed.checkpoints:
            if checkpoint.tinker_path.endswith(f"/{segment}/{name}"):
                return str(checkpoint.tinker_path)
        return None

    def create_lora_training_client(
        self,
        base_model: str,
        rank: int = 32,
        seed: int | None = None,
        train_mlp: bool = True,
        train_attn: bool = True,
        train_unembed: bool = True,
    ) -> APIFutureLike[TrainingClientLike]:
        if rank < 1:
            raise ConfigError(
                f"model.lora_rank: the tinker backend trains LoRA adapters and needs a rank >= 1, got {rank}"
            )
        return self._first_checked(
            lambda: self.client.create_lora_training_client(
                base_model, rank, seed, train_mlp, train_attn, train_unembed
            ),
            self._training,
        )

    def create_training_client_from_state(
        self, path: str, base_model: str | None = None
    ) -> APIFutureLike[TrainingClientLike]:
        return self._first_checked(
            lambda: restored_training_client(
                self.client, self._rest_client, path, base_model, False, self.service_address()[0]
            ),
            self._training,
        )

    def create_training_client_from_state_with_optimizer(
        self, path: str, base_model: str | None = None
    ) -> APIFutureLike[TrainingClientLike]:
        return self._first_checked(
            lambda: restored_training_client(
                self.client, self._rest_client, path, base_model, True, self.service_address()[0]
            ),
            self._training,
        )

    def create_sampling_client(
        self, model_path: str | None = None, base_model: str | None = None
    ) -> APIFutureLike[SamplingClientLike]:
        return self._first_checked(lambda: self.client.create_sampling_client(model_path, base_model), self._sampling)

    def __getattr__(self, name: str) -> Any:  # Any: any other attribute of the SDK's client, as it is
        return getattr(self.client, name)


def connect(options: TinkerOptions) -> TinkerService:
    """A service client of the Tinker SDK.

    The key in ``options.api_key_env`` is passed on when that variable is set; otherwise no key
    is passed and the SDK resolves the credential (and ``TINKER_BASE_URL``) itself.

    Raises:
        PluginError: the SDK would find no usable credential (one line naming the ways to give one).
    """
    api_key = os.environ.get(options.api_key_env, "").strip() or None
    problem = credential_problem(api_key, options.api_key_env)
    if problem is not None:
        raise PluginError(problem)
    import tinker

    client = tinker.ServiceClient(project_id=options.project_id, base_url=options.base_url, api_key=api_key)
    return TinkerService(client, options, api_key)
