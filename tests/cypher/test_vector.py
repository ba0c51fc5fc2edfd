"""The vectorised executor and the two-ended shortest-path search give exactly the interpreter's answers.

Random multigraphs (self-loops, parallel edges, mixed property types) are queried twice: as a plain graph (the
backtracking interpreter) and frozen (arrays: `kg.cypher.vector`), also through a snapshot file; the rows must be
equal in value and order, and the frozen run must have taken the vectorised path where the query qualifies.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest

import kg.cypher.vector as vector
import kg.cypher.vector_agg as vector_agg
from kg.cypher import paths, run_query
from kg.cypher.context import Context
from kg.cypher.paths import RelFilter, shortest_paths
from kg.related import RelatedIndex
from kg.store.nxreads import entity_name_keys, paper_entity_map
from kg.store.snapshot import Snapshot, write_snapshot

LABELS = ("Paper", "Method", "Dataset")
TYPES = ("USES", "EVALUATES_ON", "CITES")


def random_graph(seed: int, n: int = 40, m: int = 160) -> nx.MultiDiGraph:
    rnd = random.Random(seed)
    g = nx.MultiDiGraph()
    for i in range(n):
        label = rnd.choice(LABELS)
        attrs: dict[str, Any] = {"id": f"n{i:02d}", "label": label, "name": rnd.choice(["alpha", "beta", "gamma"]),
                                 "aliases": []}
        k = rnd.random()
        if k < 0.6:
            attrs["count"] = rnd.randint(0, 6)
        elif k < 0.7:
            attrs["count"] = rnd.choice([2.0, 3.5, float("nan")])
        elif k < 0.8:
            attrs["count"] = "3"
        if rnd.random() < 0.3:
            attrs["tag"] = rnd.choice([True, False, [1, 2], "x"])
        g.add_node(attrs["id"], **attrs)
    ids = list(g.nodes)
    for j in range(m):
        u = rnd.choice(ids)
        v = u if rnd.random() < 0.05 else rnd.choice(ids)
        t = rnd.choice(TYPES)
        g.add_edge(u, v, key=f"{t}|{j}", type=t, w=rnd.randint(0, 3))
    return g


QUERIES = [
    ("MATCH (a:Paper)-[:USES]->(b) RETURN b.name AS name, count(*) AS n ORDER BY n DESC LIMIT 2", True),
    ("MATCH (a)-[:USES|CITES]->(b:Method) RETURN b, count(a) AS n", True),
    ("MATCH (a)--(b) RETURN a.id AS a, count(*) AS n", True),
    ("MATCH (a)<-[:CITES]-(b)-[:CITES]->(c) WHERE c <> a RETURN c.id AS c, count(*) AS n ORDER BY n DESC, c", True),
    ("MATCH (a {id: 'n03'})-[]-(p)-[]-(o) RETURN o.id AS o, count(*) AS n", True),
    ("MATCH (a)-[]->(b)-[]->(a) RETURN a.id AS a, b.id AS b, count(*) AS n", True),
    ("MATCH (p:Paper)-[:USES]->(d) MATCH (p)-[:EVALUATES_ON]->(m) RETURN m.id AS m, count(DISTINCT p) AS n", True),
    ("MATCH (e) WHERE e.count >= 3 RETURN e.label AS l, labels(e)[0] AS t, count(*) AS n ORDER BY t", True),
    ("MATCH (e) WHERE e.count < 3 OR e.tag = true RETURN e.count AS c, count(*) AS n", True),
    ("MATCH (e) WHERE NOT (e.count = 3) AND e.name <> 'beta' RETURN e.count AS c, count(*) AS n", True),
    ("MATCH (e) WHERE e:Paper OR e:Dataset RETURN labels(e)[0] AS t, count(*) AS n ORDER BY n DESC, t", True),
    ("MATCH (e) WHERE NOT (e:Paper OR e:Method:Dataset) AND NOT e:Nothing RETURN labels(e)[0] AS t, count(*) AS n",
     True),
    ("MATCH (a)-->(e) WHERE e:Paper|Method OR (a:Dataset AND NOT a:Paper) RETURN e.id AS e, count(*) AS n", True),
    ("MATCH (a)-->(b) RETURN b, a.name AS name, count(*) AS n ORDER BY name, b DESC LIMIT 5", True),
    ("MATCH (a)-->(b) RETURN b.count AS c, count(DISTINCT a) AS n ORDER BY n DESC, c LIMIT 3", True),
    ("MATCH (e) WHERE e.tag IS NULL AND e.name STARTS WITH 'g' RETURN count(*) AS n", True),
    ("MATCH (e:Method {name: 'alpha'}) WHERE e.name CONTAINS 'lph' RETURN e.count AS c, count(*) AS n", True),
    ("MATCH (e:Nothing) RETURN count(*) AS n", True),
    ("MATCH (e) RETURN e.count AS c, count(*) AS n ORDER BY c DESC, n SKIP 1 LIMIT 4", True),
    ("MATCH (e)-->(f) RETURN f.name AS f, e.count AS c, count(*) AS n ORDER BY n, c SKIP 2 LIMIT 3", True),
    ("MATCH (e)-->(f) RETURN DISTINCT e.tag AS t, count(f) AS n ORDER BY t", True),
    ("MATCH (e:Nothing) RETURN e.id AS id, count(*) AS n", True),
    ("MATCH (a:Paper)-[r:USES]->(b) WHERE a.name = 'alpha' RETURN a.id, type(r) AS t, r.w AS w, b.id ORDER BY w", True),
    ("MATCH (a:Paper), (b:Dataset) WHERE a.count > b.count RETURN count(*) AS n", False),  # property vs property
    ("MATCH (a)-[*1..2]->(b) RETURN count(*) AS n", False),
    ("MATCH (a)-[r]->(b) RETURN sum(r.w) AS s", False),
]


def _frozen_copy(g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    return nx.freeze(g.copy())


def _snapshot_graph(g: nx.MultiDiGraph, tmp: Path) -> nx.MultiDiGraph:
    path = tmp / "graph.snapshot"
    with open(path, "wb") as fh:
        write_snapshot(g, RelatedIndex(paper_entity_map(g)), entity_name_keys(g), {"size": 0}, fh)
    return Snapshot(path).graph()


class Spy:
    """Wraps `vector.run`: records whether each query took the vectorised path; ``off`` forces the interpreter."""

    def __init__(self) -> None:
        self.used: list[bool] = []
        self.off = False
        self.real = vector.run

    def __call__(self, query: Any, ctx: Any) -> Any:
        out = None if self.off else self.real(query, ctx)
        self.used.append(out is not None)
        return out

    def both(self, graph: nx.MultiDiGraph, query: str, params: dict[str, Any] | None = None) -> tuple[Any, Any]:
        """(interpreter's rows, this graph's rows as run normally) on one graph: adjacency order is the graph's."""
        self.off = True
        want = run_query(graph, query, params, max_rows=10_000).rows
        self.off = False
        return want, run_query(graph, query, params, max_rows=10_000).rows


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    s = Spy()
    monkeypatch.setattr(vector, "run", s)
    return s


