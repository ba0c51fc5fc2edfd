"""WHERE for `kg.cypher.vector`: comparisons with constants, label tests, node (in)equality, AND/OR/NOT as masks."""

from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np

from kg.cypher import ast as A
from kg.cypher.analysis import free_vars
from kg.cypher.context import Context
from kg.cypher.evaluator import evaluate
from kg.cypher.textscan import SEP, joined
from kg.cypher.vector_agg import NotVectorizable

SCAN_ROWS = 2000  # from this many rows a string test searches the column's joined text (see textscan)
_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}


def equal(col: Any, v: Any, nodes: np.ndarray) -> np.ndarray:
    """Where the column's value at ``nodes`` ``=`` the constant ``v`` is true (Cypher: never across types)."""
    t = type(v)
    if v is None:
        return np.zeros(len(nodes), bool)
    if t is str:
        return col.is_str[nodes] & (col.obj[nodes] == v)
    if t is bool:
        return col.is_bool[nodes] & (col.obj[nodes] == v)
    if t in (int, float):
        if not col.exact or (t is int and abs(v) > 2**53):
            raise NotVectorizable
        return col.is_num[nodes] & (col.num[nodes] == v)
    raise NotVectorizable


class Pred:
    """Vectorised predicates: (true, false) masks over the frame's rows; null is neither."""

    def __init__(self, frame: Any, ctx: Context) -> None:  # a vector._Frame
        self.frame, self.ctx, self.topo = frame, ctx, frame.topo

    def truth(self, e: A.Expr) -> tuple[np.ndarray, np.ndarray]:
        var = _label_test_of(e)
        if var is not None and var in self.frame.vars:
            # Labels alone decide it (``e:A OR e:B ...``): decide it once per label, then look each row up.
            t = self._per_label(e)[self.topo.label_code[self.frame.vars[var]]]
            return t, ~t
        if isinstance(e, A.BoolOp) and e.op in ("AND", "OR"):
            parts = [self.truth(x) for x in e.operands]
            t, f = parts[0]
            for t2, f2 in parts[1:]:
                t, f = (t & t2, f | f2) if e.op == "AND" else (t | t2, f & f2)
            return t, f
        if isinstance(e, A.Unary) and e.op == "NOT":
            t, f = self.truth(e.operand)
            return f, t
        if isinstance(e, A.HasLabels) and isinstance(e.subject, A.Var) and e.subject.name in self.frame.vars:
            nodes = self.frame.vars[e.subject.name]
            t = np.ones(len(nodes), bool)
            for group in e.labels:
                t &= self.topo.label_mask(group)[self.topo.label_code[nodes]]
            return t, ~t
        if isinstance(e, A.Compare) and len(e.ops) == 1:
            return self._compare(e.ops[0], *e.operands)
        if isinstance(e, A.IsNull):
            col, nodes = self._column(e.operand)
            t = col.is_none[nodes] != e.negated
            return t, ~t
        if isinstance(e, A.Binary) and e.op in ("STARTS", "ENDS", "CONTAINS"):
            col, nodes = self._column(e.left)
            s = self._const(e.right)
            n = len(nodes)
            if type(s) is not str:
                return np.zeros(n, bool), np.zeros(n, bool)
            test = {"STARTS": str.startswith, "ENDS": str.endswith, "CONTAINS": str.__contains__}[e.op]
            ok = col.is_str[nodes]
            hit = np.zeros(n, bool)
            where = np.nonzero(ok)[0]
            text = joined(col) if len(where) >= SCAN_ROWS and s and SEP not in s else None
            if text is not None:
                hit[where] = text.hits(e.op, s)[nodes[where]]
            else:
                hit[where] = np.fromiter(map(test, col.obj[nodes[where]].tolist(), repeat(s)), bool, len(where))
            return hit, ok & ~hit
        raise NotVectorizable

    def _per_label(self, e: A.Expr) -> np.ndarray:
        """Per label code: is ``e`` (label tests of one variable under AND/OR/NOT) true for a node with it."""
        if isinstance(e, A.BoolOp):
            parts = [self._per_label(x) for x in e.operands]
            return np.logical_and.reduce(parts) if e.op == "AND" else np.logical_or.reduce(parts)
        if isinstance(e, A.Unary):
            return ~self._per_label(e.operand)
        assert isinstance(e, A.HasLabels)
        t = np.ones(len(self.topo.labels), bool)
        for group in e.labels:
            t &= self.topo.label_mask(group)
        return t

    def _const(self, e: A.Expr) -> Any:
        if free_vars(e) or not isinstance(e, A.Literal | A.Param):
            raise NotVectorizable
        return evaluate(e, {}, self.ctx)

    def _column(self, e: A.Expr) -> tuple[Any, np.ndarray]:
        if isinstance(e, A.Prop) and isinstance(e.subject, A.Var) and e.subject.name in self.frame.vars:
            return self.topo.column(e.key), self.frame.vars[e.subject.name]
        raise NotVectorizable

    def _compare(self, op: str, a: A.Expr, b: A.Expr) -> tuple[np.ndarray, np.ndarray]:
        vars_ = self.frame.vars
        if isinstance(a, A.Var) and isinstance(b, A.Var) and a.name in vars_ and b.name in vars_ and op in ("=", "<>"):
            eq = vars_[a.name] == vars_[b.name]
            return (eq, ~eq) if op == "=" else (~eq, eq)
        if not isinstance(a, A.Prop):
            a, b, op = b, a, _FLIP[op]
        col, nodes = self._column(a)
        v = self._const(b)
        n = len(nodes)
        if v is None:
            return np.zeros(n, bool), np.zeros(n, bool)
        if op in ("=", "<>"):
            eq = equal(col, v, nodes)
            null = col.is_none[nodes]
            return (eq, ~eq & ~null) if op == "=" else (~eq & ~null, eq)
        fn, t = _CMP[op], type(v)
        if t is str:
            ok = col.is_str[nodes]
            res = np.zeros(n, bool)
            where = np.nonzero(ok)[0]
            res[where] = fn(col.obj[nodes[where]].astype(str), v)
        elif t in (int, float):
            if not col.exact or (t is int and abs(v) > 2**53) or v != v:
                raise NotVectorizable
            num = col.num[nodes]
            ok = col.is_num[nodes] & ~np.isnan(num)
            res = fn(num, v) & ok
        else:
            raise NotVectorizable
        return res, ok & ~res


def _label_test_of(e: A.Expr) -> str | None:
    """The variable when ``e`` is label tests of that one variable joined by AND/OR/NOT, else None."""
    if isinstance(e, A.HasLabels):
        return e.subject.name if isinstance(e.subject, A.Var) else None
    if isinstance(e, A.Unary) and e.op == "NOT":
        return _label_test_of(e.operand)
    if isinstance(e, A.BoolOp) and e.op in ("AND", "OR"):
        names = {_label_test_of(x) for x in e.operands}
        return names.pop() if len(names) == 1 else None
    return None
