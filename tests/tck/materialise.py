"""Builds a TCK setup graph: a small CREATE/DELETE interpreter on top of kg's own read clauses."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx

from kg.cypher import ast as A
from kg.cypher.context import Context, Record, activate, deactivate
from kg.cypher.evaluator import evaluate
from kg.cypher.executor import Executor, match_clause, unwind_clause
from kg.cypher.index import invalidate_index
from kg.cypher.parser import Parser
from kg.cypher.projection import project
from kg.cypher.values import LABEL_ATTR, TYPE_ATTR, Node, Path, Rel


class Unrepresentable(Exception):
    """The setup needs something kg's graph model cannot hold (e.g. a node with two labels)."""


@dataclass(frozen=True)
class Create:
    patterns: tuple[A.PathPattern, ...]


@dataclass(frozen=True)
class Delete:
    exprs: tuple[A.Expr, ...]
    detach: bool


class _SetupParser(Parser):
    """kg's parser plus CREATE and [DETACH] DELETE; a setup query need not end with RETURN."""

    def _clause(self) -> Any:
        if self.accept_kw("CREATE"):
            patterns = [self.parse_pattern_part()]
            while self.accept_op(","):
                patterns.append(self.parse_pattern_part())
            return Create(tuple(patterns))
        detach = self.accept_kw("DETACH")
        if self.accept_kw("DELETE"):
            exprs = [self.parse_expr()]
            while self.accept_op(","):
                exprs.append(self.parse_expr())
            return Delete(tuple(exprs), detach)
        if self.at_kw("MERGE", "SET", "REMOVE", "FOREACH"):
            raise Unrepresentable(f"setup clause {self.tok.upper}")
        return super()._clause()

    def parse_setup(self) -> list[list[Any]]:
        queries: list[list[Any]] = []
        while self.tok.kind != "EOF":
            clauses: list[Any] = []
            while self.tok.kind != "EOF" and not self.at_op(";"):
                clauses.append(self._clause())
            queries.append(clauses)
            self.accept_op(";")
        return queries


def _labels(npat: A.NodePattern) -> list[str]:
    return [group[0] for group in npat.labels]


class Materialiser:
    """Holds the graph under construction and runs setup queries against it."""

    def __init__(self, graph: nx.MultiDiGraph | None = None) -> None:
        self.graph = graph if graph is not None else nx.MultiDiGraph()
        self.next_id = 0

    def run(self, text: str, params: dict[str, Any] | None = None) -> None:
        for clauses in _SetupParser(text).parse_setup():
            self._run_query(clauses, params or {})

    def _run_query(self, clauses: list[Any], params: dict[str, Any]) -> None:
        ctx = Context(self.graph, params, timeout_s=30.0)
        ctx.engine = Executor(ctx)  # patterns and subqueries in WHERE call back through it
        token = activate(ctx)
        try:
            records: list[Record] = [{}]
            scope: list[str] = []
            for clause in clauses:
                it: Iterable[Record]
                if isinstance(clause, Create):
                    for rec in records:
                        self._create(clause, rec, ctx)
                    for p in clause.patterns:
                        for part in (p, *p.nodes, *p.rels):
                            if part.var and part.var not in scope:
                                scope.append(part.var)
                    invalidate_index(self.graph)
                    ctx.plans.clear()
                    continue
                if isinstance(clause, Delete):
                    for rec in records:
                        self._delete(clause, rec, ctx)
                    invalidate_index(self.graph)
                    ctx.plans.clear()
                    continue
                if isinstance(clause, A.Match):
                    it, scope = match_clause(records, clause, scope, ctx)
                elif isinstance(clause, A.Unwind):
                    it, scope = unwind_clause(records, clause, scope, ctx)
                elif isinstance(clause, A.With):
                    it, scope = project(records, clause.proj, scope, ctx, is_with=True, where=clause.where)
                elif isinstance(clause, A.Return):
                    it, scope = project(records, clause.proj, scope, ctx, is_with=False)
                else:
                    raise Unrepresentable(f"setup clause {type(clause).__name__}")
                records = list(it)
        finally:
            deactivate(token)

    def _props(self, expr: A.Expr | None, rec: Record, ctx: Context) -> dict[str, Any]:
        if expr is None:
            return {}
        value = evaluate(expr, rec, ctx)
        return {k: v for k, v in value.items() if v is not None}

    def _node(self, npat: A.NodePattern, rec: Record, ctx: Context) -> Any:
        if npat.var is not None and rec.get(npat.var) is not None:
            bound = rec[npat.var]
            if not isinstance(bound, Node):
                raise Unrepresentable(f"`{npat.var}` is not a node")
            return bound.id
        labels = _labels(npat)
        props = self._props(npat.props, rec, ctx)
        if LABEL_ATTR in props:
            raise Unrepresentable(f"a node property named `{LABEL_ATTR}`")
        nid = self.next_id
        self.next_id += 1
        self.graph.add_node(nid, **props)
        if labels:  # one label as a string (kg's stores), several as a tuple
            self.graph._node[nid][LABEL_ATTR] = labels[0] if len(labels) == 1 else tuple(dict.fromkeys(labels))
        if npat.var is not None:
            rec[npat.var] = Node(nid)
        return nid

    def _create(self, clause: Create, rec: Record, ctx: Context) -> None:
        for p in clause.patterns:
            ids = [self._node(p.nodes[0], rec, ctx)]
            rels: list[Rel] = []
            for rp, npat in zip(p.rels, p.nodes[1:], strict=True):
                ids.append(self._node(npat, rec, ctx))
                if len(rp.types) != 1 or rp.varlen or rp.direction == "both":
                    raise Unrepresentable("CREATE of a relationship without exactly one type and direction")
                props = self._props(rp.props, rec, ctx)
                if TYPE_ATTR in props:
                    raise Unrepresentable(f"a relationship property named `{TYPE_ATTR}`")
                u, v = (ids[-2], ids[-1]) if rp.direction == "out" else (ids[-1], ids[-2])
                key = self.graph.add_edge(u, v, **props)
                self.graph._succ[u][v][key][TYPE_ATTR] = rp.types[0]
                rel = Rel(u, v, key)
                rels.append(rel)
                if rp.var is not None:
                    rec[rp.var] = rel
            if p.var is not None:
                rec[p.var] = Path(tuple(Node(i) for i in ids), tuple(rels))

    def _delete(self, clause: Delete, rec: Record, ctx: Context) -> None:
        for expr in clause.exprs:
            value = evaluate(expr, rec, ctx)
            if isinstance(value, Rel):
                if self.graph.has_edge(value.start, value.end, value.key):
                    self.graph.remove_edge(value.start, value.end, value.key)
            elif isinstance(value, Node):
                if value.id in self.graph:
                    if self.graph.degree(value.id) and not clause.detach:
                        raise Unrepresentable("DELETE of a node that still has relationships")
                    self.graph.remove_node(value.id)
            elif value is not None:
                raise Unrepresentable(f"DELETE of a {type(value).__name__}")
