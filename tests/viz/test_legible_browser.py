"""What a reader sees is whole (issue 32), checked on the real pages of the seeds in headless Chromium: every
placeholder inside its box; the trends page's period boxes showing the periods it compares; landscape headers
not cut; '1 paper', never '1 papers'.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.cli.main import main
from kg.models import Landscape
from kg.store.embedded import EmbeddedStore
from viz.explore import render_landscape

pytestmark = pytest.mark.browser


def open_explore(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for("window.kgExplore !== undefined && window.kgExplore.ready === true", timeout=60)


# -- placeholders ---------------------------------------------------------------------------------------------

# Every input's placeholder set as its value: wider than the box, it would scroll (and the placeholder is cut).
_PLACEHOLDERS_JS = """(() => [...document.querySelectorAll('input[placeholder]')].map(i => {
  const value = i.value; i.value = i.placeholder;
  const r = {name: i.name || i.id, placeholder: i.placeholder, scroll: i.scrollWidth, client: i.clientWidth};
  i.value = value;
  return r;
}))()"""


def placeholders(page: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = page.eval(_PLACEHOLDERS_JS)
    assert found
    return found


def assert_placeholders_fit(page: Any) -> None:
    for p in placeholders(page):
        assert p["placeholder"] and p["scroll"] <= p["client"], p


@pytest.fixture(params=[(1400, 900), (420, 800)], ids=["wide", "narrow"])
def sized_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A tab 1400 px wide (the panel is a sidebar) or 420 px (a phone: the panel is a card over the graph)."""
    p = browser.new_page(*request.param)
    yield p
    p.close()


def test_search_box_placeholder_fits(sized_page: Any, seeds_store: EmbeddedStore, tmp_path: Path) -> None:
    p = sized_page
    path = tmp_path / "overview.html"
    assert main(["viz", "--store-dir", str(seeds_store.path), "-o", str(path)]) == 0
    p.goto(path.as_uri())
    p.wait_for("window.kgView !== undefined && window.kgView.ready === true", timeout=120)
    assert [x["name"] for x in placeholders(p)] == ["kg-search"]
    assert_placeholders_fit(p)
    p.shot(f"search-box-{p.width}", {"x": 0, "y": 0, "width": 300 if p.width > 760 else p.width, "height": 130},
           docs=True)
    assert p.errors() == []


def test_trends_period_boxes_show_the_periods_compared(page: Any, api_url: str, seeds_store: EmbeddedStore) -> None:
    # The default periods; one typed in (the other box says what it is compared with); two long ones typed in.
    cases = {"": {}, "&from=2025": {"before": "2025"},
             "&from=2025-07-01..2025-12-31&to=2026-01-01..2026-06-30": {"before": "2025-07-01..2025-12-31",
                                                                        "after": "2026-01-01..2026-06-30"}}
    for i, (query, periods) in enumerate(cases.items()):
        open_explore(page, f"{api_url}/view/trends?min_count=2&limit=8{query}")
        t = seeds_store.trends(min_count=2, limit=8, **periods)
        assert t.before is not None and t.after is not None
        boxes = page.eval("[...document.querySelectorAll('#kg-form input[name=from], #kg-form input[name=to]')]"
                          ".map(i => [i.placeholder, i.value])")
        assert [b[0] for b in boxes] == [t.before.label, t.after.label]
        assert [b[1] for b in boxes] == [periods.get("before", ""), periods.get("after", "")]
        assert_placeholders_fit(page)
        assert_no_bad_plural(page)
        page.shot(f"trends-form-{i}", {"x": 0, "y": 0, "width": 1000, "height": 170}, docs=i != 1)
    assert page.errors() == []


def test_search_page_placeholder_fits(page: Any, api_url: str) -> None:
    open_explore(page, f"{api_url}/view/search")
    assert_placeholders_fit(page)
    assert page.errors() == []


# -- landscape headers and counts -------------------------------------------------------------------------------

