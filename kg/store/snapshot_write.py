"""Write a graph as a snapshot (the format ``kg.store.snapshot`` describes and reads)."""

from __future__ import annotations

import marshal
import zlib
from array import array
from collections.abc import Mapping
from typing import Any, BinaryIO

import networkx as nx
import numpy as np
import orjson

from kg.canon import KEY_SCHEME
from kg.cypher.columns import TOPOLOGY_ARRAYS, topology_arrays
from kg.related import RelatedIndex, TextIndex
from kg.store import snapcodec
from kg.store.snapcodec import END_V5, MAGIC, MARSHAL_VERSION, NODE_CHUNK, PAYLOAD, VERSION, identity


def _rows(adj: Mapping[Any, Mapping[Any, Mapping[str, Any]]], sentence_id: dict[str, int],
          sentence_paper: list[Any]) -> list[tuple]:
    rows = []
    for other, keydict in sorted(adj.items()):
        for key, d in sorted(keydict.items()):
            if "sentence" in d:
                s = d["sentence"]
                i = sentence_id.get(s)
                if i is None:
                    i = sentence_id[s] = len(sentence_paper)
                    sentence_paper.append(d.get("paper_id"))
                d = {**d, "sent": i}
                del d["sentence"]
            rows.append((other, key, d))
    return rows


def _sample_dict(adj: Mapping[Any, Any], ids: list[Any], sentence_id: dict[str, int]) -> bytes:
    """A preset dictionary for one direction's blobs, from ~256 nodes spread over the id order."""
    step = max(1, len(ids) // 256)
    scratch = dict(sentence_id)  # sentence numbers are only plausible here; the real ones are given later
    return snapcodec.train([marshal.dumps(_rows(adj[n], scratch, []), MARSHAL_VERSION) for n in ids[::step]])


def write_snapshot(g: nx.MultiDiGraph, related: RelatedIndex, name_keys: Mapping[str, tuple[str, ...]],
                   papers: Mapping[str, str], fh: BinaryIO, *, text: TextIndex | None = None) -> dict[str, Any]:
    """Write ``g`` (with its ``papers``, id -> input hash) as a snapshot to ``fh`` (see the module docstring);
    returns its identity (``Snapshot.identity``)."""
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
    section("papers", snapcodec.pack(marshal.dumps(dict(sorted(papers.items())), MARSHAL_VERSION)))
    ids = sorted(g.nodes)
    node_pos = {n: i for i, n in enumerate(ids)}
    offsets = array("q", [0])
    begin("nodes")
    for i in range(0, len(ids), NODE_CHUNK):  # in chunks: one blob for 500k nodes would double the peak memory
        add(marshal.dumps([g._node[n] for n in ids[i : i + NODE_CHUNK]], MARSHAL_VERSION))
        offsets.append(pos - current[1])
    end()
    section("nodes_offsets", offsets.tobytes())
    sentence_id: dict[str, int] = {}
    sentence_paper: list[Any] = []  # the paper of each sentence's first edge: whose abstract it is a span of
    edge_types: dict[str, int] = {}
    edge_keys: set[str] = set()
    for _, _, d in g.edges(data=True):
        edge_types[d["type"]] = edge_types.get(d["type"], 0) + 1
        edge_keys.update(d)
    for name, adj in (("out", g._succ), ("in", g._pred)):
        codec = snapcodec.BlobCodec(_sample_dict(adj, ids, sentence_id))
        section(f"{name}_zdict", codec.zdict)
        offsets = array("q", [0])
        crcs = array("I")
        begin(name)
        for n in ids:
            crcs.append(add(codec.encode(marshal.dumps(_rows(adj[n], sentence_id, sentence_paper),
                                                       MARSHAL_VERSION))))
            offsets.append(pos - current[1])
        end()
        checksums.pop(name)  # each blob has its own checksum, verified when it is decoded
        section(f"{name}_offsets", offsets.tobytes())
        section(f"{name}_crc", crcs.tobytes())
    offsets = array("q", [0])
    spans = array("i")  # per sentence: (node number of its paper, start, end) in the abstract, or (-1, 0, 0)
    begin("sentences")
    for s, pid in zip(sentence_id, sentence_paper, strict=True):  # sentence i is the i-th key
        abstract = g._node.get(pid, {}).get("abstract") if pid in node_pos else None
        at = abstract.find(s) if isinstance(abstract, str) else -1
        if at >= 0:
            spans.extend((node_pos[pid], at, at + len(s)))
        else:  # not a span of its paper's abstract (a graph made by hand): the text itself
            spans.extend((-1, 0, 0))
            add(s.encode())
        offsets.append(pos - current[1])
    end()
    section("sentence_offsets", offsets.tobytes())
    section("sentence_spans", spans.tobytes())
    section("related", snapcodec.pack(marshal.dumps((related.papers, related.entities), MARSHAL_VERSION)))
    section("related_indptr", np.ascontiguousarray(related.indptr, dtype=np.int64).tobytes())
    section("related_indices", np.ascontiguousarray(related.indices, dtype=np.int32).tobytes())
    text_meta = None
    if text is not None:  # the papers' embeddings (float16) and TF-IDF rows, in sorted paper order
        text_meta = {"embedder": text.embedder, "dims": int(text.dense.shape[1]), "papers": len(text.papers),
                     "terms": int(text.lexical.shape[1])}
        section("text_papers", snapcodec.pack(marshal.dumps(text.papers, MARSHAL_VERSION)))
        section("text_dense", np.ascontiguousarray(text.dense, dtype=np.float16).tobytes())
        section("text_lex_indptr", np.ascontiguousarray(text.lexical.indptr, dtype=np.int64).tobytes())
        section("text_lex_indices", np.ascontiguousarray(text.lexical.indices, dtype=np.int32).tobytes())
        section("text_lex_data", np.ascontiguousarray(text.lexical.data, dtype=np.float16).tobytes())  # exact
    section("name_keys", snapcodec.pack(marshal.dumps(dict(name_keys), MARSHAL_VERSION)))
    topo = topology_arrays(g, ids, sort=True)  # in the order FrozenGraph iterates: sorted nodes, neighbours, keys
    for name, dtype in TOPOLOGY_ARRAYS.items():
        section(f"topo_{name}", np.ascontiguousarray(topo[name], dtype=dtype).tobytes())
    header = orjson.dumps({"format": "kg-snapshot", "version": VERSION, "payload": PAYLOAD, "papers": len(papers),
                           "key_scheme": KEY_SCHEME, "text": text_meta,
                           "edge_type_codes": list(topo["types"]),
                           "sections": sections, "checksums": checksums, "nodes": len(ids),
                           "edges": g.number_of_edges(), "edge_types": edge_types,
                           "edge_keys": sorted(edge_keys)})
    fh.write(header + zlib.crc32(header).to_bytes(4, "little") + len(header).to_bytes(8, "little") + END_V5)
    return identity(header, pos + len(header) + 4 + 8 + len(END_V5))
