"""Fast checks of the rendered pages, the `kg viz` command and the /view routes, without a browser."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from kg.cli.main import main
from kg.errors import InputError, NotFoundError
from kg.models import GraphView
from kg.store.embedded import EmbeddedStore
from viz import entity_view, overview_view, paper_view, render
from viz.render import TYPE_STYLE, script_json

XSS_SCRIPT = "<script>window.__pwned=1</script>"
XSS_IMG = '<img src=x onerror="window.__pwned=1">'
DATA_RE = re.compile(r'<script type="application/json" id="kg-data">(.*?)</script>', re.S)


def page_data(html: str) -> dict[str, Any]:
    m = DATA_RE.search(html)
    assert m, "no data block"
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def inline_scripts(html: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", html, re.S)


def small_view() -> GraphView:
    return GraphView(
        nodes=[{"id": "p1", "label": "Paper", "name": "A <b>paper</b>", "paper_count": 1, "abstract": XSS_SCRIPT},
               {"id": "m1", "label": "Method", "name": "BERT", "aliases": ["bert model"], "paper_count": 7},
               {"id": "c1", "label": "Concept", "name": "attention", "aliases": [], "paper_count": 1}],
        edges=[{"source": "p1", "target": "m1", "type": "USES", "count": 1, "sentence": XSS_IMG, "paper_id": "p1",
                "score": None},
               {"source": "m1", "target": "c1", "type": "CO_OCCURS", "count": 3, "sentence": "", "paper_id": None,
                "score": 0.5}],
        total_nodes=3, note="showing 3 of 3 nodes")


# -- the page ------------------------------------------------------------------------------------------


def test_script_json_is_inert_in_html_and_round_trips() -> None:
    obj = {"t": "</script><script>alert(1)</script> & <!-- \u2028 \u2029", "n": [1, None]}
    s = script_json(obj)
    assert not set("<>&") & set(s)
    assert "\u2028" not in s and "\u2029" not in s
    assert json.loads(s) == obj


def test_page_is_self_contained_with_a_strict_csp() -> None:
    html = render(small_view(), kind="overview", title="t").html
    # Nothing is loaded from anywhere: no src/href to a URL, no <link> but the empty data: favicon.
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert re.findall(r"<link[^>]*>", html) == ['<link rel="icon" href="data:,">']
    assert "vis.Network" in html and "vis-network" in html  # vis-network is inlined, not fetched
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert csp
    policy = csp.group(1)
    assert "default-src 'none'" in policy and "connect-src 'none'" in policy and "img-src data:" in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    # Every inline script is allowed by its hash, and only those.
    scripts = inline_scripts(html)
    assert len(scripts) == 3  # vis-network, the charts (the entity's timeline), the view
    for s in scripts:
        digest = base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy


def test_explore_pages_are_self_contained_with_a_strict_csp(seeds_store, landscape_focus) -> None:
    from viz import landscape_view, trends_view

    for page in (trends_view(seeds_store, min_count=1), landscape_view(seeds_store, landscape_focus)):
        html = page.html
        assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
        policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1)
        assert policy == page.csp and "default-src 'none'" in policy and "connect-src 'none'" in policy
        scripts = inline_scripts(html)
        assert len(scripts) == 2  # the charts and the page
        for s in scripts:
            digest = base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
            assert f"'sha256-{digest}'" in policy


def test_text_from_the_data_never_reaches_the_markup() -> None:
    title = f"Evil {XSS_SCRIPT} {XSS_IMG}"
    html = render(small_view(), kind="paper", title=title, focus="p1").html
    assert XSS_SCRIPT not in html and XSS_IMG not in html and "<b>paper" not in html
    data = page_data(html)
    assert data["title"] == title
    by_id = {n["id"]: n for n in data["nodes"]}
    assert by_id["p1"]["abstract"] == XSS_SCRIPT
    assert data["edges"][0]["sentence"] == XSS_IMG
    assert "title" not in by_id["p1"]  # tooltips are built as DOM elements in the page, not sent as HTML


def test_nodes_styled_by_type_and_sized_by_paper_count() -> None:
    data = page_data(render(small_view(), kind="overview", title="t").html)
    by_id = {n["id"]: n for n in data["nodes"]}
    assert by_id["m1"]["shape"] == TYPE_STYLE["Method"][1]
    assert by_id["m1"]["color"]["background"] == TYPE_STYLE["Method"][0]
    assert by_id["p1"]["shape"] == TYPE_STYLE["Paper"][1]
    assert by_id["m1"]["size"] > by_id["c1"]["size"]
    assert [n["id"] for n in data["nodes"]][0] == "m1"  # best known first: it claims shared aliases in search
    assert [t["type"] for t in data["types"]] == ["Paper", "Method", "Concept"]
    assert {e["kg_type"] for e in data["edges"]} == {"USES", "CO_OCCURS"}
    assert data["edges"][0]["label"] == "USES" and "label" not in data["edges"][1]
    assert data["counts"] == {"nodes": 3, "edges": 2, "total_nodes": 3}
    assert data["options"]["physics"]["stabilization"]["enabled"] is True


# -- the views from a store -------------------------------------------------------------------------------


def test_overview_caps_and_notes(seeds_store: EmbeddedStore) -> None:
    r = overview_view(seeds_store, top_n=40)
    data = page_data(r.html)
    assert len(data["nodes"]) == 40 == len(r.view.nodes)
    assert data["note"].startswith(f"showing 40 of {r.view.total_nodes} entities (top 40 by paper count")
    ids = {n["id"] for n in r.view.nodes}
    assert all(e["source"] in ids and e["target"] in ids for e in r.view.edges)
    assert any(e["type"] == "CO_OCCURS" for e in r.view.edges)
    counts = [n["paper_count"] for n in seeds_store.overview(top_n=10_000).nodes]
    assert min(n["paper_count"] for n in r.view.nodes) >= sorted(counts, reverse=True)[39]


def test_overview_type_filter(seeds_store: EmbeddedStore) -> None:
    r = overview_view(seeds_store, types=["task", "dataset"])
    assert {n["label"] for n in r.view.nodes} <= {"Task", "Dataset"}
    assert "types: task, dataset" in r.view.note
    with pytest.raises(InputError, match="choose from"):
        seeds_store.overview(types=["nonsense"])


def test_paper_and_entity_views(seeds_store: EmbeddedStore) -> None:
    pid = seeds_store.list_papers(limit=1).items[0].id
    p = paper_view(seeds_store, pid)
    data = page_data(p.html)
    assert data["focus"] == pid and data["kind"] == "paper"
    assert {"Paper"} < {n["label"] for n in p.view.nodes}
    eid = seeds_store.resolve_entity("LLMs")
    e = entity_view(seeds_store, "LLMs", hops=2, limit=50)
    assert page_data(e.html)["focus"] == eid
    assert len(e.view.nodes) == 50 and e.view.total_nodes > 50
    with pytest.raises(NotFoundError):
        entity_view(seeds_store, "no such thing at all")


def test_evil_corpus_renders_as_data(evil_store: EmbeddedStore, evil: dict[str, str]) -> None:
    html = paper_view(evil_store, evil["id"]).html
    assert evil["script"] not in html and evil["img"] not in html
    data = page_data(html)
    assert data["title"] == evil["title"]
    assert any(evil["img"] in (e["sentence"] or "") for e in data["edges"])


# -- kg viz ------------------------------------------------------------------------------------------------


def test_kg_viz_writes_each_view(seeds_store: EmbeddedStore, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    store = str(seeds_store.path)
    pid = seeds_store.list_papers(limit=1).items[0].id
    assert main(["viz", "--store-dir", store, "--top", "30", "-o", str(tmp_path / "o.html")]) == 0
    assert len(page_data((tmp_path / "o.html").read_text())["nodes"]) == 30
    assert "wrote" in capsys.readouterr().err
    assert main(["viz", "--store-dir", store, "--paper", pid, "--link-base", "", "-o", str(tmp_path / "p.html")]) == 0
    assert page_data((tmp_path / "p.html").read_text())["link_base"] == ""
    assert main(["viz", "--store-dir", store, "--entity", "LLMs", "--hops", "2", "-o", str(tmp_path / "e.html")]) == 0
    assert page_data((tmp_path / "e.html").read_text())["link_base"] == "http://127.0.0.1:8000/view"


def test_kg_viz_errors(seeds_store: EmbeddedStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(seeds_store.path)
    out = str(tmp_path / "x.html")
    assert main(["viz", "--store-dir", store, "--entity", "nothing like it", "-o", out]) == 2
    assert "no entity" in capsys.readouterr().err
    assert main(["viz", "--store-dir", store, "--paper", "a", "--entity", "b", "-o", out]) == 2
    assert main(["viz", "--store-dir", store, "--types", "gizmo", "-o", out]) == 2
    assert main(["viz", "--store-dir", store, "--hops", "3", "--entity", "LLMs", "-o", out]) == 2
    assert "choose from" in capsys.readouterr().err


# -- /view -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(seeds_store: EmbeddedStore) -> TestClient:
    from api import errors
    from api.routes import views

    app = FastAPI()
    app.state.store = seeds_store
    errors.install(app)
    app.include_router(views.router)
    return TestClient(app)


def test_view_routes(client: TestClient, seeds_store: EmbeddedStore) -> None:
    r = client.get("/view", params={"top": 25})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["content-security-policy"]
    data = page_data(r.text)
    assert len(data["nodes"]) == 25 and data["link_base"] == "/view"
    pid = seeds_store.list_papers(limit=1).items[0].id
    r = client.get(f"/view/paper/{pid}", params={"hops": 2, "limit": 30})
    assert r.status_code == 200 and page_data(r.text)["focus"] == pid
    r = client.get("/view/entity/LLMs")
    assert r.status_code == 200 and page_data(r.text)["focus"] == seeds_store.resolve_entity("LLMs")
    assert client.get("/view", params={"types": ["task", "model"]}).status_code == 200


def test_view_route_errors(client: TestClient) -> None:
    assert client.get("/view/paper/p-nope").status_code == 404
    assert client.get("/view/entity/nothing like it").status_code == 404
    assert client.get("/view", params={"types": "gizmo"}).status_code == 422
    assert client.get("/view/entity/LLMs", params={"hops": 3}).status_code == 422
