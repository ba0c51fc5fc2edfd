"""The API's edges: loopback by default and a bearer token anywhere else, size limits on every parameter,
the schema fuzzer reaching every route, and a Content-Security-Policy on every HTML view."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from api.main import create_app
from api.middleware import VIEW_COOKIE
from api.settings import Settings, is_loopback
from kg.cli.main import main as kg_main
from kg.errors import InputError
from kg.store.embedded import EmbeddedStore
from viz import assets

from .helpers import kg, no_traceback, start_server, stop_server

TOKEN = "s3cret-Token_0123456789"
LONG_ID = "x" * 301


@pytest.fixture(scope="module")
def store(seeds_store_dir: Path) -> Iterator[EmbeddedStore]:
    with EmbeddedStore(seeds_store_dir) as s:
        yield s


@pytest.fixture(scope="module")
def ids(store: EmbeddedStore) -> dict[str, str]:
    paper = store.list_papers(limit=1).items[0].id
    entity = store.list_entities(limit=1).items[0].id
    task = store.list_entities(type="task", limit=1).items[0].id  # a landscape is drawn for a task
    dataset = store.list_entities(type="dataset", limit=1).items[0].id  # a leaderboard is a dataset's
    return {"paper_id": paper, "entity_ref": entity, "task_ref": task, "dataset_ref": dataset}


def _routes(app: FastAPI) -> list[APIRoute]:
    """Every APIRoute the app serves, including those of included routers (nested in newer FastAPI)."""
    out: list[APIRoute] = []

    def walk(routes: list[Any]) -> None:
        for r in routes:
            if isinstance(r, APIRoute):
                out.append(r)
            elif hasattr(r, "original_router"):
                walk(r.original_router.routes)

    walk(app.routes)
    return out


def _url(route: APIRoute, ids: dict[str, str]) -> str:
    own = {**ids, "entity_ref": ids["task_ref"]} if "landscape" in route.path else ids
    return re.sub(r"\{(\w+)(:path)?\}", lambda m: own[m.group(1)], route.path)


def _all_requests(app: FastAPI, ids: dict[str, str]) -> list[tuple[str, str, dict[str, Any]]]:
    """One valid request per route and method, plus the docs pages: (method, url, extra httpx arguments)."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for route in _routes(app):
        for method in sorted(route.methods - {"HEAD"}):
            extra: dict[str, Any] = {"json": {"query": "RETURN 1"}} if method == "POST" else {}
            params = {"q": "MI"} if route.path == "/search" else {}
            out.append((method, _url(route, ids), {**extra, "params": params}))
    return out + [("GET", "/docs", {}), ("GET", "/openapi.json", {}), ("GET", "/no-such-route", {})]


# -- loopback by default, a token elsewhere ------------------------------------------------------------


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("LocalHost", True), ("0.0.0.0", False), ("::", False), ("192.168.1.20", False), ("10.0.0.1", False),
    ("example.com", False), ("", False),
])
def test_only_loopback_hosts_go_without_a_token(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    if loopback:
        assert Settings(host=host).token is None
    else:
        with pytest.raises(InputError, match="without a token"):
            Settings(host=host)
        assert Settings(host=host, token=TOKEN).host == host
    assert TOKEN not in repr(Settings(token=TOKEN))


@pytest.mark.parametrize("bad", ["", " padded ", "two\nlines", "tab\there", "ünïcode"])
def test_unusable_tokens_are_refused(bad: str) -> None:
    with pytest.raises(InputError, match="token"):
        Settings(token=bad)


def test_the_default_needs_no_token(store: EmbeddedStore, ids: dict[str, str]) -> None:
    app = create_app(Settings(), store=store)
    with TestClient(app) as c:
        for method, url, extra in _all_requests(app, ids):
            assert c.request(method, url, **extra).status_code != 401, url


def test_with_a_token_every_request_needs_it(store: EmbeddedStore, ids: dict[str, str]) -> None:
    app = create_app(Settings(token=TOKEN), store=store)
    requests = _all_requests(app, ids)
    assert len(requests) >= 16  # every route of the API, the views and the docs
    with TestClient(app) as c:
        for method, url, extra in requests:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
                            {"Authorization": f"Bearer {TOKEN}x"}, {"Authorization": TOKEN}):
                r = c.request(method, url, headers=headers, **extra)
                assert r.status_code == 401, (method, url, headers, r.status_code)
                assert r.headers["www-authenticate"].startswith("Bearer")
                assert r.json()["error"] == "Unauthorized" and "Authorization: Bearer" in r.json()["detail"]
            for auth in (f"Bearer {TOKEN}", f"bearer {TOKEN}", f"Bearer   {TOKEN} "):
                r = c.request(method, url, headers={"Authorization": auth}, **extra)
                assert r.status_code != 401, (method, url, auth)
                assert r.status_code == (404 if url == "/no-such-route" else 200), (url, r.text[:300])
        # A request body is not even read without the token (the 413 check comes after).
        r = c.post("/cypher", content=b"x" * 300_000, headers={"content-type": "application/json"})
        assert r.status_code == 401


