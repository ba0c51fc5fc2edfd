"""The HTTP API end to end over the seeds graph: content, paging, errors, read-only Cypher, and `kg serve`."""

from __future__ import annotations

import inspect
import socket
import subprocess
import sys
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from api.deps import EntityType
from api.main import create_app
from api.settings import Settings
from kg.errors import InputError, StoreError
from kg.graph import ENTITY_LABELS, PAPER_EDGE_TYPES
from kg.models import CypherResult
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore

# -- meta ------------------------------------------------------------------------------------------


def test_health_and_stats_report_the_graph(client: TestClient, store: Store) -> None:
    st = store.stats()
    assert client.get("/health").json() == {"status": "ok", "papers": st.papers, "store": "embedded"}
    body = client.get("/stats").json()
    assert body["papers"] == st.papers >= 57
    assert body["entities"] == sum(body["entities_by_type"].values())
    assert body["edges"] == sum(body["edges_by_type"].values())


def test_every_endpoint_is_documented_and_reads_off_the_event_loop(app: FastAPI, client: TestClient) -> None:
    ops = client.get("/openapi.json").json()["paths"]
    for path in ("/papers", "/papers/{paper_id}", "/papers/{paper_id}/related", "/entities",
                 "/entities/{entity_ref}", "/entities/{entity_ref}/related", "/search", "/cypher", "/stats",
                 "/health"):
        assert path in ops
        for op in ops[path].values():
            assert op.get("description"), f"{path} has no docstring"
    for route in app.routes:
        # Store calls block: a plain `def` endpoint runs in the threadpool; an `async def` one reads through
        # api.deps.read, which uses the threadpool unless the store says the read is light (test_inline_reads).
        if isinstance(route, APIRoute) and route.include_in_schema and not route.path.startswith("/view"):
            source = inspect.getsource(route.endpoint)
            assert not inspect.iscoroutinefunction(route.endpoint) or "await read(" in source \
                or route.path == "/cypher", route.path


def test_entity_type_choices_match_the_graph() -> None:
    assert set(typing.get_args(EntityType)) == set(ENTITY_LABELS)


# -- papers ----------------------------------------------------------------------------------------


def test_paper_pages_cover_every_paper_once(client: TestClient, store: Store) -> None:
    total = store.stats().papers
    seen: list[str] = []
    for offset in range(0, total + 20, 20):
        page = client.get("/papers", params={"limit": 20, "offset": offset}).json()
        assert page["total"] == total and page["limit"] == 20 and page["offset"] == offset
        assert len(page["items"]) == max(0, min(20, total - offset))
        seen += [p["id"] for p in page["items"]]
    assert len(seen) == len(set(seen)) == total
    years = [p["year"] or 0 for p in client.get("/papers", params={"limit": 200}).json()["items"]]
    assert years == sorted(years, reverse=True)


def test_paper_filters(client: TestClient, store: Store) -> None:
    page = client.get("/papers", params={"venue": "icml", "limit": 200}).json()
    assert page["total"] == 2 and {p["venue"] for p in page["items"]} == {"ICML"}
    page = client.get("/papers", params={"year": 2025, "limit": 200}).json()
    assert page["total"] == len(page["items"]) > 0 and {p["year"] for p in page["items"]} == {2025}
    # by entity, given by alias: the total is the entity's paper count
    mi = store.get_entity(store.resolve_entity("mutual information"))
    page = client.get("/papers", params={"entity": "MI", "limit": 200}).json()
    assert page["total"] == mi.paper_count == len({ep.paper.id for ep in mi.papers})
    assert {p["id"] for p in page["items"]} == {ep.paper.id for ep in mi.papers}
    # text: every word, anywhere in title or abstract
    page = client.get("/papers", params={"q": "discrete encoders", "limit": 200}).json()
    assert {"arXiv:2401.00631", "10.1000/xyz.123"} <= {p["id"] for p in page["items"]}
    for p in page["items"]:
        d = store.get_paper(p["id"])
        assert all(w in (d.title + " " + d.abstract).casefold() for w in ("discrete", "encoders"))
    assert client.get("/papers", params={"q": "zzzqqq"}).json() == {"total": 0, "limit": 20, "offset": 0,
                                                                    "items": []}


def test_paper_detail_groups_entities_with_evidence(client: TestClient) -> None:
    pid = client.get("/papers", params={"limit": 1}).json()["items"][0]["id"]
    d = client.get(f"/papers/{pid}").json()
    assert d["id"] == pid and d["abstract"]
    assert d["entities"] and set(d["entities"]) <= set(PAPER_EDGE_TYPES)
    for edge, items in d["entities"].items():
        for pe in items:
            ev = pe["evidence"]
            assert pe["edge"] == edge and ev["paper_id"] == pid
            assert ev["sentence"] in d["abstract"] and d["abstract"][ev["start"]:ev["end"]]


