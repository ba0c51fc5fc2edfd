"""Type conversions shared by Cypher functions and operators (toString, toInteger, round, ...)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from kg.cypher.errors import CypherError, CypherTypeError
from kg.cypher.temporal import Temporal
from kg.cypher.values import is_number, type_name


def bad_argument(fn: str, v: Any, want: str) -> CypherError:
    return CypherTypeError(f"{fn}() expects {want}, got {type_name(v)}")


def to_string(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if is_number(v):
        f = float(v)
        if math.isnan(f):
            return "NaN"
        if math.isinf(f):
            return "Infinity" if f > 0 else "-Infinity"
        return repr(f)
    if isinstance(v, Temporal):
        return str(v)
    raise bad_argument("toString", v, "a string, number, boolean or temporal value")


def to_integer(v: Any) -> Any:
    if v is None or type(v) is int:
        return v
    if isinstance(v, bool):
        return int(v)
    if is_number(v):
        return None if math.isnan(v) or math.isinf(v) else int(v)
    if isinstance(v, str):
        s = v.strip()
        try:
            return int(s)
        except ValueError:
            f = to_float(s)
            return None if f is None or math.isnan(f) or math.isinf(f) else int(f)
    raise bad_argument("toInteger", v, "a string, number or boolean")


def to_float(v: Any) -> Any:
    if v is None:
        return None
    if is_number(v) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        if "_" in v:
            return None
        try:
            return float(v.strip())
        except ValueError:
            return None
    raise bad_argument("toFloat", v, "a string or number")


def to_boolean(v: Any) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str):
        return {"true": True, "false": False}.get(v.strip().lower())
    if type(v) is int:
        return v != 0
    raise bad_argument("toBoolean", v, "a string, integer or boolean")


def round_half_up(x: Any, precision: Any = None) -> float:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return x
    if precision is None:
        return float(math.floor(x + 0.5))  # Java Math.round: halves go towards +infinity
    if type(precision) is not int:
        raise CypherTypeError("round() precision must be an integer")
    try:
        return float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-precision), rounding=ROUND_HALF_UP))
    except InvalidOperation:
        return float(x)
