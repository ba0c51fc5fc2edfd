"""Cypher value model over NetworkX: node/relationship/path handles, equality, ordering, JSON."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import networkx as nx

from kg.cypher import temporal
from kg.cypher.temporal import Temporal

LABEL_ATTR = "label"  # reserved node attribute: the node's label, not a property
TYPE_ATTR = "type"  # reserved edge attribute: the relationship type, not a property


class Node:
    """A handle on a graph node; two handles are equal when their node ids are."""

    __slots__ = ("id",)

    def __init__(self, node_id: Any) -> None:
        self.id = node_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("N", self.id))

    def __repr__(self) -> str:
        return f"Node({self.id!r})"


class Rel:
    """A handle on one MultiDiGraph edge (start, end, key), in the edge's stored direction."""

    __slots__ = ("start", "end", "key")

    def __init__(self, start: Any, end: Any, key: Any) -> None:
        self.start, self.end, self.key = start, end, key

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Rel)
            and other.key == self.key
            and other.start == self.start
            and other.end == self.end
        )

    def __hash__(self) -> int:
        return hash(("R", self.start, self.end, self.key))

    def __repr__(self) -> str:
        return f"Rel({self.start!r}, {self.end!r}, {self.key!r})"


class Path:
    """An alternating walk: len(nodes) == len(rels) + 1."""

    __slots__ = ("nodes", "rels")

    def __init__(self, nodes: tuple[Node, ...], rels: tuple[Rel, ...]) -> None:
        self.nodes, self.rels = nodes, rels

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and other.nodes == self.nodes and other.rels == self.rels

    def __hash__(self) -> int:
        return hash(("P", self.nodes, self.rels))


def is_number(v: Any) -> bool:
    t = type(v)
    if t is int or t is float:
        return True
    return t is not bool and isinstance(v, Real)


def is_list(v: Any) -> bool:
    return isinstance(v, (list, tuple))


def type_name(v: Any) -> str:
    if v is None:
        return "Null"
    if isinstance(v, bool):
        return "Boolean"
    if isinstance(v, int):
        return "Integer"
    if is_number(v):
        return "Float"
    for cls, name in ((str, "String"), (Node, "Node"), (Rel, "Relationship"), (Path, "Path"),
                      (dict, "Map")):
        if isinstance(v, cls):
            return name
    return "List" if is_list(v) else type(v).__name__


def node_labels(attrs: dict[str, Any]) -> tuple[str, ...]:
    """A node's labels: its `label` attribute is one label (kg's stores) or a tuple/list/set of them."""
    label = attrs.get(LABEL_ATTR)
    if label is None:
        return ()
    if isinstance(label, str):
        return (label,)
    return tuple(label)


def labels_match(attrs: dict[str, Any], groups: tuple[tuple[str, ...], ...]) -> bool:
    """True if every group of a label expression (`:A:B` -> (("A",), ("B",))) holds one of the node's labels."""
    label = attrs.get(LABEL_ATTR)
    if label is None or isinstance(label, str):  # the common case, without building a tuple
        return all(label in group for group in groups)
    return all(any(lb in group for lb in label) for group in groups)


def node_attrs(graph: nx.MultiDiGraph, node: Node) -> dict[str, Any]:
    return graph._node[node.id]


def rel_attrs(graph: nx.MultiDiGraph, rel: Rel) -> dict[str, Any]:
    return graph._succ[rel.start][rel.end][rel.key]


def properties(graph: nx.MultiDiGraph, v: Node | Rel) -> dict[str, Any]:
    if isinstance(v, Node):
        return {k: x for k, x in graph._node[v.id].items() if k != LABEL_ATTR}
    return {k: x for k, x in rel_attrs(graph, v).items() if k != TYPE_ATTR}


def equals(a: Any, b: Any) -> bool | None:
    """Cypher `=`: null if either side is null, false across types (true is not 1)."""
    if a is None or b is None:
        return None
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if is_number(a) and is_number(b):
        return bool(a == b)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if is_list(a) and is_list(b):
        if len(a) != len(b):
            return False
        return _all_equal(zip(a, b, strict=False))
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        return _all_equal((a[k], b[k]) for k in a)
    if is_list(a) or is_list(b) or isinstance(a, dict) or isinstance(b, dict):
        return False
    return a == b if type(a) is type(b) else False


