"""JSON in and out of the API that is always valid, whatever a request or a Cypher answer holds.

In: a request body's strings must be Unicode text (no lone surrogates, which JSON's ``\\udXXX`` escapes can
spell) and its values nest at most ``MAX_DEPTH`` lists and maps; ``check_body`` names the first field that
breaks either. Out: ``encode_answer`` writes a Cypher answer, ``encode_error`` an error body. Both escape lone
surrogates (``"\\ud800"``: valid JSON, and a surrogate pair decodes to its character), write the floats JSON has
no literal for as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (as Jackson, and so Neo4j's HTTP API,
writes them) rather than ``null``, and never recurse past ``MAX_DEPTH`` levels: an answer nested deeper is
refused (``TooDeep``), an error body's echo of the input is cut there.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

MAX_DEPTH = 64  # lists and maps inside one parameter value or one answer value (System.Text.Json's default)

_SURROGATE = re.compile("[\ud800-\udfff]")
_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}
_CUT = "…"  # stands for what an error body's echo of the input leaves out


class TooDeep(ValueError):
    """A value nests more than ``MAX_DEPTH`` lists and maps."""


def _float(v: float) -> float | str:
    if math.isfinite(v):
        return v
    return "NaN" if v != v else _NON_FINITE[v]


def _field(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    name = str(key)
    if name.isidentifier() and name.isascii():
        return f"{path}.{name}" if path else name
    return f"{path or 'body'}[{json.dumps(name)}]"  # quoted, with any surrogate escaped: the message stays valid text


def _surrogate_at(text: str) -> str | None:
    m = None if text.isascii() else _SURROGATE.search(text)
    return None if m is None else f"U+{ord(m[0]):04X} at character {m.start()}"


def _name(path: Any) -> str:
    """The field a path of ``(parent, key)`` pairs names, as ``parameters.p[2]["a b"]``."""
    keys = []
    while path is not None:
        path, key = path
        keys.append(key)
    name = ""
    for key in reversed(keys):
        name = _field(name, key)
    return name


def _bad_text(text: str, path: Any, what: str = "") -> str | None:
    where = _surrogate_at(text)
    if where is None:
        return None
    return (f"{_name(path)}: {what}holds a lone surrogate ({where}), which is not Unicode text; send UTF-8 text (a "
            f"\\u escape of a surrogate must be half of a pair)")


def _check(root: Any, root_path: Any) -> str | None:
    stack: list[tuple[Any, Any, int]] = [(root, root_path, 0)]  # paths are (parent, key) pairs, named on error
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if (why := _bad_text(value, path)) is not None:
                return why
        elif isinstance(value, (list, dict)):
            if depth >= MAX_DEPTH:  # named by the field it is in: the path down is MAX_DEPTH steps long
                return (f"{_name(root_path)}: nested more than {MAX_DEPTH} levels deep (lists and maps), the most "
                        f"a request may hold")
            if isinstance(value, list):
                stack.extend((v, (path, i), depth + 1) for i, v in enumerate(value))
                continue
            for k, v in value.items():
                if isinstance(k, str) and (why := _bad_text(k, (path, k), "the name ")) is not None:
                    return why
                stack.append((v, (path, k), depth + 1))
    return None


def check_body(body: Any) -> str | None:
    """Why a parsed JSON request body cannot be taken, naming the field (``parameters.p[2].k``), or None.

    Every string and key must be Unicode text; each parameter's value (``parameters.NAME``), and every other
    field's, may nest at most ``MAX_DEPTH`` lists and maps. Iterative, so no body can make it recurse."""
    if not isinstance(body, dict):
        return _check(body, (None, "body"))
    roots: list[tuple[Any, Any]] = []
    for key, value in body.items():
        if isinstance(key, str) and (why := _bad_text(key, (None, key), "the name ")) is not None:
            return why
        if key == "parameters" and isinstance(value, dict):  # depth counts from each parameter's value
            for name, v in value.items():
                path = ((None, key), name)
                if isinstance(name, str) and (why := _bad_text(name, path, "the name ")) is not None:
                    return why
                roots.append((v, path))
        else:
            roots.append((value, (None, key)))
    for value, path in roots:
        if (why := _check(value, path)) is not None:
            return why
    return None


def _scan(value: list[Any] | tuple[Any, ...] | dict[Any, Any], depth: int) -> bool:
    """Whether ``value`` holds a float JSON cannot write; TooDeep past ``MAX_DEPTH`` (recursion stops there)."""
    if depth > MAX_DEPTH:
        raise TooDeep(f"nested more than {MAX_DEPTH} levels deep")
    special = False
    for v in value.values() if isinstance(value, dict) else value:
        t = type(v)
        if t is float:
            special = special or not math.isfinite(v)
        elif t is list or t is dict or t is tuple:
            special = _scan(v, depth + 1) or special
    return special


def _plain(value: Any, depth: int, cut: bool) -> Any:
    """``value`` with every float JSON cannot write as a string and every other value JSON can hold; past
    ``MAX_DEPTH`` levels, TooDeep (``cut=False``) or ``_CUT`` (``cut=True``, for echoes of the input)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        if depth >= MAX_DEPTH:
            if cut:
                return _CUT
            raise TooDeep(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            return {str(k): _plain(v, depth + 1, cut) for k, v in value.items()}
        return [_plain(v, depth + 1, cut) for v in value]
    return str(value)


def _escaped(text: str) -> bytes:
    # A surrogate can only be inside a string literal here, where its \u escape means the same code unit.
    if not text.isascii():
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
    return text.encode("utf-8")


def _dump_plain(doc: Any) -> bytes:
    return _escaped(json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")))


def encode_answer(columns: list[str], rows: list[list[Any]], truncated: bool) -> bytes:
    """A Cypher answer as the JSON of ``kg.models.CypherResult``; TooDeep when a value nests more than
    ``MAX_DEPTH`` lists and maps. Fast (orjson) unless the answer holds NaN, an infinity, a lone surrogate or an
    integer past 64 bits."""
    special = False
    for row in rows:
        for v in row:
            t = type(v)
            if t is float:
                special = special or not math.isfinite(v)
            elif t is list or t is dict or t is tuple:
                special = _scan(v, 1) or special
    doc = {"columns": columns, "rows": rows, "truncated": truncated}
    if not special:
        try:
            return orjson.dumps(doc)
        except orjson.JSONEncodeError:  # a lone surrogate, an integer past 64 bits, a type orjson does not know
            pass
    cells = [[_plain(v, 0, False) for v in row] for row in rows]
    return _dump_plain({"columns": [str(c) for c in columns], "rows": cells, "truncated": bool(truncated)})


def encode_error(doc: Any) -> bytes:
    """An error body as JSON, whatever it echoes: never raises (deep echoes are cut, odd values written as text)."""
    try:
        return _dump_plain(_plain(doc, 0, True))
    except Exception:  # noqa: BLE001 - the last resort of the error handlers, which must not raise
        return b'{"detail":"the error could not be described","error":"InternalError"}'
