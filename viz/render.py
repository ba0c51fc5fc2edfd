"""Render GraphViews as self-contained HTML pages: pyvis builds the network, our template inlines everything."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pyvis.network import Network

from kg import __version__
from kg.models import GraphView
from kg.store.base import Store
from viz import assets

ViewKind = Literal["overview", "paper", "entity"]

# Colour and shape per node type (Tableau 10 colours; shapes that draw the label below the node).
TYPE_STYLE: dict[str, tuple[str, str]] = {
    "Paper": ("#4e79a7", "square"),
    "Method": ("#f28e2b", "hexagon"),
    "Model": ("#e15759", "diamond"),
    "Dataset": ("#59a14f", "triangle"),
    "Task": ("#b07aa1", "star"),
    "Metric": ("#edc948", "triangleDown"),
    "Concept": ("#76b7b2", "dot"),
}
_OTHER_STYLE = ("#bab0ac", "dot")

# Edges between papers and entities are the bulk; relations between entities are the news.
_EDGE_STYLE: dict[str, dict[str, Any]] = {
    "PROPOSES": {"color": "#4e79a7", "width": 2.5},
    "USES": {"color": "#9aa4ae", "width": 1.2},
    "EVALUATES_ON": {"color": "#9aa4ae", "width": 1.2},
    "ADDRESSES": {"color": "#9aa4ae", "width": 1.2},
    "MENTIONS": {"color": "#c5cbd1", "width": 1},
    "RELATED_TO": {"color": "#a9c4e0", "width": 1, "dashes": True, "arrows": ""},
    "CO_OCCURS": {"color": "#c5cbd1", "width": 1, "arrows": ""},
}
_RELATION_STYLE = {"color": "#6e5a8a", "width": 2}
_UNLABELLED_EDGES = {"RELATED_TO", "CO_OCCURS", "MENTIONS"}
MAX_EDGE_LABELS = 120  # beyond this, edge labels are clutter; the type stays in the hover text
MAX_LABEL_CHARS = 42


@dataclass(frozen=True, slots=True)
class RenderedView:
    """An HTML page and the Content-Security-Policy to send it with (the page also carries it in a meta tag)."""

    html: str
    csp: str
    view: GraphView


def _short(text: str, n: int = MAX_LABEL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _node_size(paper_count: int) -> float:
    return round(min(48.0, 8 + 6 * math.log2(1 + max(1, paper_count))), 1)


def _font_size(paper_count: int) -> int:
    return min(34, 16 + round(3 * math.log2(max(1, paper_count))))


def _network(view: GraphView, focus: str | None) -> Network:
    net = Network(directed=True, cdn_resources="in_line")
    # Best-known first: the page's search lets these claim a shared alias.
    for n in sorted(view.nodes, key=lambda n: (-int(n.get("paper_count") or 1), n["id"])):
        label = n.get("label", "")
        color, shape = TYPE_STYLE.get(label, _OTHER_STYLE)
        pc = int(n.get("paper_count") or 1)
        size = 14.0 if label == "Paper" else _node_size(pc)
        extra = {k: v for k, v in n.items() if k not in ("id", "label")}
        is_focus = n["id"] == focus
        net.add_node(n["id"], label=_short(n.get("name") or n["id"]), shape=shape,
                     color={"background": color, "border": "#1f2328" if is_focus else "rgba(0,0,0,0.35)",
                            "highlight": {"background": color, "border": "#1f2328"},
                            "hover": {"background": color, "border": "#1f2328"}},
                     size=size * 1.5 if is_focus else size, borderWidth=4 if is_focus else 1,
                     font={"size": 18 if is_focus else 13 if label == "Paper" else _font_size(pc)},
                     kg_type=label, **extra)
    labelled = [e for e in view.edges if e["type"] not in _UNLABELLED_EDGES]
    show_labels = len(labelled) <= MAX_EDGE_LABELS
    for i, e in enumerate(view.edges):
        style = dict(_EDGE_STYLE.get(e["type"], _RELATION_STYLE))
        count = int(e.get("count") or 1)
        if e["type"] == "CO_OCCURS":
            style["width"] = round(1 + math.log2(count), 2)
        if show_labels and e["type"] not in _UNLABELLED_EDGES:
            style["label"] = e["type"]
        net.add_edge(e["source"], e["target"], id=f"e{i}", kg_type=e["type"], count=count,
                     sentence=e.get("sentence") or "", paper_id=e.get("paper_id"), score=e.get("score"),
                     **{"arrows": "to", **style})
    return net


def _options(n_nodes: int) -> dict[str, Any]:
    # Each physics step costs O(n log n); at thousands of nodes fewer steps and no overlap test keep the
    # layout to seconds (the user can still drag nodes apart), and physics stops once it is done.
    big = n_nodes > 1000
    iterations = 80 if big else 250 if n_nodes > 300 else 400
    return {
        "autoResize": True,
        "layout": {"randomSeed": 7, "improvedLayout": n_nodes <= 200},
        "physics": {
            "enabled": True,
            "solver": "forceAtlas2Based",
            "forceAtlas2Based": {"gravitationalConstant": -55, "centralGravity": 0.015,
                                 "springLength": 80 if n_nodes > 100 else 130, "springConstant": 0.06,
                                 "damping": 0.55, "avoidOverlap": 0 if big else 0.8},
            "minVelocity": 1.0,
            "stabilization": {"enabled": True, "iterations": iterations, "updateInterval": 20, "fit": True},
        },
        "interaction": {"hover": True, "tooltipDelay": 120, "hideEdgesOnDrag": big, "hideEdgesOnZoom": big,
                        "keyboard": False, "multiselect": False},
        # No label options: the page draws node and edge labels itself, none over another (app.js drawLabels).
        "edges": {"smooth": False, "selectionWidth": 1.5, "hoverWidth": 1.5,
                  "arrows": {"to": {"scaleFactor": 0.5}}},
    }


# Replaced in the UTF-8 bytes, each a search for one byte sequence: ``str.translate`` with a mapping took 0.6 s
# over a 5,000-node view's 7.6 MB, all of it holding the interpreter (the server's event loop waited as long).
_UNSAFE_IN_SCRIPT = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"), ("\u2028".encode(), b"\\u2028"),
                     ("\u2029".encode(), b"\\u2029"))


def script_json(obj: Any) -> str:
    """JSON that is inert inside a ``<script>`` block: no ``<``, ``>`` or ``&`` survive to close or open a tag.
    (UTF-8 never holds one character's bytes inside another's, so the byte replacements touch nothing else.)"""
    data = orjson.dumps(obj)
    for unsafe, escaped in _UNSAFE_IN_SCRIPT:
        if unsafe in data:
            data = data.replace(unsafe, escaped)
    return data.decode("utf-8")


def render(view: GraphView, *, kind: ViewKind, title: str, focus: str | None = None,
           link_base: str = "/view", extra: dict[str, Any] | None = None) -> RenderedView:
    """The page for ``view``; clicking a node opens ``{link_base}/paper/{id}`` or ``{link_base}/entity/{id}``."""
    net = _network(view, focus)
    present: dict[str, int] = {}
    for n in view.nodes:
        present[n.get("label", "")] = present.get(n.get("label", ""), 0) + 1
    order = [t for t in TYPE_STYLE if t in present] + sorted(t for t in present if t not in TYPE_STYLE)
    data = {
        "kind": kind, "title": title, "note": view.note, "focus": focus, "link_base": link_base,
        "types": [{"type": t, "color": TYPE_STYLE.get(t, _OTHER_STYLE)[0], "shape": TYPE_STYLE.get(t, _OTHER_STYLE)[1],
                   "count": present[t]} for t in order],
        "counts": {"nodes": len(view.nodes), "edges": len(view.edges), "total_nodes": view.total_nodes},
        "nodes": net.nodes, "edges": net.edges, "options": _options(len(view.nodes)),
        **(extra or {}),
    }
    csp = assets.content_security_policy()
    parts = {"CSP": csp, "VERSION": __version__, "VIS_VERSION": assets.VIS_VERSION, "VIS_CSS": assets.vis_css(),
             "APP_CSS": assets.app_css(), "DATA": script_json(data), "VIS_JS": assets.vis_js(),
             "CHARTS_JS": assets.charts_js(), "APP_JS": assets.app_js()}
    # One pass, so nothing substituted (an abstract, the vis bundle) is itself scanned for placeholders.
    html = re.sub(r"@@([A-Z_]+)@@", lambda m: parts[m.group(1)], assets.page_template())
    return RenderedView(html=html, csp=csp, view=view)


# -- the three views, from any Store --------------------------------------------------------------------


def overview_view(store: Store, *, top_n: int = 150, types: list[str] | None = None,
                  link_base: str = "/view") -> RenderedView:
    """The concept graph: the ``top_n`` entities by paper count, their relations and co-occurrences."""
    view = store.overview(top_n=top_n, types=types)
    return render(view, kind="overview", title="Concept graph", link_base=link_base)


RELATED_SHOWN = 5  # related papers a paper view lists, with why


def paper_view(store: Store, paper_id: str, *, hops: int = 1, limit: int = 200,
               link_base: str = "/view") -> RenderedView:
    """A paper, its entities (edges typed PROPOSES, USES, ...) and its related papers."""
    view = store.neighbourhood(paper_id, hops=hops, limit=limit)
    name = next((n.get("name") or paper_id for n in view.nodes if n["id"] == paper_id), paper_id)
    related = [r.model_dump(mode="json") for r in store.related_papers(paper_id, RELATED_SHOWN)]
    return render(view, kind="paper", title=name, focus=paper_id, link_base=link_base, extra={"related": related})


def entity_view(store: Store, ref: str, *, hops: int = 1, limit: int = 200, link_base: str = "/view") -> RenderedView:
    """An entity (by id, name or alias) and the papers and entities within ``hops``."""
    entity_id = store.resolve_entity(ref)
    view = store.neighbourhood(entity_id, hops=hops, limit=limit)
    node = next((n for n in view.nodes if n["id"] == entity_id), {})
    title = f"{node.get('name') or entity_id} · {node.get('label', 'entity')}"
    # Its papers over time, drawn in the panel; a task or dataset also links to its landscape.
    timeline = store.timeline(entity_id).model_dump(mode="json")
    extra: dict[str, Any] = {"timeline": timeline, "landscape": node.get("label") in ("Task", "Dataset")}
    # Its leaderboards, when papers report results on it (a dataset, mostly): the panel's tables and charts.
    board = _leaderboard(store, entity_id)
    if board is not None:
        extra["leaderboard"] = board
    return render(view, kind="entity", title=title, focus=entity_id, link_base=link_base, extra=extra)


LEADERBOARD_ROWS = 10  # rows per metric an entity view's panel lists (kg leaderboard and the API list more)


def _leaderboard(store: Store, entity_id: str) -> dict[str, Any] | None:
    """The entity's score leaderboards for its view (kg.leaderboard), or None when no result is reported on it."""
    from kg.leaderboard import build_leaderboard, dataset_results, entity_ref

    ref = entity_ref(store, entity_id)
    results = dataset_results(store, ref)
    if not results:
        return None
    kind = "score" if any(r["kind"] == "score" for r in results) else "gain"
    return build_leaderboard(ref, results, kind=kind, limit=LEADERBOARD_ROWS).model_dump(mode="json")
