"""HTTP connections that cannot starve the server: read deadlines, an idle timeout, per-client and total caps.

uvicorn closes a keep-alive connection left idle after a response (``timeout_keep_alive``) and nothing else: a
connection that sends nothing, part of its headers or part of its body stayed open for as long as its peer liked.
21,000 of them took the server to its descriptor limit, after which it accepted nothing, the valid token's
requests included. ``guarded_protocol`` is uvicorn's own HTTP protocol (httptools) with:

- **read deadlines**: a request's headers must arrive within ``header_timeout_s`` of its first byte (or of the
  connection, for the first request: a connection that sends nothing is closed too), its body within
  ``body_timeout_s`` of its headers; past either (plus up to ``DEADLINE_SPREAD`` of it, drawn at random) the
  connection is closed (408 when part of a request came);
- **an idle timeout**: uvicorn's keep-alive timeout, ``keep_alive_s`` after a response;
- **caps**: at most ``per_client`` connections from one address and ``total`` in all (by default what the
  descriptor limit leaves after a reserve). A connection past a cap closes the one of that address (or of all)
  whose last answer is oldest and that has no request being answered, so idle and slow connections make room
  for a new one rather than keep it out; only when every one is busy is the new one refused.

What was closed is logged as one warning per batch (every ``LOG_EVERY_S`` at most), never a line a connection.
Counts are per serving process (``--processes`` forks several, each with its own connections).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import resource
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

LOG_EVERY_S = 5.0
# Each deadline is its timeout plus up to this share of it, drawn at random: connections opened together (a
# flood of idle ones) would otherwise all expire in one turn of the loop and, reopened together, wait together
# in the kernel's accept queue, where a new client's connection waits behind them (bench/load.py, 20,000 idle
# connections, quiet 2 cores: /health p99 on new connections 23-156 ms in five runs without, 38-66 in three with).
DEADLINE_SPREAD = 0.2
# Descriptors kept free of client connections: the store's files, the Cypher workers' sockets, the listening
# socket, log files, the full-text index's segments. The total cap is the limit less those open and this.
RESERVE_FDS = 128
_TIMEOUT_408 = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"content-length: 34\r\nconnection: close\r\n\r\nrequest not received in time; bye\n")
_REASONS = {
    "header": "sent no complete request headers within {header:g} s",
    "body": "sent no complete request body within {body:g} s",
    "client": "were idle when their address passed {per_client} connections",
    "total": "were idle when the server passed {total} connections",
    "refused": "were refused: their address or the server had every connection busy",
}
log = logging.getLogger("uvicorn.error")


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keep_alive_s: float = 5.0
    per_client: int = 256  # 0: no cap per address (behind a proxy every client has the proxy's address)
    total: int = 0  # 0: from the descriptor limit


def raise_descriptor_limit() -> int:
    """Raise this process's soft limit on open descriptors to its hard limit (children inherit it); the new soft
    limit. A default soft limit of 1,024 is a thousand idle connections."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return soft


