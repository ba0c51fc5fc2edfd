"""Relationship traversal primitives: single hops, variable-length walks and shortest paths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import networkx as nx

from kg.cypher.context import Context
from kg.cypher.errors import UnsupportedCypher
from kg.cypher.values import TYPE_ATTR, Rel, equals

# `-[*]-` without an upper bound is explored up to this many hops; if a longer walk exists the
# query fails with UnsupportedCypher instead of silently dropping rows.
UNBOUNDED_HOPS = 10

RelId = tuple[Any, Any, Any]
FLIP = {"out": "in", "in": "out", "both": "both"}


class RelFilter:
    """Type alternatives and property equalities a relationship must satisfy."""

    __slots__ = ("types", "props")

    def __init__(self, types: tuple[str, ...], props: dict[str, Any] | None) -> None:
        self.types = frozenset(types) if types else None
        self.props = props or None

    def accepts(self, data: dict[str, Any]) -> bool:
        if self.types is not None and data.get(TYPE_ATTR) not in self.types:
            return False
        if self.props is not None:
            for k, v in self.props.items():
                if k == TYPE_ATTR or equals(data.get(k), v) is not True:
                    return False
        return True


def hops(
    graph: nx.MultiDiGraph, u: Any, direction: str, flt: RelFilter, target: Any = None
) -> Iterator[tuple[Any, RelId]]:
    """(neighbour, (start, end, key)) for each accepted edge at `u`; a self-loop counts once."""
    if direction != "in":
        succ = graph._succ[u]
        items: Any = succ.items() if target is None else ((target, succ[target]),) if target in succ else ()
        for v, keydict in items:
            for key, data in keydict.items():
                if flt.accepts(data):
                    yield v, (u, v, key)
    if direction != "out":
        pred = graph._pred[u]
        items = pred.items() if target is None else ((target, pred[target]),) if target in pred else ()
        for w, keydict in items:
            if direction == "both" and w == u:
                continue  # already produced from the successor side
            for key, data in keydict.items():
                if flt.accepts(data):
                    yield w, (w, u, key)


def var_length(
    ctx: Context, u: Any, direction: str, flt: RelFilter, lo: int, hi: int | None,
    used: set[RelId], target: Any = None,
) -> Iterator[tuple[Any, list[Rel]]]:
    """All walks of lo..hi hops from `u` that reuse no relationship (Neo4j trail semantics)."""
    graph = ctx.graph
    cap = UNBOUNDED_HOPS if hi is None else hi
    trail: list[Rel] = []

    def dfs(node: Any, depth: int) -> Iterator[tuple[Any, list[Rel]]]:
        ctx.tick()
        if depth >= lo and (target is None or node == target):
            yield node, list(trail)
        if depth >= cap:
            if hi is None and any(rid not in used for _, rid in hops(graph, node, direction, flt)):
                raise UnsupportedCypher(
                    f"unbounded variable-length pattern longer than {UNBOUNDED_HOPS} hops; "
                    f"give an explicit upper bound such as *..{UNBOUNDED_HOPS}"
                )
            return
        for nxt, rid in hops(graph, node, direction, flt):
            if rid in used:
                continue
            used.add(rid)
            trail.append(Rel(*rid))
            try:
                yield from dfs(nxt, depth + 1)
            finally:
                trail.pop()
                used.discard(rid)

    return dfs(u, 0)


def shortest_paths(
    ctx: Context, a: Any, b: Any, direction: str, flt: RelFilter, lo: int, hi: int | None,
    want_all: bool, used: set[RelId],
) -> list[list[Rel]]:
    """Shortest walks a -> b by breadth-first search (one, or all of them when `want_all`)."""
    if lo > 1:
        raise UnsupportedCypher("shortestPath with a minimum length above 1")
    if a == b:
        return [[]] if lo == 0 else []
    graph = ctx.graph
    parents: dict[Any, list[tuple[Any, RelId]]] = {a: []}
    frontier = [a]
    depth = 0
    found = False
    while frontier and not found and (hi is None or depth < hi):
        depth += 1
        layer: dict[Any, list[tuple[Any, RelId]]] = {}
        for u in frontier:
            for v, rid in hops(graph, u, direction, flt):
                ctx.tick()
                if v in parents or rid in used:
                    continue
                entry = layer.setdefault(v, [])
                if want_all or not entry:
                    entry.append((u, rid))
        parents.update(layer)
        frontier = list(layer)
        found = b in layer
    if not found:
        return []
    out: list[list[Rel]] = []

    def unwind(node: Any, suffix: list[Rel]) -> None:
        if node == a:
            out.append(suffix)
            return
        for prev, rid in parents[node] if want_all else parents[node][:1]:
            ctx.tick()
            unwind(prev, [Rel(*rid), *suffix])

    unwind(b, [])
    return out
