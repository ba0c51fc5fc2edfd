"""Per-query execution state shared by evaluation and matching: graph, parameters, deadline."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import networkx as nx

from kg.cypher import ast as A
from kg.cypher.errors import CypherError, CypherTimeout

Record = dict[str, Any]
MatchFn = Callable[[tuple[A.PathPattern, ...], A.Expr | None, Record], Iterator[Record]]


class Context:
    """Per-query state: graph, parameters, deadline, current aggregate values, pattern matcher."""

    def __init__(self, graph: nx.MultiDiGraph, params: dict[str, Any], timeout_s: float) -> None:
        self.graph = graph
        self.params = params
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.ticks = 0
        self.agg_values: dict[int, Any] = {}
        self.match: MatchFn = _no_matcher
        self.regexes: dict[str, re.Pattern[str]] = {}
        self.plans: dict[Any, Any] = {}  # match plans, keyed by pattern identity and bound names

    def tick(self) -> None:
        # Reading the clock is comparatively slow, so only every 512 units of work.
        self.ticks += 1
        if not self.ticks & 511 and time.monotonic() > self.deadline:
            raise CypherTimeout(f"query exceeded its time limit of {self.timeout_s:g} s")


def _no_matcher(patterns: Any, where: Any, rec: Record) -> Iterator[Record]:
    raise CypherError("pattern matching is not available here")
