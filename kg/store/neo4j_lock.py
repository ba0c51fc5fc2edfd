"""The build lock of a Neo4j database: one ``:KgLock`` node, so concurrent builds write the graph one at a time.

Taking the lock is ``CREATE (:KgLock {id: 'build', token, holder, expires})``. The uniqueness constraint on
``KgLock.id`` makes a second CREATE fail (Neo4j blocks it until the first commits, ArcadeDB refuses it at
commit), and every taker also reads the lock nodes back after its CREATE committed and steps aside if it is
not alone, so even a server without constraints gives the lock to one build at a time. A holder renews
its lease (``expires``, on the server's clock, so build machines need not agree on the time) from a
background thread; a killed build's lock expires after one lease and the next taker deletes it. Releasing
deletes the node, so a database at rest holds no lock node.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from neo4j.exceptions import ConstraintError

from kg.errors import StoreError, StoreLockedError
from kg.store import neo4j_queries as Q

DEFAULT_LEASE_S = 60.0
DEFAULT_TIMEOUT_S = 3600.0
TIMEOUT_ENV = "KG_LOCK_TIMEOUT"
POLL_S = 0.5

Run = Callable[..., list[dict[str, Any]]]


def default_timeout() -> float:
    """How long a build waits for another one's lock: ``$KG_LOCK_TIMEOUT`` seconds, else an hour."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise StoreError(f"{TIMEOUT_ENV}={raw!r}: not a number of seconds")
    return value


def _notice(text: str) -> None:
    # On a terminal a progress bar may be drawn on this line: clear it first.
    clear = "\r\x1b[2K" if sys.stderr.isatty() else ""
    print(f"{clear}kg: {text}", file=sys.stderr, flush=True)


class BuildLock:
    """``with BuildLock(run, where): ...`` holds the database's build lock for the block.

    ``run(query, **params)`` sends one auto-committed write and returns its rows; it raises
    ``ConstraintError`` unchanged and anything else as ``StoreError``. ``where`` names the database in
    messages. Waiting is announced once through ``notice``; after ``timeout_s`` it raises ``StoreLockedError``.
    """

    def __init__(self, run: Run, where: str, *, lease_s: float = DEFAULT_LEASE_S, timeout_s: float | None = None,
                 poll_s: float = POLL_S, notice: Callable[[str], None] = _notice, lock_id: str = "build") -> None:
        if lease_s <= 0:
            raise StoreError(f"the lock lease must be positive, not {lease_s}")
        self.run = run
        self.where = where
        self.lease_s = lease_s
        self.timeout_s = default_timeout() if timeout_s is None else timeout_s
        self.poll_s = poll_s
        self.notice = notice
        self.lock_id = lock_id
        self.token = uuid.uuid4().hex
        self.holder = f"{socket.gethostname()} pid {os.getpid()}"
        self.waited_s = 0.0
        self._lost: str | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    # -- taking and giving back ------------------------------------------------------------------------------
    def __enter__(self) -> BuildLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        t0 = time.monotonic()
        announced = False
        while True:
            if self._try_take():
                break
            holders = self._holders()
            expired = [h for h in holders if h["left_ms"] is not None and h["left_ms"] < 0]
            if expired:  # a killed build's lock: its lease ran out, nobody renews it
                self.run(Q.EXPIRE_LOCK, id=self.lock_id)
                continue
            waited = time.monotonic() - t0
            if waited >= self.timeout_s:
                who = ", ".join(sorted({str(h["holder"]) for h in holders})) or "another build"
                raise StoreLockedError(f"{self.where}: another kg build ({who}) still holds the graph after "
                                       f"{waited:.0f} s; try again later (or raise {TIMEOUT_ENV})")
            if not announced and holders:
                who = ", ".join(sorted({str(h["holder"]) for h in holders}))
                self.notice(f"waiting for another build holding {self.where} ({who})…")
                announced = True
            time.sleep(min(self.poll_s * random.uniform(0.5, 1.5), max(0.0, self.timeout_s - waited)))
        self.waited_s = time.monotonic() - t0
        self._lost = None
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew, name="kg-lock-renew", daemon=True)
        self._renewer.start()

    def _try_take(self) -> bool:
        """CREATE the lock node; True if this build alone holds it afterwards."""
        try:
            self.run(Q.TAKE_LOCK, id=self.lock_id, token=self.token, holder=self.holder,
                     lease_ms=int(self.lease_s * 1000))
        except ConstraintError:
            # Taken, perhaps by this very CREATE if the driver retried it after a lost reply.
            return [h["token"] for h in self._holders()] == [self.token]
        tokens = [h["token"] for h in self._holders()]
        if tokens == [self.token]:
            return True
        # Not alone (a server without the uniqueness constraint): step aside; the random sleep breaks ties.
        self.run(Q.RELEASE_LOCK, id=self.lock_id, token=self.token)
        return False

    def _holders(self) -> list[dict[str, Any]]:
        return self.run(Q.LOCK_HOLDERS, id=self.lock_id)

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=self.lease_s)
            self._renewer = None
        with contextlib.suppress(StoreError):  # an unreachable server: the lease runs out by itself
            self.run(Q.RELEASE_LOCK, id=self.lock_id, token=self.token)

    # -- holding ---------------------------------------------------------------------------------------------
    def _renew(self) -> None:
        every = self.lease_s / 4
        last_ok = time.monotonic()
        while not self._stop.wait(every):
            try:
                rows = self.run(Q.RENEW_LOCK, id=self.lock_id, token=self.token, lease_ms=int(self.lease_s * 1000))
            except Exception:  # noqa: BLE001 - a passing network error: retry until the lease is gone
                if time.monotonic() - last_ok > self.lease_s:
                    self._lost = f"could not renew it for {self.lease_s:g} s"
                    return
                continue
            if not rows or not rows[0].get("n"):
                self._lost = "it expired and was taken over"
                return
            last_ok = time.monotonic()

    def check(self) -> None:
        """Raise if the lock was lost while held (the write must not go on beside another build's)."""
        if self._lost is not None:
            raise StoreError(f"{self.where}: lost the build lock ({self._lost}); another build may be writing, "
                             f"so this one stopped; run it again")
