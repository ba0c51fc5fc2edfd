"""Grouping and counting for `kg.cypher.vector`: group codes, counts and ORDER BY / LIMIT over arrays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from kg.cypher import ast as A
from kg.cypher.analysis import aggregates_in, substitute
from kg.cypher.context import Context, Record
from kg.cypher.projection import project, skip_limit
from kg.cypher.values import Node, sort_key

DENSE_SLACK = 65_536  # grouping counts codes in a table when their range is under 4 per row plus this


class NotVectorizable(Exception):
    """The query uses something the vectorised executor does not do; the interpreter runs it."""


def aggregate(frame: Any, proj: A.Projection, ctx: Context) -> Iterator[Record]:
    """Grouping keys and counts with array operations, then DISTINCT / ORDER BY / SKIP / LIMIT as usual."""
    if proj.star:
        raise NotVectorizable
    topo = frame.topo
    n = frame.size
    # (group codes per row, the values at given rows, code range, distinct codes always sort apart)
    keys: list[tuple[np.ndarray, Any, int, bool]] = []
    counts: list[tuple[str, np.ndarray | None]] = []
    plan: list[tuple[str, int]] = []
    for it in proj.items:
        e = it.expr
        if aggregates_in(e):
            if not (isinstance(e, A.FuncCall) and e.name == "count"):
                raise NotVectorizable
            if e.star:
                counts.append(("all", None))
            elif len(e.args) == 1 and isinstance(e.args[0], A.Var) and e.args[0].name in frame.vars:
                counts.append(("distinct" if e.distinct else "all", frame.vars[e.args[0].name]))
            else:
                raise NotVectorizable
            plan.append(("count", len(counts) - 1))
            continue
        if isinstance(e, A.Var) and e.name in frame.vars:
            nodes = frame.vars[e.name]
            keys.append((nodes.astype(np.int64), lambda r, c=nodes: _objects([Node(x) for x in topo.id_array()[c[r]]]),
                         len(topo), True))
        elif isinstance(e, A.Prop) and isinstance(e.subject, A.Var) and e.subject.name in frame.vars:
            col, nodes = topo.column(e.key), frame.vars[e.subject.name]
            codes = col.codes()  # first: it sets ``ncodes``
            keys.append((codes[nodes], lambda r, c=col, x=nodes: c.obj[x[r]], col.ncodes, col.simple))
        elif (isinstance(e, A.Index) and isinstance(e.index, A.Literal) and e.index.value == 0
              and type(e.index.value) is int and isinstance(e.subject, A.FuncCall) and e.subject.name == "labels"
              and len(e.subject.args) == 1 and isinstance(e.subject.args[0], A.Var)
              and e.subject.args[0].name in frame.vars):
            nodes = frame.vars[e.subject.args[0].name]
            codes = topo.label_code[nodes].astype(np.int64)
            keys.append((codes, lambda r, c=codes: _objects(topo.labels)[c[r]], len(topo.labels), True))
        else:
            raise NotVectorizable
        plan.append(("key", len(keys) - 1))
    names = [it.alias for it in proj.items]
    mapping = [(it.expr, A.Var(it.alias)) for it in proj.items]
    order = [(substitute(e, mapping), d) for e, d in proj.order]
    column = {it.alias: p for it, p in zip(proj.items, plan, strict=True)}
    by_name = [(e.name, d) for e, d in order if isinstance(e, A.Var) and e.name in column]
    by_columns = len(by_name) == len(order)  # ORDER BY only returned columns
    # When ORDER BY names every grouping key and distinct keys never sort alike, the sort alone fixes the
    # rows' order: groups may then be numbered in any order, and any row of a group stands for it.
    sorted_by = {column[name] for name, _ in by_name} if by_columns else set()
    any_order = bool(keys) and all(("key", i) in sorted_by and k[3] for i, k in enumerate(keys))
    if keys:
        group, first, groups, sizes = (_groups_unordered if any_order else _groups)(keys, n)
    else:
        group, first, groups, sizes = np.zeros(n, np.int64), np.zeros(1, np.int64), 1, None
    totals = []
    for kind, nodes in counts:
        if kind == "all" or nodes is None:
            totals.append(sizes if sizes is not None else np.bincount(group, minlength=groups))
        else:
            pairs = _unique(group.astype(np.int64) * len(topo) + nodes)
            totals.append(np.bincount(pairs // len(topo), minlength=groups))

    def rows(kept: np.ndarray) -> list[Record]:
        """The output rows of groups ``kept``, key values from each group's first row (as the interpreter)."""
        values = [fn(first[kept]) for _, fn, _, _ in keys]
        return [{it.alias: int(totals[i][g]) if kind == "count" else values[i][j]
                 for it, (kind, i) in zip(proj.items, plan, strict=True)} for j, g in enumerate(kept.tolist())]

    if by_columns:
        # ORDER BY returned columns: sort group numbers (as `projection` sorts rows: stable, last key
        # first), cut SKIP/LIMIT, and build rows only for the groups kept.
        skip = skip_limit(proj.skip, "SKIP", ctx) or 0
        limit = skip_limit(proj.limit, "LIMIT", ctx)
        ranked = np.arange(groups)
        kind, i = column[by_name[0][0]] if by_name else ("", 0)
        if limit is not None and kind == "count" and skip + limit < groups:
            # Top k by a count: only groups that reach the k-th count (ties included) can be kept; sorting
            # just those, in their original order, gives the same first k rows.
            v = totals[i]
            cut = _kth(v, skip + limit, order[0][1])
            ranked = np.nonzero(v >= cut if order[0][1] else v <= cut)[0]
        for name, desc in reversed(by_name):
            kind, i = column[name]
            if kind == "count":
                by = totals[i][ranked]
                ranked = ranked[np.argsort(-by if desc else by, kind="stable")]
            else:
                ranked = ranked[_sort_order(keys[i][1](first[ranked]), desc)]
        ranked = ranked[skip:] if limit is None else ranked[skip : skip + limit]
        return iter(rows(ranked))
    out = rows(np.arange(groups))
    rest = A.Projection(proj.distinct, False, tuple(A.ReturnItem(A.Var(a), a, True) for a in names),
                        tuple(order), proj.skip, proj.limit)
    return project(iter(out), rest, names, ctx, is_with=False)[0]


