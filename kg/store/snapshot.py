"""A binary snapshot of the stored graph that a served store opens in seconds.

``graph.jsonl`` is the store's portable record; loading it means building millions of Python dicts (about 40 s
for the 83k-abstract arXiv graph). The snapshot, written beside it by every build, is laid out so that opening
reads little: the node table is read at once (every read needs it), while each node's out- and in-edges are a
separate ``marshal`` blob found through an offset table and decoded only when that node is visited, then kept
in a bounded cache. Evidence sentences sit in one table, referred to by number, and are decoded with the
edges that cite them. The related-papers index (the paper-entity incidence matrix) and every entity's canonical
name keys are stored too, so a served store does not recompute them.

Layout: ``MAGIC``, then sections, then a ``marshal``-encoded header (format, version, the source it mirrors,
section offsets, counts), then the header's length (8 bytes, little-endian) and ``MAGIC`` again. The header
names the ``graph.jsonl`` it was made from (its size and a digest of its first line, which lists every paper
and the hash of its input); a snapshot that does not match is ignored and the graph is read from
``graph.jsonl``. Every section carries a CRC-32 (each edge blob its own, checked when it is decoded), so damage is
reported as such rather than decoded into wrong answers. ``marshal`` never runs code, and kg only stores plain
values in it (dicts, lists, strings, numbers).
"""

from __future__ import annotations

import hashlib
import marshal
import mmap
import zlib
from array import array
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import networkx as nx
import numpy as np

from kg.cypher.columns import TOPOLOGY_ARRAYS, topology_arrays
from kg.errors import StoreError
from kg.lru import LRUCache
from kg.related import RelatedIndex

SNAPSHOT_FILE = "graph.snapshot"
MAGIC = b"KGSNAP\r\n"
VERSION = 3  # 3: the graph's topology as arrays (vectorised Cypher)
_MARSHAL_VERSION = 4
NODE_CHUNK = 20_000
# Decoded adjacency kept in memory, counted in edges (both directions): the whole graph up to 3 million (a
# 20k-abstract graph, 1.2 million), so walks past 10k abstracts stop re-decoding blobs; at least 400,000.
CACHE_EDGES, CACHE_EDGES_MAX = 400_000, 3_000_000


def source_identity(jsonl: Path) -> dict[str, Any]:
    """What a snapshot must match to stand for ``jsonl``: its size and a digest of its header line."""
    with open(jsonl, "rb") as fh:
        first = fh.readline()
    return {"size": jsonl.stat().st_size, "header": hashlib.blake2b(first, digest_size=16).hexdigest()}


def _rows(adj: Mapping[Any, Mapping[Any, Mapping[str, Any]]], sentence_id: dict[str, int]) -> list[tuple]:
    rows = []
    for other, keydict in sorted(adj.items()):
        for key, d in sorted(keydict.items()):
            if "sentence" in d:
                d = {**d, "sent": sentence_id.setdefault(d["sentence"], len(sentence_id))}
                del d["sentence"]
            rows.append((other, key, d))
    return rows


