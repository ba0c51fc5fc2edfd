"""Match planning: picks the most selective anchor node per pattern and orders expansions/filters."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kg.cypher import ast as A
from kg.cypher.analysis import conjuncts, free_vars
from kg.cypher.context import Context
from kg.cypher.errors import UnsupportedCypher
from kg.cypher.index import get_index
from kg.cypher.paths import FLIP

# Guessed candidate counts used to rank anchors before any label counts are known.
_COST_BOUND, _COST_KEY, _COST_KEYS, _COST_PROP = 0, 1, 5, 20


@dataclass(frozen=True, slots=True)
class Op:
    kind: str  # bind | expand | shortest | path | filter
    pi: int = 0
    idx: int = 0  # node index (bind) or relationship index (expand)
    src: int = 0
    dst: int = 0
    direction: str = "out"  # traversal direction, flipped when expanding right-to-left
    bound: bool = False  # the node (bind) / destination node (expand) is already bound
    rel_bound: bool = False  # the relationship variable comes from an earlier clause
    hint: tuple[Any, ...] | None = None
    expr: A.Expr | None = None


def _where_hints(where: A.Expr | None) -> dict[str, list[tuple[str, str, A.Expr]]]:
    """`n.k = e`, `id(n) = e`, `n.id IN e` conjuncts, by variable: (kind, key, expr)."""
    hints: dict[str, list[tuple[str, str, A.Expr]]] = {}
    for c in conjuncts(where):
        if isinstance(c, A.Compare) and c.ops == ("=",):
            pairs = [c.operands, c.operands[::-1]]
        elif isinstance(c, A.Binary) and c.op == "IN":
            pairs = [(c.left, c.right)]
        else:
            continue
        for lhs, rhs in pairs:
            kind = "keys" if isinstance(c, A.Binary) else "prop"
            if isinstance(lhs, A.Prop) and isinstance(lhs.subject, A.Var):
                var, key = lhs.subject.name, lhs.key
            elif (isinstance(lhs, A.FuncCall) and lhs.name in ("id", "elementid") and len(lhs.args) == 1
                  and isinstance(lhs.args[0], A.Var)):
                var, key = lhs.args[0].name, ""  # "" marks the node key itself
            else:
                continue
            if kind == "prop" and key in ("id", ""):
                kind = "key"  # kg convention: the node key is the `id` property (verified on use)
            if kind == "keys" and key not in ("id", ""):
                continue
            hints.setdefault(var, []).append((kind, key, rhs))
    return hints


class Planner:
    """Chooses, for each pattern, the cheapest node to start from and the order of expansions."""

    def __init__(self, ctx: Context, patterns: tuple[A.PathPattern, ...], where: A.Expr | None,
                 outer: Iterable[str]) -> None:
        self.ctx = ctx
        self.patterns = patterns
        self.hints = _where_hints(where)
        self.bound = set(outer)
        self.outer = frozenset(self.bound)
        self.ops: list[Op] = []
        remaining = list(range(len(patterns)))
        while remaining:
            regular = [pi for pi in remaining if not patterns[pi].shortest] or remaining
            pi, idx = self._choose(regular)
            remaining.remove(pi)
            self._plan_pattern(pi, idx)
        self._schedule_filters(where)

    def _node_options(self, npat: A.NodePattern) -> list[tuple[int, tuple[Any, ...] | None]]:
        if npat.var is not None and npat.var in self.bound:
            return [(_COST_BOUND, None)]
        options: list[tuple[int, tuple[Any, ...] | None]] = []
        candidates = list(self.hints.get(npat.var, [])) if npat.var else []
        if isinstance(npat.props, A.MapLit):
            kinds = {"id": "key"}
            candidates += [(kinds.get(k, "prop"), k, e) for k, e in npat.props.items]
        for kind, key, expr in candidates:
            if free_vars(expr) <= self.bound:
                cost = {"key": _COST_KEY, "keys": _COST_KEYS, "prop": _COST_PROP}[kind]
                options.append((cost, (kind, key, expr)))
        return options

    def _label_option(self, npat: A.NodePattern) -> tuple[int, tuple[Any, ...] | None]:
        if not npat.labels:
            return (len(self.ctx.graph) + 1, None)
        index = get_index(self.ctx.graph)
        counts = [(sum(index.label_count(self.ctx.graph, lb) for lb in g), g) for g in npat.labels]
        count, group = min(counts)
        return (count, ("label", group))

    def _choose(self, candidates: list[int]) -> tuple[int, int]:
        best: tuple[int, int, int] | None = None
        for pi in candidates:
            for idx, npat in enumerate(self.patterns[pi].nodes):
                for cost, _ in self._node_options(npat):
                    if best is None or cost < best[0]:
                        best = (cost, pi, idx)
        if best is None or best[0] > _COST_KEYS:
            for pi in candidates:
                for idx, npat in enumerate(self.patterns[pi].nodes):
                    cost, _ = self._label_option(npat)
                    if best is None or cost < best[0]:
                        best = (cost, pi, idx)
        assert best is not None
        return best[1], best[2]

    def _bind(self, pi: int, idx: int) -> None:
        npat = self.patterns[pi].nodes[idx]
        is_bound = npat.var is not None and npat.var in self.bound
        hint = None
        if not is_bound:
            options = self._node_options(npat)
            if not options or min(o[0] for o in options) > _COST_KEYS:
                options.append(self._label_option(npat))  # label counts may build the index
            hint = min(options, key=lambda o: o[0])[1]
        self.ops.append(Op("bind", pi, idx, bound=is_bound, hint=hint))
        if npat.var:
            self.bound.add(npat.var)

    def _expand(self, pi: int, rel_idx: int, src: int, dst: int) -> None:
        pattern = self.patterns[pi]
        rp = pattern.rels[rel_idx]
        dst_var = pattern.nodes[dst].var
        direction = rp.direction if dst > src else FLIP[rp.direction]
        rel_bound = rp.var is not None and rp.var in self.bound
        self.ops.append(Op("expand", pi, rel_idx, src, dst, direction,
                           bound=dst_var is not None and dst_var in self.bound, rel_bound=rel_bound))
        self.bound.update(v for v in (rp.var, dst_var) if v)

    def _bind_end(self, pi: int, rel_idx: int, dst: int) -> None:
        """Bind the far end of a variable-length relationship first when one key names it: the walk then has a
        fixed end it can steer to. One candidate at most, so rows come in the same order."""
        npat = self.patterns[pi].nodes[dst]
        if not self.patterns[pi].rels[rel_idx].varlen or npat.var is None or npat.var in self.bound:
            return
        if any(hint is not None and hint[0] == "key" for _, hint in self._node_options(npat)):
            self._bind(pi, dst)

    def _plan_pattern(self, pi: int, start: int) -> None:
        pattern = self.patterns[pi]
        if pattern.shortest:
            self._bind(pi, 0)
            self._bind(pi, 1)
            self.ops.append(Op("shortest", pi))
            if pattern.rels[0].var:
                self.bound.add(pattern.rels[0].var)
        else:
            self._bind(pi, start)
            for j in range(start, len(pattern.rels)):
                self._bind_end(pi, j, j + 1)
                self._expand(pi, j, j, j + 1)
            for j in range(start - 1, -1, -1):
                self._bind_end(pi, j, j)
                self._expand(pi, j, j + 1, j)
        if pattern.var:
            self.ops.append(Op("path", pi))
            self.bound.add(pattern.var)

    def _schedule_filters(self, where: A.Expr | None) -> None:
        introduced = self.bound - self.outer
        guarded: set[str] = set()
        for p in self.patterns:
            if p.shortest:
                guarded.update(v for v in (p.var, p.rels[0].var) if v)
        pending = [(c, free_vars(c) & introduced) for c in conjuncts(where)]
        for _c, needed in pending:
            if needed & guarded:
                raise UnsupportedCypher("WHERE conditions on a shortestPath's path or relationships")
        ops: list[Op] = []
        seen: set[str] = set()
        for op in [Op("start"), *self.ops]:
            if op.kind != "start":
                ops.append(op)
                seen |= self._binds(op)
            ready = [item for item in pending if item[1] <= seen]
            pending = [item for item in pending if not item[1] <= seen]
            ops.extend(Op("filter", expr=c) for c, _ in ready)
        ops.extend(Op("filter", expr=c) for c, _ in pending)
        self.ops = ops

    def _binds(self, op: Op) -> set[str]:
        pattern = self.patterns[op.pi]
        if op.kind == "bind":
            names = [pattern.nodes[op.idx].var]
        elif op.kind == "expand":
            names = [pattern.rels[op.idx].var, pattern.nodes[op.dst].var]
        elif op.kind == "shortest":
            names = [pattern.rels[0].var]
        else:
            names = [pattern.var]
        return {n for n in names if n}
