"""The trends page, the landscape page and the entity view's timeline in a real headless Chromium: charts drawn
as the data says, nothing loaded from the network, markup from the corpus shown as text.

Set KG_UPDATE_DOCS=1 to also refresh docs/trends.png and docs/landscape.png.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.store.embedded import EmbeddedStore

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"


def serve(store: EmbeddedStore) -> Iterator[str]:
    import socket

    import uvicorn
    from fastapi import FastAPI

    from api import errors
    from api.routes import views

    app = FastAPI()
    app.state.store = store
    errors.install(app)
    app.include_router(views.router)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def evil_url(evil_store: EmbeddedStore) -> Iterator[str]:
    yield from serve(evil_store)


def open_page(page: Any, url: str) -> None:
    page.send("Network.enable")
    page.goto(url)
    page.wait_for("window.kgExplore !== undefined && window.kgExplore.ready === true", timeout=60)


def ids_of(page: Any, selector: str) -> list[str]:
    return page.eval(f"[...document.querySelectorAll({selector!r})].map(e => e.dataset.id)")


def texts_of(page: Any, selector: str) -> list[str]:
    return page.eval(f"[...document.querySelectorAll({selector!r})].map(e => e.textContent)")


def offline(page: Any, url: str) -> bool:
    urls = [ev["params"]["request"]["url"] for ev in page.browser.events
            if ev.get("sessionId") == page.session and ev["method"] == "Network.requestWillBeSent"]
    return [u for u in urls if not u.startswith("data:")] == [url]


def test_trends_page_draws_every_list(page: Any, api_url: str, seeds_store: EmbeddedStore) -> None:
    url = f"{api_url}/view/trends?min_count=2&limit=8"
    open_page(page, url)
    t = seeds_store.trends(min_count=2, limit=8)
    assert page.errors() == []
    assert offline(page, url)
    for name, items in (("rising", t.rising), ("falling", t.falling), ("new", t.new)):
        assert ids_of(page, f"section[data-list={name}] tr[data-id]") == [it.entity.id for it in items], name
    # One sparkline per listed entity, plus the chart of all papers; each bar's height follows its count.
    n_items = len(t.rising) + len(t.falling) + len(t.new)
    assert page.eval("kgExplore.charts()") == n_items + 1
    assert page.eval("document.querySelectorAll('svg.kg-chart rect.kg-bar').length") == len(t.buckets)
    first = t.rising[0]
    bars = page.eval(f"[...document.querySelector('section[data-list=rising] tr[data-id=\"{first.entity.id}\"] svg')"
                     ".querySelectorAll('rect')].map(r => +r.getAttribute('height'))")
    assert len(bars) == sum(1 for v in first.series if v)
    assert page.eval("document.querySelector('#kg-note').textContent").startswith(f"{t.before.label} (")
    # The form rebuilds the URL: asking for one type only reloads the page with type=... (a type the seeds'
    # trends have at two papers; which one depends on the extractor)
    listed = {ty: seeds_store.trends(type=ty, min_count=2, limit=8) for ty in ("task", "method", "concept", "model")}
    kind = next(ty for ty, tt in listed.items() if tt.rising or tt.falling or tt.new)
    page.eval(f"document.querySelector('#kg-form select[name=type]').value = '{kind}';"
              "document.querySelector('#kg-form button').click()")
    page.wait_for(f"location.search.includes('type={kind}') && window.kgExplore && kgExplore.ready", timeout=30)
    types = page.eval("[...document.querySelectorAll('tr[data-id] td:nth-child(2)')].map(td => td.textContent)")
    assert types and set(types) == {kind}
    page.screenshot(ARTIFACTS / "view-trends.png")
    if os.environ.get("KG_UPDATE_DOCS"):
        page.goto(url)
        page.wait_for("window.kgExplore && kgExplore.ready", timeout=30)
        page.screenshot(ROOT / "docs" / "trends.png")
    assert page.errors() == []


def test_landscape_page_opens_a_cells_papers(page: Any, api_url: str, seeds_store: EmbeddedStore,
                                             landscape_focus: str) -> None:
    url = f"{api_url}/view/landscape/{landscape_focus}?limit=10"
    open_page(page, url)
    ls = seeds_store.landscape(landscape_focus, limit=10)
    assert page.errors() == []
    assert offline(page, url)
    assert ids_of(page, "th.kg-row") == [r.entity.id for r in ls.rows]
    assert ids_of(page, "th.kg-col") == [c.entity.id for c in ls.columns]
    assert page.eval("document.querySelectorAll('button.kg-cell-btn').length") == len(ls.cells)
    cell = ls.cells[-1]
    assert page.eval(f"kgExplore.select({cell.row!r}, {cell.column!r})") == len(cell.papers)
    assert ids_of(page, "#kg-detail .kg-paper") == [p.id for p in cell.papers]
    assert texts_of(page, "#kg-detail .kg-quote") == [e.sentence for p in cell.papers for e in p.evidence]
    href = page.eval("document.querySelector('#kg-detail .kg-paper a').href")
    assert href.startswith(f"{api_url}/view/paper/")
    page.screenshot(ARTIFACTS / "view-landscape.png")
    if os.environ.get("KG_UPDATE_DOCS"):
        shutil.copyfile(ARTIFACTS / "view-landscape.png", ROOT / "docs" / "landscape.png")
    assert page.errors() == []


def test_entity_view_draws_its_timeline_and_links_its_landscape(page: Any, api_url: str, seeds_store: EmbeddedStore,
                                                                  landscape_focus: str) -> None:
    page.send("Network.enable")
    page.goto(f"{api_url}/view/entity/{landscape_focus}")
    page.wait_for("window.kgView !== undefined && window.kgView.ready === true", timeout=60)
    t = seeds_store.timeline(landscape_focus)
    heights = page.eval("[...document.querySelectorAll('#kg-timeline rect.kg-bar')]"
                        ".map(r => +r.getAttribute('height'))")
    assert len(heights) == len(t.years)
    assert [h > 0 for h in heights] == [p.papers > 0 for p in t.years]
    top = max(range(len(t.years)), key=lambda i: t.years[i].papers)
    assert heights[top] == max(heights)
    page.eval("document.querySelector('.kg-landscape-link').click()")
    page.wait_for("location.pathname.startsWith('/view/landscape/') && window.kgExplore && kgExplore.ready", timeout=30)
    assert page.errors() == []


def test_markup_in_the_corpus_stays_text(page: Any, evil_url: str, evil_store: EmbeddedStore,
                                         evil: dict[str, str]) -> None:
    task = next(e for e in evil_store.entity_ids() if evil_store.graph.nodes[e]["label"] == "Task")
    for url in (f"{evil_url}/view/landscape/{task}", f"{evil_url}/view/trends?min_count=1&from=2023&to=2024"):
        open_page(page, url)
        if "landscape" in url:
            ls = evil_store.landscape(task)
            for c in ls.cells:
                page.eval(f"kgExplore.select({c.row!r}, {c.column!r})")
                assert texts_of(page, "#kg-detail .kg-paper-title a") == [p.title for p in c.papers]
            assert any(evil["title"] == p.title for c in ls.cells for p in c.papers)
        assert page.eval("window.__pwned") is None
        assert page.eval("document.querySelectorAll('img').length") == 0
        assert page.eval("document.scripts.length") == 3  # the data block, the charts, the page
        assert page.errors() == []


def test_paper_view_lists_related_papers_with_why(page: Any, api_url: str, seeds_store: EmbeddedStore) -> None:
    pid = sorted(seeds_store.by_label("Paper"))[0]
    page.goto(f"{api_url}/view/paper/{pid}")
    page.wait_for("window.kgView !== undefined && window.kgView.ready === true", timeout=60)
    want = seeds_store.related_papers(pid, 5)
    assert texts_of(page, ".kg-related-why") == [r.why for r in want]
    assert texts_of(page, ".kg-related-title") == [r.paper.title for r in want]
    page.eval("document.querySelector('.kg-related-title').click()")
    page.wait_for(f"location.pathname === '/view/paper/{want[0].paper.id}' && window.kgView && kgView.ready",
                  timeout=30)
    assert page.errors() == []


def test_search_page_and_the_views_search_box(page: Any, api_url: str, seeds_store: EmbeddedStore) -> None:
    q = "how much a network memorises of its training data"
    page.goto(f"{api_url}/view")
    page.wait_for("window.kgView !== undefined && window.kgView.ready === true", timeout=60)
    # No node of the overview is named so: the box offers the search page, which ranks papers by meaning.
    page.eval(f"document.getElementById('kg-search').value = {q!r}; "
              "document.querySelector('#kg-search-form button').click()")
    page.eval("document.querySelector('.kg-search-all').click()")
    page.wait_for("location.pathname === '/view/search' && window.kgExplore && kgExplore.ready", timeout=60)
    hits = seeds_store.search(q, limit=20)
    assert page.eval("kgExplore.hits()") == len(hits) > 0
    assert texts_of(page, ".kg-hit-quote") == [h.sentence for h in hits if h.sentence]
    assert page.eval("document.querySelector('#kg-form input[name=q]').value") == q
    page.eval("document.querySelector('.kg-hit a').click()")
    page.wait_for(f"location.pathname === '/view/paper/{hits[0].id}'", timeout=30)
    assert page.errors() == []
