"""The store contract, written once: every backend built from the seeds answers every read as the reference does.

The reference is the embedded store built by ``kg build seeds/`` (the session's ``seeds_store``). Each test runs
against the embedded store (re-written and re-opened from disk) and the Neo4j store over Bolt (a real ArcadeDB
server, ``@pytest.mark.bolt``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kg.build import build
from kg.cache import record_hash
from kg.cypher import CypherError, CypherTimeout, CypherWriteError
from kg.errors import KGError, NotFoundError, StoreError
from kg.graph import PaperInput, derive_graph
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore

# The five example queries of docs/neo4j.md, verbatim.
README_QUERIES = [
    "MATCH (p:Paper)-[r:RELATED_TO]->(q:Paper) WHERE p.title CONTAINS 'Multimodal federated learning' "
    "RETURN p.title AS paper, q.title AS related, r.score AS score ORDER BY paper, score DESC, related",
    "MATCH (d:Dataset)<-[:EVALUATES_ON]-(p:Paper) RETURN d.name AS dataset, count(p) AS papers "
    "ORDER BY papers DESC, dataset LIMIT 10",
    "MATCH (p:Paper)-[:EVALUATES_ON]->(:Dataset {name: 'CIFAR-10'}) MATCH (p)-[:PROPOSES|USES]->(m:Method) "
    "RETURN m.name AS method, count(DISTINCT p) AS papers ORDER BY papers DESC, method",
    "MATCH path = (a:Concept {id: 'mutual-information'})-[*2]-(b:Concept {id: 'conditional-mutual-information'}) "
    "RETURN [n IN nodes(path) | coalesce(n.title, n.name)] AS via ORDER BY via",
    "MATCH (e) WHERE e:Method OR e:Model OR e:Dataset OR e:Task OR e:Metric OR e:Concept "
    "RETURN labels(e)[0] AS type, count(*) AS entities ORDER BY entities DESC, type",
]
WRITE_QUERIES = [
    "CREATE (n:Paper {id: 'intruder'})",
    "MATCH (n) DETACH DELETE n",
    "MATCH (p:Paper) SET p.title = 'changed' RETURN p",
    "MERGE (n:Method {id: 'intruder'}) RETURN n",
    "MATCH (p:Paper) REMOVE p.title",
    "MATCH (n) RETURN n LIMIT 1; CREATE (m:X)",
    "CALL { CREATE (n:X) } RETURN 1",
    "LOAD CSV FROM 'file:///x.csv' AS row CREATE (:X {v: row[0]})",
    "MATCH (n:Paper) FOREACH (x IN [1] | SET n.y = x)",
]


def _prime(store: Store, inputs: dict[str, PaperInput]) -> None:
    """Put the extractions in the store's cache, so a build re-uses them instead of running spaCy."""
    store.cache.append((record_hash(p.record), p) for p in inputs.values())  # type: ignore[attr-defined]


def dump(x: Any) -> Any:
    if hasattr(x, "model_dump"):
        return x.model_dump()
    if isinstance(x, list):
        return [dump(y) for y in x]
    return x


def outcome(f: Callable[[], Any]) -> Any:
    """A read's result, or the kind and message of the error it raised: both must agree across stores."""
    try:
        return dump(f())
    except KGError as exc:
        return (type(exc).__name__, str(exc))


def mismatches(store: Store, reference: Store, calls: list[tuple[str, Callable[[Store], Any]]]) -> list[str]:
    return [name for name, f in calls
            if outcome(lambda f=f: f(store)) != outcome(lambda f=f: f(reference))]  # type: ignore[misc]


# -- writes ----------------------------------------------------------------------------------------------
def test_build_writes_the_seeds_graph(empty_store: Store, seed_inputs: dict[str, PaperInput],
                                      reference: EmbeddedStore, seeds_dir: Path) -> None:
    _prime(empty_store, seed_inputs)
    summary = build([seeds_dir], empty_store)
    assert summary.read == 57 and summary.extracted == 0 and summary.reused == 57
    assert empty_store.stats() == reference.stats()