def write_snapshot(g: nx.MultiDiGraph, related: RelatedIndex,
                   name_keys: Mapping[str, tuple[str, ...]], source: dict[str, Any], fh: BinaryIO) -> None:
    """Write ``g`` as a snapshot to ``fh`` (see the module docstring for the layout)."""
    pos = 0
    sections: dict[str, tuple[int, int]] = {}
    checksums: dict[str, int] = {}
    current: list[Any] = []  # [name, start, crc] of the section being written

    def begin(name: str) -> None:
        current[:] = [name, pos, 0]

    def add(data: bytes) -> int:
        """Write ``data`` into the current section; returns its crc32."""
        nonlocal pos
        fh.write(data)
        pos += len(data)
        crc = zlib.crc32(data)
        current[2] = zlib.crc32(data, current[2])
        return crc

    def end() -> None:
        name, start, crc = current
        sections[name] = (start, pos - start)
        checksums[name] = crc

    def section(name: str, data: bytes) -> None:
        begin(name)
        add(data)
        end()

    fh.write(MAGIC)
    pos = len(MAGIC)
    ids = sorted(g.nodes)
    offsets = array("q", [0])
    begin("nodes")
    for i in range(0, len(ids), NODE_CHUNK):  # in chunks: one blob for 500k nodes would double the peak memory
        add(marshal.dumps([g._node[n] for n in ids[i : i + NODE_CHUNK]], _MARSHAL_VERSION))
        offsets.append(pos - current[1])
    end()
    section("nodes_offsets", offsets.tobytes())
    sentence_id: dict[str, int] = {}
    edge_types: dict[str, int] = {}
    edge_keys: set[str] = set()
    for _, _, d in g.edges(data=True):
        edge_types[d["type"]] = edge_types.get(d["type"], 0) + 1
        edge_keys.update(d)
    for name, adj in (("out", g._succ), ("in", g._pred)):
        offsets = array("q", [0])
        crcs = array("I")
        begin(name)
        for n in ids:
            crcs.append(add(marshal.dumps(_rows(adj[n], sentence_id), _MARSHAL_VERSION)))
            offsets.append(pos - current[1])
        end()
        checksums.pop(name)  # each blob has its own checksum, verified when it is decoded
        section(f"{name}_offsets", offsets.tobytes())
        section(f"{name}_crc", crcs.tobytes())
    offsets = array("q", [0])
    begin("sentences")
    for s in sentence_id:  # dicts keep insertion order: sentence i is the i-th key
        add(s.encode())
        offsets.append(pos - current[1])
    end()
    section("sentence_offsets", offsets.tobytes())
    section("related", marshal.dumps((related.papers, related.entities), _MARSHAL_VERSION))
    section("related_indptr", np.ascontiguousarray(related.indptr, dtype=np.int64).tobytes())
    section("related_indices", np.ascontiguousarray(related.indices, dtype=np.int32).tobytes())
    section("name_keys", marshal.dumps(dict(name_keys), _MARSHAL_VERSION))
    topo = topology_arrays(g, ids, sort=True)  # in the order FrozenGraph iterates: sorted nodes, neighbours, keys
    for name, dtype in TOPOLOGY_ARRAYS.items():
        section(f"topo_{name}", np.ascontiguousarray(topo[name], dtype=dtype).tobytes())
    header = marshal.dumps({"format": "kg-snapshot", "version": VERSION, "source": source,
                            "edge_type_codes": topo["types"],
                            "sections": sections, "checksums": checksums, "nodes": len(ids),
                            "edges": g.number_of_edges(), "edge_types": edge_types,
                            "edge_keys": sorted(edge_keys)}, _MARSHAL_VERSION)
    fh.write(header + len(header).to_bytes(8, "little") + MAGIC)


