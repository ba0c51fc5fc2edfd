"""The embedded store's record of its graph: one binary file, memory-mapped, that a served store opens in seconds.

Loading a graph as JSON means building millions of Python dicts (about 40 s for the 83k-abstract arXiv graph).
The snapshot is laid out so that opening reads little: the node table is read at once (every read needs it),
while each node's out- and in-edges are a separate ``marshal`` blob found through an offset table and decoded
only when that node is visited, then kept in a bounded cache. Evidence sentences are stored as spans of their
paper's abstract (the text itself only for a sentence that is not one), referred to by number from the edges.
The related-papers index (the paper-entity incidence matrix), every entity's canonical name keys and the
graph's topology as arrays are stored too, so a served store does not recompute them. The edge blobs, the name
keys and the related-papers lists are compressed (``kg.store.snapcodec``); the node table is not (decompressing
it would make opening slower), nor are the arrays, which are read in place.

Layout (version 5): ``MAGIC``, then sections, then a JSON header (format, version, the payload's encoding and
the Python that wrote it, section offsets and checksums, counts), its CRC-32 (4 bytes), its length (8 bytes,
little-endian) and ``END_V5``. A snapshot written by another Python is refused with a message saying how to
rebuild it (marshal's format may differ between Python versions), never read. Versions 3 and 4 end in a
``marshal``-encoded header, its length and ``MAGIC``, and are still read. Since version 4 the snapshot is the
store's only copy of the graph and lists the stored papers (id -> input hash) in a section of its own, which is
all a build reads. Version 3 (kg before that) mirrored a ``graph.jsonl`` beside it, named in its header
(``source``); it is still read. Every section carries a CRC-32 (each edge blob its own, checked when it is
decoded), so damage is reported as such rather than decoded into wrong answers. ``marshal`` never runs code,
and kg only stores plain values in it (dicts, lists, strings, numbers).
"""

from __future__ import annotations

import hashlib
import marshal
import mmap
import os
import shlex
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import orjson

from kg.canon import KEY_SCHEME
from kg.cypher.columns import TOPOLOGY_ARRAYS
from kg.errors import StoreError
from kg.files import NotAFile, open_regular
from kg.lru import LRUCache
from kg.related import RelatedIndex, TextIndex
from kg.store import snapcodec
from kg.store.snapcodec import END_V5, MAGIC, PAYLOAD, READABLE, VERSION, identity
from kg.store.snapshot_write import write_snapshot

__all__ = ["MAGIC", "READABLE", "SNAPSHOT_FILE", "VERSION", "FrozenGraph", "Snapshot", "rebuild_hint",
           "source_identity", "write_snapshot"]

SNAPSHOT_FILE = "graph.snapshot"
# Decoded adjacency kept in memory, counted in edges (both directions): the whole graph up to 3 million (a
# 20k-abstract graph, 1.2 million), so walks past 10k abstracts stop re-decoding blobs; at least 400,000.
CACHE_EDGES, CACHE_EDGES_MAX = 400_000, 3_000_000


def rebuild_hint(store_dir: Path) -> str:
    """How to put a damaged store right: what every damage message ends with."""
    return (f"rebuild the store: `kg build --store-dir {shlex.quote(str(store_dir))}` derives it again from its "
            f"extraction log")


def damaged(path: Path, what: str, instead: str | None = None) -> StoreError:
    """The error for a damaged snapshot ``path`` (``what``: which part): names the file and how to rebuild."""
    return StoreError(f"{path}: {instead or 'damaged snapshot' + what}; {rebuild_hint(path.parent)}")


def source_identity(jsonl: Path) -> dict[str, Any]:
    """What a snapshot must match to stand for ``jsonl``: its size and a digest of its header line."""
    with open_regular(jsonl) as fh:
        first = fh.readline()
        size = os.fstat(fh.fileno()).st_size
    return {"size": size, "header": hashlib.blake2b(first, digest_size=16).hexdigest()}


