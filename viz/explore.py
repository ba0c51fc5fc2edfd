"""Render trends and landscapes as self-contained HTML pages whose own script draws the charts as inline SVG."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kg import __version__
from kg.models import Landscape, SearchHit, Trends
from kg.store.base import Store
from viz import assets
from viz.render import script_json

# Static markup (no data in it): the trends page's filter, filled in and wired by explore.js (which also puts
# the periods compared in the period boxes' placeholders).
_TRENDS_FORM = """<form id="kg-form" autocomplete="off">
  <label>type <select name="type"><option value="">any</option><option>method</option><option>model</option>
    <option>dataset</option><option>task</option><option>metric</option><option>concept</option></select></label>
  <label>from <input name="from" size="12" placeholder="period"></label>
  <label>to <input name="to" size="12" placeholder="period"></label>
  <label>min. papers <input name="min_count" size="4" placeholder="5"></label>
  <button type="submit">Compare</button>
</form>"""


# The search page's box: explore.js turns a submit into a navigation to ?q=...
_SEARCH_FORM = """<form id="kg-form" autocomplete="off">
  <label>search <input name="q" size="48" placeholder="words or a description of what you look for"></label>
  <button type="submit">Search</button>
</form>"""


@dataclass(frozen=True, slots=True)
class RenderedPage:
    """An HTML page and the Content-Security-Policy to send it with (the page also carries it in a meta tag)."""

    html: str
    csp: str


def _page(data: dict[str, Any], form: str = "") -> RenderedPage:
    csp = assets.explore_content_security_policy()
    parts = {"CSP": csp, "VERSION": __version__, "CSS": assets.explore_css(), "FORM": form,
             "DATA": script_json(data), "CHARTS_JS": assets.charts_js(), "EXPLORE_JS": assets.explore_js()}
    html = re.sub(r"@@([A-Z_]+)@@", lambda m: parts[m.group(1)], assets.explore_template())
    return RenderedPage(html=html, csp=csp)


def render_trends(t: Trends, *, link_base: str = "/view", query: dict[str, Any] | None = None) -> RenderedPage:
    title = "Trends" + (f" · {t.type} entities" if t.type else "")
    return _page({"kind": "trends", "title": title, "note": t.note, "link_base": link_base,
                  "query": query or {}, "trends": t.model_dump(mode="json")}, _TRENDS_FORM)


def render_landscape(ls: Landscape, *, link_base: str = "/view") -> RenderedPage:
    return _page({"kind": "landscape", "title": f"{ls.entity.name} · landscape ({ls.entity.type})", "note": ls.note,
                  "link_base": link_base, "landscape": ls.model_dump(mode="json")})


def render_search(q: str, hits: list[SearchHit], *, link_base: str = "/view") -> RenderedPage:
    papers = sum(h.kind == "paper" for h in hits)
    note = (f"{papers} papers by meaning and words (BM25 fused with embeddings), each with its closest sentence, "
            f"and {len(hits) - papers} entities by name") if hits else ("No match." if q else "")
    return _page({"kind": "search", "title": f"Search · {q}" if q else "Search", "note": note,
                  "link_base": link_base, "query": {"q": q}, "hits": [h.model_dump(mode="json") for h in hits]},
                 _SEARCH_FORM)


def search_view(store: Store, q: str, *, limit: int = 20, link_base: str = "/view") -> RenderedPage:
    """Papers and entities matching ``q`` (as ``/search``), each paper with the sentence that matched."""
    return render_search(q, store.search(q, limit=limit) if q.strip() else [], link_base=link_base)


def trends_view(store: Store, *, type: str | None = None, before: str | None = None, after: str | None = None,
                limit: int = 20, min_count: int = 5, link_base: str = "/view") -> RenderedPage:
    """The store's rising, falling and new entities between two periods, each with a sparkline."""
    t = store.trends(type=type, before=before, after=after, limit=limit, min_count=min_count)
    query = {"type": type, "from": before, "to": after, "min_count": min_count}
    return render_trends(t, link_base=link_base, query=query)


def landscape_view(store: Store, ref: str, *, limit: int = 25, cell_limit: int = 5,
                   link_base: str = "/view") -> RenderedPage:
    """A task's (or dataset's) matrix of methods against datasets (or tasks); a cell opens its papers."""
    ls = store.landscape(store.resolve_entity(ref), limit=limit, cell_limit=cell_limit)
    return render_landscape(ls, link_base=link_base)