def total_from_descriptors() -> int:
    """The most client connections this process can hold: its descriptor limit less those open and a reserve."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:
        used = 64
    return max(16, soft - used - RESERVE_FDS)


class _Guard:
    """The connections of one serving process, least recently answered first, by address and in all."""

    def __init__(self, limits: ConnectionLimits, total: int) -> None:
        self.limits = limits
        self.total = total
        self.all: OrderedDict[GuardedProtocol, None] = OrderedDict()
        self.by_client: dict[str, OrderedDict[GuardedProtocol, None]] = {}
        self.closed: Counter[str] = Counter()
        self.peers: Counter[str] = Counter()
        self.flush: asyncio.TimerHandle | None = None

    def add(self, p: GuardedProtocol) -> bool:
        """Register ``p``; False when it was refused (every connection in its way busy), and is closed."""
        lru = self.by_client.setdefault(p.peer, OrderedDict())
        lru[p] = None
        self.all[p] = None
        limits = self.limits
        for cap, group, reason in ((limits.per_client, lru, "client"), (self.total, self.all, "total")):
            if cap and len(group) > cap:
                victim = next((q for q in group if q is not p and not q.busy), None)
                if victim is None:
                    p.drop("refused")
                    return False
                victim.drop(reason)
        return True

    def remove(self, p: GuardedProtocol) -> None:
        self.all.pop(p, None)
        lru = self.by_client.get(p.peer)
        if lru is not None:
            lru.pop(p, None)
            if not lru:
                del self.by_client[p.peer]

    def touch(self, p: GuardedProtocol) -> None:
        """``p`` just answered a request: it is the last to make room for others."""
        if p in self.all:
            self.all.move_to_end(p)
            self.by_client[p.peer].move_to_end(p)

    def count(self, reason: str, peer: str, loop: asyncio.AbstractEventLoop) -> None:
        self.closed[reason] += 1
        self.peers[peer] += 1
        if self.flush is None:
            self.flush = loop.call_later(LOG_EVERY_S, self.report)

    def report(self) -> None:
        self.flush = None
        if not self.closed:
            return
        limits = self.limits
        words = {"header": limits.header_timeout_s, "body": limits.body_timeout_s,
                 "per_client": f"{limits.per_client:,}", "total": f"{self.total:,}"}
        n = sum(self.closed.values())
        why = "; ".join(f"{k:,} {_REASONS[r].format(**words)}" for r, k in self.closed.most_common())
        top = ", ".join(f"{peer or 'unknown'} ({k:,})" for peer, k in self.peers.most_common(3))
        log.warning("closed %s connection%s in the last %g s: %s; from %s%s; %s open", f"{n:,}",
                    "" if n == 1 else "s", LOG_EVERY_S, why, top, " and others" if len(self.peers) > 3 else "",
                    f"{len(self.all):,}")
        self.closed.clear()
        self.peers.clear()


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with read deadlines and connection caps; made by ``guarded_protocol``."""

    guard: _Guard

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.peer = ""
        self.busy = 0  # requests received whole and not yet answered
        self.started = False  # part of a request arrived since the last one was received whole
        self._in_body = False  # a request's headers arrived, its body not yet
        self._deadline: asyncio.TimerHandle | None = None
        self._dropped = False

    # -- the deadline: headers, then body (one timer a request: a GET's body deadline is never armed) -------
    def _arm(self, phase: str) -> None:
        limits = self.guard.limits
        timeout = limits.body_timeout_s if phase == "body" else limits.header_timeout_s
        self._deadline = self.loop.call_later(timeout * (1 + DEADLINE_SPREAD * random.random()), self._expire, phase)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self, phase: str) -> None:
        self._deadline = None
        if not self.busy:
            self.drop(phase)

    def drop(self, reason: str) -> None:
        """Close this connection for ``reason`` (a key of ``_REASONS``), counted for the next log line."""
        if self._dropped:
            return
        self._dropped = True
        self._disarm()
        self.guard.remove(self)
        self.guard.count(reason, self.peer, self.loop)
        if self.transport.is_closing():
            return
        answered = self._in_body and self.cycle is not None and self.cycle.response_started  # (a 401, a 413)
        if reason in ("header", "body") and self.started and not answered:
            with contextlib.suppress(Exception):
                self.transport.write(_TIMEOUT_408)
        self.transport.close()

    # -- uvicorn's protocol, with the bookkeeping around it --------------------------------------------
    def connection_made(  # type: ignore[override]  # why: asyncio's is BaseTransport; uvicorn narrows it too
            self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        self.peer = self.client[0] if self.client else ""
        if self.guard.add(self):
            self._arm("header")  # a connection that sends nothing is closed as one that sends half a request

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.guard.remove(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # what is still to come must come in time: the rest of the headers or of the body, or (bytes that start
        # no request, such as blank lines) a request
        if self._deadline is None and not self.busy and not self._dropped and not self.transport.is_closing():
            self._arm("body" if self._in_body else "header")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.started = True
        if self._deadline is None and not self.busy:
            self._arm("header")

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._disarm()
        self._in_body = True  # data_received arms the body's deadline unless the request is whole already

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()
        self.started = self._in_body = False
        if self.cycle is not None and not self.cycle.response_complete:
            self.busy += 1

    def on_response_complete(self) -> None:
        self.busy = max(0, self.busy - 1)
        self.guard.touch(self)
        super().on_response_complete()

    def shutdown(self) -> None:
        self._disarm()
        super().shutdown()


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedProtocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` enforcing ``limits``. Call it in the serving process,
    or before forking the serving processes: each then has its own copy of the (then empty) bookkeeping."""
    shared = _Guard(limits, limits.total or total_from_descriptors())

    class Protocol(GuardedProtocol):
        guard = shared

    return Protocol
