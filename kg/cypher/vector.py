"""Vectorised MATCH ... RETURN over a frozen graph's arrays: same rows, same order, no Python object per row.

A query qualifies when it is one or more plain MATCH clauses and a RETURN, its patterns are fixed-length
chains whose node properties are constants, its WHERE is made of comparisons of node properties with
constants, label tests, node (in)equality and AND/OR/NOT, and its RETURN either counts
(``count(*)``, ``count(v)``, ``count(DISTINCT v)``) grouped by nodes, node properties or ``labels(v)[0]``, or
scans (rows are then built only for what matched). Anything else raises `NotVectorizable` and the
interpreter runs the query. Each plan op of `planner` becomes one array operation over all rows at once, in the
order the backtracking matcher would produce them, so ORDER BY ties and LIMIT keep the same rows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from kg.cypher import ast as A
from kg.cypher.analysis import aggregates_in, free_vars
from kg.cypher.columns import Csr, Topology, topology
from kg.cypher.context import Context, Record
from kg.cypher.errors import CypherTimeout
from kg.cypher.evaluator import evaluate
from kg.cypher.matcher import candidates
from kg.cypher.planner import Op, Planner
from kg.cypher.projection import project
from kg.cypher.values import LABEL_ATTR, Node, Rel
from kg.cypher.vector_agg import NotVectorizable, aggregate
from kg.cypher.vector_pred import Pred, equal

MAX_ROWS = 5_000_000  # past this many intermediate rows (a few hundred MB of arrays) the interpreter streams


def run(query: A.SingleQuery, ctx: Context) -> Iterator[Record] | None:
    """The query's output records, or None when it does not qualify (see the module docstring)."""
    if len(query.clauses) < 2 or not isinstance(query.clauses[-1], A.Return):
        return None
    proj = query.clauses[-1].proj
    aggregating = any(aggregates_in(it.expr) for it in proj.items)
    first = query.clauses[0]
    if not aggregating and (not isinstance(first, A.Match) or _starts_with_lookup(first, ctx)):
        return None  # a lookup by id is quicker interpreted than set up as arrays
    topo = topology(ctx.graph)
    if topo is None or not topo.single_labels:
        return None
    try:
        frame = _Frame(topo)
        for clause in query.clauses[:-1]:
            if not isinstance(clause, A.Match) or clause.optional:
                raise NotVectorizable
            frame.match(clause, ctx)
        if aggregating:
            return aggregate(frame, proj, ctx)
        return project(frame.records(ctx), proj, [*frame.vars, *frame.rels], ctx, is_with=False)[0]
    except NotVectorizable:
        return None


def _starts_with_lookup(clause: A.Match, ctx: Context) -> bool:
    plan = Planner(ctx, clause.patterns, clause.where, ()).ops
    bind = next((op for op in plan if op.kind == "bind"), None)
    return bind is not None and bind.hint is not None and bind.hint[0] != "label"


