"""The embedded store: a NetworkX graph persisted as one JSON file in a directory, written atomically."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import orjson

from kg.cache import ExtractionCache, record_hash
from kg.errors import StoreError, StoreLockedError
from kg.extract.pipeline import EXTRACTOR_VERSION
from kg.graph import PaperInput
from kg.store.nxreads import NxReads

FORMAT = "kg-graph"
FORMAT_VERSION = 2
GRAPH_FILE = "graph.json"
INPUTS_FILE = "inputs.jsonl"
LOCK_FILE = ".lock"


def graph_to_json(g: nx.MultiDiGraph, papers: Mapping[str, str]) -> bytes:
    """The documented on-disk format: nodes as property maps, edges as [source, target, key, properties].

    Evidence sentences are stored once per paper (``sentences``) and edges refer to them by index
    (``sent``): a sentence is evidence for many edges, and repeating it would multiply the file size.
    """
    sentences: dict[str, dict[str, int]] = {}
    edges = []
    for u, v, k, d in sorted(g.edges(keys=True, data=True), key=lambda e: (e[0], e[1], e[2])):
        if "sentence" in d:
            table = sentences.setdefault(d["paper_id"], {})
            d = {**d, "sent": table.setdefault(d["sentence"], len(table))}
            del d["sentence"]
        edges.append([u, v, k, d])
    return orjson.dumps({
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "papers": dict(sorted(papers.items())),
        "nodes": [attrs for _, attrs in sorted(g.nodes(data=True), key=lambda na: na[0])],
        "sentences": {pid: list(table) for pid, table in sorted(sentences.items())},
        "edges": edges,
    })


def graph_from_json(data: bytes, where: str) -> tuple[nx.MultiDiGraph, dict[str, str]]:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise StoreError(f"{where}: not a kg graph file ({exc})") from exc
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise StoreError(f"{where}: not a kg graph file")
    if obj.get("version") != FORMAT_VERSION:
        raise StoreError(f"{where}: graph format version {obj.get('version')} is not supported by this kg; "
                         f"rebuild the store")
    sentences = obj["sentences"]
    edges = obj["edges"]
    for e in edges:
        d = e[3]
        if "sent" in d:
            # One string object per sentence, shared by all its edges.
            d["sentence"] = sentences[d["paper_id"]][d.pop("sent")]
    g = nx.MultiDiGraph()
    g.add_nodes_from((n["id"], n) for n in obj["nodes"])
    g.add_edges_from(edges)
    return g, obj["papers"]


def _older_format_papers(data: bytes) -> dict[str, str] | None:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if isinstance(obj, dict) and obj.get("format") == FORMAT and isinstance(obj.get("papers"), dict):
        return obj["papers"]
    return None


def _atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file, fsync, then rename over ``path``: a crash leaves the old file whole."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class EmbeddedStore(NxReads):
    """A store directory: ``graph.json`` (the graph), ``inputs.jsonl`` (extraction log), ``.lock``.

    Open with ``writable=True`` to build: that takes an exclusive lock, so a second build into the same
    directory fails at once with a clear message instead of interleaving writes.
    """

    def __init__(self, path: str | os.PathLike[str], *, writable: bool = False, wait: bool = False) -> None:
        self.path = Path(path)
        self.writable = writable
        self._lock_fd: int | None = None
        if writable:
            self.path.mkdir(parents=True, exist_ok=True)
            self._lock(wait)
        elif not (self.path / GRAPH_FILE).exists():
            raise StoreError(f"{self.path}: no graph here yet; build one with `kg build PATH --store-dir {self.path}`")
        self.cache = ExtractionCache(self.path / INPUTS_FILE, EXTRACTOR_VERSION)
        self._papers: dict[str, str] = {}
        graph = nx.MultiDiGraph()
        gfile = self.path / GRAPH_FILE
        if gfile.exists():
            data = gfile.read_bytes()
            try:
                graph, self._papers = graph_from_json(data, str(gfile))
            except StoreError:
                if not writable or not (old := _older_format_papers(data)):
                    raise
                # A graph written by an older kg: its papers and the extraction log are enough to re-derive.
                self._papers = old
        super().__init__(graph)

    def _lock(self, wait: bool) -> None:
        fd = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreLockedError(f"{self.path}: another kg build is writing this store; wait for it to finish "
                                   f"(or pass --wait)") from None
        self._lock_fd = fd

    def close(self) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def load_inputs(self) -> dict[str, PaperInput]:
        by_hash = self.cache.load(set(self._papers.values()))
        missing = [pid for pid, h in self._papers.items() if h not in by_hash]
        if missing:
            raise StoreError(f"{self.path / INPUTS_FILE}: extractions for {len(missing)} stored papers are missing "
                             f"(e.g. {missing[0]}); rebuild from the original input into a new store")
        return {pid: by_hash[h] for pid, h in self._papers.items()}

    def replace_graph(self, graph: nx.MultiDiGraph, inputs: Mapping[str, PaperInput]) -> None:
        if not self.writable:
            raise StoreError(f"{self.path}: store opened read-only")
        papers = {pid: record_hash(p.record) for pid, p in inputs.items()}
        _atomic_write(self.path / GRAPH_FILE, graph_to_json(graph, papers))
        self._papers = papers
        self.set_graph(graph)

    def info(self) -> dict[str, Any]:
        f = self.path / GRAPH_FILE
        return {"store": "embedded", "path": str(self.path), "bytes": f.stat().st_size if f.exists() else 0}
