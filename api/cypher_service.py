"""How the app runs Cypher: admission control in front, worker processes behind (embedded store), started once."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from typing import Any

from api.admission import Admission
from api.cypher_pool import TOO_DEEP_ANSWER, CypherPool
from api.safejson import TooDeep, encode_answer
from api.settings import Settings
from kg.cypher.errors import CypherError
from kg.models import CypherResult
from kg.store.base import Store


def can_isolate(store: Store) -> bool:
    """Worker processes need fork and fd passing (POSIX) and a store that runs Cypher in this process
    (the embedded one); a Neo4j server runs queries, and enforces their limits, itself."""
    return (os.name == "posix" and hasattr(socket, "send_fds") and store.local_graph() is not None
            and store.fixed())


# Cypher workers yield a core to the server process: the event loop answering /health, /search and the rest
# comes first, a worker writing a 78 MB answer (a third of a second of CPU) after it. The zygote's replacements
# for workers inherit its priority.
WORKER_NICE = 5


def _lower_priority(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # gone already, or a platform without priorities: they run as they are
            os.setpriority(os.PRIO_PROCESS, pid, max(os.getpriority(os.PRIO_PROCESS, pid), WORKER_NICE))


class CypherService:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.admission = Admission(max(1, settings.cypher_workers), settings.cypher_queue_wait_s)
        self.pool: CypherPool | None = None
        self._store: Store | None = None
        self._lock = threading.Lock()

    def start(self, store: Store) -> None:
        """Fork the workers now (at startup, while the server has a single thread) when the store allows it."""
        with self._lock:
            if self._store is store:
                return
            self._close_pool()
            self._store = store
            if self.settings.cypher_workers > 0 and can_isolate(store):
                self.pool = CypherPool(store, self.settings.cypher_workers, self.settings.cypher_memory_mb)
                self.pool.start()
                _lower_priority(self.pool.pids())

    async def run(self, store: Store, query: str, parameters: dict[str, Any], max_rows: int) -> CypherResult:
        if self._store is not store:  # an app driven without its lifespan (some tests): start on first use
            await self.admission.run(lambda: self.start(store))
        timeout_s = self.settings.cypher_timeout_s
        pool = self.pool
        if pool is not None:
            return await self.admission.run_async(
                lambda: pool.run(query, parameters, max_rows=max_rows, timeout_s=timeout_s))
        return await self.admission.run(
            lambda: store.cypher(query, parameters, max_rows=max_rows, timeout_s=timeout_s))

    async def run_json(self, store: Store, query: str, parameters: dict[str, Any],
                       max_rows: int) -> bytes | memoryview:
        """``run``'s answer as the JSON of a ``CypherResult`` (``api.safejson.encode_answer``), written off the
        event loop: by the worker, or by the admission's thread that ran the query."""
        if self._store is not store:
            await self.admission.run(lambda: self.start(store))
        timeout_s = self.settings.cypher_timeout_s
        pool = self.pool
        if pool is not None:
            return await self.admission.run_async(
                lambda: pool.run_json(query, parameters, max_rows=max_rows, timeout_s=timeout_s))

        def answer() -> bytes:
            r = store.cypher(query, parameters, max_rows=max_rows, timeout_s=timeout_s)
            try:
                return encode_answer(r.columns, r.rows, r.truncated)
            except TooDeep:
                raise CypherError(TOO_DEEP_ANSWER) from None

        return await self.admission.run(answer)

    def _close_pool(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        self._store = None

    def close(self) -> None:
        with self._lock:
            self._close_pool()
