"""Lazily built, per-graph label and property-equality indexes used to anchor pattern matching."""

from __future__ import annotations

import weakref
from typing import Any

import networkx as nx

from kg.cypher.values import LABEL_ATTR, equals, hkey, node_labels

# Kept outside graph.graph so that serializing the graph never meets an index object.
_INDEXES: weakref.WeakKeyDictionary[nx.MultiDiGraph, GraphIndex] = weakref.WeakKeyDictionary()


class GraphIndex:
    """label -> node ids and (property, value) -> node ids.

    Entries are re-checked against the graph on every read, so removed nodes and changed
    labels/properties never produce wrong rows. A node *added* after the index was built is only
    seen if the node count changed; code that mutates a graph in place must therefore call
    `invalidate_index(graph)` afterwards (the kg stores do).
    """

    def __init__(self, graph: nx.MultiDiGraph) -> None:
        self.node_count = len(graph)
        self._labels: dict[Any, list[Any]] | None = None
        self._props: dict[str, dict[Any, list[Any]]] = {}

    def _label_map(self, graph: nx.MultiDiGraph) -> dict[Any, list[Any]]:
        if self._labels is None:
            labels: dict[Any, list[Any]] = {}
            for nid, attrs in graph._node.items():
                for label in node_labels(attrs) or (None,):
                    labels.setdefault(label, []).append(nid)
            self._labels = labels
        return self._labels

    def label_count(self, graph: nx.MultiDiGraph, label: str) -> int:
        return len(self._label_map(graph).get(label, ()))

    def nodes_with_label(self, graph: nx.MultiDiGraph, label: str) -> list[Any]:
        nodes = graph._node
        out = []
        for nid in self._label_map(graph).get(label, ()):
            attrs = nodes.get(nid)
            if attrs is not None and (attrs.get(LABEL_ATTR) == label or label in node_labels(attrs)):
                out.append(nid)
        return out

    def nodes_with_property(self, graph: nx.MultiDiGraph, key: str, value: Any) -> list[Any]:
        table = self._props.get(key)
        if table is None:
            table = {}
            for nid, attrs in graph._node.items():
                if key in attrs:
                    try:
                        table.setdefault(hkey(attrs[key]), []).append(nid)
                    except TypeError:
                        continue  # unhashable stored value: cannot equal a hashable lookup
            self._props[key] = table
        nodes = graph._node
        return [
            nid for nid in table.get(hkey(value), ())
            if nid in nodes and equals(nodes[nid].get(key), value) is True
        ]


def get_index(graph: nx.MultiDiGraph) -> GraphIndex:
    """The cached index of `graph`, rebuilt when the node count changed."""
    index = _INDEXES.get(graph)
    if index is None or index.node_count != len(graph):
        index = GraphIndex(graph)
        _INDEXES[graph] = index
    return index


def build_index(graph: nx.MultiDiGraph) -> None:
    """Eagerly build the label index (e.g. right after loading a store) so queries start fast."""
    get_index(graph).label_count(graph, "")


def invalidate_index(graph: nx.MultiDiGraph) -> None:
    """Forget cached indexes of `graph`; call after mutating it."""
    _INDEXES.pop(graph, None)
