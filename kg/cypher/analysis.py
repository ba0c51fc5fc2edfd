"""Static checks over the syntax tree: variable scope, aggregates, functions, WHERE conjuncts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import fields, replace
from typing import Any

from kg.cypher import ast as A
from kg.cypher.errors import CypherSyntaxError, UnsupportedCypher
from kg.cypher.functions import AGGREGATES, FUNCTIONS


def _exprs_in(value: Any) -> Iterator[A.Expr]:
    if isinstance(value, A.Expr):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _exprs_in(item)
    elif isinstance(value, A.PathPattern):
        for part in value.parts:
            if part.props is not None:
                yield part.props


def children(expr: A.Expr) -> Iterator[A.Expr]:
    for f in fields(expr):
        yield from _exprs_in(getattr(expr, f.name))


def walk(expr: A.Expr) -> Iterator[A.Expr]:
    """`expr` and all its sub-expressions, depth first."""
    stack = [expr]
    while stack:
        e = stack.pop()
        yield e
        stack.extend(children(e))


def pattern_vars(patterns: tuple[A.PathPattern, ...]) -> list[str]:
    names: list[str] = []
    for p in patterns:
        parts: tuple[A.PathPattern | A.NodePattern | A.RelPattern, ...] = (p, *p.parts)
        for part in parts:
            if part.var is not None and part.var not in names:
                names.append(part.var)
    return names


def free_vars(expr: A.Expr) -> set[str]:
    """Names an expression may read from its record (a superset: pattern variables included)."""
    out: set[str] = set()
    for e in walk(expr):
        if isinstance(e, A.Var):
            out.add(e.name)
        elif isinstance(e, A.MapProj):
            out.update(key for kind, key, _ in e.items if kind == "var")
        elif isinstance(e, A.PatternExpr):
            out.update(pattern_vars(e.patterns))
        elif isinstance(e, A.PatternComp):
            out.update(pattern_vars((e.pattern,)))
        elif isinstance(e, A.Subquery):
            out.update(subquery_names(e.query))
    return out


def subquery_names(query: A.SingleQuery) -> set[str]:
    """Every name a subquery's clauses mention (a superset of the outer variables it reads)."""
    out: set[str] = set()
    for clause in query.clauses:
        if isinstance(clause, A.Match):
            out.update(pattern_vars(clause.patterns))
            for p in clause.patterns:
                for part in p.parts:
                    if part.props is not None:
                        out |= free_vars(part.props)
        exprs: list[A.Expr | None] = []
        if isinstance(clause, A.Match | A.Call):
            exprs.append(clause.where)
        elif isinstance(clause, A.Unwind):
            exprs.append(clause.expr)
        elif isinstance(clause, A.With | A.Return):
            proj = clause.proj
            exprs += [it.expr for it in proj.items] + [e for e, _ in proj.order] + [proj.skip, proj.limit]
            if isinstance(clause, A.With):
                exprs.append(clause.where)
        for x in exprs:
            if x is not None:
                out |= free_vars(x)
    return out


def conjuncts(expr: A.Expr | None) -> list[A.Expr]:
    if expr is None:
        return []
    if isinstance(expr, A.BoolOp) and expr.op == "AND":
        return [c for x in expr.operands for c in conjuncts(x)]
    return [expr]


def is_aggregate(e: A.Expr) -> bool:
    return isinstance(e, A.FuncCall) and e.name in AGGREGATES


def aggregates_in(expr: A.Expr) -> list[A.FuncCall]:
    """Top-level aggregate calls in `expr`; nested aggregates are an error."""
    found: list[A.FuncCall] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if is_aggregate(e):
            assert isinstance(e, A.FuncCall)
            if any(is_aggregate(x) for a in e.args for x in walk(a)):
                raise CypherSyntaxError("aggregate functions cannot be nested inside other aggregates")
            found.append(e)
        elif not isinstance(e, (A.PatternExpr, A.PatternComp)):
            stack.extend(children(e))
    return found


# Functions of Neo4j's Cypher that this engine does not implement: UnsupportedCypher, not "unknown".
_OTHER_FUNCTIONS = frozenset({
    "date", "datetime", "localdatetime", "localtime", "time", "duration", "timestamp", "point", "distance",
    "randomuuid", "tostringlist", "tointegerlist", "tofloatlist", "tobooleanlist", "valuetype", "char_length",
    "character_length", "btrim", "normalize", "nullif", "file", "linenumber", "collect_set",
})
_AGG_ARITY = {"count": (1, 1), "percentiledisc": (2, 2), "percentilecont": (2, 2)}


def check_functions(expr: A.Expr) -> None:
    for e in walk(expr):
        if not isinstance(e, A.FuncCall):
            continue
        if e.name in AGGREGATES:
            lo, hi = _AGG_ARITY.get(e.name, (1, 1))
            if e.star:
                continue
        elif e.name in FUNCTIONS:
            _, lo, hi = FUNCTIONS[e.name]
            if e.distinct:
                raise CypherSyntaxError(f"DISTINCT is only allowed in aggregate functions, not {e.name}()")
        elif "." in e.name or e.name in _OTHER_FUNCTIONS:
            raise UnsupportedCypher(f"function {e.name}()")
        else:
            raise CypherSyntaxError(f"unknown function {e.name}()")
        if not lo <= len(e.args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise CypherSyntaxError(f"{e.name}() takes {want} argument(s), got {len(e.args)}")


def substitute(expr: A.Expr, mapping: Sequence[tuple[A.Expr, A.Expr]]) -> A.Expr:
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

    changes = {f.name: sub(getattr(expr, f.name)) for f in fields(expr)}
    return replace(expr, **changes)
