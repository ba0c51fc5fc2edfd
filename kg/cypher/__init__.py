"""Read-only Cypher engine over a NetworkX MultiDiGraph; entry point `run_query`."""

from __future__ import annotations

import functools
import gc
import time
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from kg.cypher.context import Context, activate, deactivate
from kg.cypher.errors import CypherError, CypherSyntaxError, CypherTimeout, CypherWriteError, UnsupportedCypher
from kg.cypher.executor import execute
from kg.cypher.index import build_index, invalidate_index
from kg.cypher.parser import parse_read_only
from kg.cypher.readonly import check_read_only, is_read_only
from kg.cypher.values import Node, Path, Rel, to_json

MAX_RESULT_SIZE = 1_000_000  # values (and 100-character pieces of strings) in one result, all rows together

__all__ = [
    "CypherError", "CypherResult", "CypherSyntaxError", "CypherTimeout", "CypherWriteError",
    "UnsupportedCypher", "build_index", "check_read_only", "invalidate_index", "is_read_only",
    "run_query",
]


@dataclass
class CypherResult:
    """Query output: column names, JSON-ready rows, and whether rows were cut at max_rows."""

    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    truncated: bool = False


def run_query(
    graph: nx.MultiDiGraph,
    query: str,
    parameters: dict[str, Any] | None = None,
    *,
    max_rows: int = 1000,
    timeout_s: float = 10.0,
) -> CypherResult:
    """Run a read-only Cypher `query` against `graph`; never modifies the graph.

    Graph conventions: node key = node id; the node attribute `label` is the node's label (a tuple of
    labels for a node with several) and the edge attribute `type` the relationship type (both reserved,
    not properties); every other attribute is a property. `(n:A|B)` matches either label, `(n:A:B)`
    needs both. `-[*]-` explores at most `kg.cypher.paths.UNBOUNDED_HOPS` (10) hops and
    raises UnsupportedCypher rather than drop longer walks. Write clauses raise CypherWriteError,
    features outside the supported subset UnsupportedCypher, a run past `timeout_s`
    CypherTimeout. At most `max_rows` rows are returned; `truncated` tells if more existed.
    Label/property indexes are cached per graph: call `invalidate_index(graph)` after mutating it.
    """
    if not isinstance(graph, nx.MultiDiGraph):
        raise CypherError(f"run_query needs a networkx.MultiDiGraph, got {type(graph).__name__}")
    if type(max_rows) is not int or max_rows < 0:
        raise CypherError(f"max_rows must be a non-negative integer, got {max_rows!r}")
    try:
        parsed = _checked_parse(query) if len(query) <= _CACHED_QUERY_CHARS else parse_read_only(query)
    except RecursionError:
        raise CypherSyntaxError("query is nested too deeply to parse") from None
    ctx = Context(graph, dict(parameters or {}), timeout_s)
    token = activate(ctx)
    # A query makes many short-lived objects and no cycles worth collecting mid-query; a collection triggered
    # by them would walk every tracked object of a large graph (profiles showed 40 % of query time).
    collecting = gc.isenabled()
    gc.disable()
    young = gc.get_count()[0]
    try:
        columns, rows = execute(parsed, ctx)
        out: list[list[Any]] = []
        truncated = False
        budget = [MAX_RESULT_SIZE]
        for row in rows:
            if len(out) >= max_rows:
                truncated = True
                break
            if time.monotonic() > ctx.deadline:
                raise CypherTimeout(f"query exceeded its time limit of {timeout_s:g} s")
            for v in row:
                _spend(v, budget)
            out.append([to_json(v, graph) for v in row])
    except RecursionError:
        raise CypherError("query is nested too deeply to evaluate") from None
    finally:
        if collecting:
            _settle(gc.get_count()[0] - young)
            gc.enable()
        deactivate(token)
    return CypherResult(columns, out, truncated)


# Queries leave long-lived objects behind: the indexes and columns they build, the edges a snapshot decodes for
# them. Left in the collector's generations, they make each full collection walk them all (0.75 s at 20k
# abstracts, landing in whichever query allocates next); once this many have piled up they are frozen as the
# graph is (after one collection, so no garbage is frozen with them).
FREEZE_AFTER = 100_000
_piled = [0]


def _settle(left: int) -> None:
    """Count the objects this query left (with collection off, the growth of the young generation's count)."""
    _piled[0] += left
    if _piled[0] >= FREEZE_AFTER:
        _piled[0] = 0
        gc.collect()
        gc.freeze()


# The same query text comes again and again (API clients, parameters apart): tokenizing and parsing it is then
# most of a lookup's time. The AST is immutable, so one parse serves every run.
_CACHED_QUERY_CHARS = 4096
_checked_parse = functools.lru_cache(maxsize=512)(parse_read_only)


def _spend(v: Any, budget: list[int]) -> None:
    """Count ``v`` against the result budget before converting it: a list that holds the same big list many
    times is small in memory but huge as JSON. Stops walking as soon as the budget is spent."""
    budget[0] -= 1 + (len(v) // 100 if isinstance(v, str) else 0)
    if budget[0] < 0:
        raise CypherError(f"result too large: over {MAX_RESULT_SIZE:,} values; return fewer rows or smaller values")
    if isinstance(v, dict):
        for x in v.values():
            _spend(x, budget)
    elif isinstance(v, list | tuple):
        for x in v:
            _spend(x, budget)
    elif isinstance(v, Path):
        budget[0] -= 10 * (len(v.nodes) + len(v.rels))
    elif isinstance(v, Node | Rel):
        budget[0] -= 10  # a handful of properties
