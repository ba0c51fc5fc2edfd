"""Driver values -> the JSON shapes the embedded Cypher engine returns, so results read the same from both stores."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from typing import Any

import neo4j.time as nt
from neo4j.graph import Node, Path, Relationship

from kg.cypher import temporal as T
from kg.graph import DATE_PROPERTIES


def _nanos(v: Any) -> int:
    return ((v.hour * 60 + v.minute) * 60 + int(v.second)) * T.NS + v.nanosecond


def _offset(v: Any) -> int:
    off = v.utcoffset()
    return int(off.total_seconds()) if off is not None else 0


_DRIVER_TEMPORAL = (nt.Date, nt.Time, nt.DateTime, nt.Duration, _dt.date)


def from_driver(v: Any) -> Any:
    """neo4j.time values (and Python dates) as kg's Cypher temporals, so both stores hold and print the same
    values; anything else unchanged (lists element-wise)."""
    if isinstance(v, nt.DateTime):
        days = T.days_from_civil(v.year, v.month, v.day)
        if v.tzinfo is None:
            return T.LocalDateTime(days, _nanos(v))
        name = getattr(v.tzinfo, "zone", None) or getattr(v.tzinfo, "key", None)  # pytz or zoneinfo
        name = name if isinstance(name, str) and "/" in name else None
        return T.DateTime(days, _nanos(v), _offset(v), name)
    if isinstance(v, nt.Date):
        return T.Date(T.days_from_civil(v.year, v.month, v.day))
    if isinstance(v, nt.Time):
        return T.LocalTime(_nanos(v)) if v.tzinfo is None else T.Time(_nanos(v), _offset(v))
    if isinstance(v, nt.Duration):
        return T.duration(v.months, v.days, v.seconds, v.nanoseconds)
    if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        return T.Date(T.days_from_civil(v.year, v.month, v.day))
    if isinstance(v, list):
        return [from_driver(x) for x in v]
    return v


def driver_props(attrs: Mapping[str, Any], reserved: str) -> dict[str, Any]:
    """A graph element's properties as written to Neo4j: no nulls, no ``reserved`` key, and the date-valued
    properties (``published``) as dates, so Cypher compares them with date() on the server as it does here."""
    out = {k: v for k, v in attrs.items() if k != reserved and v is not None}
    for k in DATE_PROPERTIES:
        v = out.get(k)
        if isinstance(v, T.Date):
            v = T.fmt_date(v.days)
        if isinstance(v, str):
            out[k] = _dt.date.fromisoformat(v)
    return out


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
    if isinstance(v, _DRIVER_TEMPORAL):  # before tuples: a neo4j.time.Duration is one
        return str(from_driver(v))
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
