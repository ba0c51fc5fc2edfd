"""Admission control for Cypher: at most ``limit`` queries run at once, the rest wait briefly in turn, then get 503.

A query of the worker pool is awaited on the event loop (``run_async``: the loop only sends it and reads the
answer); one run in this process (no pool: ``--cypher-workers 0``, Neo4j) runs on the admission's own threads
(``run``), never on the pool that serves the light endpoints. Either way a burst of Cypher cannot queue
/health or /search behind it. Waiting queries queue first come, first served, and are
woken when a slot frees (not by polling: 50 waiters polling every 10 ms took a share of the server's core and
let late comers overtake). The counter is a plain lock, not an asyncio primitive, so one app can be driven
from several event loops (tests do): a slot is handed to a waiter under the lock, then its loop is told.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from kg.errors import KGError

T = TypeVar("T")


class ServerBusy(KGError):
    """Every Cypher slot is taken and none freed up in time; the client should retry after ``retry_after`` s."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Waiter:
    __slots__ = ("loop", "future", "granted")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False  # set under the lock: the slot is this waiter's, whether or not it has woken yet


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Admission:
    def __init__(self, limit: int, wait_s: float) -> None:
        self.limit = limit
        self.wait_s = wait_s
        self.running = 0
        self._waiting: deque[_Waiter] = deque()
        self._lock = threading.Lock()
        self.executor = ThreadPoolExecutor(max_workers=limit, thread_name_prefix="kg-cypher")

    def _leave(self) -> None:
        """Free a slot: hand it to the longest waiter if there is one (``running`` stays), else count it off."""
        with self._lock:
            if not self._waiting:
                self.running -= 1
                return
            w = self._waiting.popleft()
            w.granted = True
        try:
            w.loop.call_soon_threadsafe(_wake, w.future)
        except RuntimeError:  # its loop is closed: the waiter is gone, pass the slot on
            self._leave()

    async def _enter(self) -> None:
        with self._lock:
            if self.running < self.limit and not self._waiting:
                self.running += 1
                return
            w = _Waiter(asyncio.get_running_loop())
            self._waiting.append(w)
        try:
            await asyncio.wait({w.future}, timeout=self.wait_s)
        except BaseException:  # cancelled (the client hung up): a slot handed over meanwhile goes to the next
            if self._withdraw(w):
                self._leave()
            raise
        if not self._withdraw(w):  # a slot granted just as the wait timed out is still ours: no 503 then
            raise ServerBusy(f"{self.limit} Cypher queries are already running and none finished within "
                             f"{self.wait_s:g} s; retry shortly", retry_after=max(1, math.ceil(self.wait_s)))

    def _withdraw(self, w: _Waiter) -> bool:
        """Leave the queue; True when ``w`` had been granted a slot (which it now holds)."""
        with self._lock:
            if not w.granted:
                self._waiting.remove(w)
            return w.granted

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on a Cypher thread once a slot is free; ServerBusy if none frees within ``wait_s``."""
        await self._enter()

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
        # A client that hangs up while the job still waits in the executor's queue cancels it: ``call`` then never
        # runs, so its ``finally`` cannot give the slot back; this does.
        fut.add_done_callback(lambda f: self._leave() if f.cancelled() else None)
        return await asyncio.wrap_future(fut)

    async def run_async(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Await ``fn()`` once a slot is free, on this event loop; ServerBusy if none frees within ``wait_s``. A
        call cancelled (its client hung up) gives its slot back at once."""
        await self._enter()
        try:
            return await fn()
        finally:
            self._leave()

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