def test_rebuilding_the_same_input_changes_nothing(empty_store: Store, seed_inputs: dict[str, PaperInput],
                                                   reference: EmbeddedStore, seeds_dir: Path) -> None:
    _prime(empty_store, seed_inputs)
    build([seeds_dir], empty_store)
    first = empty_store.stats()
    summary = build([seeds_dir], empty_store)
    assert summary.papers_before == 57
    assert empty_store.stats() == first == reference.stats()


def test_a_second_corpus_merges_into_the_first(empty_store: Store, seed_inputs: dict[str, PaperInput],
                                               reference: EmbeddedStore, seeds_dir: Path) -> None:
    files = sorted(seeds_dir.glob("*.txt"))
    _prime(empty_store, seed_inputs)
    build(files[:1], empty_store)
    half = empty_store.stats()
    assert 0 < half.papers < 57
    build(files[1:], empty_store)
    assert empty_store.stats() == reference.stats()
    pid = sorted(seed_inputs)[0]
    assert dump(empty_store.get_paper(pid)) == dump(reference.get_paper(pid))


def test_rederiving_a_smaller_graph_deletes_what_it_lost(empty_store: Store,
                                                         seed_inputs: dict[str, PaperInput]) -> None:
    _prime(empty_store, seed_inputs)
    empty_store.replace_graph(derive_graph(seed_inputs.values()), seed_inputs)
    some = dict(sorted(seed_inputs.items())[:10])
    graph = derive_graph(some.values())
    empty_store.replace_graph(graph, some)
    st = empty_store.stats()
    assert st.papers == 10 and st.entities + st.papers + st.venues + st.authors + st.results == graph.number_of_nodes()
    assert st.edges == graph.number_of_edges()
    assert set(empty_store.load_inputs()) == set(some)


def test_load_inputs_returns_every_stored_extraction(empty_store: Store,
                                                     seed_inputs: dict[str, PaperInput]) -> None:
    _prime(empty_store, seed_inputs)  # the embedded store keeps extractions in its cache, as a build does
    empty_store.replace_graph(derive_graph(seed_inputs.values()), seed_inputs)
    loaded = empty_store.load_inputs()
    assert set(loaded) == set(seed_inputs)
    for pid, p in seed_inputs.items():
        assert loaded[pid].record == p.record
        assert loaded[pid].extraction.to_store() == p.extraction.to_store()


# -- reads: equal to the reference -----------------------------------------------------------------------
def test_stats_and_papers_read_the_same(store: Store, reference: EmbeddedStore) -> None:
    assert store.stats() == reference.stats()
    calls: list[tuple[str, Callable[[Store], Any]]] = []
    for pid in [*reference.by_label("Paper"), "p-000000000000"]:
        calls += [(f"paper {pid}", lambda s, p=pid: s.get_paper(p)),
                  (f"related {pid}", lambda s, p=pid: s.related_papers(p)),
                  (f"related 3 {pid}", lambda s, p=pid: s.related_papers(p, 3)),
                  (f"related 25 {pid}", lambda s, p=pid: s.related_papers(p, 25))]
    assert mismatches(store, reference, calls) == []


def test_entities_read_the_same(store: Store, reference: EmbeddedStore) -> None:
    ids = sorted(reference.entity_ids(), key=lambda e: (-reference.graph.nodes[e]["paper_count"], e))
    chosen = ids[:60] + ids[-20:] + ["no-such-entity"]
    calls: list[tuple[str, Callable[[Store], Any]]] = []
    for eid in chosen:
        calls += [(f"entity {eid}", lambda s, e=eid: s.get_entity(e)),
                  (f"entity limited {eid}", lambda s, e=eid: s.get_entity(e, paper_limit=2, neighbour_limit=1)),
                  (f"related entities {eid}", lambda s, e=eid: s.related_entities(e, 5)),
                  (f"papers of {eid}", lambda s, e=eid: s.list_papers(entity=e, limit=3))]
    for eid in ids[:40]:
        d = reference.graph.nodes[eid]
        for ref in (d["name"], *d["aliases"], d["name"].upper(), d["name"] + "s"):
            calls.append((f"resolve {ref}", lambda s, r=ref: s.resolve_entity(r)))
    assert mismatches(store, reference, calls) == []


