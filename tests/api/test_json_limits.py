"""Issue 33, findings 1, 2 and 8 (API): every /cypher answer is valid JSON or a clear 4xx, whatever the body or
the answer holds. Lone surrogates in a body are a 400 naming the field, and escaped when a query makes them;
parameters nest at most MAX_DEPTH levels (400 past it) and so do answers; NaN and the infinities are the strings
"NaN", "Infinity" and "-Infinity", never null. Each check runs with the worker pool and in-process."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from api.safejson import MAX_DEPTH
from kg.store.base import Store

SURROGATE_HELP = "which is not Unicode text; send UTF-8 text (a \\u escape of a surrogate must be half of a pair)"
TOO_DEEP_PARAMETER = f"nested more than {MAX_DEPTH} levels deep (lists and maps), the most a request may hold"
TOO_DEEP_ANSWER = (f"the answer holds a value nested more than {MAX_DEPTH} levels deep (lists and maps), the most an "
                   f"answer may hold; return it flatter")


@pytest.fixture(params=["pool", "in-process"])
def cypher_client(request: pytest.FixtureRequest, client: TestClient,
                  make_client: Callable[..., TestClient], store: Store) -> Iterator[TestClient]:
    """The session's client (Cypher in worker processes) and one running Cypher in the server process."""
    yield client if request.param == "pool" else make_client(store=store, cypher_workers=0)


def post(c: TestClient, body: Any) -> httpx.Response:
    """``body`` as Python's json writes it: lone surrogates as \\u escapes, NaN and Infinity as their literals."""
    r: httpx.Response = c.post("/cypher", content=json.dumps(body).encode(),
                               headers={"content-type": "application/json"})
    return r


