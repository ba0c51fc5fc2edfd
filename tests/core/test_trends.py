"""Periods, dates and trend scores: what counts where, and why one paper never tops a list."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from kg.errors import InputError
from kg.store.nxreads import NxReads
from kg.trends import NO_DAY, parse_period, published_day


@pytest.mark.parametrize("text,first,last", [
    ("2025", "2025-01-01", "2025-12-31"), ("2025-H2", "2025-07-01", "2025-12-31"),
    ("2024-h1", "2024-01-01", "2024-06-30"), ("2025-Q1", "2025-01-01", "2025-03-31"),
    ("2025-Q4", "2025-10-01", "2025-12-31"), ("2024-02", "2024-02-01", "2024-02-29"),
    ("2025-12", "2025-12-01", "2025-12-31"), ("2025-7-4", "2025-07-04", "2025-07-04"),
    ("2024-03..2024-05", "2024-03-01", "2024-05-31"), ("2024..2025-H1", "2024-01-01", "2025-06-30")])
def test_periods_cover_the_days_they_name(text: str, first: str, last: str) -> None:
    p = parse_period(text)
    assert (p.first_day.isoformat(), p.last_day.isoformat()) == (first, last)


@pytest.mark.parametrize("text", ["25", "2025-13", "2025-02-30", "2025-H3", "2025-Q5", "last year", "2025..2024",
                                  "2025-"])
def test_bad_periods_say_what_is_wrong(text: str) -> None:
    with pytest.raises(InputError, match="period|date|before"):
        parse_period(text)


class _Neo4jDate:  # what the neo4j driver hands back for a DATE property
    def to_native(self) -> date:
        return date(2024, 3, 5)


def _cypher_date() -> Any:
    from kg.cypher.temporal import Date
    from kg.cypher.temporal_parse import parse_date

    return Date(parse_date("2024-03-05"))


@pytest.mark.parametrize("value", ["2024-03-05", "2024-03-05T12:00:00Z", " 2024-03-05 ", date(2024, 3, 5),
                                   datetime(2024, 3, 5, 23, 59), _Neo4jDate(), _cypher_date()])
def test_published_is_read_from_a_string_or_a_date(value: Any) -> None:
    assert published_day(value) == date(2024, 3, 5).toordinal()


@pytest.mark.parametrize("value", ["March 2024", "2024-02-30", 20240305, None, ""])
def test_unreadable_published_values_are_no_day(value: Any) -> None:
    assert published_day(value) == NO_DAY


class _Mem(NxReads):
    def load_inputs(self) -> dict[str, Any]:
        return {}

    def replace_graph(self, graph: nx.MultiDiGraph, inputs: Any) -> None:
        self.set_graph(graph)


def corpus(spec: dict[str, list[tuple[int, str | None]]], filler: dict[int, int]) -> _Mem:
    """Entities -> their papers as (year, published); ``filler`` adds papers with no entity of interest."""
    g = nx.MultiDiGraph()
    n = 0

    def paper(year: int, published: str | None) -> str:
        nonlocal n
        n += 1
        pid = f"p{n:04d}"
        attrs = {"id": pid, "label": "Paper", "name": pid, "title": pid, "abstract": "", "year": year}
        if published:
            attrs["published"] = published
        g.add_node(pid, **attrs)
        return pid

    for eid, papers in spec.items():
        g.add_node(eid, id=eid, label="Method", name=eid, aliases=[], paper_count=len(papers), mention_count=1)
        for year, published in papers:
            pid = paper(year, published)
            g.add_edge(pid, eid, key="USES", type="USES", paper_id=pid, sentence="s", start=0, end=1)
    g.add_node("other", id="other", label="Concept", name="other", aliases=[], paper_count=1, mention_count=1)
    for year, k in filler.items():
        for _ in range(k):
            pid = paper(year, None)
            g.add_edge(pid, "other", key="MENTIONS", type="MENTIONS", paper_id=pid, sentence="s", start=0, end=1)
    return _Mem(g)


def test_one_paper_entities_are_not_ranked_and_rising_means_a_growing_share() -> None:
    s = corpus({"steady": [(2024, None)] * 10 + [(2025, None)] * 10,
                "growing": [(2024, None)] * 2 + [(2025, None)] * 30,
                "fading": [(2024, None)] * 12 + [(2025, None)] * 2,
                "once": [(2025, None)],
                "fresh": [(2025, None)] * 6}, {2024: 50, 2025: 50})
    t = s.trends(min_count=5)
    assert (t.before.label, t.after.label) == ("2024", "2025")  # type: ignore[union-attr]
    assert [i.entity.id for i in t.rising][:2] == ["growing", "fresh"]
    assert "once" not in {i.entity.id for i in t.rising + t.falling + t.new}
    # Shares, not counts: "steady" keeps its 10 papers in a bigger year, so its share falls, but far less.
    assert [i.entity.id for i in t.falling] == ["fading", "other", "steady"]
    assert [i.entity.id for i in t.new] == ["fresh"]
    g = next(i for i in t.rising if i.entity.id == "growing")
    assert (g.before, g.after) == (2, 30) and g.series == [2, 30]
    assert g.before_share == round(2 / 74, 6) and g.after_share == round(30 / 99, 6)
    assert g.score == round(math.log((31 / 99) / (3 / 74)), 6)
    # With min_count 1 the single paper is ranked, but below an entity with many.
    loose = s.trends(min_count=1)
    assert [i.entity.id for i in loose.rising].index("once") > [i.entity.id for i in loose.rising].index("growing")


def test_dated_papers_split_into_halves_when_no_two_full_years_exist() -> None:
    s = corpus({"a": [(2024, "2024-01-03")] * 3 + [(2024, "2024-02-20")] * 6}, {})
    t = s.trends(min_count=1)
    assert t.before.label == "2024-01-03..2024-01-26" and t.after.label == "2024-01-27..2024-02-20"  # type: ignore[union-attr]
    assert t.bucket == "month" and t.buckets == ["2024-01", "2024-02"] and t.totals == [3, 6]
    tl = s.timeline("a")
    assert [(p.period, p.papers) for p in tl.months] == [("2024-01", 3), ("2024-02", 6)]
    assert [(p.period, p.papers, p.total) for p in tl.years] == [("2024", 9, 9)]
    # A paper known only by its year counts in its year but in no month of it.
    s2 = corpus({"a": [(2024, "2024-01-03"), (2024, None)]}, {})
    tl2 = s2.timeline("a")
    assert tl2.years[0].papers == 2 and sum(p.papers for p in tl2.months) == 1 and tl2.undated == 1


def test_a_period_with_no_room_next_to_it_is_a_clear_error() -> None:
    s = corpus({"a": [(2025, None)] * 3}, {})
    with pytest.raises(InputError, match="no period as long as 1000..9998 fits before it"):
        s.trends(after="1000..9998")
    with pytest.raises(InputError, match="fits after it"):
        s.trends(before="5000..9998")


def test_one_undated_year_has_nothing_to_compare() -> None:
    t = corpus({"a": [(2025, None)] * 3}, {}).trends()
    assert t.before is None and t.rising == [] and "one year (2025)" in t.note


def test_cli_trends_and_landscape(seeds_store_dir: Path) -> None:
    kg = [sys.executable, "-m", "kg"]
    r = subprocess.run([*kg, "trends", "--store-dir", str(seeds_store_dir), "--json", "--min-count", "2"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["before"]["label"] == "2025"
    r = subprocess.run([*kg, "trends", "--store-dir", str(seeds_store_dir), "--entity", "LLMs"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "large language models" in r.stdout and "2025" in r.stdout
    from kg.store.embedded import EmbeddedStore

    store = EmbeddedStore(seeds_store_dir)
    # the most used task whose papers report a metric (which task that is depends on the extractor)
    task = next(t.id for t in store.list_entities(type="task", limit=50).items
                if store.landscape(t.id, limit=12, cell_limit=3).metrics)
    r = subprocess.run([*kg, "landscape", task, "--store-dir", str(seeds_store_dir)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "metrics:" in r.stdout
    r = subprocess.run([*kg, "trends", "--store-dir", str(seeds_store_dir), "--from", "2025-13"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr.strip() == "kg: error: not a date: '2025-13'"
    r = subprocess.run([*kg, "landscape", "LLMs", "--store-dir", str(seeds_store_dir)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "is a model" in r.stderr and "Traceback" not in r.stderr