@pytest.mark.parametrize("pid", ["arXiv:2401.00631", "10.1000/xyz.123"])
def test_paper_ids_with_colon_and_slash(client: TestClient, pid: str) -> None:
    d = client.get(f"/papers/{pid}").json()
    assert d["id"] == pid
    related = client.get(f"/papers/{pid}/related", params={"k": 5}).json()
    other = "10.1000/xyz.123" if pid.startswith("arXiv") else "arXiv:2401.00631"
    assert related[0]["paper"]["id"] == other  # the two share their rarest entities
    # a percent-encoded slash is the same id
    assert client.get("/papers/" + pid.replace("/", "%2F")).json()["id"] == pid


def test_related_papers_ordered_and_explained(client: TestClient, store: Store) -> None:
    for p in client.get("/papers", params={"limit": 200}).json()["items"]:
        related = client.get(f"/papers/{p['id']}/related", params={"k": 10}).json()
        assert 0 < len(related) <= 10  # every paper of a corpus with other papers gets some
        scores = [r["score"] for r in related]
        assert scores == sorted(scores, reverse=True)
        mine = {pe.entity.id: pe.edge for items in store.get_paper(p["id"]).entities.values() for pe in items}
        for r in related:
            assert r["paper"]["id"] != p["id"]
            theirs = {pe.entity.id: pe.edge for items in store.get_paper(r["paper"]["id"]).entities.values()
                      for pe in items}
            assert [e["id"] for e in r["shared"]] == [x["entity"]["id"] for x in r["reasons"]]
            for x in r["reasons"]:  # each reason names what each paper does with the shared entity
                e = x["entity"]["id"]
                assert (x["this"], x["other"]) == (mine[e], theirs[e])
                assert x["entity"]["name"] in x["reason"] and x["reason"] in r["why"] or r["reasons"].index(x) >= 3
            assert f"text similarity {r['text_similarity']:.2f}" in r["why"]
            assert -1.0 <= r["text_similarity"] <= 1.0 and 0.0 <= r["word_similarity"] <= 1.0
        assert client.get(f"/papers/{p['id']}/related", params={"k": 10}).json() == related  # deterministic
    assert len(client.get(f"/papers/{p['id']}/related", params={"k": 1}).json()) <= 1


# -- entities --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["STE", "ste", "straight-through-estimator", "Straight-through estimators"])
def test_entity_by_id_name_or_alias(client: TestClient, ref: str) -> None:
    e = client.get(f"/entities/{ref}").json()
    assert e["id"] == "straight-through-estimator"
    assert e["name"] == "Straight-Through Estimator"
    assert "STE" in e["aliases"] and e["type"] == "method"
    assert {"arXiv:2401.00631", "10.1000/xyz.123"} <= {ep["paper"]["id"] for ep in e["papers"]}
    for ep in e["papers"]:
        assert ep["evidence"]["paper_id"] == ep["paper"]["id"]


def test_entity_list_by_type_sorted_and_paged(client: TestClient, store: Store) -> None:
    st = store.stats()
    page = client.get("/entities", params={"type": "method", "limit": 200}).json()
    assert page["total"] == st.entities_by_type["method"]
    assert {e["type"] for e in page["items"]} == {"method"}
    counts = [e["paper_count"] for e in page["items"]]
    assert counts == sorted(counts, reverse=True)
    first = client.get("/entities", params={"limit": 5}).json()
    second = client.get("/entities", params={"limit": 5, "offset": 5}).json()
    assert first["total"] == second["total"] == st.entities
    assert not {e["id"] for e in first["items"]} & {e["id"] for e in second["items"]}
    assert client.get("/entities", params={"limit": 10}).json()["items"] == first["items"] + second["items"]


def test_entity_list_by_name(client: TestClient) -> None:
    items = client.get("/entities", params={"q": "straight-through"}).json()["items"]
    assert items and items[0]["id"] == "straight-through-estimator"
    assert client.get("/entities", params={"q": "MI"}).json()["items"][0]["id"] == "mutual-information"


def test_entity_type_must_be_known(client: TestClient) -> None:
    r = client.get("/entities", params={"type": "gadget"})
    assert r.status_code == 422
    msg = r.json()["detail"][0]
    assert msg["loc"] == ["query", "type"] and "method" in msg["msg"] and "concept" in msg["msg"]


def test_related_entities(client: TestClient) -> None:
    related = client.get("/entities/MI/related", params={"k": 5}).json()
    assert 0 < len(related) <= 5
    assert [r["score"] for r in related] == sorted((r["score"] for r in related), reverse=True)
    assert all(r["entity"]["id"] != "mutual-information" and r["papers"] >= 1 for r in related)


# -- search ----------------------------------------------------------------------------------------


