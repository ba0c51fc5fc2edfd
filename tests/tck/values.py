"""TCK value semantics: parse the expected-value notation and bring kg results to the same canonical form."""

from __future__ import annotations

import math
import re
from typing import Any

import networkx as nx

from kg.cypher.temporal import Temporal
from kg.cypher.values import LABEL_ATTR, TYPE_ATTR, Node, Path, Rel, rel_attrs

# Canonical values are nested tuples that compare with `==`: ("int", 1) differs from ("float", 1.0),
# nodes and relationships compare by labels/type and properties (the TCK never checks identities).
Canon = tuple[Any, ...]

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<num>-?(?:0x[0-9a-fA-F]+|0o[0-7]+|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?))
    | (?P<word>-?[A-Za-z_][A-Za-z0-9_]*|`[^`]*`)
    | (?P<op><-|->|[-()\[\]{}:,<>])
    )""",
    re.VERBOSE,
)
_ESC = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "'": "'", '"': '"', "\\": "\\"}


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise ValueError(f"cannot read TCK value {text!r} at {pos}")
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind)))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str]:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else ("eof", "")

    def take(self, value: str | None = None) -> str:
        kind, tok = self.peek()
        if value is not None and tok != value:
            raise ValueError(f"expected {value!r} in TCK value {self.text!r}, found {tok!r}")
        self.i += 1
        return tok

    def at(self, value: str) -> bool:
        return self.peek()[1] == value

    def value(self) -> Canon:
        kind, tok = self.peek()
        if kind == "str":
            self.take()
            return ("str", _unquote(tok))
        if kind == "num":
            self.take()
            return _number(tok)
        if kind == "word":
            self.take()
            low = tok.lower()
            if low == "null":
                return ("null",)
            if low in ("true", "false"):
                return ("bool", low == "true")
            if low in ("nan", "-nan"):
                return ("float", "NaN")
            if low in ("inf", "infinity"):
                return ("float", math.inf)
            if low in ("-inf", "-infinity"):
                return ("float", -math.inf)
            raise ValueError(f"unknown word {tok!r} in TCK value {self.text!r}")
        if tok == "[":
            if self.peek(1)[1] == ":":
                return self.rel()
            self.take("[")
            items = []
            while not self.at("]"):
                items.append(self.value())
                if not self.at("]"):
                    self.take(",")
            self.take("]")
            return ("list", tuple(items))
        if tok == "{":
            return ("map", self.map())
        if tok == "(":
            return self.node()
        if tok == "<":
            return self.path()
        raise ValueError(f"cannot read TCK value {self.text!r}")

    def key(self) -> str:
        tok = self.take()
        return tok[1:-1] if tok.startswith("`") else tok

    def map(self) -> tuple[tuple[str, Canon], ...]:
        self.take("{")
        items: dict[str, Canon] = {}
        while not self.at("}"):
            k = self.key()
            self.take(":")
            items[k] = self.value()
            if not self.at("}"):
                self.take(",")
        self.take("}")
        return tuple(sorted(items.items()))

    def node(self) -> Canon:
        self.take("(")
        labels = []
        while self.at(":"):
            self.take(":")
            labels.append(self.key())
        props = self.map() if self.at("{") else ()
        self.take(")")
        return ("node", tuple(sorted(labels)), props)

    def rel(self) -> Canon:
        self.take("[")
        self.take(":")
        rtype = self.key()
        props = self.map() if self.at("{") else ()
        self.take("]")
        return ("rel", rtype, props)

    def path(self) -> Canon:
        self.take("<")
        parts: list[Canon] = [self.node()]
        while not self.at(">"):
            if self.at("<-"):
                self.take("<-")
                rel = self.rel()
                self.take("-")
                parts.append(("in", rel))
            else:
                self.take("-")
                rel = self.rel()
                self.take("->")
                parts.append(("out", rel))
            parts.append(self.node())
        self.take(">")
        return ("path", tuple(parts))


def _unquote(tok: str) -> str:
    body = tok[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESC.get(m.group(1), "\\" + m.group(1)), body)


def _number(tok: str) -> Canon:
    sign = -1 if tok.startswith("-") else 1
    body = tok.lstrip("-")
    if body.startswith("0x"):
        return ("int", sign * int(body, 16))
    if body.startswith("0o"):
        return ("int", sign * int(body[2:], 8))
    if re.fullmatch(r"\d+", body):
        return ("int", sign * int(body))
    return _float(sign * float(body))


