"""Pattern matching for MATCH/EXISTS: runs a plan from `planner` with backtracking over the graph."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kg.cypher import ast as A
from kg.cypher.context import Context, Record
from kg.cypher.errors import CypherError, CypherTypeError
from kg.cypher.evaluator import evaluate, truth
from kg.cypher.index import get_index
from kg.cypher.paths import RelFilter, RelId, hops, shortest_paths, var_length
from kg.cypher.planner import Op, Planner
from kg.cypher.values import (
    LABEL_ATTR,
    Node,
    Path,
    Rel,
    equals,
    hkey,
    is_list,
    labels_match,
    rel_attrs,
    type_name,
)


def match(ctx: Context, patterns: tuple[A.PathPattern, ...], where: A.Expr | None,
          rec: Record) -> Iterator[Record]:
    """Every extension of `rec` that matches all `patterns` (one MATCH clause) and `where`."""
    key = (id(patterns), id(where), tuple(rec))
    plan = ctx.plans.get(key)
    if plan is None:
        plan = ctx.plans[key] = Planner(ctx, patterns, where, rec).ops
    run = _Run(ctx, patterns, plan, dict(rec))
    return run.step(0)


def candidates(ctx: Context, hint: tuple[Any, ...] | None, rec: Record) -> Iterable[Any]:
    """Ids of the nodes a plan's bind op may bind given its `planner.Op.hint` (label, key or property value,
    evaluated in ``rec``); the graph's whole node table (``ctx.graph._node``, itself) when the hint narrows
    nothing. Callers still check labels and properties."""
    graph = ctx.graph
    if hint is None:
        return graph._node
    if hint[0] == "label":
        index = get_index(graph)
        return [nid for lb in hint[1] for nid in index.nodes_with_label(graph, lb)]
    value = evaluate(hint[2], rec, ctx)
    if value is None:
        return ()
    if hint[0] in ("key", "keys"):
        if hint[0] == "key":
            values = [value]
        elif is_list(value):
            values = list({hkey(v): v for v in value if v is not None}.values())
        else:
            return graph._node  # let the WHERE filter report the type error
        return _by_id(ctx, [v for v in values if _hashable(v)], exact=not hint[1])
    if not _hashable(value):
        return graph._node
    return get_index(graph).nodes_with_property(graph, hint[1], value)


def _by_id(ctx: Context, values: list[Any], exact: bool) -> list[Any]:
    """Nodes by key; for `.id` lookups a key whose `id` property differs falls back to the index."""
    graph = ctx.graph
    out: list[Any] = []
    for v in values:
        attrs = graph._node.get(v)
        if attrs is not None and (exact or equals(attrs.get("id"), v) is True):
            out.append(v)
        elif not exact:
            out.extend(get_index(graph).nodes_with_property(graph, "id", v))
    return out


def _props(ctx: Context, expr: A.Expr | None, rec: Record) -> dict[str, Any] | None:
    if expr is None:
        return None
    value = evaluate(expr, rec, ctx)
    if not isinstance(value, dict):
        raise CypherError(f"pattern properties must be a map, got {type_name(value)}")
    return value


class _Run:
    """Backtracking execution of a plan over one input record (mutated in place, copied on yield)."""

    def __init__(self, ctx: Context, patterns: tuple[A.PathPattern, ...], ops: list[Op], rec: Record):
        self.ctx, self.patterns, self.ops, self.rec = ctx, patterns, ops, rec
        self.nodes: list[list[Any]] = [[None] * len(p.nodes) for p in patterns]
        self.segs: list[list[list[Rel]]] = [[[] for _ in p.rels] for p in patterns]
        self.used: set[RelId] = set()

    def step(self, k: int) -> Iterator[Record]:
        if k == len(self.ops):
            yield dict(self.rec)
            return
        op = self.ops[k]
        if op.kind == "filter":
            assert op.expr is not None
            if truth(evaluate(op.expr, self.rec, self.ctx)) is True:
                yield from self.step(k + 1)
        elif op.kind == "bind":
            yield from self._bind(op, k)
        elif op.kind == "expand":
            yield from self._expand(op, k)
        elif op.kind == "shortest":
            yield from self._shortest(op, k)
        else:
            pattern = self.patterns[op.pi]
            nodes = [Node(self.nodes[op.pi][0])]
            rels: list[Rel] = []
            for seg in self.segs[op.pi]:
                for r in seg:
                    cur = nodes[-1].id
                    nodes.append(Node(r.end if r.start == cur else r.start))
                    rels.append(r)
            assert pattern.var is not None  # the planner adds a path op only for a named path
            self.rec[pattern.var] = Path(tuple(nodes), tuple(rels))
            yield from self.step(k + 1)
            del self.rec[pattern.var]

    def _bound_node(self, var: str | None) -> Any:
        assert var is not None  # only a named node is bound earlier
        value = self.rec[var]
        if value is None or isinstance(value, Node):
            return None if value is None else value.id
        raise CypherError(f"variable `{var}` is a {type_name(value)}, not a node")

    def _node_ok(self, nid: Any, npat: A.NodePattern, props: dict[str, Any] | None) -> bool:
        attrs = self.ctx.graph._node.get(nid)
        if attrs is None:
            return False
        if npat.labels and not labels_match(attrs, npat.labels):
            return False
        if props:
            for k, v in props.items():
                if k == LABEL_ATTR or equals(attrs.get(k), v) is not True:
                    return False
        return True

    def _bind(self, op: Op, k: int) -> Iterator[Record]:
        npat = self.patterns[op.pi].nodes[op.idx]
        props = _props(self.ctx, npat.props, self.rec)
        if op.bound:
            nid = self._bound_node(npat.var)
            if nid is not None and self._node_ok(nid, npat, props):
                self.nodes[op.pi][op.idx] = nid
                yield from self.step(k + 1)
            return
        # The label index already verified a single-group label, so most scans skip the check.
        label_done = op.hint is not None and op.hint[0] == "label" and len(npat.labels) == 1
        must_check = bool(props) or (bool(npat.labels) and not label_done)
        slots, ctx, var, rec = self.nodes[op.pi], self.ctx, npat.var, self.rec
        for nid in candidates(ctx, op.hint, rec):
            ctx.tick()
            if must_check and not self._node_ok(nid, npat, props):
                continue
            slots[op.idx] = nid
            if var:
                rec[var] = Node(nid)
            yield from self.step(k + 1)
        if var:
            rec.pop(var, None)

    def _expand(self, op: Op, k: int) -> Iterator[Record]:
        pattern = self.patterns[op.pi]
        rp, dpat = pattern.rels[op.idx], pattern.nodes[op.dst]
        flt = RelFilter(rp.types, _props(self.ctx, rp.props, self.rec))
        dprops = _props(self.ctx, dpat.props, self.rec)
        target = None
        if op.bound:
            target = self._bound_node(dpat.var)
            if target is None:
                return
        u = self.nodes[op.pi][op.src]
        if rp.varlen and op.rel_bound:
            walks: Iterable[tuple[Any, Any]] = self._follow(u, op, flt, target)
        elif rp.varlen:
            walks = var_length(
                self.ctx, u, op.direction, flt, rp.min_hops, rp.max_hops, self.used, target)
        else:
            walks = hops(self.ctx.graph, u, op.direction, flt, target)
        bound_rel = rp.var if op.rel_bound else None  # rel_bound: rp.var is set
        for v, found in walks:
            self.ctx.tick()
            if not self._node_ok(v, dpat, dprops):
                continue
            if rp.varlen:
                seg = found if op.dst > op.src else found[::-1]
                rel_value: Any = seg
            else:
                if found in self.used:
                    continue
                rel_value = Rel(*found)
                if bound_rel is not None and self.rec[bound_rel] != rel_value:
                    continue
                seg = [rel_value]
                self.used.add(found)
            self.segs[op.pi][op.idx] = seg
            self.nodes[op.pi][op.dst] = v
            if rp.var and not op.rel_bound:
                self.rec[rp.var] = rel_value
            if dpat.var and not op.bound:
                self.rec[dpat.var] = Node(v)
            try:
                yield from self.step(k + 1)
            finally:
                if not rp.varlen:
                    self.used.discard(found)
        for name in (rp.var if not op.rel_bound else None, dpat.var if not op.bound else None):
            if name:
                self.rec.pop(name, None)

    def _follow(self, u: Any, op: Op, flt: RelFilter, target: Any) -> list[tuple[Any, list[Rel]]]:
        """The one walk a relationship list bound earlier describes, if it starts at `u` and fits the pattern."""
        rp = self.patterns[op.pi].rels[op.idx]
        assert rp.var is not None  # only a named relationship is bound earlier
        bound = self.rec[rp.var]
        if bound is None:
            return []
        if not is_list(bound) or not all(isinstance(r, Rel) for r in bound):
            raise CypherTypeError(f"variable `{rp.var}` must be a list of relationships, got {type_name(bound)}")
        walk = list(bound) if op.dst > op.src else list(bound)[::-1]  # the list runs in pattern order
        hi = len(walk) if rp.max_hops is None else rp.max_hops
        if not rp.min_hops <= len(walk) <= hi:
            return []
        cur = u
        for r in walk:
            if (r.start, r.end, r.key) in self.used or not self.ctx.graph.has_edge(r.start, r.end, r.key):
                return []
            forward = r.start == cur and op.direction != "in"
            if not (forward or (r.end == cur and op.direction != "out")):
                return []
            if not flt.accepts(rel_attrs(self.ctx.graph, r)):
                return []
            cur = r.end if forward else r.start
        return [] if target is not None and cur != target else [(cur, walk)]

    def _shortest(self, op: Op, k: int) -> Iterator[Record]:
        pattern = self.patterns[op.pi]
        rp = pattern.rels[0]
        flt = RelFilter(rp.types, _props(self.ctx, rp.props, self.rec))
        a, b = self.nodes[op.pi]
        hi = rp.max_hops if rp.varlen else 1
        lo = rp.min_hops if rp.varlen else 1
        for rels in shortest_paths(self.ctx, a, b, rp.direction, flt, lo, hi, pattern.shortest == "all",
                                   self.used):
            ids = [(r.start, r.end, r.key) for r in rels]
            self.used.update(ids)
            self.segs[op.pi][0] = rels
            if rp.var:
                self.rec[rp.var] = rels if rp.varlen else rels[0]
            try:
                yield from self.step(k + 1)
            finally:
                self.used.difference_update(ids)
        if rp.var:
            self.rec.pop(rp.var, None)


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