def test_views_take_the_token_in_the_url_and_then_a_cookie(store: EmbeddedStore, ids: dict[str, str]) -> None:
    app = create_app(Settings(token=TOKEN), store=store)
    with TestClient(app) as c:
        r = c.get("/view", params={"token": TOKEN, "top": 10})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"{VIEW_COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert "Path=/view" in cookie and TOKEN not in cookie
        # The links between views carry no token: the cookie opens them.
        assert c.get(f"/view/paper/{ids['paper_id']}").status_code == 200
        assert c.get(f"/view/entity/{ids['entity_ref']}").status_code == 200
        # Neither the cookie nor ?token= opens anything but the views.
        assert c.get("/papers").status_code == 401
        assert c.get("/papers", params={"token": TOKEN}).status_code == 401
        assert c.post("/cypher", params={"token": TOKEN}, json={"query": "RETURN 1"}).status_code == 401
    with TestClient(app) as fresh:
        assert fresh.get("/view", params={"token": "wrong"}).status_code == 401
        fresh.cookies.set(VIEW_COOKIE, "forged")
        assert fresh.get("/view").status_code == 401


def test_kg_serve_refuses_a_public_host_without_a_token(seeds_store_dir: Path, tmp_path: Path) -> None:
    r = kg("serve", "--host", "0.0.0.0", "--store-dir", str(seeds_store_dir), timeout=60,
           env={"KG_API_TOKEN": ""})
    assert r.returncode == 1
    no_traceback(r.stderr)
    assert r.stderr.strip().splitlines() == [
        "kg: error: refusing to serve on 0.0.0.0 without a token: pass --token or set KG_API_TOKEN "
        "(or bind to 127.0.0.1)"]
    # Checked before the store is opened: the message is the same with no store at all.
    assert kg_main(["serve", "--host", "10.1.2.3", "--store-dir", str(tmp_path / "none")]) == 1