def _no_constant(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def strict_json(r: httpx.Response) -> Any:
    """The body parsed as strict JSON: UTF-8 (no encoded surrogates), no NaN or Infinity literals."""
    return json.loads(r.content.decode("utf-8"), parse_constant=_no_constant)


def nest(depth: int, leaf: Any = 1, *, maps: bool = False) -> Any:
    for _ in range(depth):
        leaf = {"a": leaf} if maps else [leaf]
    return leaf


# -- finding 1: lone surrogates -----------------------------------------------------------------------------

@pytest.mark.parametrize("body, field", [
    ({"query": "RETURN '\ud800' AS s"}, "query: holds a lone surrogate (U+D800 at character 8), "),
    ({"query": "RETURN $p AS p", "parameters": {"p": "\udfff"}},
     "parameters.p: holds a lone surrogate (U+DFFF at character 0), "),
    ({"query": "RETURN 1", "parameters": {"p": ["ok", {"k": "x\udc00"}]}},
     "parameters.p[1].k: holds a lone surrogate (U+DC00 at character 1), "),
    ({"query": "RETURN 1", "parameters": {"\ud83d": 1}},
     'parameters["\\ud83d"]: the name holds a lone surrogate (U+D83D at character 0), '),
    ({"query": "RETURN 1", "\udbff": 1}, 'body["\\udbff"]: the name holds a lone surrogate (U+DBFF at character 0), '),
])
def test_a_lone_surrogate_in_the_body_is_a_400_naming_the_field(cypher_client: TestClient, body: dict[str, Any],
                                                                 field: str) -> None:
    r = post(cypher_client, body)
    assert r.status_code == 400, r.text
    assert strict_json(r) == {"detail": field + SURROGATE_HELP, "error": "InputError"}


def test_a_surrogate_pair_in_the_body_is_its_character(cypher_client: TestClient) -> None:
    r = post(cypher_client, {"query": "RETURN $p AS p", "parameters": {"p": "\U0001F600"}})  # sent as \ud83d\ude00
    assert b"\\ud83d\\ude00" in json.dumps({"p": "\U0001F600"}).encode()
    assert r.status_code == 200 and strict_json(r)["rows"] == [["\U0001F600"]]


def test_surrogates_a_query_makes_are_escaped_in_its_answer(cypher_client: TestClient) -> None:
    # Cypher's \u escapes spell UTF-16 code units: a pair is a character, a lone one a lone surrogate.
    r = post(cypher_client, {"query": "RETURN '\\uD83D\\uDE00' AS pair, '\\uD800' AS lone, ['a\\uDFFF'] AS l"})
    assert r.status_code == 200, r.text
    assert strict_json(r) == {"columns": ["pair", "lone", "l"], "rows": [["\U0001F600", "\ud800", ["a\udfff"]]],
                              "truncated": False}
    assert b'"\\ud800"' in r.content  # escaped: the body is UTF-8 throughout


def test_an_error_that_quotes_a_surrogate_is_valid_json(cypher_client: TestClient) -> None:
    r = post(cypher_client, {"query": "RETURN date('\\uD800') AS d"})
    assert r.status_code == 400
    assert strict_json(r)["error"].startswith("Cypher")


# -- finding 2: nesting ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 255, 492, 800])
@pytest.mark.parametrize("maps", [False, True])
def test_a_parameter_nested_past_the_limit_is_a_400(cypher_client: TestClient, depth: int, maps: bool) -> None:
    r = post(cypher_client, {"query": "RETURN 1", "parameters": {"p": nest(depth, maps=maps)}})
    assert r.status_code == 400, r.text
    assert strict_json(r) == {"detail": "parameters.p: " + TOO_DEEP_PARAMETER, "error": "InputError"}


def test_a_parameter_at_the_limit_is_answered(cypher_client: TestClient) -> None:
    for maps in (False, True):
        p = nest(MAX_DEPTH, "leaf", maps=maps)
        r = post(cypher_client, {"query": "RETURN $p AS p", "parameters": {"p": p}})
        assert r.status_code == 200 and strict_json(r)["rows"] == [[p]]


def test_a_body_nested_too_deep_to_parse_is_a_400(cypher_client: TestClient) -> None:
    body = b'{"query": "RETURN 1", "parameters": {"p": ' + b"[" * 5000 + b"]" * 5000 + b"}}"
    r = cypher_client.post("/cypher", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert strict_json(r) == {"detail": "body: " + TOO_DEEP_PARAMETER, "error": "InputError"}


@pytest.mark.parametrize("query", [
    "RETURN reduce(acc = 1, i IN range(1, 255) | [acc]) AS v",  # the probe's 255 levels
    f"RETURN reduce(acc = 1, i IN range(1, {MAX_DEPTH + 1}) | [acc]) AS v",
    "RETURN reduce(acc = 1, i IN range(1, 400) | {a: acc}) AS v",
])
def test_an_answer_nested_past_the_limit_is_a_400(cypher_client: TestClient, query: str) -> None:
    r = post(cypher_client, {"query": query})
    assert r.status_code == 400, r.text[:300]
    assert strict_json(r) == {"detail": TOO_DEEP_ANSWER, "error": "CypherError"}


def test_an_answer_at_the_limit_is_answered(cypher_client: TestClient) -> None:
    r = post(cypher_client, {"query": f"RETURN reduce(acc = 1, i IN range(1, {MAX_DEPTH}) | [acc]) AS v"})
    assert r.status_code == 200 and strict_json(r)["rows"] == [[nest(MAX_DEPTH)]]


def test_many_deep_requests_are_all_4xx(client: TestClient) -> None:
    # The probe's 300 requests wrote 375 tracebacks; each is now a 400 and nothing is logged.
    bodies = [{"query": "RETURN 1", "parameters": {"p": nest(492)}},
              {"query": "RETURN reduce(acc = 1, i IN range(1, 255) | [acc]) AS v"}]
    assert {post(client, bodies[i % 2]).status_code for i in range(60)} == {400}


# -- finding 8 (API): NaN and the infinities ------------------------------------------------------------------

def test_nan_and_infinities_are_strings_not_null(cypher_client: TestClient) -> None:
    r = post(cypher_client, {"query": "RETURN 0.0/0.0 AS nan, 1.0/0.0 AS inf, -1.0/0.0 AS ninf, [0.0/0.0, 1.5] AS l, "
                                      "{a: 1.0/0.0, b: null} AS m"})
    assert r.status_code == 200, r.text
    assert strict_json(r)["rows"] == [["NaN", "Infinity", "-Infinity", ["NaN", 1.5], {"a": "Infinity", "b": None}]]


def test_nan_parameters_come_back_as_strings(cypher_client: TestClient) -> None:
    # Python's json (which the server parses with) takes NaN and Infinity; the answer is still strict JSON.
    r = post(cypher_client, {"query": "RETURN $x AS x, $y AS y, $x <> $x AS is_nan",
                             "parameters": {"x": float("nan"), "y": [float("-inf")]}})
    assert r.status_code == 200 and strict_json(r)["rows"] == [["NaN", ["-Infinity"], True]]


def test_a_422_that_echoes_nan_is_valid_json(client: TestClient) -> None:
    # Starlette's JSONResponse refuses NaN (allow_nan=False): FastAPI's 422, echoing it, was a 500.
    for max_rows in (float("nan"), float("inf")):
        r = post(client, {"query": "RETURN 1", "max_rows": max_rows})
        assert r.status_code == 422, r.text[:300]
        (error,) = strict_json(r)["detail"]
        assert error["loc"] == ["body", "max_rows"] and error["input"] in ("NaN", "Infinity")
    r = post(client, {"query": "RETURN 1", "max_rows": nest(800)})  # every field's nesting is bounded
    assert r.status_code == 400 and strict_json(r)["detail"] == "max_rows: " + TOO_DEEP_PARAMETER
