"""Big answers and views are serialised off the event loop (issue 33, finding 9), checked without a clock.

tests/reliability/test_big_answers.py measures /health beside a client looping big answers, but a test must not
fail on a timing. Here every place an answer can be turned into bytes (``json.dumps``, ``orjson.dumps``,
FastAPI's ``serialize_response``, a Response's ``render``) and every view builder the routes call is wrapped to
record the thread it ran on, and the app to record its event loop's thread: an answer of megabytes written on
the loop's thread fails, whatever the machine's speed. Before the fix (43ba2ba), FastAPI validated and wrote a
Cypher answer on the loop (7.8 MB of JSON here). Big views (past ``BIG_VIEW`` nodes) ran on threads already, but
each on its own, so four clients looping them took the interpreter from the loop four at a time; now they take
turns in a lane of one thread (a374b3a built them side by side).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastapi.routing
import orjson
import pytest
import starlette.responses
from fastapi.testclient import TestClient

import api.routes.views
from api.main import create_app
from api.settings import Settings

BIG_BYTES = 1_000_000  # a megabyte of JSON or HTML written on the loop's thread is what stalled everyone
# 1,000 rows, each the paper with the longest abstract twice: about 8 MB of JSON from the seeds store.
BIG_CYPHER = {"query": "MATCH (p:Paper) WITH p ORDER BY size(p.abstract) DESC LIMIT 1 "
                       "UNWIND range(1, 1000) AS i RETURN i, p, p AS q", "max_rows": 1000}


@dataclass
class Spy:
    """The threads the app's event loop ran on, and what was serialised on which thread."""

    loop_threads: set[int] = field(default_factory=set)
    written: list[tuple[str, int, int]] = field(default_factory=list)  # (what, thread, bytes)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, what: str, out: Any) -> None:
        size = len(out) if isinstance(out, (bytes, bytearray, memoryview, str)) else len(json.dumps(out, default=str))
        with self.lock:
            self.written.append((what, threading.get_ident(), size))

    def big_on_loop(self) -> list[tuple[str, int]]:
        return [(what, size) for what, thread, size in self.written
                if thread in self.loop_threads and size > BIG_BYTES]

    def big_off_loop(self) -> list[tuple[str, int]]:
        return [(what, size) for what, thread, size in self.written
                if thread not in self.loop_threads and size > BIG_BYTES]


def _wrap(spy: Spy, what: str, real: Callable[..., Any], *, skip_bytes: bool = False) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        if not (skip_bytes and isinstance(args[-1], (bytes, memoryview))):  # render(bytes) hands them back as they are
            spy.record(what, out)
        return out
    return wrapper


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    """Every serialiser an answer goes through (old code and new), wrapped to record its thread and output size."""
    spy = Spy()
    monkeypatch.setattr(json, "dumps", _wrap(spy, "json.dumps", json.dumps))
    monkeypatch.setattr(orjson, "dumps", _wrap(spy, "orjson.dumps", orjson.dumps))
    for cls in (starlette.responses.Response, starlette.responses.JSONResponse, starlette.responses.HTMLResponse):
        if "render" in vars(cls):
            monkeypatch.setattr(cls, "render", _wrap(spy, f"{cls.__name__}.render", vars(cls)["render"],
                                                        skip_bytes=True))
    real_serialize = fastapi.routing.serialize_response

    async def serialize_response(*args: Any, **kwargs: Any) -> Any:  # FastAPI's response_model validation and JSON
        out = await real_serialize(*args, **kwargs)
        spy.record("fastapi serialize_response", out)
        return out

    monkeypatch.setattr(fastapi.routing, "serialize_response", serialize_response)
    return spy


def _client(spy: Spy, store_dir: Path, **settings: Any) -> TestClient:
    app = create_app(Settings(store_dir=str(store_dir), **settings))

    async def on_its_loop(scope: Any, receive: Any, send: Any) -> None:  # runs on the event loop's thread
        spy.loop_threads.add(threading.get_ident())
        await app(scope, receive, send)

    return TestClient(on_its_loop)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [0, 2], ids=["in-process", "worker-processes"])
def test_a_big_cypher_answer_is_written_off_the_event_loop(spy: Spy, seeds_store_dir: Path, workers: int) -> None:
    with _client(spy, seeds_store_dir, cypher_workers=workers) as client:
        r = client.post("/cypher", json=BIG_CYPHER)
        assert r.status_code == 200, r.text[:300]
        assert len(r.content) > 3 * BIG_BYTES and len(r.json()["rows"]) == 1000
    assert spy.loop_threads
    assert spy.big_on_loop() == [], "a big Cypher answer was serialised on the event loop's thread"
    if workers == 0:  # written by the server process: seen, on another thread (a worker process's is not seen)
        assert spy.big_off_loop(), spy.written


@pytest.mark.slow
def test_big_views_are_built_off_the_event_loop_one_at_a_time(spy: Spy, seeds_store_dir: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two big views asked for at once (the overview and a 2-hop entity view, 5,000 nodes each at most): each is
    built and written on a thread that is not the loop's, and the second only once the first is done, so the loop
    shares the interpreter with one big view at most. Small views still run side by side."""
    inside, most, built = 0, 0, []
    both_in = threading.Event()
    lock = threading.Lock()

    def counted(real: Callable[..., Any]) -> Callable[..., Any]:
        def view(*args: Any, **kwargs: Any) -> Any:
            nonlocal inside, most
            with lock:
                inside += 1
                most = max(most, inside)
                built.append(threading.get_ident())
                if inside >= 2:
                    both_in.set()
            try:
                # Wait (at most 2 s) for the other view: it comes in at once where big views run side by side,
                # never where they take turns. A late thread can only make an old server pass, never a new one fail.
                both_in.wait(2.0)
                return real(*args, **kwargs)
            finally:
                with lock:
                    inside -= 1
        return view

    for name in ("overview_view", "entity_view"):
        monkeypatch.setattr(api.routes.views, name, counted(getattr(api.routes.views, name)))
    with _client(spy, seeds_store_dir) as client:
        entity = client.get("/entities", params={"limit": 1}).json()["items"][0]["id"]
        big = ["/view?top=5000", f"/view/entity/{entity}?hops=2&limit=5000"]
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(client.get, big))
        assert [a.status_code for a in answers] == [200, 200], [a.text[:300] for a in answers]
        assert all(b"<html" in a.content for a in answers)
        big_most = most
        most = 0
        both_in.clear()
        small = ["/view?top=20", f"/view/entity/{entity}?limit=20"]
        with ThreadPoolExecutor(2) as pool:
            assert [a.status_code for a in pool.map(client.get, small)] == [200, 200]
        small_most = most
    assert spy.loop_threads and len(built) == 4
    assert not spy.loop_threads & set(built), "a view was built on the event loop's thread"
    assert big_most == 1, "two big views were built at once"
    assert small_most == 2, "small views waited for each other"