QUERIES = ["mutual information", "MI", "LLMs", "large language models", "diffusion", "CIFAR-10", "STE",
           "reinforcement learning", "studies", "a", "informatio", "kalman filter", "xyzzy", "", "  ", "-"]


def test_lists_and_search_read_the_same(store: Store, reference: EmbeddedStore) -> None:
    calls: list[tuple[str, Callable[[Store], Any]]] = []
    for q in QUERIES:
        calls += [(f"search {q}", lambda s, q=q: s.search(q)),
                  (f"search 3 {q}", lambda s, q=q: s.search(q, limit=3)),
                  (f"entities {q}", lambda s, q=q: s.list_entities(q=q, limit=10)),
                  (f"papers {q}", lambda s, q=q: s.list_papers(q=q, limit=10))]
    for ty in (None, "method", "model", "dataset", "task", "metric", "concept"):
        calls += [(f"entities {ty}", lambda s, t=ty: s.list_entities(type=t, limit=25)),
                  (f"entities {ty} page 3", lambda s, t=ty: s.list_entities(type=t, limit=7, offset=14))]
    venue = reference.graph.nodes[reference.by_label("Venue")[0]]["name"]
    calls += [("papers", lambda s: s.list_papers(limit=100)),
              ("papers page", lambda s: s.list_papers(limit=5, offset=11)),
              ("papers by year", lambda s: s.list_papers(year=2026)),
              ("papers by other year", lambda s: s.list_papers(year=1999)),
              ("papers by venue", lambda s: s.list_papers(venue="neurips", limit=50)),
              ("papers by venue in capitals", lambda s: s.list_papers(venue=venue.upper())),
              ("papers by entity and words", lambda s: s.list_papers(entity="mutual information", q="estimator")),
              ("papers by unknown entity", lambda s: s.list_papers(entity="no such thing"))]
    assert mismatches(store, reference, calls) == []


def test_graph_views_read_the_same(store: Store, reference: EmbeddedStore) -> None:
    papers = reference.by_label("Paper")
    ents = sorted(reference.entity_ids(), key=lambda e: (-reference.graph.nodes[e]["paper_count"], e))
    calls: list[tuple[str, Callable[[Store], Any]]] = [
        ("overview", lambda s: s.overview()),
        ("overview 10", lambda s: s.overview(top_n=10)),
        ("overview types", lambda s: s.overview(top_n=30, types=["method", "dataset"])),
        ("overview bad type", lambda s: s.overview(types=["nope"])),
        ("neighbourhood missing", lambda s: s.neighbourhood("nope")),
        ("neighbourhood venue", lambda s: s.neighbourhood(reference.by_label("Venue")[0])),
    ]
    for n in [*papers[:8], *ents[:8]]:
        calls += [(f"hood {n}", lambda s, n=n: s.neighbourhood(n)),
                  (f"hood 2 {n}", lambda s, n=n: s.neighbourhood(n, hops=2, limit=40)),
                  (f"hood 0 {n}", lambda s, n=n: s.neighbourhood(n, hops=0))]
    calls.append(("hood 3", lambda s: s.neighbourhood(papers[0], hops=3, limit=300)))
    assert mismatches(store, reference, calls) == []


def test_evidence_round_trips(store: Store, reference: EmbeddedStore) -> None:
    for pid in reference.by_label("Paper"):
        p = store.get_paper(pid)
        for items in p.entities.values():
            for pe in items:
                ev = pe.evidence
                assert ev.paper_id == pid and 0 <= ev.start < ev.end <= len(p.abstract)
                assert " ".join(p.abstract[ev.start : ev.end].split()) in " ".join(ev.sentence.split())
    ent = store.get_entity(store.resolve_entity("mutual information"))
    assert ent.papers and all(ep.evidence.sentence for ep in ent.papers)


# -- Cypher ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("query", README_QUERIES)
def test_readme_queries_answer_the_same(store: Store, reference: EmbeddedStore, query: str) -> None:
    got, want = store.cypher(query), reference.cypher(query)
    assert got == want and want.rows


