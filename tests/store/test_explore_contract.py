"""Timelines, trends, landscapes and full-text search answer alike on every store, and match Cypher counts.

The seeds have years only; here half of the papers also get a ``published`` date (ISO text, as a build
writes it; a loaded store holds it as a Cypher date, Neo4j as its own), the property the arXiv reader sets,
so monthly timelines and dated periods are exercised on both stores. The reference is the embedded store over
the same graph, held in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from kg.graph import PAPER_EDGE_TYPES, PaperInput, derive_graph
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore
from kg.store.nxreads import NxReads
from tests.store.conftest import KINDS, _clear, _open
from tests.store.test_contract import mismatches


def dated_graph(inputs: dict[str, PaperInput]) -> nx.MultiDiGraph:
    g = derive_graph(inputs.values())
    for n, d in g.nodes(data=True):
        if d["label"] != "Paper":
            continue
        h = int(hashlib.sha1(n.encode()).hexdigest(), 16)
        if h % 2 and isinstance(d.get("year"), int):
            day = date(d["year"], 1, 1) + timedelta(days=h % 360)
            d["published"] = day.isoformat()
    return g


@pytest.fixture(scope="module")
def reference(seed_inputs: dict[str, PaperInput]) -> Store:
    return _Mem(dated_graph(seed_inputs))


class _Mem(NxReads):
    def load_inputs(self) -> dict[str, PaperInput]:
        return {}

    def replace_graph(self, graph: nx.MultiDiGraph, inputs: Any) -> None:
        self.set_graph(graph)


@pytest.fixture(scope="module", params=KINDS)
def dated(request: pytest.FixtureRequest, seed_inputs: dict[str, PaperInput],
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path: Path = tmp_path_factory.mktemp(f"explore-{request.param}")
    s = _open(request.param, path, request, "scratch")
    if request.param == "bolt":
        _clear(request.getfixturevalue("bolt_driver"), "scratch")
    s.replace_graph(dated_graph(seed_inputs), seed_inputs)
    if request.param == "embedded":
        s.close()
        s = EmbeddedStore(path / "store")
    yield s
    s.close()


def _calls(reference: Store) -> list[tuple[str, Callable[[Store], Any]]]:
    ents = sorted(reference.graph.nodes[e]["name"] for e in reference.entity_ids())[:: 40]  # type: ignore[attr-defined]
    calls: list[tuple[str, Callable[[Store], Any]]] = []
    for name in [*ents, "LLMs", "mutual information", "no such entity"]:
        calls.append((f"timeline {name}", lambda s, n=name: s.timeline(s.resolve_entity(n))))
    for kw in [{}, {"min_count": 1}, {"min_count": 2, "type": "concept"}, {"before": "2025-H1", "after": "2025-H2"},
               {"after": "2026", "min_count": 1}, {"before": "2025-03..2025-05", "min_count": 1},
               {"before": "2026", "after": "2025"}, {"type": "nope"}]:
        calls.append((f"trends {kw}", lambda s, kw=kw: s.trends(**kw)))
    tasks = [e for e in reference.entity_ids() if reference.graph.nodes[e]["label"] in ("Task", "Dataset")]  # type: ignore[attr-defined]
    for e in sorted(tasks, key=lambda e: -reference.graph.nodes[e]["paper_count"])[:8] + ["large-language-model"]:  # type: ignore[attr-defined]
        calls.append((f"landscape {e}", lambda s, e=e: s.landscape(e, limit=10, cell_limit=3)))
    for q in ["language models", '"mutual information"', "MI estimator", "xyzzy", "-", "GPT-4"]:
        calls += [(f"papers {q}", lambda s, q=q: s.list_papers(q=q, limit=5)),
                  (f"papers 2025 {q}", lambda s, q=q: s.list_papers(q=q, year=2025, limit=5, offset=1)),
                  (f"search {q}", lambda s, q=q: s.search(q, limit=8))]
    return calls


def test_explore_reads_the_same(dated: Store, reference: Store) -> None:
    assert mismatches(dated, reference, _calls(reference)) == []


def test_timelines_match_cypher_counts(dated: Store) -> None:
    # The quality check of the issue: per year, the timeline counts what a Cypher count over the graph counts.
    types = list(PAPER_EDGE_TYPES)
    top = dated.list_entities(limit=10).items
    for e in top:
        rows = dated.cypher("MATCH (p:Paper)-[r]->(e {id: $id}) WHERE type(r) IN $types "
                            "RETURN p.year AS year, count(DISTINCT p) AS n ORDER BY year", {"id": e.id, "types": types})
        want = {str(y): n for y, n in rows.rows if y is not None}
        got = {p.period: p.papers for p in dated.timeline(e.id).years if p.papers}
        assert got == want, e.id


def test_months_count_only_dated_papers(dated: Store) -> None:
    t = dated.timeline(dated.resolve_entity("LLMs"))
    assert t.months and sum(p.papers for p in t.months) == t.papers - t.undated
    assert sum(p.papers for p in t.years) == t.papers - t.no_year
    assert all(p.total >= p.papers for p in t.months)
