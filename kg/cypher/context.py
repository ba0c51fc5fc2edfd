"""Per-query execution state shared by evaluation and matching: graph, parameters, deadline, and the `Engine`
that expression evaluation calls back through for patterns and subqueries."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Protocol

import networkx as nx

from kg.cypher import ast as A
from kg.cypher.errors import CypherError, CypherTimeout

Record = dict[str, Any]

# Memory bounds: the time limit alone cannot stop `reduce(s = 'x', i IN range(1, 40) | s + s)`, which
# doubles a string 40 times in a few hundred units of work. Sizes are in characters or list elements.
MAX_VALUE_SIZE = 10_000_000  # one string or list
MAX_BUILT_SIZE = 50_000_000  # everything large that one query builds
_CHARGE_FROM = 256  # smaller values are bounded well enough by the time limit
# A row kept for ORDER BY or DISTINCT, or a value kept by collect(), costs some tens of list elements of memory
# (its dict, key tuple and values); these are charged in batches of ROW_BATCH.
ROW_WEIGHT = 64
ROW_BATCH = 1024
_ACTIVE: ContextVar[Context | None] = ContextVar("kg_cypher_context", default=None)


class Engine(Protocol):
    """What expression evaluation needs from the query engine: pattern predicates and comprehensions, and
    EXISTS/COUNT subqueries. The evaluator calls these through `Context.engine` rather than importing the
    matcher and executor, which import the evaluator; `kg.cypher.executor.execute` installs its `Executor`."""

    def match(self, patterns: tuple[A.PathPattern, ...], where: A.Expr | None, rec: Record) -> Iterator[Record]:
        """Every extension of ``rec`` that matches all ``patterns`` and ``where``."""
        ...

    def subquery(self, query: A.SingleQuery, rec: Record) -> Iterator[Record]:
        """Rows of an EXISTS/COUNT { ... } subquery run for the outer record ``rec``."""
        ...


class Detached:
    """The engine of a context that no query runs in: patterns and subqueries cannot be evaluated."""

    def match(self, patterns: tuple[A.PathPattern, ...], where: A.Expr | None, rec: Record) -> Iterator[Record]:
        raise CypherError("pattern matching is not available here")

    def subquery(self, query: A.SingleQuery, rec: Record) -> Iterator[Record]:
        raise CypherError("subqueries are not available here")


class Context:
    """Per-query state: graph, parameters, deadline, current aggregate values, the engine to call back."""

    def __init__(self, graph: nx.MultiDiGraph, params: dict[str, Any], timeout_s: float) -> None:
        self.graph = graph
        self.params = params
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.ticks = 0
        self.agg_values: dict[int, Any] = {}
        self.engine: Engine = Detached()
        self.regexes: dict[str, Any] = {}  # compiled RE2 patterns (kg.cypher.regex)
        self.plans: dict[Any, Any] = {}  # match plans, keyed by pattern identity and bound names
        self.built = 0  # sizes charged by `charge`
        self.now_ns: int | None = None  # the query's one clock instant (kg.cypher.temporal_build.query_now)

    def tick(self) -> None:
        # Reading the clock is comparatively slow, so only every 512 units of work.
        self.ticks += 1
        if not self.ticks & 511 and time.monotonic() > self.deadline:
            raise CypherTimeout(f"query exceeded its time limit of {self.timeout_s:g} s")


def charge(size: int, weight: int = 1) -> None:
    """Account for a string or list of ``size`` characters or elements about to be built by the running query
    (``weight`` per element against the query's total); raises CypherError past the size limits and
    CypherTimeout past the deadline (a big value is slow work)."""
    if size < _CHARGE_FROM:
        return
    if size > MAX_VALUE_SIZE:
        raise CypherError(f"value too large: {size:,} characters or elements (limit {MAX_VALUE_SIZE:,})")
    ctx = _ACTIVE.get()
    if ctx is None:
        return
    ctx.built += size * weight
    if ctx.built > MAX_BUILT_SIZE:
        raise CypherError(f"query builds too much data: over {MAX_BUILT_SIZE:,} characters or list elements")
    if time.monotonic() > ctx.deadline:
        raise CypherTimeout(f"query exceeded its time limit of {ctx.timeout_s:g} s")


def charge_rows(kept: int) -> None:
    """Call with the running count of rows (or values) a sort, DISTINCT or collect() holds: every ROW_BATCH
    of them is charged, so a query that keeps millions fails with a clear error instead of growing the process."""
    if kept and not kept % ROW_BATCH:
        charge(ROW_BATCH, ROW_WEIGHT)


def activate(ctx: Context | None) -> Any:
    """Make ``ctx`` the query that `charge` accounts to; returns a token for ``_ACTIVE.reset``."""
    return _ACTIVE.set(ctx)


def deactivate(token: Any) -> None:
    _ACTIVE.reset(token)


def active() -> Context | None:
    """The context of the query running now (made so by `activate`), or None outside a query."""
    return _ACTIVE.get()
