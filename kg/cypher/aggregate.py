"""Aggregate function accumulators (count, collect, sum, avg, min, max, stDev, percentiles)."""

from __future__ import annotations

import math
from typing import Any

from kg.cypher import ast as A
from kg.cypher.context import charge_rows
from kg.cypher.errors import CypherArgumentError, CypherTypeError
from kg.cypher.values import hkey, is_number, sort_key, type_name


class Accumulator:
    """Folds the argument values of one aggregate call within one group."""

    def __init__(self, call: A.FuncCall) -> None:
        self.name = call.name
        self.star = call.star
        self.seen: set[Any] | None = set() if call.distinct else None
        self.count = 0
        self.values: list[Any] = []
        self.total: Any = 0
        self.best: Any = None
        self.param: Any = None

    def add(self, args: list[Any]) -> None:
        if self.star:
            self.count += 1
            return
        value = args[0]
        if value is None:
            return
        if self.seen is not None:
            key = hkey(value)
            if key in self.seen:
                return
            self.seen.add(key)
        self.count += 1
        name = self.name
        if name == "count":
            return
        if name == "collect":
            self.values.append(value)
            charge_rows(len(self.values))
        elif name in ("min", "max"):
            if self.best is None:
                self.best = value
            else:
                new, cur = sort_key(value), sort_key(self.best)
                if (new < cur) if name == "min" else (new > cur):
                    self.best = value
        else:
            if not is_number(value):
                raise CypherTypeError(f"{name}() expects numbers, got {type_name(value)}")
            if name in ("sum", "avg"):
                self.total += value
            else:
                self.values.append(value)
                if name.startswith("percentile") and self.param is None:
                    self.param = _percentile(args[1], name)

    def result(self) -> Any:
        name = self.name
        if name == "count":
            return self.count
        if name == "collect":
            return list(self.values)
        if name == "sum":
            return self.total
        if name == "avg":
            return self.total / self.count if self.count else None
        if name in ("min", "max"):
            return self.best
        if name in ("stdev", "stdevp"):
            n = len(self.values)
            if n < (2 if name == "stdev" else 1):
                return 0.0
            mean = sum(self.values) / n
            ss = sum((x - mean) ** 2 for x in self.values)
            return math.sqrt(ss / (n - 1 if name == "stdev" else n))
        if not self.values:
            return None
        ordered = sorted(self.values)
        p = self.param
        if name == "percentiledisc":
            idx = max(0, math.ceil(p * len(ordered)) - 1) if p > 0 else 0
            return ordered[min(idx, len(ordered) - 1)]
        pos = p * (len(ordered) - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def _percentile(p: Any, name: str) -> float:
    if not is_number(p) or not 0 <= p <= 1:
        raise CypherArgumentError(f"{name}() needs a percentile between 0.0 and 1.0, got {p!r}")
    return float(p)