@pytest.mark.slow
def test_kg_serve_on_all_interfaces_with_a_token(seeds_store_dir: Path) -> None:
    proc, url = start_server(seeds_store_dir, "--host", "0.0.0.0", token=TOKEN)
    try:
        assert httpx.get(f"{url}/health", timeout=10).status_code == 401
        assert httpx.get(f"{url}/view", timeout=10).status_code == 401
        r = httpx.get(f"{url}/stats", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert r.status_code == 200 and r.json()["papers"] > 0
        assert httpx.get(f"{url}/view", params={"token": TOKEN, "top": 5}, timeout=30).status_code == 200
    finally:
        err = stop_server(proc)
    no_traceback(err)
    assert TOKEN not in err  # the token is never printed


# -- size limits -------------------------------------------------------------------------------------------


def test_every_string_parameter_has_a_size_limit(store: EmbeddedStore) -> None:
    spec = create_app(Settings(), store=store).openapi()
    unbounded = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for p in op.get("parameters", []):
                schemas = [p["schema"], *p["schema"].get("anyOf", [])]
                strings = [s for s in schemas if s.get("type") == "string" and "enum" not in s]
                arrays = [s for s in schemas if s.get("type") == "array"]
                if any("maxLength" not in s for s in strings) or any("maxItems" not in s for s in arrays):
                    unbounded.append(f"{method.upper()} {path} {p['name']}")
    assert not unbounded, unbounded


@pytest.mark.parametrize("url, params", [
    ("/papers", {"q": "q" * 501}), ("/papers", {"venue": "v" * 201}), ("/papers", {"entity": "e" * 201}),
    ("/entities", {"q": "q" * 201}), ("/search", {"q": "q" * 501}),
    (f"/papers/{LONG_ID}", {}), (f"/papers/{LONG_ID}/related", {}), (f"/entities/{LONG_ID}", {}),
    (f"/entities/{LONG_ID}/related", {}), (f"/view/paper/{LONG_ID}", {}), (f"/view/entity/{LONG_ID}", {}),
    ("/view", {"types": ["method"] * 13}),
])
def test_oversized_parameters_are_422(store: EmbeddedStore, url: str, params: dict[str, Any]) -> None:
    with TestClient(create_app(Settings(), store=store)) as c:
        r = c.get(url, params=params)
    assert r.status_code == 422, (url, r.status_code)
    assert "at most" in r.text or "too_long" in r.text


def test_ids_at_the_limit_are_a_plain_404(store: EmbeddedStore) -> None:
    with TestClient(create_app(Settings(), store=store)) as c:
        assert c.get(f"/papers/{'x' * 300}").status_code == 404
        assert c.get("/search", params={"q": "q" * 500}).status_code == 200


# -- the schema fuzzer covers every route ------------------------------------------------------------


def test_the_schema_fuzzer_reaches_every_route(store: EmbeddedStore) -> None:
    """tests/api/test_schema_fuzz.py generates cases for every operation of the OpenAPI document; this checks that
    the document lists every route the app serves (a route left out of the schema would go unfuzzed)."""
    app = create_app(Settings(), store=store)
    schema = schemathesis.openapi.from_dict(app.openapi())
    operations = {(op.ok().method.upper(), op.ok().path) for op in schema.get_all_operations()}
    served = {(m, re.sub(r":path\}", "}", r.path)) for r in _routes(app) for m in r.methods - {"HEAD"}
              if r.include_in_schema}
    assert operations == served and len(served) == 20
    fuzz = (Path(__file__).resolve().parents[1] / "api" / "test_schema_fuzz.py").read_text()
    assert "@schema.parametrize()" in fuzz  # no include/exclude filter narrows it


# -- views: CSP on every page, blocking remote loads -------------------------------------------------------


def _meta_csp(html: str) -> str:
    m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert m, "no CSP meta tag"
    return m.group(1)


def _check_policy(policy: str) -> None:
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if " " in d.strip())
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'none'"
    assert directives["base-uri"] == "'none'" and directives["form-action"] == "'none'"
    assert all(s.startswith("'sha256-") for s in directives["script-src"].split())
    # Nothing may come from a network origin: no scheme or host source in any directive.
    assert not re.search(r"https?:|wss?:|\*|//|'self'", policy), policy


def test_every_view_sends_a_csp_that_blocks_remote_loads(store: EmbeddedStore, ids: dict[str, str]) -> None:
    app = create_app(Settings(), store=store)
    views = [r for r in _routes(app) if r.path.startswith("/view")]
    assert len(views) == 6  # overview, paper, entity, trends, search, landscape
    with TestClient(app) as c:
        for route in views:
            r = c.get(_url(route, ids))
            assert r.status_code == 200
            header = r.headers["content-security-policy"]
            meta = _meta_csp(r.text)
            assert header == meta + "; frame-ancestors 'none'"  # the page's policy, and no framing
            _check_policy(header)
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["referrer-policy"] == "no-referrer"


def test_kg_viz_files_carry_the_csp(seeds_store_dir: Path, ids: dict[str, str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    policies = set()
    for args in ([], ["--paper", ids["paper_id"]], ["--entity", ids["entity_ref"]]):
        out = tmp_path / "v.html"
        assert kg_main(["viz", *args, "-o", str(out), "--store-dir", str(seeds_store_dir)]) == 0
        html = out.read_text(encoding="utf-8")
        policies.add(_meta_csp(html))
        # vis-network, the charts, the app, and the data block (JSON, never run): no other script tag.
        assert html.count("<script") == 4 + sum(js().count("<script") for js in (assets.vis_js, assets.charts_js,
                                                                                assets.app_js))
    capsys.readouterr()
    (policy,) = policies
    _check_policy(policy)
