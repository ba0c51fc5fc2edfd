"""Scalar (non-aggregating) Cypher functions; names are matched case-insensitively."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import networkx as nx

from kg.cypher.context import charge
from kg.cypher.conversions import bad_argument, round_half_up, to_boolean, to_float, to_integer, to_string
from kg.cypher.errors import CypherArgumentError, CypherError
from kg.cypher.temporal_ops import TEMPORAL_FUNCTIONS
from kg.cypher.values import TYPE_ATTR, Node, Path, Rel, is_list, is_number, node_labels, properties, rel_attrs

Fn = Callable[[nx.MultiDiGraph, list[Any]], Any]
AGGREGATES = frozenset({
    "count", "collect", "sum", "avg", "min", "max", "stdev", "stdevp", "percentiledisc",
    "percentilecont",
})


def _id(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    v = a[0]
    if v is None:
        return None
    if isinstance(v, Node):
        return v.id
    if isinstance(v, Rel):
        return v.key
    raise bad_argument("id", v, "a node or relationship")


def _labels(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    v = a[0]
    if v is None:
        return None
    if not isinstance(v, Node):
        raise bad_argument("labels", v, "a node")
    return list(node_labels(g._node[v.id]))


def _type(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    v = a[0]
    if v is None:
        return None
    if not isinstance(v, Rel):
        raise bad_argument("type", v, "a relationship")
    return rel_attrs(g, v).get(TYPE_ATTR)


def _properties(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    v = a[0]
    if v is None:
        return None
    if isinstance(v, (Node, Rel)):
        return properties(g, v)
    if isinstance(v, dict):
        return dict(v)
    raise bad_argument("properties", v, "a node, relationship or map")


def _keys(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    props = _properties(g, a)
    return None if props is None else list(props)


def _size(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    v = a[0]
    if v is None:
        return None
    if isinstance(v, str) or is_list(v):
        return len(v)
    raise bad_argument("size", v, "a list or string")


def _length(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    v = a[0]
    if isinstance(v, Path):
        return len(v.rels)
    return _size(g, a)


def _path_part(name: str, attr: str) -> Fn:
    def fn(g: nx.MultiDiGraph, a: list[Any]) -> Any:
        v = a[0]
        if v is None:
            return None
        if not isinstance(v, Path):
            raise bad_argument(name, v, "a path")
        return list(getattr(v, attr))
    return fn


def _end_node(name: str, attr: str) -> Fn:
    def fn(g: nx.MultiDiGraph, a: list[Any]) -> Any:
        v = a[0]
        if v is None:
            return None
        if not isinstance(v, Rel):
            raise bad_argument(name, v, "a relationship")
        return Node(getattr(v, attr))
    return fn


def _list_fn(name: str, op: Callable[[Any], Any]) -> Fn:
    def fn(g: nx.MultiDiGraph, a: list[Any]) -> Any:
        v = a[0]
        if v is None:
            return None
        if not is_list(v):
            raise bad_argument(name, v, "a list")
        return op(list(v))
    return fn


def _range(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    if any(type(x) is not int for x in a):
        raise CypherArgumentError("range() expects integer arguments")
    start, end = a[0], a[1]
    step = a[2] if len(a) > 2 else 1
    if step == 0:
        raise CypherArgumentError("range() step must not be zero")
    if (end - start) // step > 10_000_000:
        raise CypherError("range() would produce more than 10,000,000 elements")
    out = range(start, end + (1 if step > 0 else -1), step)
    charge(len(out), weight=4)  # an int in a list takes about four times the memory of a character
    return list(out)


def _replace(s: str, old: str, new: str) -> str:
    if len(new) > len(old):  # only a growing replacement can blow up
        charge(len(s) + (s.count(old) if old else len(s) + 1) * (len(new) - len(old)))
    return s.replace(old, new)


def _str_fn(name: str, op: Callable[..., Any], nstr: int = 1) -> Fn:
    """`nstr` leading arguments must be strings; any null argument gives null."""
    def fn(g: nx.MultiDiGraph, a: list[Any]) -> Any:
        if any(x is None for x in a):
            return None
        for x in a[:nstr]:
            if not isinstance(x, str):
                raise bad_argument(name, x, "string arguments")
        return op(*a)
    return fn


def _substring(s: str, start: Any, length: Any = None) -> str:
    if type(start) is not int or start < 0 or (length is not None and (type(length) is not int or length < 0)):
        raise CypherArgumentError("substring() expects a non-negative integer start and length")
    return s[start:] if length is None else s[start : start + length]


def _left_right(side: str) -> Callable[[str, Any], str]:
    def op(s: str, n: Any) -> str:
        if type(n) is not int or n < 0:
            raise CypherArgumentError(f"{side}() expects a non-negative integer length")
        return s[:n] if side == "left" else (s[len(s) - n :] if n else "")
    return op


def _or_null(fn: Callable[[Any], Any]) -> Fn:
    def wrapped(g: nx.MultiDiGraph, a: list[Any]) -> Any:
        try:
            return fn(a[0])
        except CypherError:
            return None
    return wrapped


def _num_fn(name: str, op: Callable[..., Any]) -> Fn:
    def fn(g: nx.MultiDiGraph, a: list[Any]) -> Any:
        if any(x is None for x in a):
            return None
        for x in a:
            if not is_number(x):
                raise bad_argument(name, x, "a number")
        return op(*a)
    return fn


def _safe(op: Callable[[float], float]) -> Callable[[Any], float]:
    def fn(x: Any) -> float:
        try:
            return op(x)
        except (ValueError, ZeroDivisionError):
            # Java semantics: log(0) = -Infinity, sqrt(-1) = NaN.
            return -math.inf if x == 0 else math.nan
        except OverflowError:
            return math.inf
    return fn


def _sign(x: Any) -> int:
    return (x > 0) - (x < 0)


def _reverse(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    v = a[0]
    if v is None:
        return None
    if isinstance(v, str) or is_list(v):
        return v[::-1] if isinstance(v, str) else list(v)[::-1]
    raise bad_argument("reverse", v, "a list or string")


def _is_empty(g: nx.MultiDiGraph, a: list[Any]) -> Any:
    v = a[0]
    if v is None:
        return None
    if isinstance(v, (str, dict)) or is_list(v):
        return len(v) == 0
    raise bad_argument("isEmpty", v, "a list, map or string")


_TRIG: dict[str, Callable[[float], float]] = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "degrees": math.degrees, "radians": math.radians,
    "cot": lambda x: 1 / math.tan(x) if math.tan(x) else math.inf, "haversin": lambda x: (1 - math.cos(x)) / 2,
}
# name -> (function, min args, max args)
FUNCTIONS: dict[str, tuple[Fn, int, int]] = {
    "id": (_id, 1, 1), "elementid": (_id, 1, 1), "labels": (_labels, 1, 1), "type": (_type, 1, 1),
    "keys": (_keys, 1, 1), "properties": (_properties, 1, 1), "size": (_size, 1, 1),
    "length": (_length, 1, 1), "nodes": (_path_part("nodes", "nodes"), 1, 1),
    "relationships": (_path_part("relationships", "rels"), 1, 1),
    "startnode": (_end_node("startNode", "start"), 1, 1), "endnode": (_end_node("endNode", "end"), 1, 1),
    "head": (_list_fn("head", lambda v: v[0] if v else None), 1, 1),
    "last": (_list_fn("last", lambda v: v[-1] if v else None), 1, 1),
    "tail": (_list_fn("tail", lambda v: v[1:]), 1, 1), "range": (_range, 2, 3),
    "coalesce": (lambda g, a: next((x for x in a if x is not None), None), 1, 1 << 30),
    "tolower": (_str_fn("toLower", str.lower), 1, 1), "toupper": (_str_fn("toUpper", str.upper), 1, 1),
    "trim": (_str_fn("trim", str.strip), 1, 1), "ltrim": (_str_fn("lTrim", str.lstrip), 1, 1),
    "rtrim": (_str_fn("rTrim", str.rstrip), 1, 1),
    "split": (_str_fn("split", lambda s, d: s.split(d) if d else list(s), 2), 2, 2),
    "substring": (_str_fn("substring", _substring), 2, 3),
    "replace": (_str_fn("replace", _replace, 3), 3, 3),
    "left": (_str_fn("left", _left_right("left")), 2, 2),
    "right": (_str_fn("right", _left_right("right")), 2, 2),
    "reverse": (_reverse, 1, 1), "isempty": (_is_empty, 1, 1),
    "tostring": (lambda g, a: to_string(a[0]), 1, 1), "tointeger": (lambda g, a: to_integer(a[0]), 1, 1),
    "tofloat": (lambda g, a: to_float(a[0]), 1, 1), "toboolean": (lambda g, a: to_boolean(a[0]), 1, 1),
    "tostringornull": (_or_null(to_string), 1, 1), "tointegerornull": (_or_null(to_integer), 1, 1),
    "tofloatornull": (_or_null(to_float), 1, 1), "tobooleanornull": (_or_null(to_boolean), 1, 1),
    "abs": (_num_fn("abs", abs), 1, 1), "ceil": (_num_fn("ceil", lambda x: float(math.ceil(x))), 1, 1),
    "floor": (_num_fn("floor", lambda x: float(math.floor(x))), 1, 1),
    "round": (_num_fn("round", round_half_up), 1, 2), "sign": (_num_fn("sign", _sign), 1, 1),
    "sqrt": (_num_fn("sqrt", _safe(math.sqrt)), 1, 1), "log": (_num_fn("log", _safe(math.log)), 1, 1),
    "log10": (_num_fn("log10", _safe(math.log10)), 1, 1), "exp": (_num_fn("exp", _safe(math.exp)), 1, 1),
    **{name: (_num_fn(name, _safe(op)), 1, 1) for name, op in _TRIG.items()},
    "atan2": (_num_fn("atan2", lambda y, x: math.atan2(y, x)), 2, 2),
    "isnan": (_num_fn("isNaN", lambda x: isinstance(x, float) and math.isnan(x)), 1, 1),
    "rand": (lambda g, a: random.random(), 0, 0), "pi": (lambda g, a: math.pi, 0, 0),
    "e": (lambda g, a: math.e, 0, 0),
    "exists": (lambda g, a: a[0] is not None, 1, 1),
}
FUNCTIONS.update(TEMPORAL_FUNCTIONS)  # date(), duration.between(), ...: kg/cypher/temporal_ops.py
