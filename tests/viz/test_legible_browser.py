"""What a reader sees is whole (issue 32), checked on the real pages of the seeds in headless Chromium: every
placeholder inside its box; the trends page's period boxes showing the periods it compares; '1 paper', never
'1 papers'.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.cli.main import main
from kg.store.embedded import EmbeddedStore

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
    p.shot(f"search-box-{p.width}", {"x": 0, "y": 0, "width": 300 if p.width > 760 else p.width, "height": 130})
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
        page.shot(f"trends-form-{i}", {"x": 0, "y": 0, "width": 1000, "height": 170})
    assert page.errors() == []


def test_search_page_placeholder_fits(page: Any, api_url: str) -> None:
    open_explore(page, f"{api_url}/view/search")
    assert_placeholders_fit(page)
    assert page.errors() == []


# -- counts ---------------------------------------------------------------------------------------------------

_BAD_PLURAL_JS = r"""(() => {
  const texts = [document.body.innerText, ...[...document.querySelectorAll('[title]')].map(e => e.title),
                 ...[...document.querySelectorAll('svg title')].map(e => e.textContent)];
  return texts.flatMap(t => t.match(/(?<![\d.,])1 (papers|tasks|datasets|methods|mentions)\b/g) || []);
})()"""


def assert_no_bad_plural(page: Any) -> None:
    assert page.eval(_BAD_PLURAL_JS) == []
