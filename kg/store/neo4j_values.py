"""Driver values -> the JSON shapes the embedded Cypher engine returns, so results read the same from both stores."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from neo4j.graph import Node, Path, Relationship


def _props(items: Iterable[tuple[str, Any]], ids: Mapping[str, Any]) -> dict[str, Any]:
    # Properties starting with "_" are kg's own bookkeeping (a paper's stored extraction), not graph data.
    return {k: to_json(v, ids) for k, v in items if not k.startswith("_")}


def _node_id(node: Node | None, ids: Mapping[str, Any]) -> Any:
    if node is None:
        return None
    return node["id"] if "id" in node else ids.get(node.element_id)


def to_json(v: Any, ids: Mapping[str, Any]) -> Any:
    """A node is ``{"_id", "_labels", **props}``, a relationship ``{"_type", "_start", "_end", **props}``,
    a path ``{"nodes", "relationships"}``. ``ids`` maps element ids to ``id`` for relationship ends the
    result did not carry (see ``unresolved_ends``)."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if isinstance(v, Node):
        return {"_id": v.get("id"), "_labels": sorted(v.labels), **_props(v.items(), ids)}
    if isinstance(v, Relationship):
        return {"_type": v.type, "_start": _node_id(v.start_node, ids), "_end": _node_id(v.end_node, ids),
                **_props(v.items(), ids)}
    if isinstance(v, Path):
        return {"nodes": [to_json(n, ids) for n in v.nodes],
                "relationships": [to_json(r, ids) for r in v.relationships]}
    if isinstance(v, Mapping):
        return {str(k): to_json(x, ids) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_json(x, ids) for x in v]
    iso = getattr(v, "iso_format", None)  # neo4j.time values
    if callable(iso):
        return iso()
    return str(v)


def unresolved_ends(rows: Iterable[Iterable[Any]]) -> set[str]:
    """Element ids of relationship ends whose ``id`` the result does not hold (a relationship returned alone)."""
    out: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, Relationship):
            for n in (v.start_node, v.end_node):
                if n is not None and "id" not in n:
                    out.add(n.element_id)
        elif isinstance(v, Path):
            for r in v.relationships:
                walk(r)
        elif isinstance(v, Mapping):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    for row in rows:
        for v in row:
            walk(v)
    return out
