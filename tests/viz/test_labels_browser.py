"""Graph labels in headless Chromium (issue 32): the page draws them itself, none over another, on the real
views of the seeds: the overview (its default 150 nodes, and all 347), a paper's and an entity's view, at the
fitted size, zoomed in and with a node hovered.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kg.cli.main import main
from kg.models import GraphView
from kg.store.embedded import EmbeddedStore

pytestmark = pytest.mark.browser


def open_graph(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for("window.kgView !== undefined && window.kgView.ready === true", timeout=120)
    redraw(page)


def redraw(page: Any) -> None:
    """Draw the graph now (a background tab gets no animation frames), labels and all."""
    page.eval("kgView.network.redraw()")


# -- graph labels ---------------------------------------------------------------------------------------------

# Each label the page drew, with the box the test measures itself: the text's width in the label's font from a
# fresh canvas, and where its node is on screen.
_LABELS_JS = """(() => {
  const net = kgView.network, ctx = document.createElement('canvas').getContext('2d');
  return kgView.labels().map(l => {
    ctx.font = (l.bold ? 'bold ' : '') + l.px + 'px system-ui, sans-serif';
    const at = l.kind === 'node' ? net.canvasToDOM(net.getPosition(l.id)) : null;
    const r = l.kind === 'node' ? net.body.nodes[l.id].options.size * net.getScale() : null;
    return Object.assign(l, {measured: ctx.measureText(l.text).width, at: at, r: r});
  });
})()"""


def labels(page: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = page.eval(_LABELS_JS)
    return out


def overlaps(boxes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of labels whose boxes cross (touching edges do not count)."""
    bad = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if (a["x"] < b["x"] + b["w"] - 0.5 and b["x"] < a["x"] + a["w"] - 0.5
                    and a["y"] < b["y"] + b["h"] - 0.5 and b["y"] < a["y"] + a["h"] - 0.5):
                bad.append((a["text"], b["text"]))
    return bad


def check_labels(page: Any, view: GraphView) -> list[dict[str, Any]]:
    """The labels drawn now: none over another, each its node's own text, measured as drawn, beside its node."""
    drawn = labels(page)
    assert overlaps(drawn) == []
    names = {n["id"]: n["name"] for n in view.nodes}
    width, height = page.eval("[document.getElementById('kg-network').clientWidth,"
                              " document.getElementById('kg-network').clientHeight]")
    nodes = [lb for lb in drawn if lb["kind"] == "node"]
    assert len({lb["id"] for lb in nodes}) == len(nodes)  # one label per node at most
    for lb in nodes:
        assert names[lb["id"]].startswith(lb["text"].rstrip("…")), lb
        assert abs(lb["w"] - lb["measured"]) < 1, lb
        assert -0.5 <= lb["x"] <= width + 0.5 - lb["w"] and -0.5 <= lb["y"] <= height + 0.5 - lb["h"], lb  # on screen
        # against its node: the label's box, grown by 5 px, meets the node's
        (x, y), r = (lb["at"]["x"], lb["at"]["y"]), lb["r"]
        assert (lb["x"] - 5 < x + r and x - r < lb["x"] + lb["w"] + 5
                and lb["y"] - 5 < y + r and y - r < lb["y"] + lb["h"] + 5), lb
    return drawn


def by_degree(view: GraphView) -> list[str]:
    degree: Counter[str] = Counter()
    for e in view.edges:
        degree[e["source"]] += 1
        degree[e["target"]] += 1
    return sorted((n["id"] for n in view.nodes),
                  key=lambda i: (-degree[i], -next(n.get("paper_count", 0) for n in view.nodes if n["id"] == i), i))


@pytest.fixture(scope="module")
def overviews(seeds_store: EmbeddedStore,
              tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, GraphView]]:
    """The seeds overview as `kg viz` writes it: the default top 150, and every entity (top 400, 347 here)."""
    out = tmp_path_factory.mktemp("legible")
    files = {}
    for top in (150, 400):
        path = out / f"overview-{top}.html"
        assert main(["viz", "--store-dir", str(seeds_store.path), "--top", str(top), "-o", str(path)]) == 0
        files[top] = (path, seeds_store.overview(top_n=top))
    return files