def test_nodes_relationships_and_paths_convert_alike(store: Store, reference: EmbeddedStore) -> None:
    for q in ["MATCH path = (a:Paper)-[r:PROPOSES]->(m) RETURN a, r, m, path ORDER BY a.id, m.id LIMIT 3",
              "MATCH (a)-[r:RELATED_TO]->(b) RETURN r ORDER BY r.score DESC, a.id, b.id LIMIT 3",
              "MATCH (n:Concept) RETURN n.name AS name, n.aliases AS aliases ORDER BY name LIMIT 5",
              "MATCH (n:Paper) RETURN n.id, n.year, n.authors ORDER BY n.id LIMIT 3"]:
        assert store.cypher(q) == reference.cypher(q), q


def test_cypher_caps_rows_and_parameters_work(store: Store, reference: EmbeddedStore) -> None:
    q = "MATCH (n:Concept) RETURN n.name AS name ORDER BY name"
    r = store.cypher(q, max_rows=5)
    assert r.truncated and len(r.rows) == 5 and r == reference.cypher(q, max_rows=5)
    q = "MATCH (n:Paper {id: $id}) RETURN n.title"
    pid = reference.by_label("Paper")[0]
    assert store.cypher(q, {"id": pid}) == reference.cypher(q, {"id": pid})


@pytest.mark.parametrize("query", WRITE_QUERIES)
def test_write_queries_are_refused_and_change_nothing(store: Store, query: str) -> None:
    before = store.stats()
    with pytest.raises(CypherWriteError):
        store.cypher(query)
    assert store.stats() == before


def test_bad_cypher_is_a_cypher_error(store: Store) -> None:
    with pytest.raises(CypherError):
        store.cypher("MATCH (n RETURN n")


# -- Neo4j-specific ----------------------------------------------------------------------------------------
@pytest.mark.bolt
def test_connection_failures_are_one_clear_line(bolt_server: Any) -> None:
    from kg.store.neo4j_connect import connect

    with pytest.raises(StoreError, match=r"refused user 'root'") as bad_password:
        connect(bolt_server.uri, "root", "wrong-password", "kg")
    assert bolt_server.uri in str(bad_password.value) and "\n" not in str(bad_password.value)
    with pytest.raises(StoreError, match=r"cannot reach a Neo4j server") as down:
        connect("bolt://127.0.0.1:9", "root", "x", "kg", timeout_s=2)
    assert "bolt://127.0.0.1:9" in str(down.value)
    with pytest.raises(StoreError, match="not a Bolt URI"):
        connect("http://127.0.0.1:7474", "root", "x")


@pytest.mark.bolt
@pytest.mark.parametrize("store", ["bolt"], indirect=True)
def test_unique_id_constraints_exist(store: Any, request: pytest.FixtureRequest) -> None:
    from kg.store.neo4j import supports_constraints

    assert supports_constraints(store.server_agent())
    rows = request.getfixturevalue("bolt_driver").execute_query("SHOW CONSTRAINTS", database_="kg").records
    labels = {r["labelsOrTypes"][0] for r in rows if r["properties"] == ["id"] and r["type"] == "UNIQUENESS"}
    assert {"Paper", "Method", "Model", "Dataset", "Task", "Metric", "Concept", "Author", "Venue"} <= labels


def test_not_found_errors_match(store: Store) -> None:
    with pytest.raises(NotFoundError, match="no paper with id 'nope'"):
        store.get_paper("nope")
    with pytest.raises(NotFoundError):
        store.resolve_entity("definitely not an entity name")


def test_a_slow_query_times_out(store: Store) -> None:
    # Some Bolt servers (ArcadeDB) ignore the server-side timeout; the store stops waiting all the same.
    # 25M rows: an idle machine finished 3M inside the 0.3 s on ArcadeDB, so a smaller query is timing-dependent.
    with pytest.raises(CypherTimeout):
        store.cypher("UNWIND range(1, 5000) AS x UNWIND range(1, 5000) AS y WITH x, y WHERE x + y < 0 "
                     "RETURN count(*) AS n", timeout_s=0.3)


