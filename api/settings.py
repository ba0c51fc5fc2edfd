"""Settings of the HTTP API, built at the edge (``kg serve`` or a test) and passed to ``create_app``."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kg.errors import InputError

if TYPE_CHECKING:
    from api.protocol import ConnectionLimits


def is_loopback(host: str) -> bool:
    """True when binding ``host`` only accepts connections from this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name or "": it may resolve to (or mean) every interface


MIN_TOKEN_CHARS = 16  # a shorter token can be guessed by a network attacker; loopback accepts any


def default_cypher_workers() -> int:
    """Two Cypher workers per core, at least 4, at most 16. A worker waits for the server's event loop part of
    each query (to be handed it, to have its answer read), so one per core left cores idle under load; and with
    two, two slow queries held every worker (2 cores: 24 % of small queries got 503 beside two heavy clients)."""
    return max(4, min(16, 2 * (os.cpu_count() or 2)))


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the store is and how much one request may ask for; nothing here reads the environment.

    ``token``: when set, every request must carry ``Authorization: Bearer <token>`` (the HTML views also take
    ``?token=``). A host other than loopback requires one: such settings cannot be built without it.
    """

    store_kind: str = "embedded"
    store_dir: str = "kg-store"
    host: str = "127.0.0.1"
    port: int = 8000
    cypher_max_rows: int = 1000  # rows returned when the request does not say
    cypher_max_rows_limit: int = 10_000  # the most a request may ask for
    cypher_timeout_s: float = 10.0
    # Cypher runs in this many worker processes (0: in the server process, for platforms without fork); also
    # the number of queries admitted at once. Extra queries wait up to cypher_queue_wait_s, then get 503.
    cypher_workers: int = field(default_factory=lambda: default_cypher_workers())
    cypher_queue_wait_s: float = 2.0
    cypher_memory_mb: int = 512  # address space a worker may add for one query; past it the query gets 400
    max_body_bytes: int = 256 * 1024
    # Whole JSON answers to repeated GETs of the store's reads, kept in memory (api.cache); 0 turns it off.
    response_cache_mb: int = 64
    # Connections (api.protocol): a request's headers must arrive within header_timeout_s of its first byte (a
    # new connection's first request: of the connection), its body within body_timeout_s of its headers; a
    # connection idle keep_alive_s after an answer is closed. Past max_client_connections from one address (0:
    # no cap) or max_connections in all (0: what the descriptor limit allows), the least recently answered idle
    # connection is closed to make room.
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keep_alive_s: float = 5.0
    max_client_connections: int = 256
    max_connections: int = 0
    token: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.token is not None and (not self.token or self.token != self.token.strip()
                                       or not self.token.isprintable() or not self.token.isascii()):
            raise InputError("the API token must be printable ASCII without surrounding spaces")
        if not is_loopback(self.host):
            if not self.token:
                raise InputError(f"refusing to serve on {self.host or 'every interface'} without a token: "
                                 f"pass --token or set KG_API_TOKEN (or bind to 127.0.0.1)")
            if len(self.token) < MIN_TOKEN_CHARS:
                raise InputError(f"refusing to serve on {self.host or 'every interface'} with a {len(self.token)}-"
                                 f"character token: use at least {MIN_TOKEN_CHARS} characters, e.g. "
                                 f"`python -c 'import secrets; print(secrets.token_urlsafe())'`")
        if (self.cypher_workers < 0 or self.cypher_queue_wait_s < 0 or self.cypher_memory_mb < 64
                or self.response_cache_mb < 0):
            raise InputError("cypher_workers, cypher_queue_wait_s and response_cache_mb must be >= 0 and "
                             "cypher_memory_mb >= 64")
        if (min(self.header_timeout_s, self.body_timeout_s, self.keep_alive_s) <= 0
                or min(self.max_client_connections, self.max_connections) < 0):
            raise InputError("header_timeout_s, body_timeout_s and keep_alive_s must be > 0, max_client_connections "
                             "and max_connections >= 0")

    def connection_limits(self) -> ConnectionLimits:
        from api.protocol import ConnectionLimits

        return ConnectionLimits(header_timeout_s=self.header_timeout_s, body_timeout_s=self.body_timeout_s,
                                keep_alive_s=self.keep_alive_s, per_client=self.max_client_connections,
                                total=self.max_connections)
