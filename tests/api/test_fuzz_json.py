"""Issue 33's fuzz test: hypothesis over strings with lone surrogates, values nested up to hundreds of levels, NaN
and the infinities, sent to /cypher (query, parameters, max_rows) and to every GET route's path and query
parameters. Every answer is strict JSON (or a 200 HTML view), never a 5xx; a parameter echoed by ``RETURN $p``
comes back as sent (NaN as "NaN"), or is a 400 exactly when it holds a lone surrogate or nests too deep."""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.safejson import MAX_DEPTH

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

surrogates = st.integers(0xD800, 0xDFFF).map(chr)
texts = st.lists(st.one_of(st.characters(), surrogates, st.sampled_from(list("'\"\\$`{}[]()%/?#&;=+ \n\x00"))),
                 max_size=24).map("".join)
floats = st.floats(allow_nan=True, allow_infinity=True)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), floats, texts)
shallow = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
                       max_leaves=24)


@st.composite
def deep(draw: st.DrawFn) -> Any:
    value = draw(scalars)
    for _ in range(draw(st.integers(0, 300))):
        value = {draw(texts): value} if draw(st.booleans()) else [value]
    return value


values = st.one_of(shallow, deep())


def _no_constant(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def strict_json(r: httpx.Response) -> Any:
    return json.loads(r.content.decode("utf-8"), parse_constant=_no_constant)


def post(c: TestClient, body: Any) -> httpx.Response:
    r: httpx.Response = c.post("/cypher", content=json.dumps(body).encode(),
                               headers={"content-type": "application/json"})
    return r


def depth(v: Any) -> int:
    level, todo = 0, [(v, 0)]
    while todo:
        x, d = todo.pop()
        if isinstance(x, (list, dict)):
            level = max(level, d + 1)
            todo.extend((y, d + 1) for y in (x.values() if isinstance(x, dict) else x))
    return level


def has_surrogate(v: Any) -> bool:
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, str) and re.search("[\ud800-\udfff]", x):
            return True
        if isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
    return False


def as_answered(v: Any) -> Any:
    """What the API answers for ``v``: floats JSON cannot write as strings."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, list):
        return [as_answered(x) for x in v]
    if isinstance(v, dict):
        return {k: as_answered(x) for k, x in v.items()}
    return v


@FUZZ
@given(p=values)
def test_a_parameter_comes_back_as_sent_or_is_a_clear_400(client: TestClient, p: Any) -> None:
    r = post(client, {"query": "RETURN $p AS p", "parameters": {"p": p}})
    body = strict_json(r)
    if has_surrogate(p) or depth(p) > MAX_DEPTH:
        assert r.status_code == 400 and body["error"] == "InputError", body
        assert body["detail"].startswith("parameters.p") and ("surrogate" in body["detail"]
                                                              or "nested" in body["detail"])
    else:
        assert r.status_code == 200, body
        assert body["rows"] == [[as_answered(p)]]


def _cypher_escapes(units: list[int]) -> str:
    return "".join(f"\\u{u:04X}" for u in units)


queries = st.one_of(
    texts,
    st.builds(lambda t: f"RETURN {t} AS x", texts),
    st.builds(lambda u: f"RETURN '{_cypher_escapes(u)}' AS s, size('{_cypher_escapes(u)}') AS n",
              st.lists(st.integers(0, 0xFFFF), max_size=6)),
    st.builds(lambda n, op: f"RETURN reduce(acc = 0.0/0.0, i IN range(1, {n}) | {op}) AS v",
              st.integers(0, 200), st.sampled_from(["[acc]", "{k: acc}", "[acc, 1.0/0.0]", "acc"])),
    st.sampled_from(["MATCH (n) RETURN n LIMIT 3", "MATCH p = ()-[]->() RETURN p LIMIT 2",
                     "UNWIND [0.0/0.0, 1.0/0.0, -1.0/0.0, 1e308 * 10] AS f RETURN f, toString(f)"]),
)


@FUZZ
@given(query=queries, parameters=st.dictionaries(texts, values, max_size=3),
       max_rows=st.one_of(st.none(), st.integers(-5, 20_000), floats, texts, deep()))
def test_any_cypher_body_is_answered_with_json_never_a_5xx(client: TestClient, query: str,
                                                            parameters: dict[str, Any], max_rows: Any) -> None:
    body: dict[str, Any] = {"query": query, "parameters": parameters}
    if max_rows is not None:
        body["max_rows"] = max_rows
    r = post(client, body)
    assert r.status_code < 500, r.text[:500]
    assert isinstance(strict_json(r), dict)


def _get_operations(app: FastAPI) -> list[tuple[str, list[dict[str, Any]]]]:
    spec = app.openapi()
    return [(path, ops["get"].get("parameters", [])) for path, ops in sorted(spec["paths"].items()) if "get" in ops]


def _encode(text: str) -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe="")  # a lone surrogate as its (invalid) UTF-8 bytes


@FUZZ
@given(data=st.data())
def test_every_route_answers_json_or_a_page_never_a_5xx(app: FastAPI, client: TestClient,
                                                        data: st.DataObject) -> None:
    path, parameters = data.draw(st.sampled_from(_get_operations(app)))
    query = []
    for p in parameters:
        if p["in"] == "path":
            path = path.replace("{" + p["name"] + "}", _encode(data.draw(texts.filter(bool))))
        elif data.draw(st.booleans()):
            value = data.draw(st.one_of(texts, st.integers(-10, 6000).map(str), floats.map(str)))
            query.append(f"{_encode(p['name'])}={_encode(value)}")
    r = client.get(path + ("?" + "&".join(query) if query else ""))
    assert r.status_code < 500, (path, query, r.text[:300])
    if r.headers.get("content-type", "").startswith("text/html"):
        assert r.status_code == 200
        r.content.decode("utf-8")
    else:
        strict_json(r)


@pytest.mark.parametrize("raw", [
    b'{"query": "RETURN $p AS p", "parameters": {"p": "\xed\xa0\x80"}}',  # a surrogate as UTF-8 bytes
    b'{"query": "RETURN $p AS p", "parameters": {"p": NaN}}',
    b'{"query": "RETURN $p AS p", "parameters": {"p": -Infinity}}',
    b'{"query": "RETURN $p AS p", "parameters": {"p": 1e999}}',
    b'{"query": "RETURN $p AS p", "parameters": {"p": ' + b"9" * 5000 + b"}}",
    b'{"query": "RETURN 1", "parameters": ' + b"[" * 100_000 + b"}",
    b'{"query": "\\ud800"',
    b"\xff\xfe",
])
def test_odd_raw_bodies_are_json_answers(client: TestClient, raw: bytes) -> None:
    r = client.post("/cypher", content=raw, headers={"content-type": "application/json"})
    assert r.status_code < 500, r.text[:300]
    strict_json(r)
