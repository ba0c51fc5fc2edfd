"""Array views of a frozen graph for vectorised matching: node positions, labels, typed CSR adjacency, columns.

Everything here follows the graph's own iteration order (``_node``, then each node's ``_succ`` / ``_pred``
neighbours and their keys), so a vectorised expansion yields rows in exactly the order the backtracking matcher
does. Only frozen graphs get these views (a snapshot-backed ``FrozenGraph`` carries its topology on disk, any
other frozen graph builds it on first use): an immutable graph can never make them stale.
"""

from __future__ import annotations

import weakref
from array import array
from itertools import repeat
from typing import Any

import networkx as nx
import numpy as np

from kg.cypher.values import LABEL_ATTR, TYPE_ATTR, hkey

_TOPOLOGY: weakref.WeakKeyDictionary[nx.MultiDiGraph, Topology] = weakref.WeakKeyDictionary()
_EXACT_INT = 2**53  # integers beyond this do not survive a float64 column
_KINDS = {type(None): 0, str: 1, bool: 2, int: 3, float: 4}
_OTHER = 5


class Csr:
    """One direction's adjacency: node i's edges are ``nbr[ptr[i]:ptr[i+1]]`` with their type codes and edge ids
    (the edge's position in the out-direction CSR, so both directions name an edge alike)."""

    __slots__ = ("ptr", "nbr", "typ", "eid", "kidx")

    def __init__(self, ptr: np.ndarray, nbr: np.ndarray, typ: np.ndarray, eid: np.ndarray | None,
                 kidx: np.ndarray) -> None:
        self.ptr, self.nbr, self.typ, self.kidx = ptr, nbr, typ, kidx
        self.eid = np.arange(len(nbr), dtype=np.int64) if eid is None else eid


class Column:
    """One node property over all nodes: the values, their kinds, and a float64 copy of the numbers."""

    def __init__(self, values: list[Any]) -> None:
        n = len(values)
        self.obj = np.empty(n, dtype=object)
        self.obj[:] = values
        kinds = np.fromiter(map(_KINDS.get, map(type, values), repeat(_OTHER)), np.int8, n)
        self.is_none = kinds == _KINDS[type(None)]  # exact types: True is not a number here
        self.is_str = kinds == _KINDS[str]
        self.is_bool = kinds == _KINDS[bool]
        ints = kinds == _KINDS[int]
        self.is_num = ints | (kinds == _KINDS[float])
        self.simple = bool((self.is_none | self.is_str | ints).all())  # grouping needs no hkey
        self.num = np.full(n, np.nan)
        self.exact = True
        if self.is_num.any():
            try:
                self.num[self.is_num] = np.array(self.obj[self.is_num].tolist(), dtype=float)
                self.exact = not ints.any() or bool((np.abs(self.num[ints]) < _EXACT_INT).all())
            except OverflowError:  # an integer past float range: numeric tests go to the interpreter
                self.exact = False
        self._codes: np.ndarray | None = None
        self.ncodes = 0
        self.joined_text: Any = False  # kg.cypher.textscan.joined's cache: False until built, None if unusable

    def codes(self) -> np.ndarray:
        """Group codes: equal under Cypher grouping (``hkey``) means equal code."""
        if self._codes is None:
            values = self.obj.tolist()
            keys = values if self.simple else list(map(hkey, values))  # str, int and null are their own keys
            seen = {k: i for i, k in enumerate(dict.fromkeys(keys))}
            self._codes = np.fromiter(map(seen.__getitem__, keys), np.int64, len(keys))
            self.ncodes = len(seen)
        return self._codes


class Topology:
    """Node positions, label codes and both directions' CSR adjacency of one graph."""

    def __init__(self, ids: list[Any], labels: list[Any], label_code: np.ndarray, types: list[Any],
                 out: Csr, inn: Csr, nodes: dict[Any, dict[str, Any]]) -> None:
        self.ids = ids
        self.pos = {n: i for i, n in enumerate(ids)}
        self.labels = labels
        self.label_code = label_code
        self.types = types
        self.type_code = {t: i for i, t in enumerate(types)}
        self.out, self.inn = out, inn
        self._nodes = nodes
        self._columns: dict[str, Column] = {}
        self._out_src: np.ndarray | None = None
        self._id_array: np.ndarray | None = None
        self.single_labels = True

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, key: str) -> Column:
        col = self._columns.get(key)
        if col is None:
            # the label is not a property: reading it gives null, as in the matcher
            col = Column([None if key == LABEL_ATTR else a.get(key) for a in self._nodes.values()])
            self._columns[key] = col
        return col

    def id_array(self) -> np.ndarray:
        """The node ids as an object array, for fancy indexing."""
        if self._id_array is None:
            self._id_array = np.empty(len(self.ids), dtype=object)
            self._id_array[:] = self.ids
        return self._id_array

    def out_src(self) -> np.ndarray:
        """The start node of every edge, by edge id."""
        if self._out_src is None:
            self._out_src = np.repeat(np.arange(len(self.ids), dtype=np.int32), np.diff(self.out.ptr))
        return self._out_src

    def label_mask(self, names: Any) -> np.ndarray:
        """Per label code: is the label one of ``names``."""
        mask = np.zeros(len(self.labels), bool)
        for i, lb in enumerate(self.labels):
            mask[i] = lb in names
        return mask

    def type_mask(self, names: tuple[str, ...]) -> np.ndarray:
        mask = np.zeros(len(self.types), bool)
        for i, t in enumerate(self.types):
            mask[i] = not names or t in names
        return mask