def test_search_acronym_and_name_find_the_same_entity(client: TestClient) -> None:
    def top_entity(q: str) -> dict[str, Any]:
        hits = client.get("/search", params={"q": q}).json()
        assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
        return next(h for h in hits if h["kind"] == "entity")

    by_acronym, by_name = top_entity("MI"), top_entity("mutual information")
    assert by_acronym["id"] == by_name["id"] == "mutual-information"
    assert by_acronym["matched"] == "MI"
    hits = client.get("/search", params={"q": "mutual information", "limit": 50}).json()
    assert hits[0]["id"] == "mutual-information"  # the entity outranks every paper
    assert {h["kind"] for h in hits} == {"entity", "paper"}
    assert len(client.get("/search", params={"q": "mutual information", "limit": 3}).json()) == 3


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("url, name", [
    ("/papers/no-such-paper", "no-such-paper"),
    ("/papers/no-such-paper/related", "no-such-paper"),
    ("/papers/arXiv:9999.99999", "arXiv:9999.99999"),
    ("/entities/no-such-entity", "no-such-entity"),
    ("/entities/no-such-entity/related", "no-such-entity"),
    ("/papers?entity=no-such-entity", "no-such-entity"),
])
def test_unknown_ids_are_404_naming_the_id(client: TestClient, url: str, name: str) -> None:
    r = client.get(url)
    assert r.status_code == 404
    assert name in r.json()["detail"] and r.json()["error"] == "NotFoundError"


@pytest.mark.parametrize("url, field", [
    ("/papers?limit=0", "limit"), ("/papers?limit=201", "limit"), ("/papers?offset=-1", "offset"),
    ("/papers?year=soon", "year"), ("/papers/p-x/related?k=0", "k"), ("/papers/p-x/related?k=101", "k"),
    ("/entities/MI/related?k=500", "k"), ("/search", "q"), ("/search?q=", "q"), ("/search?q=x&limit=0", "limit"),
    ("/search?q=" + "x" * 501, "q"),
])
def test_bad_parameters_are_422_naming_the_field(client: TestClient, url: str, field: str) -> None:
    r = client.get(url)
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == field


class _FailingStore(EmbeddedStore):
    """The real store, but its Cypher and stats raise whatever the test sets."""

    error: Exception

    def cypher(self, *args: Any, **kwargs: Any) -> CypherResult:
        raise self.error

    def stats(self) -> Any:
        raise self.error


@pytest.mark.parametrize("error, status", [
    (StoreError("the store went away"), 503),
    (InputError("bad input 'x'"), 422),
])
def test_kg_errors_map_to_statuses(make_client: Callable[..., TestClient], store_dir: Path,
                                   error: Exception, status: int) -> None:
    failing = _FailingStore(store_dir)
    failing.error = error
    c = make_client(store=failing)
    for r in (c.get("/stats"), c.post("/cypher", json={"query": "RETURN 1"})):
        assert r.status_code == status
        assert r.json() == {"detail": str(error), "error": type(error).__name__}


def test_request_body_size_is_limited(make_client: Callable[..., TestClient]) -> None:
    c = make_client(max_body_bytes=1000)
    r = c.post("/cypher", json={"query": "RETURN 1", "parameters": {"x": "y" * 2000}})
    assert r.status_code == 413 and "1000 bytes" in r.json()["detail"]

    def chunks() -> Any:  # no Content-Length: counted while streaming
        for _ in range(10):
            yield b" " * 200

    assert c.post("/cypher", content=chunks(), headers={"content-type": "application/json"}).status_code == 413


def test_lifespan_opens_and_closes_the_store(store_dir: Path) -> None:
    app = create_app(Settings(store_dir=str(store_dir)))
    assert app.state.store is None  # nothing opened at creation
    with TestClient(app) as c:
        assert c.get("/health").json()["status"] == "ok"
        assert isinstance(app.state.store, EmbeddedStore) and not app.state.store.writable
    assert app.state.store is None
    r = TestClient(app, raise_server_exceptions=False).get("/health")  # no lifespan, so no store
    assert r.status_code == 503 and "not open" in r.json()["detail"]


def test_missing_store_fails_at_startup(tmp_path: Path) -> None:
    app = create_app(Settings(store_dir=str(tmp_path)))
    with pytest.raises(StoreError, match="no graph here yet"), TestClient(app):
        pass


# -- cypher ----------------------------------------------------------------------------------------


def _cypher(client: TestClient, query: str, **body: Any) -> httpx.Response:
    r: httpx.Response = client.post("/cypher", json={"query": query, **body})
    return r