class Snapshot:
    """An open snapshot file (memory-mapped); ``graph()`` gives the graph it holds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as fh:
            try:
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file
                raise StoreError(f"{path}: not a kg snapshot") from None
        mm = self._mm
        tail = len(MAGIC) + 8
        if len(mm) < 2 * tail or mm[: len(MAGIC)] != MAGIC or mm[-len(MAGIC) :] != MAGIC:
            raise StoreError(f"{path}: not a kg snapshot (or one cut short)")
        hlen = int.from_bytes(mm[-tail : -len(MAGIC)], "little")
        try:
            header = marshal.loads(mm[len(mm) - tail - hlen : len(mm) - tail])
        except (EOFError, ValueError, TypeError):
            raise StoreError(f"{path}: damaged snapshot header") from None
        if not isinstance(header, dict) or header.get("format") != "kg-snapshot":
            raise StoreError(f"{path}: not a kg snapshot")
        self.header = header
        self.version = header.get("version")
        if self.version == VERSION:
            self._verify()

    def _verify(self) -> None:
        """Check every section but the edge blobs (each checked when decoded): a fraction of a second."""
        try:
            for name, want in self.header["checksums"].items():
                start, length = self.header["sections"][name]
                with memoryview(self._mm)[start : start + length] as view:
                    ok = zlib.crc32(view) == want and len(view) == length
                if not ok:
                    raise StoreError(f"{self.path}: damaged snapshot (section {name}); rebuild the store")
        except (KeyError, TypeError, ValueError):
            raise StoreError(f"{self.path}: damaged snapshot header; rebuild the store") from None

    def section(self, name: str) -> bytes:
        start, length = self.header["sections"][name]
        return self._mm[start : start + length]

    def graph(self) -> FrozenGraph:
        try:
            return FrozenGraph(self)
        except (EOFError, ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"{self.path}: damaged snapshot ({type(exc).__name__}); rebuild the store") from None

    def name_keys(self) -> dict[str, tuple[str, ...]]:
        """Each entity's canonical name keys, as ``NxReads`` computes them (costly for 500k entities)."""
        return marshal.loads(self.section("name_keys"))

    def topology(self) -> dict[str, Any]:
        """The CSR arrays of ``kg.cypher.columns``, read in place from the mapped file."""
        out: dict[str, Any] = {"types": list(self.header["edge_type_codes"])}
        for name, dtype in TOPOLOGY_ARRAYS.items():
            start, length = self.header["sections"][f"topo_{name}"]
            out[name] = np.frombuffer(self._mm, dtype=dtype, count=length // np.dtype(dtype).itemsize, offset=start)
        return out

    def related_index(self) -> RelatedIndex:
        papers, entities = marshal.loads(self.section("related"))
        indptr = np.frombuffer(self.section("related_indptr"), dtype=np.int64)
        indices = np.frombuffer(self.section("related_indices"), dtype=np.int32)
        return RelatedIndex.from_csr(papers, entities, indptr, indices)


class _Adjacency(Mapping[Any, dict[Any, dict[Any, dict[str, Any]]]]):
    """node -> {neighbour: {key: edge attributes}}, decoded from the snapshot per node on first use."""

    def __init__(self, snap: Snapshot, pos: dict[Any, int], name: str, sentence: Any, cache: LRUCache) -> None:
        self._mm = snap._mm
        self._base = snap.header["sections"][name][0]
        self._offsets = array("q", snap.section(f"{name}_offsets"))
        self._crc = array("I", snap.section(f"{name}_crc"))
        self._path = snap.path
        self._pos = pos
        self._sentence = sentence
        self._cache = cache
        self._name = name

    def __getitem__(self, n: Any) -> dict[Any, dict[Any, dict[str, Any]]]:
        i = self._pos[n]  # KeyError for an unknown node, as a dict would raise
        key = (self._name, n)
        adj = self._cache.get(key)
        if adj is not None:
            return adj
        lo, hi = self._offsets[i], self._offsets[i + 1]
        blob = self._mm[self._base + lo : self._base + hi]
        adj = {}
        sentence = self._sentence
        try:
            if zlib.crc32(blob) != self._crc[i]:
                raise ValueError("checksum")
            for other, k, d in marshal.loads(blob):
                if "sent" in d:
                    d["sentence"] = sentence(d.pop("sent"))
                keydict = adj.get(other)
                if keydict is None:
                    keydict = adj[other] = {}
                keydict[k] = d
        except (EOFError, ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError):
            raise StoreError(f"{self._path}: damaged snapshot (edges of node {n!r}); rebuild the store") from None
        return self._cache.put(key, adj, sum(len(kd) for kd in adj.values()))

    def __contains__(self, n: object) -> bool:
        return n in self._pos

    def __iter__(self) -> Iterator[Any]:
        return iter(self._pos)

    def __len__(self) -> int:
        return len(self._pos)


class FrozenGraph(nx.MultiDiGraph):
    """A read-only MultiDiGraph over a snapshot: all nodes in memory, each node's edges decoded when visited.

    NetworkX's views (``out_edges``, ``in_edges``, ``successors``, ``has_edge``...) and kg's Cypher engine
    read ``_node``, ``_succ`` and ``_pred``, which is all this class provides; mutating it raises.
    """

    def __init__(self, snap: Snapshot | None = None) -> None:
        super().__init__()
        if snap is None:  # networkx makes empty instances of a graph's class (copy, subgraph): a plain graph
            return
        self.snapshot = snap
        self._node = {}
        base = snap.header["sections"]["nodes"][0]
        offsets = array("q", snap.section("nodes_offsets"))
        for lo, hi in zip(offsets, offsets[1:], strict=False):
            self._node.update((a["id"], a) for a in marshal.loads(snap._mm[base + lo : base + hi]))
        pos = {n: i for i, n in enumerate(self._node)}
        sent_base = snap.header["sections"]["sentences"][0]
        sent_off = array("q", snap.section("sentence_offsets"))
        mm = snap._mm

        def sentence(i: int) -> str:
            return mm[sent_base + sent_off[i] : sent_base + sent_off[i + 1]].decode()

        cache = LRUCache(max(CACHE_EDGES, min(2 * int(snap.header["edges"]), CACHE_EDGES_MAX)))
        self._adj = _Adjacency(snap, pos, "out", sentence, cache)
        self._pred = _Adjacency(snap, pos, "in", sentence, cache)
        self._edge_count = snap.header["edges"]
        # What a full edge scan would find, known without decoding every edge (Cypher's db.* procedures).
        self.edge_type_counts: dict[str, int] = dict(snap.header["edge_types"])
        keys = snap.header.get("edge_keys")
        self.edge_property_keys: list[str] | None = None if keys is None else list(keys)
        nx.freeze(self)

    def stored_topology(self) -> dict[str, Any] | None:
        """The snapshot's CSR arrays (see ``kg.cypher.columns.topology``)."""
        snap = getattr(self, "snapshot", None)
        return None if snap is None else snap.topology()

    def number_of_edges(self, u: Any = None, v: Any = None) -> int:
        if u is None and getattr(self, "snapshot", None) is not None:
            return int(self._edge_count)
        return super().number_of_edges(u, v)