def topology_arrays(g: nx.MultiDiGraph, ids: list[Any], sort: bool) -> dict[str, Any]:
    """The CSR arrays of ``g`` over nodes in ``ids`` order; ``sort`` orders neighbours and keys as a snapshot
    stores them (sorted), else as the dicts iterate."""
    pos = {n: i for i, n in enumerate(ids)}
    types: dict[Any, int] = {}
    arrays: dict[str, Any] = {}
    for name, adj in (("out", g._succ), ("in", g._pred)):
        # typed arrays, not lists: 2.9 million edges as Python ints would take most of a gigabyte
        ptr, nbr, typ, kidx = array("q", [0]), array("i"), array("h"), array("i")
        for n in ids:
            items = sorted(adj[n].items()) if sort else adj[n].items()
            for other, keydict in items:
                p = pos[other]
                for j, (_, d) in enumerate(sorted(keydict.items()) if sort else keydict.items()):
                    nbr.append(p)
                    typ.append(types.setdefault(d.get(TYPE_ATTR), len(types)))
                    kidx.append(j)
            ptr.append(len(nbr))
        arrays[f"{name}_ptr"] = np.frombuffer(ptr, dtype=np.int64)
        arrays[f"{name}_nbr"] = np.frombuffer(nbr, dtype=np.int32)
        arrays[f"{name}_typ"] = np.frombuffer(typ, dtype=np.int16)
        arrays[f"{name}_kidx"] = np.frombuffer(kidx, dtype=np.int32)
    # An in-edge (w -> u, j-th key) is out-edge number (first out position of w -> u) + j.
    n = len(ids)
    optr, onbr, okidx = arrays["out_ptr"], arrays["out_nbr"], arrays["out_kidx"]
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(optr))
    firsts = np.nonzero(okidx == 0)[0]
    pair = src[firsts] * n + onbr[firsts]
    order = np.argsort(pair, kind="stable")
    pair, firsts = pair[order], firsts[order]
    iptr, inbr, ikidx = arrays["in_ptr"], arrays["in_nbr"], arrays["in_kidx"]
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(iptr))
    want = inbr.astype(np.int64) * n + dst
    arrays["in_eid"] = (firsts[np.searchsorted(pair, want)] + ikidx).astype(np.int64)
    arrays["types"] = list(types)
    return arrays


TOPOLOGY_ARRAYS = {"out_ptr": np.int64, "out_nbr": np.int32, "out_typ": np.int16, "out_kidx": np.int32,
                   "in_ptr": np.int64, "in_nbr": np.int32, "in_typ": np.int16, "in_kidx": np.int32,
                   "in_eid": np.int64}


def from_arrays(g: nx.MultiDiGraph, ids: list[Any], arrays: dict[str, Any]) -> Topology:
    labels: dict[Any, int] = {}
    several = [False]

    def code(label: Any) -> int:
        if label is not None and type(label) is not str:  # a node with several labels (never in kg's stores)
            several[0] = True
            label = None
        return labels.setdefault(label, len(labels))

    label_code = np.fromiter((code(a.get(LABEL_ATTR)) for a in g._node.values()), np.int16, len(ids))
    out = Csr(arrays["out_ptr"], arrays["out_nbr"], arrays["out_typ"], None, arrays["out_kidx"])
    inn = Csr(arrays["in_ptr"], arrays["in_nbr"], arrays["in_typ"], arrays["in_eid"], arrays["in_kidx"])
    topo = Topology(ids, list(labels), label_code, list(arrays["types"]), out, inn, g._node)
    topo.single_labels = not several[0]  # label codes describe every node only when each has at most one
    return topo


def warm(graph: nx.MultiDiGraph) -> None:
    """Build the arrays and the columns kg's own queries read most, before the first query needs them."""
    topo = topology(graph)
    if topo is not None:
        for key in ("id", "name", "title", "type", "paper_count"):
            topo.column(key).codes()


def topology(graph: nx.MultiDiGraph) -> Topology | None:
    """The graph's array views, or None for a graph that may still change."""
    topo = _TOPOLOGY.get(graph)
    if topo is not None:
        return topo
    if not nx.is_frozen(graph):
        return None
    load = getattr(graph, "stored_topology", None)  # a snapshot holds it ready
    arrays = load() if load is not None else None
    ids = list(graph._node)
    if arrays is None:
        arrays = topology_arrays(graph, ids, sort=False)
    topo = _TOPOLOGY[graph] = from_arrays(graph, ids, arrays)
    return topo
