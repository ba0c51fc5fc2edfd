"""Expression evaluation with Cypher's three-valued null logic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import networkx as nx

from kg.cypher import ast as A
from kg.cypher.context import Context, Record, charge
from kg.cypher.errors import CypherError, CypherTypeError
from kg.cypher.functions import AGGREGATES, FUNCTIONS
from kg.cypher.operators import arithmetic, check_int, compare_values, in_list
from kg.cypher.regex import compile_regex
from kg.cypher.temporal import Temporal
from kg.cypher.temporal_ops import component
from kg.cypher.values import (
    LABEL_ATTR,
    TYPE_ATTR,
    Node,
    Rel,
    equals,
    is_list,
    is_number,
    labels_match,
    properties,
    rel_attrs,
    type_name,
)


def evaluate(expr: A.Expr, rec: Record, ctx: Context) -> Any:
    return _DISPATCH[type(expr)](expr, rec, ctx)


def truth(value: Any, what: str = "WHERE") -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise CypherTypeError(f"{what} expects a boolean, got {type_name(value)}")


def has_labels(graph: nx.MultiDiGraph, node_id: Any, labels: A.LabelExpr) -> bool:
    return labels_match(graph._node[node_id], labels)


def _var(e: A.Var, rec: Record, ctx: Context) -> Any:
    try:
        return rec[e.name]
    except KeyError:
        raise CypherError(f"variable `{e.name}` is not defined") from None


def get_property(v: Any, key: str, ctx: Context) -> Any:
    if v is None:
        return None
    if isinstance(v, Node):
        return None if key == LABEL_ATTR else ctx.graph._node[v.id].get(key)
    if isinstance(v, Rel):
        return None if key == TYPE_ATTR else rel_attrs(ctx.graph, v).get(key)
    if isinstance(v, dict):
        return v.get(key)
    if isinstance(v, Temporal):  # d.year, dur.minutesOfHour, ...
        return component(v, key)
    raise CypherTypeError(f"cannot read property `{key}` of a {type_name(v)}")


def _prop(e: A.Prop, rec: Record, ctx: Context) -> Any:
    return get_property(evaluate(e.subject, rec, ctx), e.key, ctx)


def _index(e: A.Index, rec: Record, ctx: Context) -> Any:
    subject = evaluate(e.subject, rec, ctx)
    idx = evaluate(e.index, rec, ctx)
    if subject is None or idx is None:
        return None
    if is_list(subject):
        if type(idx) is not int:
            raise CypherTypeError(f"list index must be an integer, got {type_name(idx)}")
        return subject[idx] if -len(subject) <= idx < len(subject) else None
    if isinstance(idx, str) and isinstance(subject, (dict, Node, Rel)):
        return get_property(subject, idx, ctx)
    raise CypherTypeError(f"cannot index a {type_name(subject)} with a {type_name(idx)}")


def _slice(e: A.Slice, rec: Record, ctx: Context) -> Any:
    subject = evaluate(e.subject, rec, ctx)
    bounds = [None if b is None else evaluate(b, rec, ctx) for b in (e.start, e.end)]
    if subject is None or any(b is None for b, x in zip(bounds, (e.start, e.end), strict=False) if x is not None):
        return None
    if not is_list(subject) or any(b is not None and type(b) is not int for b in bounds):
        raise CypherTypeError("slicing needs a list and integer bounds")
    return list(subject[bounds[0] : bounds[1]])


def _map_proj(e: A.MapProj, rec: Record, ctx: Context) -> Any:
    subject = evaluate(e.subject, rec, ctx)
    if subject is None:
        return None
    if not isinstance(subject, (Node, Rel, dict)):
        raise CypherTypeError(f"map projection needs a node, relationship or map, got {type_name(subject)}")
    out: dict[str, Any] = {}
    for kind, key, value in e.items:
        if kind == "all":
            out.update(subject if isinstance(subject, dict) else properties(ctx.graph, subject))
        elif kind == "prop":
            out[key] = get_property(subject, key, ctx)
        elif kind == "kv":
            assert value is not None
            out[key] = evaluate(value, rec, ctx)
        else:
            out[key] = _var(A.Var(key), rec, ctx)
    return out


def _unary(e: A.Unary, rec: Record, ctx: Context) -> Any:
    v = evaluate(e.operand, rec, ctx)
    if e.op == "NOT":
        t = truth(v, "NOT")
        return None if t is None else not t
    if v is None:
        return None
    if not is_number(v):
        raise CypherTypeError(f"unary {e.op} expects a number, got {type_name(v)}")
    return check_int(-v) if e.op == "-" else v


def _binary(e: A.Binary, rec: Record, ctx: Context) -> Any:
    a = evaluate(e.left, rec, ctx)
    b = evaluate(e.right, rec, ctx)
    op = e.op
    if op == "IN":
        return in_list(a, b)
    if op in ("STARTS", "ENDS", "CONTAINS"):
        if not isinstance(a, str) or not isinstance(b, str):
            return None
        return a.startswith(b) if op == "STARTS" else a.endswith(b) if op == "ENDS" else b in a
    if op == "=~":
        if not isinstance(a, str) or not isinstance(b, str):
            return None
        pattern = ctx.regexes.get(b)
        if pattern is None:
            pattern = ctx.regexes[b] = compile_regex(b)  # RE2: linear time, never catastrophic backtracking
        return pattern.fullmatch(a) is not None
    return arithmetic(op, a, b)


def _compare(e: A.Compare, rec: Record, ctx: Context) -> Any:
    values = [evaluate(x, rec, ctx) for x in e.operands]
    result: bool | None = True
    for i, op in enumerate(e.ops):
        r = compare_values(op, values[i], values[i + 1])
        if r is False:
            return False
        if r is None:
            result = None
    return result


def _boolop(e: A.BoolOp, rec: Record, ctx: Context) -> Any:
    if e.op == "XOR":
        acc: bool | None = False
        for x in e.operands:
            t = truth(evaluate(x, rec, ctx), "XOR")
            acc = None if acc is None or t is None else acc != t
        return acc
    decisive = e.op == "OR"  # the value that settles the result early
    saw_null = False
    for x in e.operands:
        t = truth(evaluate(x, rec, ctx), e.op)
        if t is decisive:
            return decisive
        if t is None:
            saw_null = True
    return None if saw_null else not decisive


def _is_null(e: A.IsNull, rec: Record, ctx: Context) -> Any:
    return (evaluate(e.operand, rec, ctx) is None) != e.negated


def _has_labels(e: A.HasLabels, rec: Record, ctx: Context) -> Any:
    v = evaluate(e.subject, rec, ctx)
    if v is None:
        return None
    if isinstance(v, Node):
        return has_labels(ctx.graph, v.id, e.labels)
    if isinstance(v, Rel):  # r:TYPE tests the relationship type
        return all(rel_attrs(ctx.graph, v).get(TYPE_ATTR) in g for g in e.labels)
    raise CypherTypeError(f"label predicate needs a node, got {type_name(v)}")


def _call(e: A.FuncCall, rec: Record, ctx: Context) -> Any:
    if e.name in AGGREGATES:
        try:
            return ctx.agg_values[id(e)]
        except KeyError:
            raise CypherError(f"aggregate function {e.name}() is not allowed here") from None
    fn = FUNCTIONS[e.name][0]
    out = fn(ctx.graph, [evaluate(a, rec, ctx) for a in e.args])
    if isinstance(out, str | list):  # every string or list a function builds counts against the query's budget
        charge(len(out))
    return out


def _case(e: A.Case, rec: Record, ctx: Context) -> Any:
    subject = evaluate(e.subject, rec, ctx) if e.subject is not None else None
    for cond, value in e.whens:
        c = evaluate(cond, rec, ctx)
        hit = equals(subject, c) if e.subject is not None else c
        if hit is True:
            return evaluate(value, rec, ctx)
    return None if e.default is None else evaluate(e.default, rec, ctx)


def iterate_list(source: A.Expr, rec: Record, ctx: Context) -> list[Any] | None:
    v = evaluate(source, rec, ctx)
    if v is None:
        return None
    if not is_list(v):
        raise CypherTypeError(f"expected a list, got {type_name(v)}")
    return list(v)


def _list_comp(e: A.ListComp, rec: Record, ctx: Context) -> Any:
    items = iterate_list(e.source, rec, ctx)
    if items is None:
        return None
    scope = dict(rec)
    out = []
    for item in items:
        ctx.tick()
        scope[e.var] = item
        if e.where is not None and truth(evaluate(e.where, scope, ctx)) is not True:
            continue
        out.append(item if e.proj is None else evaluate(e.proj, scope, ctx))
    return out


def _quantifier(e: A.Quantifier, rec: Record, ctx: Context) -> Any:
    items = iterate_list(e.source, rec, ctx)
    if items is None:
        return None
    scope = dict(rec)
    trues = nulls = 0
    for item in items:
        ctx.tick()
        scope[e.var] = item
        t = truth(evaluate(e.where, scope, ctx), e.kind)
        trues += t is True
        nulls += t is None
    falses = len(items) - trues - nulls
    if e.kind == "any":
        return True if trues else (None if nulls else False)
    if e.kind == "all":
        return False if falses else (None if nulls else True)
    if e.kind == "none":
        return False if trues else (None if nulls else True)
    return False if trues > 1 else (None if nulls else trues == 1)


def _reduce(e: A.Reduce, rec: Record, ctx: Context) -> Any:
    items = iterate_list(e.source, rec, ctx)
    if items is None:
        return None
    scope = dict(rec)
    scope[e.acc] = evaluate(e.init, rec, ctx)
    for item in items:
        ctx.tick()
        scope[e.var] = item
        scope[e.acc] = evaluate(e.expr, scope, ctx)
    return scope[e.acc]


def _pattern_expr(e: A.PatternExpr, rec: Record, ctx: Context) -> Any:
    matches = ctx.engine.match(e.patterns, e.where, rec)
    if e.kind == "exists":
        return next(matches, None) is not None
    return sum(1 for _ in matches)


def _subquery(e: A.Subquery, rec: Record, ctx: Context) -> Any:
    rows = ctx.engine.subquery(e.query, rec)
    if e.kind == "exists":
        return next(rows, None) is not None
    return sum(1 for _ in rows)


def _pattern_comp(e: A.PatternComp, rec: Record, ctx: Context) -> Any:
    return [evaluate(e.proj, r, ctx) for r in ctx.engine.match((e.pattern,), e.where, rec)]


_DISPATCH: dict[type, Callable[[Any, Record, Context], Any]] = {
    A.Literal: lambda e, rec, ctx: e.value,
    A.Param: lambda e, rec, ctx: ctx.params[e.name],
    A.Var: _var, A.Prop: _prop, A.Index: _index, A.Slice: _slice,
    A.ListLit: lambda e, rec, ctx: [evaluate(x, rec, ctx) for x in e.items],
    A.MapLit: lambda e, rec, ctx: {k: evaluate(x, rec, ctx) for k, x in e.items},
    A.MapProj: _map_proj, A.Unary: _unary, A.Binary: _binary, A.Compare: _compare,
    A.BoolOp: _boolop, A.IsNull: _is_null, A.HasLabels: _has_labels, A.FuncCall: _call,
    A.Case: _case, A.ListComp: _list_comp, A.Quantifier: _quantifier, A.Reduce: _reduce,
    A.PatternExpr: _pattern_expr, A.PatternComp: _pattern_comp, A.Subquery: _subquery,
}
