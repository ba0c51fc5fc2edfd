"""Admission control for Cypher: at most ``limit`` queries run at once, the rest wait briefly, then get 503.

Queries run on their own threads (``executor``), never on the pool that serves the light endpoints, so a burst
of Cypher cannot queue /health or /search behind it. The counter is a plain lock, not an asyncio primitive,
so one app can be driven from several event loops (tests do).
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from kg.errors import KGError

T = TypeVar("T")
POLL_S = 0.01


class ServerBusy(KGError):
    """Every Cypher slot is taken and none freed up in time; the client should retry after ``retry_after`` s."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Admission:
    def __init__(self, limit: int, wait_s: float) -> None:
        self.limit = limit
        self.wait_s = wait_s
        self.running = 0
        self._lock = threading.Lock()
        self.executor = ThreadPoolExecutor(max_workers=limit, thread_name_prefix="kg-cypher")

    def _try_enter(self) -> bool:
        with self._lock:
            if self.running >= self.limit:
                return False
            self.running += 1
            return True

    def _leave(self) -> None:
        with self._lock:
            self.running -= 1

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on a Cypher thread once a slot is free; ServerBusy if none frees within ``wait_s``."""
        deadline = time.monotonic() + self.wait_s
        while not self._try_enter():
            if time.monotonic() >= deadline:
                raise ServerBusy(f"{self.limit} Cypher queries are already running and none finished within "
                                 f"{self.wait_s:g} s; retry shortly", retry_after=max(1, math.ceil(self.wait_s)))
            await asyncio.sleep(POLL_S)

        def call() -> T:
            try:
                return fn()
            finally:  # here, not in the coroutine: a client that hangs up does not free a slot still in use
                self._leave()

        try:
            fut = self.executor.submit(call)
        except BaseException:
            self._leave()
            raise
        return await asyncio.wrap_future(fut)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
