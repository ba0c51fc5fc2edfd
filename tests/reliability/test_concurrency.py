"""Many readers at once: `kg serve` on loopback answers 50 concurrent clients for 30 s without an error.

(Two builds into one store are in test_crash.py: the second refuses, or waits with --wait.)
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from kg.store.embedded import EmbeddedStore
from kg.store.snapshot import SNAPSHOT_FILE

from .helpers import file_hash, no_traceback, start_server, stop_server

CLIENTS = 50
SECONDS = 30.0


def request_mix(store: EmbeddedStore) -> list[tuple[str, str, dict[str, Any]]]:
    """A bounded mix of reads over every kind of endpoint, on ids that exist."""
    papers = [p.id for p in store.list_papers(limit=8).items]
    entities = [e.id for e in store.list_entities(limit=8).items]
    mix: list[tuple[str, str, dict[str, Any]]] = []
    for i in range(8):
        p, e = papers[i % len(papers)], entities[i % len(entities)]
        mix += [
            ("GET", "/papers", {"params": {"limit": 20, "offset": i}}),
            ("GET", f"/papers/{p}", {}),
            ("GET", f"/papers/{p}/related", {"params": {"k": 5}}),
            ("GET", f"/entities/{e}", {"params": {"paper_limit": 10}}),
            ("GET", "/entities", {"params": {"q": e[:3]}}),
            ("GET", "/search", {"params": {"q": ["MI", "learning", "LLMs", "graph"][i % 4]}}),
            ("POST", "/cypher", {"json": {"query": "MATCH (p:Paper)-[r]->(e) WHERE p.id = $id "
                                                   "RETURN type(r) AS t, count(*) AS n ORDER BY t",
                                          "parameters": {"id": p}}}),
            ("GET", "/stats", {}),
        ]
        if i % 2 == 0:  # the views are the heaviest pages (the graph library is inlined): fewer of them
            mix.append(("GET", f"/view/paper/{p}", {}))
        if i == 0:
            mix.append(("GET", "/view", {"params": {"top": 40}}))
    return mix


async def _client(n: int, url: str, mix: list[tuple[str, str, dict[str, Any]]], deadline: float,
                  latencies: list[float], served: Counter[str], errors: list[str]) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        k = n * 7  # each client starts at a different place in the mix
        while time.monotonic() < deadline:
            method, path, kwargs = mix[k % len(mix)]
            k += 1
            t0 = time.perf_counter()
            try:
                r = await client.request(method, path, **kwargs)
            except httpx.HTTPError as exc:
                errors.append(f"{method} {path}: {type(exc).__name__}: {exc}")
                continue
            latencies.append(time.perf_counter() - t0)
            served[path.split("/")[1]] += 1
            if r.status_code != 200:
                errors.append(f"{method} {path}: {r.status_code} {r.text[:200]}")


async def _run(url: str, mix: list[tuple[str, str, dict[str, Any]]]) -> tuple[list[float], Counter[str], list[str]]:
    latencies: list[float] = []
    served: Counter[str] = Counter()
    errors: list[str] = []
    deadline = time.monotonic() + SECONDS
    await asyncio.gather(*(_client(n, url, mix, deadline, latencies, served, errors) for n in range(CLIENTS)))
    return latencies, served, errors


@pytest.mark.slow
def test_50_clients_read_for_30_seconds_without_an_error(seeds_store_dir: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    before = file_hash(seeds_store_dir / SNAPSHOT_FILE)
    with EmbeddedStore(seeds_store_dir) as store:
        mix = request_mix(store)
    proc, url = start_server(seeds_store_dir)
    try:
        t0 = time.monotonic()
        latencies, served, errors = asyncio.run(_run(url, mix))
        elapsed = time.monotonic() - t0
    finally:
        err = stop_server(proc)
    no_traceback(err)
    assert not errors, f"{len(errors)} errors, e.g. {errors[:5]}"
    q = statistics.quantiles(latencies, n=100)
    p50, p95 = q[49], q[94]
    with capsys.disabled():
        print(f"\n[reliability] {CLIENTS} clients for {elapsed:.0f} s: {len(latencies)} requests served "
              f"({len(latencies) / elapsed:.0f}/s), 0 errors; latency p50 {1000 * p50:.0f} ms, "
              f"p95 {1000 * p95:.0f} ms, max {1000 * max(latencies):.0f} ms; by endpoint {dict(served)}")
    assert len(latencies) >= 5 * CLIENTS  # every client was served many times
    assert set(served) >= {"papers", "entities", "search", "cypher", "stats", "view"}
    assert file_hash(seeds_store_dir / SNAPSHOT_FILE) == before
