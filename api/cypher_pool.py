"""Cypher in worker processes, each with a hard deadline and an address-space limit, so no query stalls the server.

A *zygote* is forked once from the server after the store is loaded: a single-threaded copy that shares the
store's memory with the server (copy-on-write) and does one thing, fork workers on request. A worker runs one
query at a time; one past its time limit (plus ``GRACE_S``) is killed with SIGKILL and replaced by a fresh fork,
so a query stuck in a C loop (a regular expression, a huge sort) costs one worker for its limit, never the
server. Workers die with the zygote (``PR_SET_PDEATHSIG``) and the zygote with the server (end of file on its
socket), so stopping the server in any way leaves no process behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import pickle
import queue
import resource
import signal
import socket
import stat
import struct
import threading
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from api.safejson import MAX_DEPTH, TooDeep, encode_answer
from kg.cypher.errors import CypherError, CypherTimeout
from kg.errors import KGError, StoreError
from kg.models import CypherResult
from kg.procs import die_with_parent
from kg.store.base import Store

GRACE_S = 0.5  # past its limit, a query that did not stop by itself is killed this much later
TOO_DEEP_ANSWER = (f"the answer holds a value nested more than {MAX_DEPTH} levels deep (lists and maps), the most "
                   f"an answer may hold; return it flatter")
SPAWN_TIMEOUT_S = 30.0  # a fork of a big process takes milliseconds; this only guards against a dead zygote


@dataclass
class _Worker:
    pid: int
    sock: socket.socket  # the server's end, non-blocking: the event loop sends and reads on it


def _rss_and_size_kb() -> tuple[int, int]:
    fields = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmSize"):
                fields[name] = int(value.split()[0])
    return fields.get("VmRSS", 0), fields.get("VmSize", 0)


def _close_sockets(keep: set[int]) -> None:
    """Close the inherited sockets (the server's listening socket, client connections) that a child must not
    hold open: a port stays bound, and a peer never sees end of file, while any process has them."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd in keep or fd < 3:
            continue
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.close(fd)
        except OSError:
            pass


def _worker_main(store: Store, conn: Connection, memory_bytes: int) -> None:
    """Answer queries until the server hangs up. A MemoryError (the address-space limit) is reported, then the
    worker exits: a fresh fork replaces it rather than trust a heap that ran out mid-way. Asked for JSON, the
    worker writes the answer's JSON itself (``api.safejson``): off the server's event loop, and a value nested
    past ``MAX_DEPTH`` is a clear error here rather than a failure to pickle it."""
    _rss, size_kb = _rss_and_size_kb()
    limit = size_kb * 1024 + memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    while True:
        try:
            query, params, max_rows, timeout_s, as_json = conn.recv()
        except (EOFError, OSError):
            return
        try:
            r = store.cypher(query, params, max_rows=max_rows, timeout_s=timeout_s)
            reply: tuple[str, Any] = (("json", encode_answer(r.columns, r.rows, r.truncated)) if as_json
                                      else ("ok", (r.columns, r.rows, r.truncated)))
        except MemoryError:
            reply = ("memory", None)
        except TooDeep:
            reply = ("error", (CypherError, TOO_DEEP_ANSWER))
        except KGError as exc:
            reply = ("error", (type(exc), str(exc)))
        except RecursionError:
            reply = ("error", (CypherError, "query is nested too deeply to evaluate"))
        except Exception as exc:  # noqa: BLE001 - an engine bug: the server answers 500, as it did in-process
            reply = ("bug", _where(exc))
        try:
            try:
                # JSON goes raw after a b"J" (a pickle starts b"\x80"): the server sends on the bytes it reads
                # without copying them out of a pickle (66 ms of its event loop for a 78 MB answer)
                data = (b"J" + reply[1] if reply[0] == "json"
                        else pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
            except RecursionError:  # an answer nested deeper than pickle goes: only asked for Python values
                reply = ("error", (CypherError, TOO_DEEP_ANSWER))
                data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
            conn.send_bytes(data)
        except MemoryError:
            conn.send(("memory", None))
            return
        if reply[0] == "memory":
            return


def _where(exc: BaseException) -> str:
    """An engine failure as its type and the place it was raised, not its message (which may quote the query)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return type(exc).__name__ + (f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else "")


def _reap() -> None:
    """Reap the workers that have exited. Done only when the server asks for a replacement, which it does after
    its SIGKILL: until then a dead worker stays a zombie, so its pid cannot be reused by an unrelated process
    that the SIGKILL would hit (as it could when SIGCHLD was ignored and the kernel reaped at once)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _zygote_main(store: Store, ctrl: socket.socket, memory_bytes: int) -> None:
    """Fork a worker for every byte the server sends; hand back its pid and socket. Exits at end of file."""
    gc.freeze()  # the store's objects stay out of the collector's way: their pages stay shared with the workers
    me = os.getpid()
    while True:
        try:
            cmd = ctrl.recv(1)
        except OSError:
            cmd = b""
        if not cmd:
            os._exit(0)
        _reap()
        a, b = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            try:
                die_with_parent(me)
                ctrl.close()
                a.close()
                _worker_main(store, Connection(b.detach()), memory_bytes)
            finally:
                os._exit(0)
        b.close()
        socket.send_fds(ctrl, [struct.pack("i", pid)], [a.fileno()])
        a.close()


def _alive(w: _Worker) -> bool:
    try:
        w.sock.recv(1, socket.MSG_PEEK)  # an idle worker never writes: readable means end of file
    except BlockingIOError:
        return True
    except OSError:
        pass
    return False


async def _receive(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> bytearray:
    """One message from a worker (multiprocessing's framing, which its ``Connection`` writes: a 4-byte big-endian
    length, or -1 and an 8-byte one), read as it arrives without blocking the loop."""
    (size,) = struct.unpack("!i", await _exactly(loop, sock, 4))
    if size == -1:
        (size,) = struct.unpack("!Q", await _exactly(loop, sock, 8))
    return await _exactly(loop, sock, size)


def _framed(obj: Any) -> bytes:
    """``obj`` pickled and framed as a worker's ``Connection.recv`` reads it; CypherError when it is nested too
    deeply to pickle (the API refuses such parameters before: this guards other callers)."""
    try:
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        raise CypherError("the query's parameters are nested too deeply to send to a worker") from None
    head = struct.pack("!i", len(data)) if len(data) <= 0x7FFFFFFF else struct.pack("!iQ", -1, len(data))
    return head + data


async def _send(loop: asyncio.AbstractEventLoop, sock: socket.socket, data: bytes) -> None:
    """Framed bytes (``_framed``) to a worker without blocking the loop."""
    await loop.sock_sendall(sock, data)


async def _exactly(loop: asyncio.AbstractEventLoop, sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = await loop.sock_recv_into(sock, view[got:])
        if not k:
            raise EOFError("the worker closed its socket")
        got += k
    return buf  # not copied into bytes: a copy of a 78 MB answer held the event loop 33 ms


def _result(kind: str, payload: Any, memory_mb: int) -> CypherResult:
    """A worker's reply as a result, or the exception it stands for (JSON answers come raw: ``CypherPool._run``)."""
    if kind == "memory":
        raise CypherError(f"query needs more than its memory limit of {memory_mb} MB; return fewer or smaller values")
    if kind == "bug":
        raise RuntimeError(f"the Cypher engine failed on this query: {payload}")
    if kind == "error":
        cls, message = payload
        try:
            exc = cls(message)
        except TypeError:  # a class whose constructor takes more than the message
            exc = CypherError(message)
        raise exc
    columns, rows, truncated = payload
    return CypherResult(columns=columns, rows=rows, truncated=truncated)


class CypherPool:
    """``workers`` processes answering ``run`` calls, at most ``workers`` queries at once (callers beyond that
    wait for a free worker: the API's admission control keeps that wait short)."""

    def __init__(self, store: Store, workers: int, memory_mb: int) -> None:
        self.store = store
        self.workers = workers
        self.memory_bytes = memory_mb * 1024 * 1024
        self.memory_mb = memory_mb
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._ctrl: socket.socket | None = None
        self._zygote: int | None = None
        self._lock = threading.Lock()
        self._all: dict[int, _Worker] = {}
        self.replaced = 0  # workers killed (time limit, memory) and replaced, for tests and /stats readers
        self.lost = 0  # workers that could not be replaced (the zygote is gone): the pool has that many fewer

    def start(self) -> None:
        with self._lock:
            if self._ctrl is not None:
                return
            import kg.cypher  # noqa: F401 - imported before the fork, so no worker imports it again

            with contextlib.suppress(KGError):  # builds the graph's label index once, in the shared copy
                self.store.cypher("MATCH (n) RETURN n LIMIT 1", {}, max_rows=1, timeout_s=60)
            graph = self.store.local_graph()
            if graph is not None:  # Cypher's arrays too (a fraction of a second), or every worker builds its own
                from kg.cypher.columns import topology

                topology(graph)
            parent, child = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                try:
                    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
                    # SIGTERM (`pkill -f "kg serve"` reaches us too) just ends us: the server's handler, inherited,
                    # would write to its event loop's wake-up descriptor, closed here, and print a traceback.
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    signal.set_wakeup_fd(-1)
                    parent.close()
                    _close_sockets({child.fileno()})
                    _zygote_main(self.store, child, self.memory_bytes)
                finally:
                    os._exit(0)
            child.close()
            self._ctrl, self._zygote = parent, pid
        for _ in range(self.workers):
            self._idle.put(self._spawn())

    def _spawn(self) -> _Worker:
        with self._lock:
            if self._ctrl is None:
                raise CypherError("the Cypher worker pool is closed")
            self._ctrl.settimeout(SPAWN_TIMEOUT_S)
            self._ctrl.sendall(b"s")
            msg, fds, _flags, _addr = socket.recv_fds(self._ctrl, 4, 1)
            if len(msg) != 4 or len(fds) != 1:
                raise CypherError("the Cypher worker pool cannot start a worker")
            sock = socket.socket(fileno=fds[0])
            sock.setblocking(False)
            w = _Worker(struct.unpack("i", msg)[0], sock)
            self._all[w.pid] = w
            return w

    def _kill(self, w: _Worker) -> None:
        """Stop ``w`` now (SIGKILL; reaped by the zygote when it next forks) and forget it."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(w.pid, signal.SIGKILL)
        w.sock.close()
        self._all.pop(w.pid, None)
        self.replaced += 1

    def _replace(self) -> None:
        """Put a fresh worker in the place of one killed (blocking: a fork of a big process takes milliseconds)."""
        try:
            self._idle.put(self._spawn())
        except (OSError, CypherError):  # the pool is closing, or the zygote was killed: no more workers
            self.lost += 1

    def _discard(self, w: _Worker) -> None:
        self._kill(w)
        self._replace()

    def _take(self, timeout_s: float) -> _Worker:
        """An idle worker that is still alive: one that died while idle (the OOM killer, an operator's kill)
        is replaced here, so the query that comes next is not failed for it."""
        deadline = time.monotonic() + timeout_s + SPAWN_TIMEOUT_S
        while True:
            if self.lost >= self.workers:  # every query would wait out the deadline, then blame its time limit
                raise StoreError("the Cypher worker processes are gone and cannot be replaced (was the server's "
                                 "worker-starting process killed?); restart kg serve")
            try:
                w = self._idle.get(timeout=min(1.0, max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                if time.monotonic() < deadline:
                    continue
                raise CypherTimeout(f"no Cypher worker became free within {timeout_s:g} s") from None
            if _alive(w):
                return w
            self._discard(w)

    def _take_idle(self) -> _Worker | None:
        """An idle worker that is still alive, without waiting; None when there is none (call it on the event
        loop: one found dead is replaced off it)."""
        while True:
            try:
                w = self._idle.get_nowait()
            except queue.Empty:
                return None
            if _alive(w):
                return w
            self._kill(w)
            asyncio.get_running_loop().run_in_executor(None, self._replace)

    async def run(self, query: str, parameters: dict[str, Any], *, max_rows: int,
                  timeout_s: float) -> CypherResult:
        """Run one query on an idle worker (``_run``); its answer as Python values."""
        result = await self._run((query, parameters, max_rows, timeout_s, False), timeout_s)
        assert isinstance(result, CypherResult)
        return result

    async def run_json(self, query: str, parameters: dict[str, Any], *, max_rows: int,
                       timeout_s: float) -> memoryview:
        """Run one query on an idle worker (``_run``); its answer as the JSON of a ``CypherResult``, written by the
        worker (``api.safejson.encode_answer``): a view of the bytes read from the worker, never copied."""
        result = await self._run((query, parameters, max_rows, timeout_s, True), timeout_s)
        assert isinstance(result, memoryview)
        return result

    async def _run(self, request: tuple[str, dict[str, Any], int, float, bool],
                   timeout_s: float) -> CypherResult | memoryview:
        """Run one query on an idle worker. The event loop itself sends the query and reads the answer when the
        worker's socket has it: a thread doing the same waited twice per query for the interpreter lock of a
        busy server, about 10 ms for a query of 1.5 ms. Cancelling the call (its client hung up) kills the
        worker at once; a fresh one replaces it."""
        if self._ctrl is None:
            self.start()
        data = _framed(request)  # before a worker is taken: parameters that cannot be sent cost none
        loop = asyncio.get_running_loop()
        # Admission lets no more queries in than there are workers, so one is idle unless it is being replaced.
        w = self._take_idle()
        if w is None:
            taking = loop.run_in_executor(None, self._take, timeout_s)
            try:
                w = await asyncio.shield(taking)
            except asyncio.CancelledError:  # its client hung up: the worker the thread takes later goes back
                def give_back(f: asyncio.Future[_Worker]) -> None:
                    if not f.cancelled() and f.exception() is None:
                        self._idle.put(f.result())

                taking.add_done_callback(give_back)
                raise
        keep = False  # the worker goes back only when it answered: a timeout, a death or a MemoryError replaces it
        try:
            async def ask() -> bytearray:
                await _send(loop, w.sock, data)
                return await _receive(loop, w.sock)

            try:
                payload = await asyncio.wait_for(ask(), timeout_s + GRACE_S)
            except TimeoutError:
                raise CypherTimeout(f"query exceeded its time limit of {timeout_s:g} s and was stopped") from None
            if payload[:1] == b"J":
                keep = True
                return memoryview(payload)[1:]
            kind, body = pickle.loads(payload)
            keep = kind != "memory"
            return _result(kind, body, self.memory_mb)
        except (EOFError, OSError):
            raise CypherError("the query's worker process died (most likely past its memory limit of "
                              f"{self.memory_mb} MB, or its client hung up); it has been replaced") from None
        finally:
            if keep:
                self._idle.put(w)
            else:
                self._kill(w)  # at once: a query past its limit must stop now; its replacement forks off the loop
                loop.run_in_executor(None, self._replace)

    def pids(self) -> list[int]:
        """The workers' process ids (the zygote's first), for tests and diagnostics."""
        return ([self._zygote] if self._zygote else []) + sorted(self._all)

    def close(self) -> None:
        with self._lock:
            ctrl, self._ctrl = self._ctrl, None
        if ctrl is None:
            return
        for w in list(self._all.values()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(w.pid, signal.SIGKILL)
            w.sock.close()
        self._all.clear()
        ctrl.close()  # end of file: the zygote exits
        if self._zygote is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._zygote, 0)
            self._zygote = None