@pytest.mark.parametrize("top", [150, 400])
def test_overview_labels_never_overlap(page: Any, overviews: dict[int, tuple[Path, GraphView]], top: int) -> None:
    path, view = overviews[top]
    open_graph(page, path.as_uri())
    assert page.errors() == []
    fitted = check_labels(page, view)
    shown = {lb["id"] for lb in fitted if lb["kind"] == "node"}
    # Many labels, not a handful, and the best-connected nodes among them.
    assert len(shown) >= min(40, len(view.nodes) // 4), len(shown)
    assert set(by_degree(view)[:3]) <= shown
    page.shot(f"labels-overview-{top}")
    page.shot(f"labels-overview-{top}-centre", {"x": 575, "y": 225, "width": 550, "height": 450}, docs=top == 150)

    # Zoomed in on the hub: bigger labels, still none over another, and room for more of them around it.
    hub = by_degree(view)[0]
    page.eval(f"kgView.network.moveTo({{position: kgView.network.getPosition({json.dumps(hub)}),"
              " scale: kgView.network.getScale() * 3})")
    redraw(page)
    zoomed = check_labels(page, view)
    assert hub in {lb["id"] for lb in zoomed}
    assert max(lb["px"] for lb in zoomed) > max(lb["px"] for lb in fitted)
    page.shot(f"labels-overview-{top}-zoomed", {"x": 300, "y": 0, "width": 1100, "height": 900})

    # A node whose label gave way shows it when hovered, in bold, and still over no other label.
    page.eval("kgView.network.fit()")
    redraw(page)
    hidden = [n["id"] for n in view.nodes if n["id"] not in {lb["id"] for lb in labels(page)}]
    point = None
    for nid in hidden:
        point = page.eval(f"""(() => {{
            const net = kgView.network, p = net.canvasToDOM(net.getPosition({json.dumps(nid)}));
            const r = document.getElementById('kg-network').getBoundingClientRect();
            if (net.getNodeAt(p) !== {json.dumps(nid)} || p.x < 40 || p.y < 40 || p.x > r.width - 200
                || p.y > r.height - 40) return null;
            return [p.x + r.left, p.y + r.top];
        }})()""")
        if point:
            break
    assert point, "no unlabelled node to hover"
    page.mouse_move(point[0] + 2, point[1] + 2)
    page.mouse_move(*point)
    page.wait_for(f"kgView.labels().some(l => l.id === {json.dumps(nid)} && l.bold)", timeout=10)
    check_labels(page, view)
    page.shot(f"labels-overview-{top}-hover", {"x": point[0] - 250, "y": point[1] - 150, "width": 500, "height": 300},
              docs=top == 400)
    assert page.errors() == []


@pytest.mark.parametrize("kind", ["paper", "entity"])
def test_neighbourhood_labels_never_overlap(page: Any, seeds_store: EmbeddedStore, tmp_path: Path, kind: str) -> None:
    """A paper's view labels its edges too (PROPOSES, USES, ...): none over a node's label or another."""
    if kind == "paper":  # the paper with the most entities
        focus = max(sorted(seeds_store.by_label("Paper")), key=lambda p: len(seeds_store.neighbourhood(p).nodes))
        args, view = ["--paper", focus], seeds_store.neighbourhood(focus)
    else:
        focus = seeds_store.resolve_entity("LLMs")
        args, view = ["--entity", "LLMs", "--hops", "2", "--limit", "150"], seeds_store.neighbourhood(focus, hops=2,
                                                                                                        limit=150)
    path = tmp_path / f"{kind}.html"
    assert main(["viz", "--store-dir", str(seeds_store.path), *args, "-o", str(path)]) == 0
    open_graph(page, path.as_uri())
    check_labels(page, view)
    assert focus in {lb["id"] for lb in labels(page)}  # the focus first
    page.shot(f"labels-{kind}")
    page.eval(f"kgView.network.moveTo({{position: kgView.network.getPosition({json.dumps(focus)}), scale: 1.5}})")
    redraw(page)
    drawn = check_labels(page, view)
    if kind == "paper":
        assert any(lb["kind"] == "edge" for lb in drawn)
    page.shot(f"labels-{kind}-zoomed")
    assert page.errors() == []
