"""Settings of the HTTP API, built at the edge (``kg serve`` or a test) and passed to ``create_app``."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from kg.errors import InputError


def is_loopback(host: str) -> bool:
    """True when binding ``host`` only accepts connections from this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name or "": it may resolve to (or mean) every interface


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
    max_body_bytes: int = 256 * 1024
    token: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.token is not None and (not self.token or self.token != self.token.strip()
                                       or not self.token.isprintable() or not self.token.isascii()):
            raise InputError("the API token must be printable ASCII without surrounding spaces")
        if not self.token and not is_loopback(self.host):
            raise InputError(f"refusing to serve on {self.host or 'every interface'} without a token: "
                             f"pass --token or set KG_API_TOKEN (or bind to 127.0.0.1)")
