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
    # With a fixed end and a bound, a walk that can no longer reach the end in the hops left is cut: hop counts
    # to the end (by the same filter, reusing edges, so never more than a trail needs) from a search back
    # from the end. The walks that remain, and their order, are those the full search yields.
    # (A step is taken only to a node within the hops left of the end, so the search back needs cap - 1 hops.)
    near = None if target is None or hi is None else _hops_to(ctx, target, FLIP[direction], flt, cap - 1)

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
        left = cap - depth - 1
        # On the last hop only the end itself is within 0 hops of the end: look its edges up, not scan them all.
        last = target if near is not None and left == 0 else None
        for nxt, rid in hops(graph, node, direction, flt, last):
            if rid in used or (near is not None and near.get(nxt, cap + 1) > left):
                continue
            used.add(rid)
            trail.append(Rel(*rid))
            try:
                yield from dfs(nxt, depth + 1)
            finally:
                trail.pop()
                used.discard(rid)

    return dfs(u, 0)


def _hops_to(ctx: Context, end: Any, direction: str, flt: RelFilter, limit: int) -> dict[Any, int]:
    """Fewest hops from each node within ``limit`` of ``end`` to it (searching from ``end`` along ``direction``)."""
    dist = {end: 0}
    frontier = [end]
    for depth in range(1, limit + 1):
        nxt = []
        for u in frontier:
            for v, _ in hops(ctx.graph, u, direction, flt):
                ctx.tick()
                if v not in dist:
                    dist[v] = depth
                    nxt.append(v)
        frontier = nxt
    return dist


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
    allowed = _on_shortest_paths(ctx, a, b, direction, flt, hi, used)
    if allowed is None:
        return []
    # The breadth-first search from `a` as before, now only through nodes on some shortest path: every parent
    # of such a node is on one too, so parents, their order and the paths unwound from them are unchanged.
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
                if v in parents or rid in used or v not in allowed:
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


def _on_shortest_paths(ctx: Context, a: Any, b: Any, direction: str, flt: RelFilter, hi: int | None,
                       used: set[RelId]) -> set[Any] | None:
    """The nodes on some shortest a -> b walk, by breadth-first search from both ends (the smaller frontier
    grows first), or None when there is no walk within ``hi`` hops. Cost is that of the two balls that meet,
    not of the whole ball around ``a``."""
    graph = ctx.graph
    # Each end's (hops from it, parents, frontier, direction to walk).
    sides: list[tuple[dict[Any, int], dict[Any, list[Any]], list[Any], str]] = [
        ({a: 0}, {a: []}, [a], direction), ({b: 0}, {b: []}, [b], FLIP[direction])]
    while sides[0][2] and sides[1][2]:
        if hi is not None and sides[0][0][sides[0][2][0]] + sides[1][0][sides[1][2][0]] >= hi:
            return None
        side = 0 if len(sides[0][2]) <= len(sides[1][2]) else 1
        depth, parents, frontier, way = sides[side]
        level = depth[frontier[0]] + 1
        layer: dict[Any, list[Any]] = {}
        for u in frontier:
            for v, rid in hops(graph, u, way, flt):
                ctx.tick()
                if rid in used or (v in depth and v not in layer):
                    continue
                layer.setdefault(v, []).append(u)
        for v, ps in layer.items():
            depth[v] = level
            parents[v] = ps
        sides[side] = (depth, parents, list(layer), way)
        other = sides[1 - side][0]
        meet = [v for v in layer if v in other]
        if meet:
            best = min(level + other[v] for v in meet)
            on: set[Any] = set()
            todo = [v for v in meet if level + other[v] == best]
            for _, s_parents, _, _ in sides:  # walk back to each end through its parents
                stack = list(todo)
                while stack:
                    v = stack.pop()
                    if v in on and v not in todo:
                        continue
                    on.add(v)
                    stack.extend(p for p in s_parents.get(v, ()) if p not in on)
            return on
    return None