@pytest.mark.parametrize("seed", range(6))
def test_vectorised_rows_equal_the_interpreters(seed: int, spy: Spy, tmp_path: Path) -> None:
    g = random_graph(seed)
    for query, _ in QUERIES:
        run_query(g, query, max_rows=10_000)
        assert spy.used.pop() is False  # a graph that may change is never vectorised
    for frozen in (_frozen_copy(g), _snapshot_graph(g, tmp_path)):
        for query, vectorised in QUERIES:
            want, got = spy.both(frozen, query)
            assert spy.used.pop() is vectorised, query
            assert got == want, query


def test_grouping_by_sorting_equals_the_table(spy: Spy, monkeypatch: pytest.MonkeyPatch) -> None:
    """Grouping by one sort (code ranges too wide for a table) gives the same rows as the table."""
    monkeypatch.setattr(vector_agg, "DENSE_SLACK", -10**9)
    for seed in range(3):
        frozen = _frozen_copy(random_graph(seed))
        for query, vectorised in QUERIES:
            want, got = spy.both(frozen, query)
            assert spy.used.pop() is vectorised, query
            assert got == want, query


def test_parameters_behave_alike(spy: Spy) -> None:
    frozen = _frozen_copy(random_graph(7))
    query = "MATCH (a {id: $id})-[]->(b) WHERE b.count >= $c RETURN b.name AS name, count(*) AS n ORDER BY name"
    for params in ({"id": "n01", "c": 1}, {"id": "n01", "c": None}, {"id": "none", "c": 0}, {"id": "n05", "c": "3"}):
        want, got = spy.both(frozen, query, params)
        assert spy.used[-1] is True
        assert got == want


class _Everything:
    """Stands for "every node is on a shortest path": the one-ended search the engine used before."""

    def __contains__(self, item: object) -> bool:
        return True


