"""RETURN/WITH projection: items, implicit-grouping aggregation, DISTINCT, ORDER BY, SKIP, LIMIT."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import fields, replace
from typing import Any

from kg.cypher import ast as A
from kg.cypher.aggregate import Accumulator
from kg.cypher.analysis import aggregates_in, check_functions, check_scope, children, free_vars, is_aggregate
from kg.cypher.context import Context, Record, charge_rows
from kg.cypher.errors import CypherError, CypherSyntaxError
from kg.cypher.evaluator import evaluate
from kg.cypher.values import hkey, sort_key, type_name

Row = tuple[Record, Record | None]
_NO_ARGS: list[Any] = []  # (projected record, source record for ORDER BY or None)


def substitute(expr: A.Expr, mapping: list[tuple[A.Expr, A.Expr]]) -> A.Expr:
    """Replace sub-expressions equal to a mapping key (ORDER BY count(*) -> the item's alias)."""
    for old, new in mapping:
        if expr == old:
            return new

    def sub(value: Any) -> Any:
        if isinstance(value, A.Expr):
            return substitute(value, mapping)
        if isinstance(value, tuple):
            return tuple(sub(v) for v in value)
        return value

    changes = {f.name: sub(getattr(expr, f.name)) for f in fields(expr)}  # type: ignore[arg-type]
    return replace(expr, **changes)  # type: ignore[type-var]


def _check_grouping(expr: A.Expr, keys: list[A.Expr], key_vars: set[str], scope: set[str],
                    local: frozenset[str] = frozenset()) -> None:
    """Non-aggregated parts of an aggregating item may only use grouping keys (as in Neo4j)."""
    if any(expr == k for k in keys) or is_aggregate(expr):
        return
    if isinstance(expr, A.Var):
        if expr.name not in local:
            raise CypherError(
                f"`{expr.name}` is used next to an aggregate but is not a grouping key; "
                "add it as its own RETURN/WITH item"
            )
        return
    if isinstance(expr, (A.PatternExpr, A.PatternComp)):
        bad = (free_vars(expr) & scope) - key_vars - local
        if bad:
            raise CypherError(f"`{sorted(bad)[0]}` is used next to an aggregate but is not a grouping key")
        return
    if isinstance(expr, (A.ListComp, A.Quantifier, A.Reduce)):
        local = local | {expr.var} | ({expr.acc} if isinstance(expr, A.Reduce) else set())
    for child in children(expr):
        _check_grouping(child, keys, key_vars, scope, local)


def _count(expr: A.Expr | None, what: str, ctx: Context) -> int | None:
    if expr is None:
        return None
    if free_vars(expr):
        raise CypherSyntaxError(f"{what} must be a constant or parameter, not depend on variables")
    value = evaluate(expr, {}, ctx)
    if type(value) is not int or value < 0:
        raise CypherError(f"{what} expects a non-negative integer, got {type_name(value)} {value!r}")
    return value


def project(records: Iterable[Record], proj: A.Projection, scope: list[str], ctx: Context,
            is_with: bool) -> tuple[Iterator[Record], list[str]]:
    """Apply a RETURN/WITH projection; returns the output records and their column names."""
    items = list(proj.items)
    if proj.star:
        if not scope:
            raise CypherSyntaxError("RETURN * / WITH * needs at least one variable in scope")
        items = [A.ReturnItem(A.Var(n), n, True) for n in sorted(scope)] + items
    names = [it.alias for it in items]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise CypherSyntaxError(f"column name `{dup}` appears twice; use AS to rename one")
    in_scope = set(scope)
    aggs = []
    for it in items:
        check_functions(it.expr)
        check_scope(it.expr, in_scope)
        aggs.append(aggregates_in(it.expr))
    aggregating = any(aggs)
    mapping = [(it.expr, A.Var(it.alias)) for it in items]
    order = [(substitute(e, mapping), desc) for e, desc in proj.order]
    order_scope = set(names) if aggregating or proj.distinct else in_scope | set(names)
    for e, _ in order:
        check_functions(e)
        try:
            check_scope(e, order_scope)
        except CypherError:
            check_scope(e, in_scope | set(names))  # re-raises for truly undefined names
            raise CypherError(
                "after DISTINCT or aggregation, ORDER BY can only use the returned columns"
            ) from None
        if aggregates_in(e):
            raise CypherError("ORDER BY may only use an aggregate that also appears as a RETURN/WITH item")
    skip = _count(proj.skip, "SKIP", ctx)
    limit = _count(proj.limit, "LIMIT", ctx)

    rows: Iterable[Row]
    if aggregating:
        keys = [it.expr for it, a in zip(items, aggs, strict=False) if not a]
        key_vars = {e.name for e in keys if isinstance(e, A.Var)}
        for it, a in zip(items, aggs, strict=False):
            if a:
                _check_grouping(it.expr, keys, key_vars, in_scope)
        rows = _aggregate(records, items, aggs, ctx)
    else:
        rows = _plain(records, items, ctx, keep_source=bool(order) and not proj.distinct)
    if proj.distinct:
        rows = _distinct(rows, names)
    if order:
        rows = _sort(rows, order, ctx)
    if skip or limit is not None:
        rows = itertools.islice(rows, skip or 0, None if limit is None else (skip or 0) + limit)
    return (out for out, _ in rows), names


def _plain(records: Iterable[Record], items: list[A.ReturnItem], ctx: Context,
           keep_source: bool) -> Iterator[Row]:
    for rec in records:
        ctx.tick()
        out = {it.alias: evaluate(it.expr, rec, ctx) for it in items}
        yield out, (rec if keep_source else None)


def _distinct(rows: Iterable[Row], names: list[str]) -> Iterator[Row]:
    seen: set[Any] = set()
    for out, src in rows:
        key = tuple(hkey(out[n]) for n in names)
        if key not in seen:
            seen.add(key)
            charge_rows(len(seen))
            yield out, src


def _sort(rows: Iterable[Row], order: list[tuple[A.Expr, bool]], ctx: Context) -> Iterator[Row]:
    keyed = []
    for out, src in rows:
        ctx.tick()
        scope = out if src is None else {**src, **out}
        keyed.append((out, src, [sort_key(evaluate(e, scope, ctx)) for e, _ in order]))
        charge_rows(len(keyed))
    # Stable sorts from the last key to the first give a multi-key sort with mixed directions;
    # descending order puts nulls first, as Neo4j does.
    for i in range(len(order) - 1, -1, -1):
        keyed.sort(key=lambda t: t[2][i], reverse=order[i][1])
    return ((out, src) for out, src, _ in keyed)


def _aggregate(records: Iterable[Record], items: list[A.ReturnItem], aggs: list[list[A.FuncCall]],
               ctx: Context) -> Iterator[Row]:
    key_pos = [i for i, a in enumerate(aggs) if not a]
    calls = [c for a in aggs for c in a]
    groups: dict[Any, tuple[list[Any], Record, list[Accumulator]]] = {}
    for rec in records:
        ctx.tick()
        if key_pos:
            values = [evaluate(items[i].expr, rec, ctx) for i in key_pos]
            gkey: Any = tuple([hkey(v) for v in values])
        else:
            values, gkey = [], ()
        group = groups.get(gkey)
        if group is None:
            group = groups[gkey] = (values, rec, [Accumulator(c) for c in calls])
        for acc, call in zip(group[2], calls, strict=False):
            acc.add(_NO_ARGS if call.star else [evaluate(a, rec, ctx) for a in call.args])
    if not groups and not key_pos:
        groups[()] = ([], {}, [Accumulator(c) for c in calls])  # aggregates over no rows: one row
    for values, rep, accs in groups.values():
        ctx.agg_values = {id(c): acc.result() for c, acc in zip(calls, accs, strict=False)}
        try:
            key_values = iter(values)
            out = {
                it.alias: next(key_values) if not a else evaluate(it.expr, rep, ctx)
                for it, a in zip(items, aggs, strict=False)
            }
        finally:
            ctx.agg_values = {}
        yield out, None
