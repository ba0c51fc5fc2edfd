"""Light reads of a warmed in-memory store run on the event loop; any other store read runs in the threadpool,
so a slow one never holds the loop. Both give the same answers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import api.deps
import kg.store.nxreads
from api.routes.meta import prime
from kg.store.embedded import EmbeddedStore

LIGHT = ["/health", "/stats", "/papers/arXiv:2401.00631", "/entities/STE",
         "/entities/STE?paper_limit=1&neighbour_limit=2", "/entities/no-such-entity"]


@pytest.fixture()
def warmed(store_dir: Path) -> Iterator[EmbeddedStore]:
    with EmbeddedStore(store_dir) as s:
        assert not s.reads_inline()  # indexes not built yet: a first search could hold the loop for seconds
        s.warm()
        prime(s)  # as kg serve does while warming: the first /health and /stats count the store
        yield s


@pytest.fixture()
def hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the store reads handed to a thread."""
    seen: list[str] = []
    real = api.deps.on_heavy_lane

    async def counting(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        seen.append(getattr(fn, "__name__", repr(fn)))
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(api.deps, "on_heavy_lane", counting)
    return seen


def test_a_warmed_store_answers_light_reads_inline_with_the_same_answers(
        make_client: Callable[..., TestClient], store_dir: Path, warmed: EmbeddedStore, hops: list[str]) -> None:
    inline = make_client(store=warmed, response_cache_mb=0)
    with EmbeddedStore(store_dir) as cold:  # the same store, never warmed: every read goes to the threadpool
        client = make_client(store=cold, response_cache_mb=0)
        for url in LIGHT:
            a, b = inline.get(url), client.get(url)
            assert (a.status_code, a.json()) == (b.status_code, b.json()), url
    assert warmed.reads_inline("straight-through-estimator")
    threadpool_calls = len(hops)
    assert threadpool_calls >= len(LIGHT)  # every read of the unwarmed store went to the threadpool...
    for url in LIGHT:
        inline.get(url)  # (no response cache in either app: each request reads the store)
    assert len(hops) == threadpool_calls  # ...and none of the warmed one's


def test_reads_that_are_not_light_go_to_the_threadpool_even_when_warm(
        make_client: Callable[..., TestClient], warmed: EmbeddedStore, hops: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    c = make_client(store=warmed, response_cache_mb=0)
    assert c.get("/entities/MI/related").status_code == 200  # co-occurrence walks every paper's entities
    assert c.get("/entities/STE?paper_limit=1000").status_code == 200  # limits past the defaults
    assert hops == ["related_entities", "get_entity"]  # the name lookups themselves stay inline
    monkeypatch.setattr(kg.store.nxreads, "INLINE_MAX_PAPERS", 1)  # STE has two papers
    assert c.get("/entities/STE").status_code == 200
    assert hops[2:] == ["get_entity"]
    # Related papers and search compare with every paper's embedding (about 10 and 30 ms at 83k papers).
    assert c.get("/papers/arXiv:2401.00631/related").status_code == 200
    assert c.get("/search?q=mutual").status_code == 200
    assert hops[3:] == ["related_papers", "search"]


def test_an_unprimed_store_is_counted_in_the_threadpool(
        make_client: Callable[..., TestClient], store_dir: Path, hops: list[str]) -> None:
    with EmbeddedStore(store_dir) as s:
        s.warm()
        c = make_client(store=s, response_cache_mb=0)
        assert c.get("/health").status_code == 200 and hops == ["_health"]  # 0.1 s at 83k: not on the loop
        assert c.get("/health").status_code == 200 and c.get("/stats").status_code == 200
        assert hops == ["_health"]  # counted once, then light


def test_a_slow_read_in_the_threadpool_does_not_hold_health(
        make_client: Callable[..., TestClient], store_dir: Path) -> None:
    """A store that is not light (not warmed here; a Neo4j store always) keeps the loop free for /health."""
    release, started = threading.Event(), threading.Event()

    class Slow(EmbeddedStore):
        def related_papers(self, paper_id: str, k: int = 10) -> Any:
            started.set()
            release.wait(10)
            return super().related_papers(paper_id, k)

    with Slow(store_dir) as store:
        c = make_client(store=store, response_cache_mb=0)
        answer: list[int] = []
        t = threading.Thread(target=lambda: answer.append(c.get("/papers/arXiv:2401.00631/related").status_code))
        t.start()
        try:
            assert started.wait(10)
            assert c.get("/health").status_code == 200  # answered while the read is still blocked
            assert not answer
        finally:
            release.set()
            t.join(10)
        assert answer == [200]


def test_heavy_reads_run_on_at_most_heavy_read_threads_at_once() -> None:
    """Forty slow reads at once (50 clients searching) take turns on the lane's threads instead of forty threads
    each taking the interpreter from the event loop in turn."""
    import asyncio
    import time

    running, most = 0, 0
    lock = threading.Lock()

    def slow() -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return 1

    class Cold:
        reads_on_cpu = True

        def reads_inline(self, entity_id: str | None = None) -> bool:
            return False

    async def many() -> list[int]:
        return await asyncio.gather(*(api.deps.read(Cold(), slow) for _ in range(40)))  # type: ignore[arg-type]  # why: a stand-in with the one method read() calls

    assert asyncio.run(many()) == [1] * 40
    assert most == api.deps.HEAVY_READ_THREADS


def test_kg_serve_runs_blas_on_one_thread() -> None:
    """Requests already run side by side; OpenBLAS splitting each product over the cores made them wait."""
    from threadpoolctl import threadpool_info

    from kg.cli.serve import _one_blas_thread

    before = {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
    try:
        _one_blas_thread()
        assert before and all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
    finally:
        from threadpoolctl import threadpool_limits

        for n in set(before.values()):
            threadpool_limits(limits=n, user_api="blas")
