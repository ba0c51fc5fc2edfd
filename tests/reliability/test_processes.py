"""`kg serve --processes N`: N serving processes on one port, a dead one replaced, and nothing left running
after the server stops or is killed."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from kg.procs import children_by_parent, descendants

from .helpers import kg, start_server, stop_server

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")


def _serving(pid: int) -> list[int]:
    return sorted(children_by_parent().get(pid, []))


def _wait(cond, timeout: float = 20) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return False


def test_two_processes_serve_one_port_and_a_killed_one_is_replaced(seeds_store_dir: Path) -> None:
    proc, url = start_server(seeds_store_dir, "--processes", "2", "--cypher-workers", "2")
    try:
        assert _wait(lambda: len(_serving(proc.pid)) == 2)
        first = _serving(proc.pid)
        # each serving process has its own Cypher zygote and one of the two workers: 2 queries at once in all
        # (started as the process starts: on a loaded machine a moment after it appears)
        assert _wait(lambda: all(len(descendants(p)) == 2 for p in first))
        with httpx.Client(base_url=url, timeout=10) as c:
            for _ in range(20):
                assert c.get("/health").json()["status"] == "ok"
                assert c.post("/cypher", json={"query": "MATCH (p:Paper) RETURN count(p) AS n"}).status_code == 200
        os.kill(first[0], signal.SIGKILL)
        assert _wait(lambda: len(_serving(proc.pid)) == 2 and first[0] not in _serving(proc.pid))
        with httpx.Client(base_url=url, timeout=10) as c:
            assert all(c.get("/search", params={"q": "mutual"}).status_code == 200 for _ in range(10))
        everything = descendants(proc.pid)
    finally:
        err = stop_server(proc)
    assert proc.returncode == 0, err
    assert f"kg: serving process {first[0]} was killed by SIGKILL; starting another" in err
    assert "Traceback" not in err
    assert _wait(lambda: not any(Path(f"/proc/{p}").exists() for p in everything), 10)


def test_a_killed_parent_takes_its_serving_processes_with_it(seeds_store_dir: Path) -> None:
    proc, _ = start_server(seeds_store_dir, "--processes", "2")
    assert _wait(lambda: len(_serving(proc.pid)) == 2)
    everything = descendants(proc.pid)
    proc.kill()
    proc.wait(10)
    assert _wait(lambda: not any(Path(f"/proc/{p}").exists() and "State:\tZ" not in _status(p) for p in everything))


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""


def test_processes_need_the_embedded_store() -> None:
    r = kg("serve", "--store", "neo4j", "--processes", "2")
    assert r.returncode != 0
    assert r.stderr.strip().splitlines() == [
        "kg: error: --processes 2 needs the embedded store: forked processes cannot share one neo4j driver's "
        "connections"]


def test_processes_need_a_cypher_worker_each() -> None:
    r = kg("serve", "--store-dir", "/nonexistent", "--processes", "3", "--cypher-workers", "2")
    assert r.returncode != 0
    assert r.stderr.strip().splitlines() == [
        "kg: error: --processes 3 needs at least as many Cypher workers (one a process); give --cypher-workers 3 "
        "or more, or 0 to run Cypher in the serving processes"]
