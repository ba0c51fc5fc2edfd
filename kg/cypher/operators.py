"""Cypher operators on plain values: arithmetic, string concatenation, IN, comparisons."""

from __future__ import annotations

import math
from typing import Any

from kg.cypher.context import charge
from kg.cypher.conversions import to_string
from kg.cypher.errors import CypherArgumentError, CypherTypeError
from kg.cypher.temporal import Temporal
from kg.cypher.temporal_ops import arithmetic as temporal_arithmetic
from kg.cypher.values import compare, equals, is_list, is_number, type_name

_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


def check_int(v: Any) -> Any:
    """`v`, if it is not an integer beyond 64 bits (Cypher integers do not grow like Python's)."""
    if type(v) is int and not _INT_MIN <= v <= _INT_MAX:
        raise CypherArgumentError("integer overflow (results must fit in 64 bits)")
    return v


def arithmetic(op: str, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if is_number(a) and is_number(b):
        both_int = type(a) is int and type(b) is int
        if op == "+":
            return check_int(a + b)
        if op == "-":
            return check_int(a - b)
        if op == "*":
            return check_int(a * b)
        if op == "^":
            try:
                return math.pow(a, b)
            except ValueError:
                return math.nan
            except OverflowError:
                return math.inf
        if both_int:
            if b == 0:
                raise CypherArgumentError(f"division by zero in {a} {op} {b}")
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # truncate towards zero
            return check_int(q) if op == "/" else a - b * q
        if b == 0:
            if op == "%" or a == 0 or (isinstance(a, float) and math.isnan(a)):
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b if op == "/" else math.fmod(a, b)
    if op == "+":
        if is_list(a):
            charge(len(a) + (len(b) if is_list(b) else 1))
            return list(a) + (list(b) if is_list(b) else [b])
        if is_list(b):
            charge(len(b) + 1)
            return [a] + list(b)
        if isinstance(a, str) and (isinstance(b, str) or is_number(b)):
            b = to_string(b)
            charge(len(a) + len(b))
            return a + b
        if isinstance(b, str) and is_number(a):
            a = to_string(a)
            charge(len(a) + len(b))
            return a + b
    if isinstance(a, Temporal) or isinstance(b, Temporal):
        return temporal_arithmetic(op, a, b)
    raise CypherTypeError(f"cannot apply {op} to {type_name(a)} and {type_name(b)}")


def in_list(a: Any, b: Any) -> bool | None:
    if b is None:
        return None
    if not is_list(b):
        raise CypherTypeError(f"IN expects a list on its right, got {type_name(b)}")
    saw_null = False
    for item in b:
        eq = equals(a, item)
        if eq:
            return True
        if eq is None:
            saw_null = True
    return None if saw_null else False


def compare_values(op: str, a: Any, b: Any) -> bool | None:
    if op == "=":
        return equals(a, b)
    if op == "<>":
        eq = equals(a, b)
        return None if eq is None else not eq
    c = compare(a, b)
    if c is None:
        # NaN is unordered: every ordering comparison with it is false, not null.
        return False if _nan_vs_number(a, b) or _nan_vs_number(b, a) else None
    return c < 0 if op == "<" else c > 0 if op == ">" else c <= 0 if op == "<=" else c >= 0


def _nan_vs_number(a: Any, b: Any) -> bool:
    return isinstance(a, float) and math.isnan(a) and is_number(b)