def _all_equal(pairs: Any) -> bool | None:
    result: bool | None = True
    for x, y in pairs:
        eq = equals(x, y)
        if eq is False:
            return False
        if eq is None:
            result = None
    return result


def compare(a: Any, b: Any) -> int | None:
    """-1/0/1 for comparable values, None when null or incomparable (Cypher `<` then yields null)."""
    if a is None or b is None:
        return None
    if is_number(a) and is_number(b):
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return None
        return (a > b) - (a < b)
    if isinstance(a, str) and isinstance(b, str):
        return (a > b) - (a < b)
    if type(a) is bool and type(b) is bool:
        return (a > b) - (a < b)
    if is_list(a) and is_list(b):
        for x, y in zip(a, b, strict=False):
            c = compare(x, y)
            if c is None or c != 0:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    if isinstance(a, Temporal) and isinstance(b, Temporal):
        return temporal.compare(a, b)
    return None


def _id_key(x: Any) -> tuple[int, Any]:
    if isinstance(x, str):
        return (0, x)
    if is_number(x):
        return (1, x)
    return (2, repr(x))


def sort_key(v: Any) -> tuple[Any, ...]:
    """Total order for ORDER BY: map < node < rel < list < path < temporal < string < boolean < number < null."""
    if v is None:
        return (9,)
    t = type(v)
    if t is bool:
        return (6, v)
    if t is str:
        return (5, v)
    if is_number(v):
        return (7, 1, 0) if math.isnan(v) else (7, 0, v)
    if is_list(v):
        return (3, tuple(sort_key(x) for x in v))
    if isinstance(v, dict):
        return (0, tuple(sorted((str(k), sort_key(x)) for k, x in v.items())))
    if isinstance(v, Node):
        return (1, _id_key(v.id))
    if isinstance(v, Rel):
        return (2, _id_key(v.start), _id_key(v.end), _id_key(v.key))
    if isinstance(v, Path):
        return (4, tuple(sort_key(n) for n in v.nodes), tuple(sort_key(r) for r in v.rels))
    if isinstance(v, Temporal):  # between paths and strings
        return (4.5, *temporal.sort_key(v))
    return (8, repr(v))


def hkey(v: Any) -> Any:
    """Hashable key under Cypher equivalence (used by DISTINCT and grouping): null ~ null, 1 ~ 1.0."""
    t = type(v)
    if v is None or t is str or t is int:
        return v
    if t is bool:
        return ("b", v)
    if is_number(v):
        return ("nan",) if math.isnan(v) else v
    if is_list(v):
        return ("l", tuple(hkey(x) for x in v))
    if isinstance(v, dict):
        return ("m", tuple(sorted((str(k), hkey(x)) for k, x in v.items())))
    try:
        hash(v)
    except TypeError:
        return ("r", repr(v))
    return v


def to_json(v: Any, graph: nx.MultiDiGraph) -> Any:
    """Convert a result value to plain JSON-ready Python data."""
    if v is None or type(v) in (str, int, float, bool):
        return v
    if isinstance(v, Node):
        attrs = graph._node.get(v.id, {})
        out: dict[str, Any] = {"_id": v.id, "_labels": list(node_labels(attrs))}
        for k, x in attrs.items():
            if k != LABEL_ATTR and k not in out:
                out[k] = to_json(x, graph)
        return out
    if isinstance(v, Rel):
        attrs = rel_attrs(graph, v)
        out = {"_type": attrs.get(TYPE_ATTR), "_start": v.start, "_end": v.end}
        for k, x in attrs.items():
            if k != TYPE_ATTR and k not in out:
                out[k] = to_json(x, graph)
        return out
    if isinstance(v, Path):
        return {
            "nodes": [to_json(n, graph) for n in v.nodes],
            "relationships": [to_json(r, graph) for r in v.rels],
        }
    if isinstance(v, dict):
        return {str(k): to_json(x, graph) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [to_json(x, graph) for x in v]
    if isinstance(v, Temporal):  # ISO 8601, as Neo4j prints it
        return str(v)
    item = getattr(v, "item", None)  # numpy scalars
    if callable(item):
        return item()
    return v