def _float(x: float) -> Canon:
    return ("float", "NaN" if math.isnan(x) else x)


def parse_value(text: str) -> Canon:
    """Canonical form of one TCK table cell such as `(:A {name: 'a'})` or `[1, 2.0, null]`."""
    reader = _Reader(text)
    out = reader.value()
    if reader.peek()[0] != "eof":
        raise ValueError(f"trailing text in TCK value {text!r}")
    return out


def to_python(c: Canon) -> Any:
    """A parameter value from its canonical form (only plain values can be parameters)."""
    kind = c[0]
    if kind == "null":
        return None
    if kind in ("int", "str", "bool"):
        return c[1]
    if kind == "float":
        return math.nan if c[1] == "NaN" else c[1]
    if kind == "list":
        return [to_python(x) for x in c[1]]
    if kind == "map":
        return {k: to_python(v) for k, v in c[1]}
    raise ValueError(f"a {kind} cannot be a parameter")


def canon(v: Any, graph: nx.MultiDiGraph) -> Canon:
    """Canonical form of a value the kg engine produced (internal values, before JSON)."""
    if v is None:
        return ("null",)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, Node):
        return _node(v.id, graph)
    if isinstance(v, Rel):
        return _rel(v, graph)
    if isinstance(v, Path):
        parts: list[Canon] = [_node(v.nodes[0].id, graph)]
        for rel, node in zip(v.rels, v.nodes[1:], strict=True):
            parts.append(("out" if rel.end == node.id else "in", _rel(rel, graph)))
            parts.append(_node(node.id, graph))
        return ("path", tuple(parts))
    if isinstance(v, dict):
        return ("map", tuple(sorted((str(k), canon(x, graph)) for k, x in v.items())))
    if isinstance(v, list | tuple):
        return ("list", tuple(canon(x, graph) for x in v))
    if isinstance(v, Temporal):  # the TCK writes temporal values as their ISO 8601 strings
        return ("str", str(v))
    return ("other", type(v).__name__, repr(v))


def _labels_of(attrs: dict[str, Any]) -> tuple[str, ...]:
    label = attrs.get(LABEL_ATTR)
    if label is None:
        return ()
    return tuple(sorted(label)) if isinstance(label, frozenset | set | tuple | list) else (label,)


def _node(nid: Any, graph: nx.MultiDiGraph) -> Canon:
    attrs = graph._node[nid]
    props = tuple(sorted((k, canon(x, graph)) for k, x in attrs.items() if k != LABEL_ATTR))
    return ("node", _labels_of(attrs), props)


def _rel(rel: Rel, graph: nx.MultiDiGraph) -> Canon:
    attrs = rel_attrs(graph, rel)
    props = tuple(sorted((k, canon(x, graph)) for k, x in attrs.items() if k != TYPE_ATTR))
    return ("rel", attrs.get(TYPE_ATTR), props)


def unordered(c: Canon) -> Canon:
    """`c` with every list sorted, for 'ignoring element order for lists'."""
    kind = c[0]
    if kind == "list":
        return ("list", tuple(sorted((unordered(x) for x in c[1]), key=repr)))
    if kind == "map":
        return ("map", tuple((k, unordered(v)) for k, v in c[1]))
    return c


def show(c: Canon) -> str:
    """TCK notation for a canonical value, for failure messages."""
    kind = c[0]
    if kind == "null":
        return "null"
    if kind == "bool":
        return "true" if c[1] else "false"
    if kind == "int":
        return str(c[1])
    if kind == "float":
        return "NaN" if c[1] == "NaN" else repr(c[1])
    if kind == "str":
        return repr(c[1])
    if kind == "list":
        return "[" + ", ".join(show(x) for x in c[1]) + "]"
    if kind == "map":
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in c[1]) + "}"
    if kind == "node":
        props = " " + show(("map", c[2])) if c[2] else ""
        return "(" + "".join(":" + lb for lb in c[1]) + props + ")"
    if kind == "rel":
        props = " " + show(("map", c[2])) if c[2] else ""
        return f"[:{c[1]}{props}]"
    if kind == "path":
        out = show(c[1][0])
        for k in range(1, len(c[1]), 2):
            d, rel = c[1][k]
            out += ("-" + show(rel) + "->") if d == "out" else ("<-" + show(rel) + "-")
            out += show(c[1][k + 1])
        return "<" + out + ">"
    return f"<{c[1]} {c[2]}>"
