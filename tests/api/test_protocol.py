"""api.protocol: read deadlines and connection caps, on a real uvicorn server (in a thread) with a tiny app."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import uvicorn

from api.protocol import ConnectionLimits, guarded_protocol

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="Linux loopback 127.0.0.x")


@dataclass
class Server:
    port: int
    release: threading.Event  # set: /slow answers


@contextlib.contextmanager
def serve(limits: ConnectionLimits) -> Iterator[Server]:
    release = threading.Event()

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        if scope["path"] == "/slow":
            while not release.is_set():
                await asyncio.sleep(0.01)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    config = uvicorn.Config(app, http=guarded_protocol(limits), ws="none", lifespan="off", log_level="warning",
                            timeout_keep_alive=limits.keep_alive_s)  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        yield Server(sock.getsockname()[1], release)
    finally:
        release.set()
        server.should_exit = True
        thread.join(10)
        sock.close()


def connect(port: int, source: str = "127.0.0.1", send: bytes = b"") -> socket.socket:
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    if send:
        s.sendall(send)
    return s


def closed(s: socket.socket, wait: float = 2.0) -> bool:
    """Whether the server closes ``s`` within ``wait`` seconds (reading and dropping what it sends first)."""
    s.settimeout(0.05)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            if not s.recv(65536):
                return True
        except TimeoutError:
            continue
        except OSError:
            return True
    return False


def get(s: socket.socket, path: str = "/") -> bytes:
    s.settimeout(5)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    data = b""
    while not data.endswith(b"ok"):
        chunk = s.recv(65536)
        assert chunk, data
        data += chunk
    return data


def test_a_connection_past_the_per_client_cap_closes_the_one_idle_longest() -> None:
    with serve(ConnectionLimits(per_client=5)) as srv:
        idle = [connect(srv.port) for _ in range(5)]
        time.sleep(0.1)
        fresh = connect(srv.port)
        assert get(fresh).startswith(b"HTTP/1.1 200")
        assert closed(idle[0])
        assert not any(closed(s, 0.1) for s in idle[1:])
        # another address has its own count
        others = [connect(srv.port, "127.0.0.2") for _ in range(5)]
        assert not any(closed(s, 0.1) for s in others)
        for s in idle + others + [fresh]:
            s.close()


def test_a_connection_answered_lately_is_closed_after_those_idle_longer() -> None:
    with serve(ConnectionLimits(per_client=3)) as srv:
        a, b, c = (connect(srv.port) for _ in range(3))
        time.sleep(0.05)
        get(a)  # a has had an answer: b, then c, make room first
        d = connect(srv.port)
        assert closed(b) and not closed(a, 0.2) and not closed(c, 0.2)
        e = connect(srv.port)
        assert closed(c) and not closed(a, 0.2)
        for s in (a, d, e):
            s.close()


def test_the_total_cap_closes_the_one_idle_longest_of_any_address() -> None:
    with serve(ConnectionLimits(per_client=0, total=6)) as srv:
        held = [connect(srv.port, f"127.0.0.{2 + i}") for i in range(6)]
        time.sleep(0.05)
        fresh = connect(srv.port)
        assert get(fresh).startswith(b"HTTP/1.1 200")
        assert closed(held[0])
        for s in held + [fresh]:
            s.close()


def test_busy_connections_are_never_closed_a_new_one_is_refused() -> None:
    with serve(ConnectionLimits(per_client=2)) as srv:
        busy = [connect(srv.port, send=b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n") for _ in range(2)]
        time.sleep(0.2)
        refused = connect(srv.port)
        assert closed(refused)
        assert not any(closed(s, 0.1) for s in busy)
        srv.release.set()
        for s in busy:
            s.settimeout(5)
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
            s.close()


@pytest.mark.parametrize(("send", "reply"), [
    (b"", b""),  # nothing at all
    (b"GET / HTTP/1.1\r\nHost: x\r\n", b"HTTP/1.1 408 "),  # part of the headers
    (b"\r\n\r\n\r\n", b""),  # blank lines that start no request
    (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345", b"HTTP/1.1 408 "),  # part of a body
])
def test_a_request_not_received_in_time_is_closed(send: bytes, reply: bytes) -> None:
    with serve(ConnectionLimits(header_timeout_s=0.3, body_timeout_s=0.3)) as srv:
        t = time.monotonic()
        s = connect(srv.port, send=send)
        s.settimeout(3)
        data = b""
        with contextlib.suppress(OSError):
            while chunk := s.recv(65536):
                data += chunk
        took = time.monotonic() - t
        assert 0.25 <= took < 2, took
        assert data.startswith(reply) if reply else data == b""
        s.close()


def test_requests_in_time_keep_their_connection() -> None:
    with serve(ConnectionLimits(header_timeout_s=0.3, body_timeout_s=0.3, keep_alive_s=0.5)) as srv:
        s = connect(srv.port)
        for _ in range(5):  # 1.0 s in all, past the header deadline: each request restarts it
            time.sleep(0.2)
            assert get(s).startswith(b"HTTP/1.1 200")
        assert closed(s, 2)  # idle past the keep-alive timeout


def test_connections_opened_together_do_not_all_close_together() -> None:
    """A flood of idle connections opened at once is closed over a fifth of the deadline, not in one turn of the
    loop (which, reopened together, a new client's connection then waited behind in the accept queue)."""
    import selectors

    with serve(ConnectionLimits(header_timeout_s=1.0)) as srv:
        t0 = time.monotonic()
        socks = [connect(srv.port) for _ in range(40)]
        sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        when: list[float] = []
        while len(when) < len(socks) and time.monotonic() - t0 < 5:
            for key, _ in sel.select(timeout=0.5):
                with contextlib.suppress(OSError):
                    if key.fileobj.recv(65536):  # type: ignore[union-attr]  # why: the registered sockets
                        continue
                when.append(time.monotonic() - t0)
                sel.unregister(key.fileobj)
        for s in socks:
            s.close()
    assert len(when) == len(socks)
    assert min(when) >= 0.95, when  # never before the deadline
    assert max(when) < 2.0, when  # at most a fifth more (and the test's own lag)
    assert max(when) - min(when) >= 0.05, when  # 40 draws over 0.2 s: a spread this small is one in millions
