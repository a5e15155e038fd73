"""Telling an address where no service can answer from a service that is slow.

The Tinker SDK retries a refused connection and a host name that does not resolve for minutes
inside its first call, so without a probe a command waits all of ``training.backend_timeout_s``
(ten minutes by default) on a port where nothing listens. Neither gets better by waiting.
:func:`check_reachable` tries one TCP connection to the service's address first: a refusal from
every address of the host, or a name that does not resolve, fails at once with one line naming
the address; anything else (a connection, a connection that takes too long, a network or resolver
that cannot answer now) leaves the call to the SDK and the configured wait, as before.
"""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Sequence
from urllib.parse import urlsplit

from debate_core.errors import DebateError

_AddressInfo = tuple[
    socket.AddressFamily, socket.SocketKind, int, str, tuple[str, int] | tuple[str, int, int, int] | tuple[int, bytes]
]
"""One address of ``socket.getaddrinfo``: family, kind, protocol, name and the address (IPv4's or IPv6's)."""

CONNECT_TIMEOUT_S = 5.0
"""How long the probe waits for a TCP connection; a slower one counts as a slow service."""

_NO_SUCH_NAME = frozenset(
    code for code in (getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None)) if code is not None
)
"""``getaddrinfo`` errors that mean the name has no address (not: the resolver cannot answer now)."""


class ServiceUnreachable(DebateError):
    """Nothing can answer at a backend's address: the host refuses the connection (nothing
    listens on the port) or its name does not resolve. Not retried: waiting would not help."""


def check_reachable(url: str, source: str) -> None:
    """Return when something may answer at ``url`` (it connects, or might in time); ``source``
    says where the address came from (``TINKER_BASE_URL=...``), for the message.

    Raises:
        ServiceUnreachable: every address of the host refused the connection, or the host name
            does not resolve; the message names the host and port and the source.
    """
    parts = urlsplit(url)
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: the SDK's own error says so
        return
    if not host or _proxied(parts.scheme, host):
        return
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        if exc.errno in _NO_SUCH_NAME:
            raise ServiceUnreachable(
                f"the host name '{host}' does not resolve ({source}); is that the service's address?"
            ) from exc
        return  # the resolver cannot answer now: it may later
    except (OSError, UnicodeError):
        return
    if _every_address_refuses(addresses):
        raise ServiceUnreachable(
            f"nothing listens at {host}:{port}, the connection is refused ({source}); "
            "is the service running, and is that its address?"
        )


def _every_address_refuses(
    addresses: Sequence[_AddressInfo],
) -> bool:
    """True when at least one address refused and none connected or took long enough to be slow."""
    refused = False
    for family, kind, proto, _, address in addresses:
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.settimeout(CONNECT_TIMEOUT_S)
                probe.connect(address)
        except ConnectionRefusedError:
            refused = True
        except TimeoutError:
            return False  # slow to connect: a slow service, given the configured wait
        except OSError:
            continue  # this address cannot be reached from here (no IPv6 route, say)
        else:
            return False  # something listens
    return refused


def _proxied(scheme: str, host: str) -> bool:
    """True when a proxy carries requests to ``host`` (``HTTPS_PROXY``, ...): only the proxy can
    tell whether the service is there."""
    proxies = urllib.request.getproxies()
    return bool(proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(host)