def test_cypher_reads(client: TestClient, store: Store) -> None:
    r = _cypher(client, "MATCH (p:Paper) RETURN count(p) AS n")
    assert r.status_code == 200, r.text
    assert r.json() == {"columns": ["n"], "rows": [[store.stats().papers]], "truncated": False}
    r = _cypher(client, "MATCH (e {id: $id}) RETURN e.name AS name", parameters={"id": "straight-through-estimator"})
    assert r.json()["rows"] == [["Straight-Through Estimator"]]


def test_cypher_row_cap(client: TestClient, store: Store) -> None:
    r = _cypher(client, "MATCH (n) RETURN n.id AS id", max_rows=5).json()
    assert len(r["rows"]) == 5 and r["truncated"] is True
    r = _cypher(client, "UNWIND range(1, 5000) AS i RETURN i").json()
    assert len(r["rows"]) == 1000 and r["truncated"] is True  # the default cap
    assert _cypher(client, "RETURN 1", max_rows=10_001).status_code == 422


@pytest.mark.parametrize("query", [
    "CREATE (n:X) RETURN n",
    "MATCH (n) DETACH DELETE n",
    "MATCH (n:Paper) SET n.title = 'x' RETURN n",
    "MERGE (n:X {id: 'x'}) RETURN n",
    "MATCH (n) REMOVE n.name RETURN n",
    "match (n) with n limit 1 create (m:X) return m",
])
def test_cypher_writes_are_refused_and_change_nothing(client: TestClient, store: Store, query: str) -> None:
    before = client.get("/stats").json()
    r = _cypher(client, query)
    assert r.status_code == 400
    assert r.json()["error"] == "CypherWriteError" and r.json()["detail"]
    assert client.get("/stats").json() == before == store.stats().model_dump()


@pytest.mark.parametrize("query", ["MATCH (n RETURN n", "RETURN", "this is not cypher"])
def test_cypher_syntax_errors_are_400(client: TestClient, query: str) -> None:
    r = _cypher(client, query)
    assert r.status_code == 400 and r.json()["error"] == "CypherSyntaxError"


def test_cypher_huge_number_literal_is_a_client_error(client: TestClient) -> None:
    # Found by the schema fuzzer: a 5000-digit literal once escaped the engine as a ValueError (500).
    assert _cypher(client, "RETURN " + "9" * 5000).status_code == 400


def test_cypher_body_is_validated(client: TestClient) -> None:
    assert _cypher(client, "").status_code == 422
    assert _cypher(client, "RETURN 1 " + " " * 10_000).status_code == 422
    assert client.post("/cypher", json={"query": "RETURN 1", "surprise": 1}).status_code == 422
    assert client.post("/cypher", content=b"{not json", headers={"content-type": "application/json"}).status_code \
        in (400, 422)


def test_cypher_time_limit(make_client: Callable[..., TestClient], store: Store) -> None:
    c = make_client(store=store, cypher_timeout_s=0.05)
    r = _cypher(c, "MATCH (a), (b), (c) RETURN count(*) AS n")
    assert r.status_code == 408 and r.json()["error"] == "CypherTimeout"


# -- kg serve --------------------------------------------------------------------------------------


def test_serve_binds_localhost_by_default(monkeypatch: pytest.MonkeyPatch, store_dir: Path) -> None:
    import uvicorn

    from kg.cli.serve import serve

    calls: list[dict[str, Any]] = []

    class Bound:  # kg serve binds the port itself before it says "serving"; not a real socket here
        def getsockname(self) -> tuple[str, int]:
            return calls[0]["host"], calls[0]["port"]

        def __enter__(self) -> Bound:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr("kg.cli.serve.listen", lambda host, port: calls.append({"host": host, "port": port}) or Bound())
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: calls.append({"app": self.config.app}))
    result = CliRunner().invoke(serve, ["--store-dir", str(store_dir)])
    assert result.exit_code == 0, result.output
    bind, run = calls
    assert bind == {"host": "127.0.0.1", "port": 8000}
    assert not run["app"].state.store.writable  # served read-only


def test_serve_reports_a_missing_store(tmp_path: Path) -> None:
    from kg.cli.main import main

    assert main(["serve", "--store-dir", str(tmp_path / "none")]) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_serve_answers_health_over_tcp(store_dir: Path) -> None:
    port = _free_port()
    kg = "import sys; from kg.cli import main; sys.exit(main())"
    proc = subprocess.Popen([sys.executable, "-c", kg, "serve", "--store-dir", str(store_dir), "--port", str(port),
                             "--log-level", "warning"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                assert time.monotonic() < deadline, "kg serve did not answer within 30 s"
                time.sleep(0.2)
        assert r.status_code == 200 and r.json()["status"] == "ok"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_docs_work_offline(client) -> None:
    import re

    page = client.get("/docs")
    assert page.status_code == 200
    urls = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert urls and not [u for u in urls if u.startswith(("http:", "https:", "//"))]
    assert all(client.get(u).status_code == 200 for u in urls)