class Snapshot:
    """An open snapshot file (memory-mapped); ``graph()`` gives the graph it holds."""

    def __init__(self, path: Path, *, verify: bool = True) -> None:
        self.path = path
        try:
            fh = open_regular(path)
        except NotAFile as exc:
            raise StoreError(f"{exc}; remove it, then {rebuild_hint(path.parent)}") from None
        with fh:
            try:
                self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file
                raise damaged(path, "", "an empty file, not a kg snapshot") from None
        mm = self._mm
        if len(mm) < len(MAGIC) or mm[: len(MAGIC)] != MAGIC:
            raise damaged(path, "", "not a kg snapshot")
        if mm[-len(END_V5) :] == END_V5:
            header, raw = self._header_v5(path)
        else:  # versions 3 and 4: a marshal header, no checksum of its own
            tail = len(MAGIC) + 8
            if len(mm) < 2 * tail or mm[-len(MAGIC) :] != MAGIC:
                raise damaged(path, "", "not a kg snapshot, or one cut short")
            hlen = int.from_bytes(mm[-tail : -len(MAGIC)], "little")
            raw = bytes(mm[len(mm) - tail - hlen : len(mm) - tail])
            try:
                header = marshal.loads(raw)
            except (EOFError, ValueError, TypeError):
                raise damaged(path, " header") from None
        if not isinstance(header, dict) or header.get("format") != "kg-snapshot":
            raise damaged(path, "", "not a kg snapshot")
        self.header = header
        self.version = header.get("version")
        self._identity = identity(raw, len(mm))
        if self.version in READABLE and verify:
            self._verify()

    def _header_v5(self, path: Path) -> tuple[Any, bytes]:
        """The JSON header, checked against its CRC, and refused when written by another Python (marshal's
        format may differ): the header, and its bytes (which name this graph)."""
        mm, tail = self._mm, len(END_V5) + 8 + 4
        hlen = int.from_bytes(mm[-len(END_V5) - 8 : -len(END_V5)], "little")
        if len(mm) < len(MAGIC) + tail + hlen:
            raise damaged(path, " header (cut short)")
        raw = bytes(mm[len(mm) - tail - hlen : len(mm) - tail])
        if zlib.crc32(raw) != int.from_bytes(mm[len(mm) - tail : len(mm) - tail + 4], "little"):
            raise damaged(path, " header (checksum)")
        try:
            header = orjson.loads(raw)
            payload = header["payload"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise damaged(path, " header") from None
        if payload != PAYLOAD:
            wrote = f"Python {payload.get('python')} ({payload.get('encoding')} {payload.get('marshal_version')})" \
                if isinstance(payload, dict) else repr(payload)
            raise StoreError(f"{path} was written by {wrote}; this kg runs Python {PAYLOAD['python']}, which may "
                             f"read it differently; {rebuild_hint(path.parent)}")
        return header, raw

    def _verify(self, names: Iterable[str] | None = None) -> None:
        """Check every section (or those ``names``) but the edge blobs (each checked when decoded): a fraction
        of a second."""
        try:
            for name in self.header["checksums"] if names is None else names:
                want = self.header["checksums"][name]
                start, length = self.header["sections"][name]
                with memoryview(self._mm)[start : start + length] as view:
                    ok = zlib.crc32(view) == want and len(view) == length
                if not ok:
                    raise damaged(self.path, f" (section {name})")
        except (KeyError, TypeError, ValueError):
            raise damaged(self.path, " header") from None

    @property
    def is_record(self) -> bool:
        """Whether this snapshot is the store's record of its graph (version 4 on), not a copy of graph.jsonl."""
        return isinstance(self.version, int) and self.version >= 4

    def identity(self) -> dict[str, Any]:
        """Its size and a digest of its header (which holds every section's checksum): what names this graph."""
        return dict(self._identity)

    def papers(self) -> dict[str, str]:
        """The stored papers (id -> input hash), checked and read without the graph: all a build needs."""
        self._verify(["papers"])
        try:
            papers = marshal.loads(snapcodec.unpack(self.section("papers")))
        except (EOFError, ValueError, TypeError, zlib.error):
            raise damaged(self.path, " (papers)") from None
        if not isinstance(papers, dict):
            raise damaged(self.path, " (papers)")
        return papers

    def unpacked(self, name: str) -> bytes:
        """A section as written: compressed since version 4."""
        data = self.section(name)
        return snapcodec.unpack(data) if self.is_record else data

    def section(self, name: str) -> bytes:
        start, length = self.header["sections"][name]
        return self._mm[start : start + length]

    def graph(self) -> FrozenGraph:
        try:
            return FrozenGraph(self)
        except (EOFError, ValueError, TypeError, KeyError, IndexError, zlib.error) as exc:
            raise damaged(self.path, f" ({type(exc).__name__})") from None

    @property
    def keys_current(self) -> bool:
        """Whether its name keys were made by today's ``canonical_key`` rules (a kg before them wrote none)."""
        return self.header.get("key_scheme", 1) == KEY_SCHEME

    def name_keys(self) -> dict[str, tuple[str, ...]] | None:
        """Each entity's canonical name keys, as ``NxReads`` computes them (costly for 500k entities); None when
        they were made by older rules (``keys_current``)."""
        return marshal.loads(self.unpacked("name_keys")) if self.keys_current else None

    def topology(self) -> dict[str, Any]:
        """The CSR arrays of ``kg.cypher.columns``, read in place from the mapped file."""
        out: dict[str, Any] = {"types": list(self.header["edge_type_codes"])}
        for name, dtype in TOPOLOGY_ARRAYS.items():
            start, length = self.header["sections"][f"topo_{name}"]
            out[name] = np.frombuffer(self._mm, dtype=dtype, count=length // np.dtype(dtype).itemsize, offset=start)
        return out

    def related_index(self) -> RelatedIndex:
        papers, entities = marshal.loads(self.unpacked("related"))
        indptr = np.frombuffer(self.section("related_indptr"), dtype=np.int64)
        indices = np.frombuffer(self.section("related_indices"), dtype=np.int32)
        return RelatedIndex.from_csr(papers, entities, indptr, indices)

    def text_index(self) -> TextIndex | None:
        """The papers' embeddings and TF-IDF rows, read in place; None for a snapshot written before kg kept
        them (they are computed from the abstracts then)."""
        meta = self.header.get("text")
        if not meta:
            return None
        from scipy import sparse

        sec = self.header["sections"]

        def arr(name: str, dtype: Any) -> np.ndarray:
            start, length = sec[name]
            return np.frombuffer(self._mm, dtype=dtype, count=length // np.dtype(dtype).itemsize, offset=start)

        self._verify(["text_papers", "text_dense", "text_lex_indptr", "text_lex_indices", "text_lex_data"])
        try:
            papers = marshal.loads(self.unpacked("text_papers"))
            dense = arr("text_dense", np.float16).reshape(meta["papers"], meta["dims"]).astype(np.float32)
        except (EOFError, ValueError, TypeError, KeyError, zlib.error):
            raise damaged(self.path, " (text index)") from None
        try:
            values = arr("text_lex_data", np.float16).astype(np.float32)  # the weights were float16 values already
            lexical = sparse.csr_matrix((values, arr("text_lex_indices", np.int32), arr("text_lex_indptr", np.int64)),
                                        shape=(meta["papers"], meta["terms"]))
            return TextIndex(papers, dense, lexical, embedder=meta["embedder"])
        except (ValueError, IndexError, TypeError):
            raise damaged(self.path, " (text index)") from None


class _Adjacency(Mapping[Any, dict[Any, dict[Any, dict[str, Any]]]]):
    """node -> {neighbour: {key: edge attributes}}, decoded from the snapshot per node on first use."""

    def __init__(self, snap: Snapshot, pos: dict[Any, int], name: str, sentence: Any, cache: LRUCache) -> None:
        self._mm = snap._mm
        self._base = snap.header["sections"][name][0]
        self._offsets = array("q", snap.section(f"{name}_offsets"))
        self._codec = snapcodec.BlobCodec(snap.section(f"{name}_zdict")) if snap.is_record else None
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
            for other, k, d in marshal.loads(blob if self._codec is None else self._codec.decode(blob)):
                if "sent" in d:
                    d["sentence"] = sentence(d.pop("sent"))
                keydict = adj.get(other)
                if keydict is None:
                    keydict = adj[other] = {}
                keydict[k] = d
        except (EOFError, ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError, zlib.error):
            raise damaged(self._path, f" (edges of node {n!r})") from None
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
        self._node: dict[str, dict[str, Any]] = {}
        base = snap.header["sections"]["nodes"][0]
        offsets = array("q", snap.section("nodes_offsets"))
        for lo, hi in zip(offsets, offsets[1:], strict=False):  # not compressed: opening would take longer
            self._node.update((a["id"], a) for a in marshal.loads(snap._mm[base + lo : base + hi]))
        pos = {n: i for i, n in enumerate(self._node)}
        sent_base = snap.header["sections"]["sentences"][0]
        sent_off = array("q", snap.section("sentence_offsets"))
        mm = snap._mm

        def text(i: int) -> str:
            return mm[sent_base + sent_off[i] : sent_base + sent_off[i + 1]].decode()

        sentence = text
        if snap.is_record:
            spans = array("i", snap.section("sentence_spans"))
            paper, start, end = spans[0::3], spans[1::3], spans[2::3]  # one index each, not 3 * i + k per read
            by_pos = list(self._node.values())

            def sentence(i: int) -> str:
                p = paper[i]
                return by_pos[p]["abstract"][start[i] : end[i]] if p >= 0 else text(i)  # a span of its abstract

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
