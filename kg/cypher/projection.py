"""RETURN/WITH projection: items, implicit-grouping aggregation, DISTINCT, ORDER BY, SKIP, LIMIT."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from kg.cypher import ast as A
from kg.cypher.aggregate import Accumulator
from kg.cypher.analysis import (
    aggregates_in,
    check_functions,
    free_vars,
    substitute,
    walk,
)
from kg.cypher.context import Context, Record, charge_rows
from kg.cypher.errors import CypherSyntaxError
from kg.cypher.evaluator import evaluate, truth
from kg.cypher.values import hkey, sort_key, type_name

Row = tuple[Record, Record | None]
_NO_ARGS: list[Any] = []  # (projected record, source record for ORDER BY or None)


def skip_limit(expr: A.Expr | None, what: str, ctx: Context) -> int | None:
    """The value of a SKIP or LIMIT (``what``) expression: a non-negative integer constant or parameter."""
    if expr is None:
        return None
    if free_vars(expr):
        raise CypherSyntaxError(f"{what} must be a constant or parameter, not depend on variables")
    value = evaluate(expr, {}, ctx)
    if type(value) is not int or value < 0:
        raise CypherSyntaxError(f"{what} expects a non-negative integer, got {type_name(value)} {value!r}")
    return value


def _page(rows: Iterable[Row], proj: A.Projection, ctx: Context) -> Iterator[Row]:
    """SKIP/LIMIT that read parameters: checked when the first row is asked for, as at run time in Neo4j."""
    skip = skip_limit(proj.skip, "SKIP", ctx) or 0
    limit = skip_limit(proj.limit, "LIMIT", ctx)
    yield from itertools.islice(rows, skip, None if limit is None else skip + limit)


def project(records: Iterable[Record], proj: A.Projection, scope: list[str], ctx: Context,
            is_with: bool, where: A.Expr | None = None) -> tuple[Iterator[Record], list[str]]:
    """Apply a RETURN/WITH projection and WITH's `where`; returns the output records and their column names."""
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
    for it in items:  # scope, grouping and types were checked by kg.cypher.semantics when parsing
        check_functions(it.expr)
        aggs.append(aggregates_in(it.expr))
    aggregating = any(aggs)
    mapping = [(it.expr, A.Var(it.alias)) for it in items]
    order = [(substitute(e, mapping), desc) for e, desc in proj.order]
    for e, _ in order:
        check_functions(e)
        if aggregates_in(e):
            raise CypherSyntaxError("ORDER BY may only use an aggregate that also appears as a RETURN/WITH item")
    lazy_page = any(isinstance(x, A.Param) for e in (proj.skip, proj.limit) if e is not None for x in walk(e))
    skip = None if lazy_page else skip_limit(proj.skip, "SKIP", ctx)
    limit = None if lazy_page else skip_limit(proj.limit, "LIMIT", ctx)
    # WHERE may read variables from before the WITH (not after aggregation): rows then keep their source.
    needs_source = False
    if where is not None:
        check_functions(where)
        needs_source = bool(free_vars(where) & (in_scope - set(names)))

    rows: Iterable[Row]
    if aggregating:
        rows = _aggregate(records, items, aggs, ctx)
    else:
        rows = _plain(records, items, ctx, keep_source=(bool(order) and not proj.distinct) or needs_source)
    if where is not None and proj.distinct and needs_source:
        rows = _where(rows, where, ctx)  # the source rows that DISTINCT would merge are filtered one by one
        where = None
    if proj.distinct:
        rows = _distinct(rows, names)
    if order:
        rows = _sort(rows, order, ctx)
    if lazy_page:
        rows = _page(rows, proj, ctx)
    elif skip or limit is not None:
        rows = itertools.islice(rows, skip or 0, None if limit is None else (skip or 0) + limit)
    if where is not None:
        rows = _where(rows, where, ctx)
    return (out for out, _ in rows), names


def _where(rows: Iterable[Row], where: A.Expr, ctx: Context) -> Iterator[Row]:
    for out, src in rows:
        if truth(evaluate(where, out if src is None else {**src, **out}, ctx)) is True:
            yield out, src


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
