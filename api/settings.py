"""Settings of the HTTP API, built at the edge (``kg serve`` or a test) and passed to ``create_app``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the store is and how much one request may ask for; nothing here reads the environment."""

    store_kind: str = "embedded"
    store_dir: str = "kg-store"
    store_options: dict[str, Any] = field(default_factory=dict)  # extra keyword arguments for other backends
    host: str = "127.0.0.1"
    port: int = 8000
    cypher_max_rows: int = 1000  # rows returned when the request does not say
    cypher_max_rows_limit: int = 10_000  # the most a request may ask for
    cypher_timeout_s: float = 10.0
    max_body_bytes: int = 256 * 1024