def _kth(counts: np.ndarray, m: int, largest: bool) -> int:
    """The m-th largest (or smallest) of non-negative counts, by a histogram: no selection over many ties."""
    hist = np.bincount(counts)
    if largest:
        return len(hist) - 1 - int(np.searchsorted(np.cumsum(hist[::-1]), m))
    return int(np.searchsorted(np.cumsum(hist), m))


def _unique(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values (np.unique is several times slower on large integer arrays)."""
    if len(values) == 0:
        return values
    values = np.sort(values)
    return values[np.concatenate(([True], values[1:] != values[:-1]))]


def _objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _sort_order(values: np.ndarray, desc: bool) -> np.ndarray:
    """The stable order ``sorted(..., key=sort_key, reverse=desc)`` gives, with numpy when all are strings."""
    if len(values):
        try:
            strings = values.astype(str)  # numpy orders strings by code point, as Python (and sort_key) does
        except (TypeError, ValueError):
            strings = None
        # only when every value was a str, none with trailing NULs (numpy drops them)
        if strings is not None and np.array_equal(strings.astype(object), values):
            _, rank = np.unique(strings, return_inverse=True)
            rank = rank.reshape(-1)
            return np.argsort(-rank if desc else rank, kind="stable")
    keys = [sort_key(v) for v in values]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__, reverse=desc), dtype=np.int64)


def _combined(keys: list[tuple[np.ndarray, Any, int, bool]], n: int) -> tuple[np.ndarray, int]:
    """One code per row for all keys together, and the code range."""
    code, span = keys[0][0], keys[0][2]
    for c, _, k, _ in keys[1:]:
        if span * k >= 2**62:
            stacked = np.stack([c for c, _, _, _ in keys], axis=1)
            _, code = np.unique(stacked, axis=0, return_inverse=True)
            return code.reshape(-1).astype(np.int64), n
        code, span = code * k + c, span * k
    return code, span


def _runs(code: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(group of each row, first row of each group, group sizes), groups numbered by code, by one stable sort."""
    order = np.argsort(code, kind="stable")
    sorted_code = code[order]
    starts = np.concatenate(([0], np.nonzero(sorted_code[1:] != sorted_code[:-1])[0] + 1)) if len(code) else order
    inverse = np.empty(len(code), dtype=np.int64)
    inverse[order] = np.cumsum(np.concatenate(([0], sorted_code[1:] != sorted_code[:-1]))) if len(code) else order
    return inverse, order[starts], np.diff(np.append(starts, len(code)))


def _groups(keys: list[tuple[np.ndarray, Any, int, bool]],
            n: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray | None]:
    """(group of each row, first row of each group, number of groups, sizes or None), groups numbered in order
    of first appearance, as the interpreter meets them."""
    code, span = _combined(keys, n)
    if span <= 4 * n + DENSE_SLACK:  # a dense table of codes beats sorting
        first_of = np.full(span, n, dtype=np.int64)
        np.minimum.at(first_of, code, np.arange(n, dtype=np.int64))
        present = np.nonzero(first_of < n)[0]
        order = present[np.argsort(first_of[present], kind="stable")]
        rank = np.empty(span, dtype=np.int64)
        rank[order] = np.arange(len(order))
        return rank[code], first_of[order], len(order), None
    inverse, first, sizes = _runs(code)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse], first[order], len(order), sizes[order]


def _groups_unordered(keys: list[tuple[np.ndarray, Any, int, bool]],
                      n: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray | None]:
    """As `_groups`, groups numbered in any order and some row of each standing for it (an ORDER BY over every
    key decides the order): a histogram instead of finding first rows."""
    code, span = _combined(keys, n)
    if span <= 4 * n + DENSE_SLACK:
        sizes = np.bincount(code, minlength=span)
        present = np.nonzero(sizes)[0]
        rank = np.empty(span, dtype=np.int64)  # read only at present codes
        rank[present] = np.arange(len(present))
        group = rank[code]
        some = np.empty(len(present), dtype=np.int64)
        some[group] = np.arange(n, dtype=np.int64)  # which row of a group lands last does not matter
        return group, some, len(present), sizes[present]
    group, first, sizes = _runs(code)
    return group, first, len(first), sizes
