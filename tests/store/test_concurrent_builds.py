"""Concurrent `kg build --store neo4j` processes, one per shard, into one database: the result is one sequential build.

Real ``python -m kg build`` processes write the ``scratch`` database of the ArcadeDB Bolt server; each has its own
``--store-dir`` whose extraction cache already holds the seeds, so no process runs spaCy. The database is then
compared with the embedded store built from all seeds in one go (``reference``): the same stats, node ids and
(start, type, paper_id, end) relationships, each once, and the same exported graph, property for property.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.cache import ExtractionCache, record_hash
from kg.errors import StoreError, StoreLockedError
from kg.export import export
from kg.extract.pipeline import EXTRACTOR_VERSION
from kg.graph import PaperInput, derive_graph
from kg.store.embedded import EmbeddedStore
from kg.store.neo4j import Neo4jStore
from kg.store.neo4j_lock import BuildLock

pytestmark = pytest.mark.bolt

DB = "scratch"
ROOT = Path(__file__).resolve().parents[2]
PROCESS_TIMEOUT_S = 60

# A `kg build` with a test hook: KG_TEST_PAUSE="before:S" or "after:S" sleeps S seconds, holding the build lock,
# just before or just after this build writes its Paper nodes, so another build can be started inside the write.
SLOW_BUILD = """
import os, sys, time
from kg.store import neo4j as N
from kg.cli import main

where, _, seconds = os.environ["KG_TEST_PAUSE"].partition(":")
write = N.Neo4jStore._write

def slow(self, query, rows, param="rows"):
    papers = query == N.Q.merge_nodes("Paper")
    if papers and where == "before":
        time.sleep(float(seconds))
    write(self, query, rows, param)
    if papers and where == "after":
        time.sleep(float(seconds))

N.Neo4jStore._write = slow
sys.exit(main(sys.argv[1:]))
"""

# Takes the build lock with a 15 s lease (longer than a build's start-up on a loaded machine, so the next build
# finds it still held and waits), says so, and waits to be killed (a build killed while writing).
HOLD_LOCK = """
import sys, time
from kg.store.neo4j import Neo4jStore
from kg.store.neo4j_connect import connect

