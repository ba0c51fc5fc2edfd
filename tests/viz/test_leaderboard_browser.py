"""A dataset's view in a real headless Chromium (issue 34): its leaderboard tables, sentences and charts drawn from
the hand-made results corpus, and markup in a result's text kept as text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from results_corpus import results_inputs, sentences

from kg.cache import record_hash
from kg.extract.types import Extraction, Mention, Result
from kg.graph import PaperInput, derive_graph
from kg.leaderboard import leaderboard
from kg.readers import PaperRecord
from kg.store.embedded import EmbeddedStore
from viz.render import entity_view

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
EVIL_SYSTEM = "EvilNet<img src=x onerror=\"window.__pwned=1\">"
EVIL_TEXT = f"We propose {EVIL_SYSTEM}. {EVIL_SYSTEM} reaches 99.9% accuracy on GSM8K</script><b>bold</b>."


def _evil() -> PaperInput:
    text = EVIL_TEXT
    ss = sentences(text)
    first = text.index(EVIL_SYSTEM)
    second = text.index(EVIL_SYSTEM, first + 1)
    v = text.index("99.9%")
    ds, acc = text.index("GSM8K"), text.index("accuracy")
    ext = Extraction(entities=[Mention(first, first + len(EVIL_SYSTEM), EVIL_SYSTEM, "method", 0, proposed=True)],
                     sentences=ss,
                     results=[Result(v, v + 5, "score", 1, (second, second + len(EVIL_SYSTEM)), (ds, ds + 5),
                                     (acc, acc + 8))])
    record = PaperRecord(id="evil<1>", abstract=text, title="<script>window.__pwned=2</script>", year=2026)
    return PaperInput(record, ext)


@pytest.fixture(scope="module")
def results_store(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedStore:
    path = tmp_path_factory.mktemp("results-view")
    inputs = {**results_inputs(), "evil<1>": _evil()}
    with EmbeddedStore(path, writable=True) as store:
        store.cache.append((record_hash(p.record), p) for p in inputs.values())
        store.replace_graph(derive_graph(inputs.values()), inputs)
    return EmbeddedStore(path)


def test_a_dataset_view_shows_its_leaderboards(page: Any, results_store: EmbeddedStore, tmp_path: Path) -> None:
    path = tmp_path / "gsm8k.html"
    path.write_text(entity_view(results_store, "GSM8K").html, encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for("window.kgView !== undefined && window.kgView.ready === true", timeout=60)
    assert page.errors() == []
    lb = leaderboard(results_store, "GSM8K", limit=10)
    drawn = json.loads(page.eval("""JSON.stringify(Array.from(document.querySelectorAll('.kg-lb-group')).map((g) => ({
        metric: g.querySelector('.kg-lb-metric').textContent,
        rows: Array.from(g.querySelectorAll('tbody tr')).map((tr) => ({
            cells: Array.from(tr.children).map((td) => td.querySelector('summary') ?
                td.querySelector('summary').textContent : td.textContent),
            title: tr.title, sentence: tr.querySelector('.kg-lb-sentence').textContent})),
        dots: g.querySelectorAll('svg.kg-scatter circle').length})))"""))
    assert [d["metric"] for d in drawn] == [f"{g.metric} · {g.unit}" for g in lb.groups]
    for d, g in zip(drawn, lb.groups, strict=True):
        assert [r["cells"] for r in d["rows"]] == [
            ["–" if r.rank is None else str(r.rank), r.text, r.system or "(unnamed)", str(r.year or "")]
            for r in g.rows]
        assert [r["title"] for r in d["rows"]] == [r.sentence for r in g.rows]  # each row's sentence, on hover
        assert [r["sentence"] for r in d["rows"]] == [r.sentence for r in g.rows]  # and a click away
        assert d["dots"] == (len(g.rows) if len(g.rows) > 1 else 0)  # a dot per row (its value in its year)
    acc = drawn[0]["rows"]
    assert acc[0]["cells"][:3] == ["1", "99.9%", EVIL_SYSTEM]  # markup in a system's name is its name, as text
    # Opening a row shows its sentence and its paper
    page.eval("document.querySelector('.kg-lb-row details').open = true")
    assert page.eval("document.querySelector('.kg-lb-row .kg-lb-paper').textContent") == \
        "<script>window.__pwned=2</script>"
    assert page.eval("window.__pwned") is None
    assert page.eval("document.querySelectorAll('img, b').length") == 0
    assert page.eval("document.scripts.length") == 4  # the data block, vis-network, the charts, the view
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(ARTIFACTS / "view-leaderboard.png")
    assert page.errors() == []


def test_an_entity_without_results_has_no_leaderboard(page: Any, results_store: EmbeddedStore,
                                                      tmp_path: Path) -> None:
    path = tmp_path / "graphzip.html"
    path.write_text(entity_view(results_store, "GraphZip").html, encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for("window.kgView !== undefined && window.kgView.ready === true", timeout=60)
    assert page.errors() == []
    assert page.eval("document.getElementById('kg-leaderboard').children.length") == 0