@pytest.mark.parametrize("seed", range(4))
def test_two_ended_shortest_paths_equal_one_ended(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    g = random_graph(100 + seed, n=60, m=120)
    ctx = Context(g, {}, 10.0)
    rnd = random.Random(seed)
    ids = list(g.nodes)
    cases = []
    for _ in range(60):
        a, b = rnd.sample(ids, 2)
        flt = RelFilter(tuple(rnd.sample(TYPES, rnd.randint(0, 2))), None)
        cases += [(a, b, rnd.choice(["out", "in", "both"]), flt, rnd.choice([None, 2, 3, 6]), w) for w in (False, True)]

    def run() -> list[list[list[Any]]]:
        return [[[(r.start, r.end, r.key) for r in p] for p in shortest_paths(ctx, a, b, d, f, 1, hi, w, set())]
                for a, b, d, f, hi, w in cases]

    two_ended = run()
    monkeypatch.setattr(paths, "_on_shortest_paths", lambda *args: _Everything())
    assert run() == two_ended


@pytest.mark.parametrize("seed", range(3))
def test_walks_to_a_fixed_end_equal_the_full_search(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from kg.cypher.planner import Planner

    g = random_graph(200 + seed, n=30, m=90)
    rnd = random.Random(seed)
    queries = ["MATCH p = (a {id: $a})-[*2]-(b {id: $b}) RETURN [n IN nodes(p) | n.id] AS via",
               "MATCH (a {id: $a})-[r:USES|CITES*1..3]->(b) WHERE b.id = $b RETURN [x IN r | x.w] AS w",
               "MATCH (a {id: $a})<-[*0..2]-(b {id: $b}) RETURN count(*) AS n"]
    cases = [(q, {"a": f"n{rnd.randrange(30):02d}", "b": f"n{rnd.randrange(30):02d}"}) for q in queries * 8]
    steered = [run_query(g, q, p, max_rows=100_000).rows for q, p in cases]
    monkeypatch.setattr(Planner, "_bind_end", lambda self, pi, rel_idx, dst: None)
    assert [run_query(g, q, p, max_rows=100_000).rows for q, p in cases] == steered


def test_objects_a_query_leaves_behind_are_frozen_garbage_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past FREEZE_AFTER objects left by queries (caches they built), the engine freezes them, so full
    collections stop walking them; garbage cycles are collected first, never frozen."""
    import gc
    import weakref

    import kg.cypher as cypher

    class Cycle:
        pass

    monkeypatch.setattr(cypher, "FREEZE_AFTER", 100)
    monkeypatch.setattr(cypher, "_piled", [0])
    g = random_graph(1, n=400)
    was = gc.isenabled()
    gc.enable()
    try:
        junk = Cycle()
        junk.me = junk  # type: ignore[attr-defined]
        dead = weakref.ref(junk)
        del junk
        frozen = gc.get_freeze_count()
        run_query(g, "MATCH (n) RETURN [n.id] AS id")  # leaves its 400 rows of lists behind
        assert cypher._piled == [0]
        assert gc.get_freeze_count() > frozen
        assert dead() is None
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()


def test_joined_text_finds_what_python_finds() -> None:
    """STARTS WITH / ENDS WITH / CONTAINS over a joined column equal str.startswith / endswith / in."""
    from kg.cypher.textscan import JoinedText, joined

    rnd = random.Random(5)
    for _ in range(200):
        values: list[Any] = ["".join(rnd.choice("ab") for _ in range(rnd.randint(0, 5)))
                             for _ in range(rnd.randint(0, 12))]
        values += rnd.sample([None, 3, 2.5, True, ["a"]], rnd.randint(0, 2))
        rnd.shuffle(values)
        text = JoinedText(values)
        for s in ("a", "b", "ab", "ba", "aa", "aba", "bbbbbb"):
            for op, test in (("STARTS", str.startswith), ("ENDS", str.endswith), ("CONTAINS", str.__contains__)):
                want = [type(v) is str and test(v, s) for v in values]
                assert text.hits(op, s).tolist() == want, (values, op, s)

    class Col:
        obj = np.array(["a\x00b", "c"], dtype=object)

    assert joined(Col()) is None  # a value holding the separator: searched value by value


def test_string_tests_by_joined_text_equal_the_interpreters(spy: Spy, monkeypatch: pytest.MonkeyPatch) -> None:
    import kg.cypher.vector_pred as vector_pred

    monkeypatch.setattr(vector_pred, "SCAN_ROWS", 0)
    queries = [f"MATCH (e) WHERE e.{k} {op} $s RETURN e.id AS id" for k in ("name", "tag", "count")
               for op in ("STARTS WITH", "ENDS WITH", "CONTAINS")]
    for seed in range(3):
        frozen = _frozen_copy(random_graph(seed))
        for query in queries:
            for s in ("a", "ph", "alpha", "", "x", "zz"):
                want, got = spy.both(frozen, query, {"s": s})
                assert spy.used.pop() is True, query
                assert got == want, (query, s)
