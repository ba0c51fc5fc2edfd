"""The Neo4j store: the graph on a Neo4j 5 (or Bolt-compatible) server, through a driver the caller owns."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple, cast

import neo4j
import networkx as nx
import orjson
from neo4j.exceptions import ClientError, ConstraintError, DriverError, Neo4jError

from kg.cache import ExtractionCache, record_hash
from kg.cypher import CypherError, CypherSyntaxError, CypherTimeout, check_read_only
from kg.embed import default_embedder
from kg.errors import StoreError
from kg.extract.pipeline import EXTRACTOR_VERSION
from kg.extract.types import Extraction
from kg.graph import PaperInput, derive_graph
from kg.models import CypherResult
from kg.readers import PaperRecord
from kg.resolve import store_overrides
from kg.store import neo4j_queries as Q
from kg.store.base import StoreOptions
from kg.store.neo4j_connect import connect
from kg.store.neo4j_lock import DEFAULT_LEASE_S, BuildLock
from kg.store.neo4j_reads import BoltReads, add_edge, add_node
from kg.store.neo4j_values import driver_props, to_json, unresolved_ends
from kg.store.nxreads import graph_text_index

log = logging.getLogger(__name__)
INPUTS_FILE = "inputs.jsonl"
CYPHER_WORKERS = 4


def vector_indexes(agent: str) -> bool:
    """True for Neo4j 5.11 and later, which has ``CREATE VECTOR INDEX``."""
    m = re.match(r"Neo4j/v?(\d+)\.(\d+)", agent)
    return m is not None and (int(m.group(1)), int(m.group(2))) >= (5, 11) and "arcadedb" not in agent.lower()


def supports_constraints(agent: str) -> bool:
    """True for servers that accept Neo4j 5 ``CREATE CONSTRAINT ... IF NOT EXISTS`` (Neo4j 5+, ArcadeDB)."""
    m = re.match(r"Neo4j/v?(\d+)", agent)
    return m is not None and int(m.group(1)) >= 5 and "memgraph" not in agent.lower()


def _message(exc: Exception) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())


def _q(text: str, timeout: float | None) -> neo4j.Query:
    return neo4j.Query(cast(Any, text), timeout=timeout)


class _Stored(NamedTuple):
    """A stored paper as a build saw it: the input handed out, a digest of its ``_input`` JSON, the extractor
    version that made it. (A digest, not the JSON: a large graph's extractions would be held twice.)"""

    input: PaperInput
    digest: bytes
    version: str


class Neo4jStore(BoltReads):
    """The graph on a server: nodes labelled Paper, Method, ..., Author, Venue; ``id`` unique per label.

    Writes merge in batches of ``batch_size`` rows, one transaction each; ``timeout_s`` bounds every
    statement except the whole-graph scans of a write. Each Paper keeps its record and extraction in the
    private ``_input`` property, so any machine can merge another corpus into the graph;
    ``cache_dir/inputs.jsonl`` only lets an interrupted build resume without re-extracting.

    Builds may run concurrently (one per shard, on any machines): ``replace_graph`` holds the database's
    build lock (``neo4j_lock``; lease ``lock_lease_s``, waiting at most ``lock_timeout_s``, default
    ``$KG_LOCK_TIMEOUT`` or an hour), re-reads the stored papers inside it and, if another build added or
    changed papers since this one's ``load_inputs``, derives the graph again from those and this build's
    own papers. So the result is the graph of one sequential build of all shards.
    """

    kind = "neo4j"
    reads_on_cpu = False  # a read waits for the server: many may wait at once
    _owned_driver: neo4j.Driver | None = None

    @classmethod
    def open(cls, options: StoreOptions, *, writable: bool = False, wait: bool = False) -> Neo4jStore:
        """A driver to ``options.neo4j_uri``, owned by the store and closed with it. A build always waits
        for the database's build lock (its lease bounds the wait), so ``writable`` and ``wait`` change nothing."""
        driver = connect(options.neo4j_uri, options.neo4j_user, options.neo4j_password, options.neo4j_database)
        try:
            store = cls(driver, database=options.neo4j_database, cache_dir=options.store_dir)
        except BaseException:
            driver.close()
            raise
        store._owned_driver = driver
        return store

    def close(self) -> None:
        driver, self._owned_driver = self._owned_driver, None
        if driver is not None:
            driver.close()

    def __init__(self, driver: neo4j.Driver, *, database: str | None = None, batch_size: int = 1000,
                 cache_dir: str | os.PathLike[str] = "kg-store", timeout_s: float = 60.0,
                 lock_lease_s: float = DEFAULT_LEASE_S, lock_timeout_s: float | None = None,
                 uri: str | None = None) -> None:
        if batch_size < 1:
            raise StoreError(f"batch size must be at least 1, not {batch_size}")
        self.driver = driver
        self.database = database
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self.lock_lease_s = lock_lease_s
        self.lock_timeout_s = lock_timeout_s
        self.cache = ExtractionCache(Path(cache_dir) / INPUTS_FILE, EXTRACTOR_VERSION)
        self.last_write: dict[str, float] = {}
        if uri is None:
            scheme = "neo4j" if isinstance(driver, neo4j.Neo4jDriver) else "bolt"
            address = getattr(driver, "address", None)
            uri = f"{scheme}://{address}" if address is not None else "the Neo4j server"
        self.where = uri + (f" database {database}" if database else "")
        # The stored papers load_inputs saw (then: what this store wrote last), by id.
        self._base: dict[str, _Stored] | None = None
        self._lock: BuildLock | None = None
        self._agent: str | None = None
        self._schema_done = False
        self._slots = threading.BoundedSemaphore(CYPHER_WORKERS)  # queries running at once, runaways included
        self._forget()

    # -- talking to the server -------------------------------------------------------------------------
    def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        return self._fetch(query, self.timeout_s, params)

    def _scan(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """A whole-graph read during a write: as long as the graph is large, so no timeout."""
        return self._fetch(query, None, params)

    def _fetch(self, query: str, timeout: float | None, params: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            records, _, _ = self.driver.execute_query(_q(query, timeout), params, database_=self.database,
                                                      routing_=neo4j.RoutingControl.READ)
        except (Neo4jError, DriverError) as exc:
            raise StoreError(f"Neo4j server: {_message(exc)}") from exc
        return [r.data() for r in records]

    def _exec(self, query: str) -> None:
        try:
            self.driver.execute_query(_q(query, self.timeout_s), database_=self.database,
                                      routing_=neo4j.RoutingControl.WRITE)
        except (Neo4jError, DriverError) as exc:
            raise StoreError(f"Neo4j server: {_message(exc)}") from exc

    def _write(self, query: str, rows: Sequence[Any], param: str = "rows") -> None:
        for i in range(0, len(rows), self.batch_size):
            if self._lock is not None:
                self._lock.check()
            try:
                self.driver.execute_query(_q(query, self.timeout_s), {param: list(rows[i : i + self.batch_size])},
                                          database_=self.database, routing_=neo4j.RoutingControl.WRITE)
            except (Neo4jError, DriverError) as exc:
                raise StoreError(f"Neo4j server: writing failed: {_message(exc)}") from exc

    def server_agent(self) -> str:
        """The server's agent string, e.g. ``Neo4j/5.26.0``; it decides which schema commands are sent."""
        if self._agent is None:
            try:
                self._agent = self.driver.get_server_info().agent
            except (Neo4jError, DriverError) as exc:
                raise StoreError(f"Neo4j server: {_message(exc)}") from exc
        return self._agent

    def ensure_schema(self) -> None:
        """Create the unique-id constraints (each backed by an index) where the server supports them."""
        if self._schema_done:
            return
        if vector_indexes(self.server_agent()):
            try:
                self._exec(Q.vector_index(default_embedder().dims))
            except StoreError as exc:
                log.info("no vector index on this server (%s); kg scores embeddings itself", exc)
        if supports_constraints(self.server_agent()):
            for label in (*Q.LABELS, Q.LOCK_LABEL):
                for attempt in range(3):  # two builds creating the same constraint at once may clash
                    try:
                        self._exec(Q.unique_id_constraint(label))
                        break
                    except StoreError:
                        if attempt == 2:
                            raise
                        time.sleep(0.2 * (attempt + 1))
        self._schema_done = True

    def _lock_run(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """One auto-committed write of the build lock; a uniqueness violation is passed on as it is."""
        try:
            records, _, _ = self.driver.execute_query(_q(query, self.timeout_s), params, database_=self.database,
                                                      routing_=neo4j.RoutingControl.WRITE)
        except ConstraintError:
            raise
        except (Neo4jError, DriverError) as exc:
            raise StoreError(f"Neo4j server: the build lock: {_message(exc)}") from exc
        return [r.data() for r in records]

    def build_lock(self) -> BuildLock:
        """The database's build lock (``with store.build_lock(): ...``); ``replace_graph`` takes it itself."""
        self.ensure_schema()
        return BuildLock(self._lock_run, self.where, lease_s=self.lock_lease_s, timeout_s=self.lock_timeout_s)

    def whole_graph(self) -> nx.MultiDiGraph:
        """The whole graph as the embedded store holds it (for exports); edges keyed type or type|paper."""
        g = nx.MultiDiGraph()
        for row in self._scan(Q.ALL_NODES, labels=list(Q.LABELS)):
            add_node(g, row["label"], row["props"])
        for row in self._scan(Q.ALL_RELS, labels=list(Q.LABELS)):
            add_edge(g, row["s"], row["type"], row["props"], row["e"])
        return g

    def info(self) -> dict[str, Any]:
        return {"store": "neo4j", "server": self.server_agent(), "database": self.database}

    # -- writing ---------------------------------------------------------------------------------------
    def load_inputs(self) -> dict[str, PaperInput]:
        """Every stored paper with the extraction it was derived from, whatever extractor version made it
        (papers are re-derived from their own extraction; only inputs built again are re-extracted)."""
        self._base = self._stored({})
        return {pid: st.input for pid, st in self._base.items()}

    def _stored(self, known: Mapping[str, _Stored]) -> dict[str, _Stored]:
        """The stored papers; those of ``known`` whose ``_input`` is unchanged are reused, not parsed again."""
        out: dict[str, _Stored] = {}
        unusable: list[str] = []
        for row in self._scan(Q.PAPER_INPUTS):
            pid, raw = row["id"], row["input"]
            digest = _digest(raw) if isinstance(raw, str) else b""
            old = known.get(pid)
            if old is not None and old.digest == digest:
                out[pid] = old
                continue
            st = _parse_input(raw, digest)
            if st is None:
                unusable.append(pid)
                continue
            out[pid] = st
        if unusable:
            raise StoreError(f"Neo4j server: {len(unusable)} stored papers lack an extraction this kg can use "
                             f"(e.g. {unusable[0]}); rebuild from the original input into an empty database")
        return out

    def replace_graph(self, graph: nx.MultiDiGraph, inputs: Mapping[str, PaperInput]) -> None:
        """Under the build lock: re-derive if another build wrote meanwhile, merge the graph in batches, then
        delete what it no longer has (renamed or merged entities)."""
        lock = self.build_lock()
        with lock:
            self._lock = lock
            try:
                graph, inputs = self._rebase(graph, inputs)
                self._replace(graph, inputs)
            finally:
                self._lock = None
        self.last_write["lock_wait_s"] = lock.waited_s

    def _rebase(self, graph: nx.MultiDiGraph, inputs: Mapping[str, PaperInput]) -> tuple[
            nx.MultiDiGraph, Mapping[str, PaperInput]]:
        """The graph to write, given what is stored now (read under the lock).

        ``inputs`` were the papers this build loaded plus its own. If the stored papers are still those it
        loaded, ``graph`` stands. Otherwise another build wrote in between: its papers are kept, this build's
        own papers (any not handed out by ``load_inputs``) replace theirs, papers this build dropped stay
        dropped, and the graph is derived again from the union. Without ``load_inputs`` first, ``graph`` is
        the whole new graph, as the interface says.
        """
        base = self._base
        if base is None:
            return graph, inputs
        now = self._stored(base)
        if {pid: st.digest for pid, st in now.items()} == {pid: st.digest for pid, st in base.items()}:
            return graph, inputs
        own = {pid: p for pid, p in inputs.items() if pid not in base or (
            base[pid].input is not p and _digest(input_json(p, base[pid].version)) != base[pid].digest)}
        dropped = base.keys() - inputs.keys()
        merged = {pid: st.input for pid, st in now.items() if pid not in dropped} | own
        added = len(now.keys() - base.keys())
        changed = sum(1 for pid in now.keys() & base.keys() if now[pid].digest != base[pid].digest)
        log.warning("another build wrote to %s meanwhile (%d papers added, %d changed); deriving the graph again "
                    "with them", self.where, added, changed)
        self._base = {pid: now[pid] for pid in now.keys() - dropped if pid not in own}
        return derive_graph(merged.values(), overrides=store_overrides(self.cache.path.parent)), merged

    def _replace(self, graph: nx.MultiDiGraph, inputs: Mapping[str, PaperInput]) -> None:
        self.ensure_schema()
        nodes, rels, written = _rows(graph, inputs, self._base or {})
        t0 = time.perf_counter()
        wanted_nodes = {(label, row["id"]) for label, rows in nodes.items() for row in rows}
        wanted_rels = {(r["s"], key[1], r["pid"], r["e"]) for key, rows in rels.items() for r in rows}
        stale_nodes, stale_rels = [], []
        seen: set[Any] = set()
        for row in self._scan(Q.EXISTING_NODES, labels=list(Q.LABELS)):
            key = (row["labels"][0] if len(row["labels"]) == 1 else None, row["id"])
            if key not in wanted_nodes or key in seen:
                stale_nodes.append(row["eid"])
            seen.add(key)
        seen.clear()
        for row in self._scan(Q.EXISTING_RELS, labels=list(Q.LABELS)):
            rel_key = (row["s"], row["type"], row["pid"], row["e"])
            if rel_key not in wanted_rels or rel_key in seen:
                stale_rels.append(row["eid"])
            seen.add(rel_key)
        self._write(Q.DELETE_RELS, stale_rels, param="ids")
        self._write(Q.DELETE_NODES, stale_nodes, param="ids")
        t1 = time.perf_counter()
        for label, rows in nodes.items():
            self._write(Q.merge_nodes(label), rows)
        t2 = time.perf_counter()
        for (start, rel_type, end, per_paper), rows in rels.items():
            self._write(Q.merge_rels(start, rel_type, end, per_paper=per_paper), rows)
        t3 = time.perf_counter()
        self.last_write = {"nodes": len(wanted_nodes), "rels": len(wanted_rels), "deleted_nodes": len(stale_nodes),
                           "deleted_rels": len(stale_rels), "diff_s": t1 - t0, "nodes_s": t2 - t1, "rels_s": t3 - t2}
        if self._base is not None:  # what is stored now, for another replace_graph by this store
            self._base = written
        self._forget()

    # -- Cypher ----------------------------------------------------------------------------------------
    def cypher(self, query: str, parameters: Mapping[str, Any] | None = None, *, max_rows: int = 1000,
               timeout_s: float = 10.0) -> CypherResult:
        # Checked here, before sending: some Bolt servers (ArcadeDB) ignore the READ access mode.
        check_read_only(query)
        # The timeout goes to the server with the query, and is also kept here: a server that ignores it
        # (ArcadeDB) goes on working, but the caller gets its answer, and at most CYPHER_WORKERS such run.
        if not self._slots.acquire(timeout=timeout_s):
            raise CypherTimeout(f"{CYPHER_WORKERS} earlier queries are still running on the server; try later")
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["result"] = self._run_cypher(query, dict(parameters or {}), max_rows, timeout_s)
            except Exception as exc:  # handed to the caller below
                box["error"] = exc
            finally:
                self._slots.release()
                done.set()

        # A daemon thread: a query the server will not stop must not keep the process from exiting.
        threading.Thread(target=work, name="kg-cypher", daemon=True).start()
        if not done.wait(timeout_s + 1.0):
            raise CypherTimeout(f"query ran past {timeout_s:g} s")
        if "error" in box:
            raise box["error"]
        result: CypherResult = box["result"]
        return result

    def _run_cypher(self, query: str, parameters: dict[str, Any], max_rows: int, timeout_s: float) -> CypherResult:
        truncated = False
        try:
            with self.driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS,
                                     fetch_size=max(1, min(max_rows + 1, 1000))) as session:
                result = session.run(_q(query, timeout_s), parameters)
                columns = list(result.keys())
                raw: list[list[Any]] = []
                for record in result:
                    if len(raw) >= max_rows:
                        truncated = True
                        break
                    raw.append(list(record.values()))
            ends = unresolved_ends(raw)
            ids = {row["eid"]: row["id"] for row in self._read(Q.IDS_OF, eids=sorted(ends))} if ends else {}
            rows = [[to_json(v, ids) for v in row] for row in raw]
        except ClientError as exc:
            code = exc.code or ""
            if "TimedOut" in code:
                raise CypherTimeout(f"query ran past {timeout_s:g} s") from exc
            if code.endswith("SyntaxError"):
                raise CypherSyntaxError(_message(exc)) from exc
            if ".Statement." in code or ".Procedure." in code:
                raise CypherError(_message(exc)) from exc
            raise StoreError(f"Neo4j server: {_message(exc)}") from exc
        except (Neo4jError, DriverError) as exc:
            raise StoreError(f"Neo4j server: {_message(exc)}") from exc
        return CypherResult(columns=columns, rows=rows, truncated=truncated)


def input_json(p: PaperInput, version: str = EXTRACTOR_VERSION) -> str:
    """The ``_input`` property of a Paper: its record and extraction (made by extractor ``version``), as
    ``load_inputs`` reads them back."""
    return orjson.dumps({"h": record_hash(p.record), "v": version, "r": asdict(p.record),
                         "x": p.extraction.to_store()}).decode()


def _digest(raw: str) -> bytes:
    return hashlib.sha1(raw.encode()).digest()


def _parse_input(raw: str | None, digest: bytes) -> _Stored | None:
    """A Paper's ``_input`` read back, of any extractor version; None if missing or damaged."""
    try:
        obj = orjson.loads(raw) if raw else None
        if not obj:
            return None
        return _Stored(PaperInput(PaperRecord(**obj["r"]), Extraction.from_store(obj["x"])), digest, str(obj["v"]))
    except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError):
        return None


def _rows(graph: nx.MultiDiGraph, inputs: Mapping[str, PaperInput], stored: Mapping[str, _Stored]) -> tuple[
        dict[str, list[dict[str, Any]]], dict[tuple[str, str, str, bool], list[dict[str, Any]]], dict[str, _Stored]]:
    """Write rows grouped by label, and by (start label, type, end label, keyed per paper); and the papers as
    written. A stored paper whose input is unchanged keeps the extractor version it was made with."""
    nodes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    labels: dict[str, str] = {}
    written: dict[str, _Stored] = {}
    text = graph_text_index(graph)
    for nid, attrs in graph.nodes(data=True):
        label = attrs["label"]
        labels[nid] = label
        props = driver_props(attrs, "label")
        props["id"] = nid
        if label == "Paper":
            if nid not in inputs:
                raise StoreError(f"paper {nid} is in the graph but not among the inputs it was derived from")
            p = inputs[nid]
            old = stored.get(nid)
            version = old.version if old is not None and old.input is p else EXTRACTOR_VERSION
            raw = props[Q.INPUT_PROP] = input_json(p, version)
            props[Q.EMBEDDING_PROP] = text.dense[text.row[nid]].tolist()
            props[Q.EMBEDDER_PROP] = text.embedder
            written[nid] = _Stored(p, _digest(raw), version)
        nodes[label].append({"id": nid, "props": props})
    rels: dict[tuple[str, str, str, bool], list[dict[str, Any]]] = defaultdict(list)
    seen: set[tuple[str, str, Any, str]] = set()
    for u, v, attrs in graph.edges(data=True):
        props = driver_props(attrs, "type")
        pid = props.get("paper_id")
        identity = (u, attrs["type"], pid, v)
        if identity in seen:
            raise StoreError(f"two {attrs['type']} edges from {u} to {v} for the same paper; the graph cannot be "
                             f"stored in Neo4j, where edges are merged on (start, type, paper_id, end)")
        seen.add(identity)
        rels[(labels[u], attrs["type"], labels[v], pid is not None)].append({"s": u, "e": v, "pid": pid,
                                                                              "props": props})
    return dict(nodes), dict(rels), written