# -- reported results (issue 34): the same Result nodes, Cypher answers and leaderboards on every store ------------
RESULT_QUERIES = [
    # the best reported accuracy on a dataset (docs/graph-model.md)
    "MATCH (p:Paper)-[:REPORTS]->(r:Result)-[:ON_DATASET]->(:Dataset {name: 'GSM8K'}) "
    "MATCH (r)-[:IN_METRIC]->(:Metric {name: 'accuracy'}) WHERE r.kind = 'score' AND r.unit = 'percent' "
    "OPTIONAL MATCH (r)-[:ACHIEVED_BY]->(s) "
    "RETURN coalesce(r.system, s.name) AS system, r.text AS value, p.year AS year, p.title AS paper "
    "ORDER BY r.value DESC, paper LIMIT 1",
    "MATCH (r:Result) RETURN r.id, r.value, r.unit, r.text, r.kind, r.system, r.dataset, r.metric, r.sentence, "
    "r.start, r.end, r.paper, r.year ORDER BY r.id",
    "MATCH (r:Result)-[e]->(x) RETURN r.id AS result, type(e) AS edge, x.id AS target, labels(x)[0] AS label, "
    "e.paper_id AS paper ORDER BY result, edge",
    "MATCH (p:Paper)-[:REPORTS]->(r:Result) RETURN p.id AS paper, count(r) AS results ORDER BY paper",
    "MATCH (r:Result) WHERE r.dataset IS NULL RETURN r.id ORDER BY r.id",
    "MATCH (n:Result) RETURN labels(n) AS labels, count(*) AS n",
    # docs/graph-model.md's: the best reported accuracy on each dataset
    "MATCH (p:Paper)-[:REPORTS]->(r:Result)-[:IN_METRIC]->(:Metric {name: 'accuracy'}) "
    "MATCH (r)-[:ON_DATASET]->(d:Dataset) WHERE r.kind = 'score' AND r.unit = 'percent' "
    "OPTIONAL MATCH (r)-[:ACHIEVED_BY]->(s) WITH d, r, p, s ORDER BY r.value DESC, p.id "
    "WITH d, collect({value: r.text, system: coalesce(r.system, s.name), year: p.year})[0] AS best, "
    "count(*) AS results RETURN d.name AS dataset, best.value AS accuracy, best.system AS system, "
    "best.year AS year, results ORDER BY results DESC, dataset LIMIT 5",
]


@pytest.fixture(scope="module")
def results_reference(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedStore:
    from results_corpus import results_inputs

    inputs = results_inputs()
    path = tmp_path_factory.mktemp("results-reference")
    with EmbeddedStore(path, writable=True) as s:
        _prime(s, inputs)
        s.replace_graph(derive_graph(inputs.values()), inputs)
    return EmbeddedStore(path)


def test_results_read_the_same(empty_store: Store, results_reference: EmbeddedStore) -> None:
    from results_corpus import results_inputs

    from kg.leaderboard import leaderboard

    inputs = results_inputs()
    _prime(empty_store, inputs)
    empty_store.replace_graph(derive_graph(inputs.values()), inputs)
    for q in RESULT_QUERIES:
        got, want = empty_store.cypher(q), results_reference.cypher(q)
        assert got == want and want.rows, q
    assert results_reference.cypher(RESULT_QUERIES[0]).rows == [["TinyMath", "94.1%", 2025, "Paper kg2025b"]]
    calls: list[tuple[str, Callable[[Store], Any]]] = [
        ("stats", lambda s: s.stats()),
        ("entity", lambda s: s.get_entity("gsm8k")),
        ("hood", lambda s: s.neighbourhood("gsm8k", hops=2)),
        ("paper", lambda s: s.get_paper("kg2025c")),
        ("result hood", lambda s: s.neighbourhood("result:kg2024a:0")),
    ]
    for kind in ("score", "gain"):
        for metric in (None, "accuracy", "BLEU"):
            calls.append((f"board {kind} {metric}", lambda s, k=kind, m=metric: leaderboard(s, "GSM8K", kind=k,
                                                                                           metric=m)))
    calls.append(("board unknown", lambda s: leaderboard(s, "GSM9K")))
    assert mismatches(empty_store, results_reference, calls) == []
    assert results_reference.stats().results == 10
    # a rebuild without the results deletes them
    bare = results_inputs(with_results=False)
    empty_store.replace_graph(derive_graph(bare.values()), bare)
    assert empty_store.cypher("MATCH (r:Result) RETURN count(r) AS n").rows == [[0]]
    assert empty_store.stats().results == 0