class _Frame:
    """Rows as columns: node positions per pattern slot, edge ids per relationship of the current clause."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.size = 1  # one empty input row
        self.vars: dict[str, np.ndarray] = {}  # node variables
        self.rels: dict[str, np.ndarray] = {}  # relationship variables (edge ids)
        self.slots: dict[tuple[int, int], np.ndarray] = {}  # (pattern, node) of the current clause
        self.eids: list[np.ndarray] = []  # its relationships so far: uniqueness holds within one MATCH

    def take(self, rows: np.ndarray) -> None:
        self.size = len(rows)
        done: dict[int, np.ndarray] = {}  # a variable's column is also its slot's (and a relationship's, its eid)

        def pick(col: np.ndarray) -> np.ndarray:
            out = done.get(id(col))
            if out is None:
                out = done[id(col)] = col[rows]
            return out

        self.vars = {k: pick(v) for k, v in self.vars.items()}
        self.rels = {k: pick(v) for k, v in self.rels.items()}
        self.slots = {k: pick(v) for k, v in self.slots.items()}
        self.eids = [pick(e) for e in self.eids]

    def keep(self, mask: np.ndarray) -> None:
        if not mask.all():
            self.take(np.nonzero(mask)[0])

    def match(self, clause: A.Match, ctx: Context) -> None:
        for p in clause.patterns:
            if p.var is not None or p.shortest:
                raise NotVectorizable
            for r in p.rels:
                if r.varlen or r.props is not None or (r.var is not None and r.var in self.rels):
                    raise NotVectorizable
        plan = Planner(ctx, clause.patterns, clause.where, (*self.vars, *self.rels)).ops
        self.slots, self.eids = {}, []
        for op in plan:
            if time.monotonic() > ctx.deadline:
                raise CypherTimeout(f"query exceeded its time limit of {ctx.timeout_s:g} s")
            if op.kind == "bind":
                self._bind(clause.patterns, op, ctx)
            elif op.kind == "expand":
                self._expand(clause.patterns, op, ctx)
            elif op.kind == "filter":
                assert op.expr is not None
                self.keep(Pred(self, ctx).truth(op.expr)[0])
            else:
                raise NotVectorizable

    def _node_mask(self, npat: A.NodePattern, nodes: np.ndarray, ctx: Context, labels: bool = True) -> np.ndarray:
        """Which of ``nodes`` satisfy the node pattern's labels and (constant) properties."""
        topo = self.topo
        mask = np.ones(len(nodes), bool)
        if labels:
            for group in npat.labels:
                mask &= topo.label_mask(group)[topo.label_code[nodes]]
        if npat.props is not None:
            if not isinstance(npat.props, A.MapLit) or free_vars(npat.props):
                raise NotVectorizable
            for k, v in evaluate(npat.props, {}, ctx).items():
                if k == LABEL_ATTR:
                    return np.zeros(len(nodes), bool)
                mask &= equal(topo.column(k), v, nodes)
        return mask

    def _bind(self, patterns: tuple[A.PathPattern, ...], op: Op, ctx: Context) -> None:
        npat = patterns[op.pi].nodes[op.idx]
        topo = self.topo
        if op.bound:
            if npat.var is None or npat.var not in self.vars:
                raise NotVectorizable
            self.keep(self._node_mask(npat, self.vars[npat.var], ctx))
            self.slots[op.pi, op.idx] = self.vars[npat.var]
            return
        hint = op.hint
        if hint is None:
            cand = np.arange(len(topo), dtype=np.int32)
        elif hint[0] == "label":
            codes = [i for i, lb in enumerate(topo.labels) if lb in hint[1]]
            order = {lb: i for i, lb in enumerate(hint[1])}
            codes.sort(key=lambda c: order[topo.labels[c]])  # the label index walks the group in its order
            cand = np.concatenate([np.nonzero(topo.label_code == c)[0] for c in codes] or [np.zeros(0, np.int64)])
        else:
            if free_vars(hint[2]):
                raise NotVectorizable
            found = candidates(ctx, hint, {})
            if found is ctx.graph._node:
                cand = np.arange(len(topo), dtype=np.int32)
            else:
                cand = np.fromiter((topo.pos[n] for n in found), np.int32)
        label_done = hint is not None and hint[0] == "label" and len(npat.labels) == 1
        cand = cand[self._node_mask(npat, cand, ctx, labels=not label_done)].astype(np.int32)
        total = self.size * len(cand)
        if total > MAX_ROWS:
            raise NotVectorizable
        before = self.size
        self.take(np.repeat(np.arange(before), len(cand)))
        col = np.tile(cand, before)
        self.slots[op.pi, op.idx] = col
        if npat.var:
            self.vars[npat.var] = col

    def _expand(self, patterns: tuple[A.PathPattern, ...], op: Op, ctx: Context) -> None:
        pattern = patterns[op.pi]
        rp, dpat = pattern.rels[op.idx], pattern.nodes[op.dst]
        if op.rel_bound:
            raise NotVectorizable
        topo = self.topo
        src = self.slots[op.pi, op.src]
        tmask = topo.type_mask(rp.types)
        parts = []
        if op.direction != "in":
            parts.append(_hop(topo.out, src, tmask, None))
        if op.direction != "out":
            parts.append(_hop(topo.inn, src, tmask, src if op.direction == "both" else None))
        if len(parts) == 1:
            parent, nbr, eid = parts[0]
        else:  # per row: out-edges, then in-edges
            parent, nbr, eid = (np.concatenate(x) for x in zip(*parts, strict=True))
            order = np.argsort(parent, kind="stable")
            parent, nbr, eid = parent[order], nbr[order], eid[order]
        if len(parent) > MAX_ROWS:
            raise NotVectorizable
        mask = self._node_mask(dpat, nbr, ctx)
        if op.bound:
            target = self.vars.get(dpat.var) if dpat.var is not None else None
            if target is None:
                raise NotVectorizable
            mask &= nbr == target[parent]
        for prev in self.eids:
            mask &= eid != prev[parent]
        keep = np.nonzero(mask)[0]
        parent, nbr, eid = parent[keep], nbr[keep], eid[keep]
        self.take(parent)
        self.slots[op.pi, op.dst] = nbr
        self.eids.append(eid)
        if dpat.var and not op.bound:
            self.vars[dpat.var] = nbr
        if rp.var:
            self.rels[rp.var] = eid

    def records(self, ctx: Context) -> Iterator[Record]:
        """One record per row, built lazily (only rows that reach the projection)."""
        topo, graph = self.topo, ctx.graph
        ids = topo.ids
        names = list(self.vars)
        cols = [self.vars[n].tolist() for n in names]
        rel_names = list(self.rels)
        rels = [self.rels[n] for n in rel_names]
        src = topo.out_src() if rels else np.zeros(0, np.int32)  # read only for relationship variables
        for i in range(self.size):
            ctx.tick()
            rec: Record = {n: Node(ids[c[i]]) for n, c in zip(names, cols, strict=True)}
            for n, e in zip(rel_names, rels, strict=True):
                eid = int(e[i])
                u, v = ids[src[eid]], ids[topo.out.nbr[eid]]
                keys = iter(graph._succ[u][v])
                for _ in range(int(topo.out.kidx[eid])):
                    next(keys)
                rec[n] = Rel(u, v, next(keys))
            yield rec


def _hop(csr: Csr, src: np.ndarray, tmask: np.ndarray,
         skip_loops: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, neighbour, edge id) of every edge of an accepted type at each row's node, in adjacency order."""
    starts = csr.ptr[src]
    lens = csr.ptr[src + 1] - starts
    total = int(lens.sum())
    if total > MAX_ROWS:
        raise NotVectorizable
    parent = np.repeat(np.arange(len(src)), lens)
    idx = np.arange(total) + (starts - (np.cumsum(lens) - lens))[parent]  # row r's k-th edge: ptr[src[r]] + k
    ok = tmask[csr.typ[idx]]
    if skip_loops is not None:
        ok &= csr.nbr[idx] != skip_loops[parent]  # a self-loop is already an out-edge
    idx = idx[ok]
    return parent[ok], csr.nbr[idx], csr.eid[idx]