_BAD_PLURAL_JS = r"""(() => {
  const texts = [document.body.innerText, ...[...document.querySelectorAll('[title]')].map(e => e.title),
                 ...[...document.querySelectorAll('svg title')].map(e => e.textContent)];
  return texts.flatMap(t => t.match(/(?<![\d.,])1 (papers|tasks|datasets|methods|mentions)\b/g) || []);
})()"""


def assert_no_bad_plural(page: Any) -> None:
    assert page.eval(_BAD_PLURAL_JS) == []


# Each header's name against what the page shows of it: the whole text, inside its cell, nothing clipped.
_HEADERS_JS = """(() => [...document.querySelectorAll('th.kg-col, th.kg-row')].map(th => {
  const a = th.querySelector('.kg-name'), r = th.getBoundingClientRect(), t = a.getBoundingClientRect();
  const cs = getComputedStyle(th);
  return {id: th.dataset.id, kind: th.className, text: a.textContent, title: th.title,
          inside: t.left >= r.left - 0.5 && t.right <= r.right + 0.5 &&
                  t.top >= r.top - 0.5 && t.bottom <= r.bottom + 0.5,
          clipped: th.scrollWidth > th.clientWidth + 1 || th.scrollHeight > th.clientHeight + 1,
          ellipsis: cs.textOverflow === 'ellipsis' && cs.overflow !== 'visible'};
}))()"""


def check_headers(page: Any, ls: Landscape) -> None:
    headers = page.eval(_HEADERS_JS)
    names = {a.entity.id: a.entity.name for a in [*ls.rows, *ls.columns]}
    assert len(headers) == len(ls.rows) + len(ls.columns)
    for h in headers:
        assert h["text"] == names[h["id"]], h  # the whole name, never cut at 14 characters
        assert h["inside"] and not h["clipped"] and not h["ellipsis"], h
        assert h["title"].startswith(names[h["id"]] + " · "), h


def landscapes_to_check(store: EmbeddedStore) -> list[str]:
    """The seeds' landscapes with the longest column name, the longest row name, and the most cells."""
    g = store.graph
    found = {e: store.landscape(e) for e in sorted(store.entity_ids()) if g.nodes[e]["label"] in ("Task", "Dataset")}
    found = {e: ls for e, ls in found.items() if ls.cells}
    picks = [max(found, key=lambda e: max(len(c.entity.name) for c in found[e].columns)),
             max(found, key=lambda e: max(len(r.entity.name) for r in found[e].rows)),
             max(found, key=lambda e: len(found[e].cells))]
    return list(dict.fromkeys(picks))


def test_landscape_headers_whole_and_counts_agree(page: Any, api_url: str, seeds_store: EmbeddedStore) -> None:
    for i, focus in enumerate(landscapes_to_check(seeds_store)):
        open_explore(page, f"{api_url}/view/landscape/{focus}?limit=25")
        ls = seeds_store.landscape(focus, limit=25)
        check_headers(page, ls)
        assert_no_bad_plural(page)
        if ls.papers == 1:
            assert page.eval("document.getElementById('kg-note').textContent").startswith("1 paper;")
        page.shot(f"landscape-{focus}", docs=i == 0)
    assert page.errors() == []


def test_landscape_long_names_wrap_whole(page: Any, seeds_store: EmbeddedStore, landscape_focus: str,
                                         tmp_path: Path) -> None:
    """Names far past 14 characters (and past a column's 180 px and a row's 320 px) show whole, wrapped."""
    ls = seeds_store.landscape(landscape_focus, limit=25)
    long = "an uncommonly long entity name that keeps on going well past any width"

    def renamed(axes: list[Any], what: str) -> list[Any]:
        return [a.model_copy(update={"entity": a.entity.model_copy(update={"name": f"{what} {i}: {long}"})})
                for i, a in enumerate(axes)]

    ls = ls.model_copy(update={"rows": renamed(ls.rows, "row"), "columns": renamed(ls.columns, "column")})
    path = tmp_path / "long.html"
    path.write_text(render_landscape(ls, link_base="").html, encoding="utf-8")
    open_explore(page, path.as_uri())
    check_headers(page, ls)
    page.shot("landscape-long-names", docs=True)
    assert page.errors() == []
