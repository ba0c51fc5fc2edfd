"""Runs a parsed query: clause pipeline (MATCH, OPTIONAL MATCH, UNWIND, WITH, CALL, RETURN), UNION."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from kg.cypher import ast as A
from kg.cypher import vector
from kg.cypher.analysis import aggregates_in, check_functions, pattern_vars
from kg.cypher.context import Context, Record
from kg.cypher.errors import CypherError, CypherSyntaxError
from kg.cypher.evaluator import evaluate, truth
from kg.cypher.matcher import match
from kg.cypher.projection import project
from kg.cypher.readonly import PROCEDURE_COLUMNS
from kg.cypher.values import LABEL_ATTR, TYPE_ATTR, hkey, is_list, node_labels


def _check_where(where: A.Expr | None, scope: set[str]) -> None:
    if where is None:
        return
    check_functions(where)  # scope and kinds were checked by kg.cypher.semantics when parsing
    if aggregates_in(where):
        raise CypherError("aggregate functions are not allowed in WHERE (aggregate in WITH first)")


def match_clause(records: Iterable[Record], clause: A.Match, scope: list[str],
                  ctx: Context) -> tuple[Iterator[Record], list[str]]:
    for p in clause.patterns:
        for part in p.parts:
            if part.props is not None:
                check_functions(part.props)
    new_vars = [v for v in pattern_vars(clause.patterns) if v not in scope]
    _check_where(clause.where, set(scope) | set(new_vars))

    def run() -> Iterator[Record]:
        for rec in records:
            found = False
            for out in match(ctx, clause.patterns, clause.where, rec):
                found = True
                yield out
            if clause.optional and not found:
                yield {**rec, **{v: None for v in new_vars}}

    return run(), scope + new_vars


def unwind_clause(records: Iterable[Record], clause: A.Unwind, scope: list[str],
            ctx: Context) -> tuple[Iterator[Record], list[str]]:
    check_functions(clause.expr)
    if clause.var in scope:
        raise CypherError(f"variable `{clause.var}` is already defined")

    def run() -> Iterator[Record]:
        for rec in records:
            value = evaluate(clause.expr, rec, ctx)
            if value is None:
                continue
            for item in (value if is_list(value) else [value]):
                ctx.tick()
                yield {**rec, clause.var: item}

    return run(), scope + [clause.var]


def _procedure_values(ctx: Context, proc: str) -> list[Any]:
    graph = ctx.graph
    found: set[Any] = set()
    if proc == "db.labels":
        for attrs in graph._node.values():
            ctx.tick()
            found.update(node_labels(attrs))
    elif proc == "db.relationshiptypes":
        known = getattr(graph, "edge_type_counts", None)  # a snapshot-backed graph knows without a scan
        if known is not None:
            found.update(known)
        else:
            for _, _, attrs in graph.edges(data=True):
                ctx.tick()
                found.add(attrs.get(TYPE_ATTR))
    else:
        for attrs in graph._node.values():
            ctx.tick()
            found.update(k for k in attrs if k != LABEL_ATTR)
        known = getattr(graph, "edge_property_keys", None)
        if known is not None:
            found.update(k for k in known if k != TYPE_ATTR)
        else:
            for _, _, attrs in graph.edges(data=True):
                ctx.tick()
                found.update(k for k in attrs if k != TYPE_ATTR)
    found.discard(None)
    return sorted(found, key=str)


def _call(records: Iterable[Record], clause: A.Call, scope: list[str],
          ctx: Context) -> tuple[Iterator[Record], list[str]]:
    column = PROCEDURE_COLUMNS[clause.procedure]
    yields = clause.yields if clause.yields is not None else ((column, column),)
    new_vars = [alias for _, alias in yields]
    for v in new_vars:
        if v in scope:
            raise CypherError(f"variable `{v}` is already defined")
    _check_where(clause.where, set(scope) | set(new_vars))

    def run() -> Iterator[Record]:
        values = _procedure_values(ctx, clause.procedure)
        for rec in records:
            for value in values:
                out = {**rec, **{alias: value for alias in new_vars}}
                if clause.where is None or truth(evaluate(clause.where, out, ctx)) is True:
                    yield out

    return run(), scope + new_vars


def _single(query: A.SingleQuery, ctx: Context, outer: Record | None = None) -> tuple[Iterator[Record], list[str]]:
    """One query part; `outer` is the record an EXISTS/COUNT { ... } subquery starts from."""
    records: Iterator[Record] = iter([dict(outer or {})])
    scope: list[str] = list(outer or {})
    for clause in query.clauses:
        if isinstance(clause, A.Match):
            records, scope = match_clause(records, clause, scope, ctx)
        elif isinstance(clause, A.Unwind):
            records, scope = unwind_clause(records, clause, scope, ctx)
        elif isinstance(clause, A.Call):
            records, scope = _call(records, clause, scope, ctx)
        elif isinstance(clause, A.With):
            # WITH's WHERE is the projection's: it also sees the variables from before the WITH.
            records, scope = project(records, clause.proj, scope, ctx, is_with=True, where=clause.where)
        else:
            # Checked first (project checks eagerly, over no rows); then a query simple enough for arrays runs
            # there, same rows in the same order, and any other in the interpreter.
            _, names = project(iter(()), clause.proj, scope, ctx, is_with=False)
            fast = None if outer else vector.run(query, ctx)  # a subquery's rows depend on its outer record
            if fast is not None:
                return fast, names
            return project(records, clause.proj, scope, ctx, is_with=False)
    return records, scope  # a standalone CALL


class Executor:
    """The `kg.cypher.context.Engine` of one query: what expression evaluation calls back for patterns
    (the matcher) and EXISTS/COUNT { ... } subqueries (a query part run from the outer record)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def match(self, patterns: tuple[A.PathPattern, ...], where: A.Expr | None, rec: Record) -> Iterator[Record]:
        return match(self.ctx, patterns, where, rec)

    def subquery(self, query: A.SingleQuery, rec: Record) -> Iterator[Record]:
        return _single(query, self.ctx, rec)[0]


def execute(query: A.Query, ctx: Context) -> tuple[list[str], Iterator[list[Any]]]:
    """Columns and a lazy iterator of rows (internal values, not yet converted to JSON). Installs the
    query's `Executor` as ``ctx.engine``."""
    ctx.engine = Executor(ctx)
    missing = sorted(query.params - set(ctx.params))
    if missing:
        raise CypherError("missing parameter(s): " + ", ".join(f"${m}" for m in missing))
    parts = [_single(q, ctx) for q in query.parts]
    columns = parts[0][1]
    for _, cols in parts[1:]:
        if sorted(cols) != sorted(columns):
            raise CypherSyntaxError(
                f"all parts of a UNION must return the same columns: {columns} vs {cols}"
            )
    chained = itertools.chain.from_iterable(records for records, _ in parts)
    rows: Iterator[list[Any]] = ([rec[c] for c in columns] for rec in chained)
    if len(parts) > 1 and not query.union_all:
        rows = _dedupe(rows)
    return columns, rows


def _dedupe(rows: Iterable[list[Any]]) -> Iterator[list[Any]]:
    seen: set[Any] = set()
    for row in rows:
        key = tuple(hkey(v) for v in row)
        if key not in seen:
            seen.add(key)
            yield row