uri, user, password, db = sys.argv[1:]
store = Neo4jStore(connect(uri, user, password, db), database=db, lock_lease_s=15.0)
store.build_lock().acquire()
print("held", flush=True)
time.sleep(600)
"""


@pytest.fixture
def empty_db(bolt_driver: Any) -> Any:
    bolt_driver.execute_query("MATCH (n) DETACH DELETE n", database_=DB)
    return bolt_driver


@pytest.fixture
def env(bolt_server: Any) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k != "KG_STORE"}
    e.update(NEO4J_URI=bolt_server.uri, NEO4J_USER=bolt_server.user, NEO4J_PASSWORD=bolt_server.password,
             NEO4J_DATABASE=DB, KG_LOCK_TIMEOUT=str(PROCESS_TIMEOUT_S))
    return e


@pytest.fixture
def shards(seeds_dir: Path) -> tuple[list[str], list[str]]:
    files = [str(f) for f in sorted(seeds_dir.glob("*.txt"))]
    assert len(files) == 3
    return files[:1], files[1:]


def _store_dir(path: Path, seed_inputs: dict[str, PaperInput]) -> Path:
    """A store dir of its own whose extraction cache holds every seed (as after an earlier, interrupted build)."""
    ExtractionCache(path / "inputs.jsonl", EXTRACTOR_VERSION).append(
        (record_hash(p.record), p) for p in seed_inputs.values())
    return path


def _start(args: list[str], env: dict[str, str], store_dir: Path, shard: list[str],
           script: str | None = None) -> subprocess.Popen[str]:
    prefix = ["-c", script] if script else ["-m", "kg"]
    return subprocess.Popen([sys.executable, *prefix, "build", *shard, "--store", "neo4j", "--store-dir",
                             str(store_dir), "--no-progress", *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(*procs: subprocess.Popen[str]) -> list[tuple[int, str, str]]:
    out = []
    try:
        for p in procs:
            stdout, stderr = p.communicate(timeout=PROCESS_TIMEOUT_S)
            out.append((p.returncode, stdout, stderr))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return out


def _wait_until(driver: Any, query: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not driver.execute_query(query, database_=DB).records[0]["n"]:
        assert time.monotonic() < deadline, f"never true: {query}"
        time.sleep(0.02)


def assert_is_the_sequential_build(driver: Any, reference: EmbeddedStore, tmp_path: Path) -> None:
    """The database holds exactly the graph of one build of all seeds: nothing twice, nothing missing, no lock."""
    ids = Counter(r["id"] for r in driver.execute_query("MATCH (n) RETURN n.id AS id", database_=DB).records)
    assert ids == Counter(list(reference.graph.nodes))
    rels = Counter((r["s"], r["t"], r["pid"], r["e"]) for r in driver.execute_query(
        "MATCH (a)-[r]->(b) RETURN a.id AS s, type(r) AS t, r.paper_id AS pid, b.id AS e", database_=DB).records)
    assert rels == Counter((u, d["type"], d.get("paper_id"), v) for u, v, d in reference.graph.edges(data=True))
    store = Neo4jStore(driver, database=DB, cache_dir=tmp_path / "check")
    assert store.stats() == reference.stats()
    export(store, "jsonl", tmp_path / "mine.jsonl")
    export(reference, "jsonl", tmp_path / "want.jsonl")
    assert (tmp_path / "mine.jsonl").read_bytes() == (tmp_path / "want.jsonl").read_bytes()


# -- two builds at once -------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_two_concurrent_builds_equal_one_sequential_build(empty_db: Any, env: dict[str, str], tmp_path: Path,
                                                          shards: tuple[list[str], list[str]],
                                                          seed_inputs: dict[str, PaperInput],
                                                          reference: EmbeddedStore) -> None:
    a = _start([], env, _store_dir(tmp_path / "a", seed_inputs), shards[0])
    b = _start([], env, _store_dir(tmp_path / "b", seed_inputs), shards[1])
    results = _finish(a, b)
    for rc, out, err in results:
        assert rc == 0, err
        assert "(0 extracted," in out  # the cache did the extraction
    assert_is_the_sequential_build(empty_db, reference, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("pause", ["before", "after"])
def test_a_build_started_inside_another_builds_write(empty_db: Any, env: dict[str, str], tmp_path: Path,
                                                     shards: tuple[list[str], list[str]], pause: str,
                                                     seed_inputs: dict[str, PaperInput],
                                                     reference: EmbeddedStore, bolt_server: Any) -> None:
    """The second build starts while the first holds the lock, its Paper nodes not yet written ("before": the
    second loads no papers and must derive again under the lock) or written but not its entities and edges
    ("after": the second loads a half-written graph)."""
    first = _start([], {**env, "KG_TEST_PAUSE": f"{pause}:4"}, _store_dir(tmp_path / "a", seed_inputs),
                   shards[0], script=SLOW_BUILD)
    try:
        _wait_until(empty_db, "MATCH (l:KgLock) RETURN count(l) AS n")
        if pause == "after":
            _wait_until(empty_db, "MATCH (p:Paper) RETURN count(p) AS n")
        second = _start([], env, _store_dir(tmp_path / "b", seed_inputs), shards[1])
    except BaseException:
        _finish(first)
        raise
    (rc1, _, err1), (rc2, out2, err2) = _finish(first, second)
    assert rc1 == 0, err1
    assert rc2 == 0, err2
    assert f"kg: waiting for another build holding {bolt_server.uri} database {DB} (" in err2
    if pause == "before":
        assert "another build wrote to" in err2 and "deriving the graph again" in err2
    assert f"store {bolt_server.uri} database {DB}: {reference.stats().papers} papers" in out2
    assert_is_the_sequential_build(empty_db, reference, tmp_path)


# -- the lock ------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_killed_builds_lock_expires(empty_db: Any, env: dict[str, str], tmp_path: Path, bolt_server: Any,
                                      shards: tuple[list[str], list[str]],
                                      seed_inputs: dict[str, PaperInput]) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, bolt_server.uri, bolt_server.user,
                               bolt_server.password, DB], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    finally:
        holder.send_signal(signal.SIGKILL)  # no finally, no release: the lock node stays until its lease ends
        holder.wait()
    assert empty_db.execute_query("MATCH (l:KgLock) RETURN count(l) AS n", database_=DB).records[0]["n"] == 1
    t0 = time.monotonic()
    [(rc, out, err)] = _finish(_start([], env, _store_dir(tmp_path / "a", seed_inputs), shards[0]))
    assert rc == 0, err
    assert f"waiting for another build holding {bolt_server.uri} database {DB} (" in err
    assert f"pid {holder.pid})" in err and err.count("waiting") == 1
    assert time.monotonic() - t0 < 90
    assert empty_db.execute_query("MATCH (l:KgLock) RETURN count(l) AS n", database_=DB).records[0]["n"] == 0
    papers = empty_db.execute_query("MATCH (p:Paper) RETURN count(p) AS n", database_=DB).records[0]["n"]
    assert papers > 0 and f"read {papers} papers" in out


@pytest.fixture
def neo(empty_db: Any, tmp_path: Path) -> Iterator[Neo4jStore]:
    yield Neo4jStore(empty_db, database=DB, batch_size=200, cache_dir=tmp_path / "cache")


def test_waiting_past_the_timeout_fails_clearly(neo: Neo4jStore, empty_db: Any, bolt_server: Any,
                                                seed_inputs: dict[str, PaperInput],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    other = Neo4jStore(empty_db, database=DB, lock_timeout_s=1.0)
    some = dict(sorted(seed_inputs.items())[:5])
    with neo.build_lock():
        t0 = time.monotonic()
        with pytest.raises(StoreLockedError, match=r"another kg build \(.* pid \d+\) still holds the graph"):
            other.replace_graph(derive_graph(some.values()), some)
        assert 0.9 < time.monotonic() - t0 < 10
    assert capsys.readouterr().err.count(f"kg: waiting for another build holding {bolt_server.uri} database") == 1
    other.replace_graph(derive_graph(some.values()), some)  # released: now it goes through at once
    assert other.stats().papers == 5
    assert empty_db.execute_query("MATCH (l:KgLock) RETURN count(l) AS n", database_=DB).records[0]["n"] == 0


def test_a_lost_lock_stops_the_write(neo: Neo4jStore, empty_db: Any) -> None:
    lock = BuildLock(neo._lock_run, neo.where, lease_s=0.4)
    neo.ensure_schema()
    with lock:
        empty_db.execute_query("MATCH (l:KgLock) DETACH DELETE l", database_=DB)  # taken over by force
        # the renewer finds it gone on its next round, every 0.1 s; waiting for that, not a fixed sleep, keeps the
        # test from failing when a loaded machine delays the round
        deadline = time.monotonic() + 60
        with pytest.raises(StoreError, match="lost the build lock"):
            while time.monotonic() < deadline:
                lock.check()
                time.sleep(0.05)


def test_stored_extractions_of_another_extractor_version_are_used(neo: Neo4jStore, empty_db: Any,
                                                                  seed_inputs: dict[str, PaperInput]) -> None:
    neo.replace_graph(derive_graph(seed_inputs.values()), seed_inputs)
    pid = sorted(seed_inputs)[0]
    [row] = empty_db.execute_query("MATCH (p:Paper {id: $id}) RETURN p._input AS raw", id=pid,
                                   database_=DB).records
    old = row["raw"].replace(f'"v":"{EXTRACTOR_VERSION}"', '"v":"an-older-extractor"')
    assert old != row["raw"]
    empty_db.execute_query("MATCH (p:Paper {id: $id}) SET p._input = $raw", id=pid, raw=old, database_=DB)
    loaded = neo.load_inputs()
    assert set(loaded) == set(seed_inputs)
    assert loaded[pid].extraction.to_store() == seed_inputs[pid].extraction.to_store()
    neo.replace_graph(derive_graph(loaded.values()), loaded)  # re-derived from it, and it is kept as it was
    [row] = empty_db.execute_query("MATCH (p:Paper {id: $id}) RETURN p._input AS raw", id=pid,
                                   database_=DB).records
    assert row["raw"] == old
