"""Read-only Cypher, fuzzed: hypothesis builds queries that hide write clauses in comments, strings and names,
mix their case, call writing procedures and subqueries, and chain statements. Through the store, POST /cypher and
`kg cypher`, a query with a real write is refused with CypherWriteError, one that only mentions a write is not,
and no query changes the graph (node and edge counts and a hash of the graph, in memory and on disk).

The ``target`` fixture is the one place that knows the backend, so a Bolt store can be added to KINDS.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.main import create_app
from api.settings import Settings
from kg.cache import record_hash
from kg.cli.main import main as kg_main
from kg.cypher import CypherError, CypherTimeout, CypherWriteError
from kg.graph import derive_graph
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore
from kg.store.snapshot import SNAPSHOT_FILE

from .helpers import file_hash, fingerprint, kg, no_traceback

KINDS = ["embedded", pytest.param("bolt", marks=pytest.mark.bolt)]
EXAMPLES = 120  # per fuzz test; each example is one query (the CLI one opens the store per query: fewer)
COUNTS: dict[str, int] = {}  # queries tried per surface, printed at the end of the module


@dataclass
class Target:
    """A store under test and how to read its state without going through its Cypher guard: ``state`` after
    every query (cheap), ``full_state`` (everything, hashed) at the end of each test."""

    kind: str
    store: Store
    state: Callable[[], Any]
    full_state: Callable[[], Any]
    store_dir: Path | None = None  # the embedded store's directory, for the CLI


def _bolt_dump(driver: Any) -> tuple[int, int, str]:
    nodes = driver.execute_query("MATCH (n) RETURN labels(n) AS l, properties(n) AS p", database_="kg").records
    edges = driver.execute_query("MATCH (a)-[r]->(b) RETURN a.id AS a, type(r) AS t, properties(r) AS p, b.id AS b",
                                 database_="kg").records
    rows = sorted(orjson.dumps([dict(r) for r in nodes + edges], option=orjson.OPT_SORT_KEYS
                               | orjson.OPT_NON_STR_KEYS).split(b"},{"))
    return len(nodes), len(edges), hashlib.sha256(b"".join(rows)).hexdigest()


def _bolt_counts(driver: Any) -> tuple[int, int]:
    n = driver.execute_query("MATCH (n) RETURN count(n) AS n", database_="kg").records[0]["n"]
    e = driver.execute_query("MATCH ()-[r]->() RETURN count(r) AS e", database_="kg").records[0]["e"]
    return int(n), int(e)


@pytest.fixture(scope="module", params=KINDS)
def target(request: pytest.FixtureRequest, seeds_store_dir: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    if request.param == "embedded":
        store = EmbeddedStore(seeds_store_dir)  # this module's own copy of the graph in memory

        def state() -> Any:
            return fingerprint(store), file_hash(seeds_store_dir / SNAPSHOT_FILE)

        yield Target("embedded", store, state, state, seeds_store_dir)
        store.close()
        return
    from kg.store.neo4j import Neo4jStore

    driver = request.getfixturevalue("bolt_driver")
    driver.execute_query("MATCH (n) DETACH DELETE n", database_="kg")
    reference = EmbeddedStore(seeds_store_dir)
    inputs = reference.load_inputs()
    bolt = Neo4jStore(driver, database="kg", batch_size=500, cache_dir=tmp_path_factory.mktemp("bolt-cache"),
                      timeout_s=60)
    bolt.cache.append((record_hash(p.record), p) for p in inputs.values())
    bolt.replace_graph(derive_graph(inputs.values()), inputs)
    assert _bolt_counts(driver) == (reference.graph.number_of_nodes(), reference.graph.number_of_edges())
    yield Target("bolt", bolt, lambda: _bolt_counts(driver), lambda: _bolt_dump(driver))
    bolt.close()


@pytest.fixture
def unchanged(target: Target) -> Iterator[None]:
    """The whole graph, compared once per test (per-query checks use the cheaper ``state``)."""
    before = target.full_state()
    yield
    assert target.full_state() == before, "the graph changed"


EMBEDDED_ONLY = pytest.mark.parametrize("target", ["embedded"], indirect=True)

# -- the query generator ---------------------------------------------------------------------------------

READS = [
    "MATCH (n) RETURN count(n) AS c",
    "MATCH (p:Paper) RETURN p.id AS id ORDER BY id LIMIT 3",
    "MATCH (a)-[r]->(b) RETURN type(r) AS t, count(*) AS n ORDER BY t",
    "MATCH (e:Method) WHERE e.name STARTS WITH 'S' RETURN e.name LIMIT 2",
    "RETURN 1 AS one",
    "UNWIND [1, 2, 3] AS x RETURN sum(x) AS s",
    "CALL db.labels() YIELD label RETURN label",
]
# Clauses and calls that would change data (or the server) if they ran.
WRITES = [
    "CREATE (x:Paper {id: 'evil'})",
    "MERGE (x:Paper {id: 'evil'})",
    "MATCH (n) SET n.pwned = true",
    "MATCH (n:Paper) SET n:Evil",
    "MATCH (n) DETACH DELETE n",
    "MATCH ()-[r]->() DELETE r",
    "MATCH (n) NODETACH DELETE n",
    "MATCH (n) REMOVE n.name",
    "DROP INDEX paper_id IF EXISTS",
    "CREATE INDEX FOR (n:Paper) ON (n.id)",
    "LOAD CSV FROM 'file:///etc/passwd' AS line CREATE (:Leak {l: line})",
    "FOREACH (i IN range(1, 3) | CREATE (:X {i: i}))",
    "MATCH (n) FOREACH (x IN [n] | SET x.evil = 1)",
    "INSERT (:X)",
    "USE system SHOW DATABASES",
    "ALTER USER neo4j SET PASSWORD 'x'",
    "CALL db.createLabel('Evil')",
    "CALL db.clearQueryCaches()",
    "CALL apoc.create.node(['Evil'], {})",
    "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {})",
    "CALL apoc.cypher.runWrite('CREATE (:Evil)', {})",
    "CALL dbms.security.createUser('evil', 'x', false)",
    "CALL { MATCH (n) DETACH DELETE n }",
    "MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS",
    "MATCH (n) CALL (n) { SET n.x = 1 }",
    "MATCH (n) WITH n CALL { WITH n RETURN n AS m } RETURN m",
    "RETURN apoc.create.uuid() AS u",  # an apoc name outside the pure namespaces
]
# Administration commands: writes where a statement starts (elsewhere they are only syntax errors).
ADMIN = ["GRANT ALL ON DATABASE * TO evil", "SHOW USERS", "ALTER DATABASE kg SET ACCESS READ WRITE",
         "STOP DATABASE kg", "TERMINATE TRANSACTIONS 'x'"]

@st.composite
def mixed_case(draw: st.DrawFn, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.swapcase() if f else c for c, f in zip(text, flips, strict=True))


def _quote(text: str, quote: str) -> str:
    return quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


@st.composite
def hidden_write(draw: st.DrawFn) -> str:
    """A read query that only mentions a write: in a comment, a string, a backticked name."""
    write = draw(st.sampled_from(WRITES))
    read = draw(st.sampled_from(READS[:6]))
    place = draw(st.sampled_from(["line comment", "block comment", "string", "backtick", "prefix comment"]))
    if place == "line comment":
        return f"{read} // {write}"
    if place == "block comment":
        return f"{read} /* {write.replace('*/', '')} */"
    if place == "prefix comment":
        return f"/* {write.replace('*/', '')} */\n// {write}\n{read}"
    if place == "string":
        quote = draw(st.sampled_from(["'", '"']))
        return f"RETURN {_quote(write, quote)} AS s"
    return f"RETURN 1 AS `{write.replace('`', '')}`"


@st.composite
def real_write(draw: st.DrawFn) -> str:
    """A query that really contains a write: alone, after a read clause, or as a second statement."""
    shape = draw(st.sampled_from(["alone", "after match", "second statement", "first statement", "with noise"]))
    write = draw(mixed_case(draw(st.sampled_from(WRITES if shape == "after match" else WRITES + ADMIN))))
    if shape == "after match":
        return f"MATCH (z:Paper) WITH z LIMIT 1 {write}"
    if shape == "second statement":
        return f"{draw(st.sampled_from(READS))}; {write}"
    if shape == "first statement":
        return f"{write}; {draw(st.sampled_from(READS))}"
    if shape == "with noise":
        noise = draw(st.sampled_from(["/* x */", "// y\n", "\n\t", "  "]))
        return f"{noise}{write}{noise}"
    return write


def every_form() -> list[tuple[str, str]]:
    """Each write in each shape and case, and hidden in each place: the fuzzers' ground, walked exhaustively."""
    out: list[tuple[str, str]] = []
    for w in WRITES + ADMIN:
        for case in (w, w.lower(), w.swapcase()):
            out += [(case, "write"), (f"{case}; RETURN 1", "write"), (f"RETURN 1; {case}", "write"),
                    (f"/* c */ {case} // d", "write")]
            if w not in ADMIN:
                out.append((f"MATCH (z:Paper) WITH z LIMIT 1 {case}", "write"))
        clean = w.replace("*/", "").replace("`", "")
        out += [(f"RETURN 1 AS one // {w}", "read"), (f"/* {clean} */ RETURN 1 AS one", "read"),
                (f"RETURN {_quote(w, chr(39))} AS s", "read"), (f"RETURN {_quote(w, chr(34))} AS s", "read"),
                (f"RETURN 1 AS `{clean}`", "read")]
    return out


EVERY_FORM = every_form()


multiple_reads = st.builds(lambda a, b: f"{a}; {b}", st.sampled_from(READS), st.sampled_from(READS))
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=120)

# (query, expectation): "write" must be refused, "read" must not be refused as a write, "any" may be either.
queries = st.one_of(
    real_write().map(lambda q: (q, "write")),
    multiple_reads.map(lambda q: (q, "write")),  # more than one statement is refused, whatever they are
    hidden_write().map(lambda q: (q, "read")),
    st.sampled_from(READS).flatmap(mixed_case).map(lambda q: (q, "any")),
    any_text.map(lambda q: (q, "any")),
    st.builds(lambda w, t: f"{w} {t}", st.sampled_from(WRITES), any_text).map(lambda q: (q, "any")),
)


def _check(expect: str, error: BaseException | None, query: str) -> None:
    if expect == "write":
        assert isinstance(error, CypherWriteError), f"not refused as a write: {query!r} -> {error!r}"
    elif expect == "read":
        assert not isinstance(error, CypherWriteError), f"refused a read-only query: {query!r} -> {error}"
    else:
        assert error is None or isinstance(error, CypherError), f"{query!r} raised {error!r}"


_FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))


@_FUZZ
@given(case=queries)
def test_store_cypher_never_writes(target: Target, unchanged: None, case: tuple[str, str]) -> None:
    query, expect = case
    before = target.state()
    error: BaseException | None = None
    try:
        target.store.cypher(query, {}, max_rows=50, timeout_s=2.0)
    except CypherError as exc:
        error = exc
    _check(expect, error, query)
    assert target.state() == before, f"the graph changed after {query!r}"
    COUNTS["store"] = COUNTS.get("store", 0) + 1


def test_every_write_form_is_refused_and_every_mention_is_not(target: Target, client: TestClient,
                                                              unchanged: None) -> None:
    before = target.state()
    for query, expect in EVERY_FORM:
        error: BaseException | None = None
        try:
            target.store.cypher(query, {}, max_rows=50, timeout_s=2.0)
        except CypherError as exc:
            error = exc
        _check(expect, error, query)
        r = client.post("/cypher", json={"query": query, "max_rows": 50})
        assert (r.status_code == 400 and r.json()["error"] == "CypherWriteError") == (expect == "write"), query
    assert target.state() == before
    COUNTS["every form (store and API)"] = 2 * len(EVERY_FORM)


@pytest.fixture(scope="module")
def client(target: Target) -> Iterator[TestClient]:
    app = create_app(Settings(cypher_timeout_s=2.0), store=target.store)
    with TestClient(app) as c:
        yield c


@_FUZZ
@given(case=queries)
def test_post_cypher_never_writes(target: Target, client: TestClient, unchanged: None,
                                  case: tuple[str, str]) -> None:
    query, expect = case
    before = target.state()
    r = client.post("/cypher", json={"query": query, "max_rows": 50})
    if not query:
        assert r.status_code == 422  # the body's query must not be empty
    else:
        assert r.status_code in (200, 400, 408), (query, r.status_code, r.text)
        kind = r.json().get("error") if r.status_code != 200 else None
        error = CypherWriteError(r.text) if kind == "CypherWriteError" else (
            CypherError(r.text) if kind else None)
        _check(expect, error, query)
    assert target.state() == before, f"the graph changed after POST {query!r}"
    COUNTS["api"] = COUNTS.get("api", 0) + 1


@EMBEDDED_ONLY
@settings(max_examples=EXAMPLES // 3, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=queries)
def test_kg_cypher_command_never_writes(target: Target, case: tuple[str, str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The command line in-process (hypothesis needs many runs); the subprocess test below checks the real one."""
    assert target.store_dir is not None
    query, expect = case
    before = file_hash(target.store_dir / SNAPSHOT_FILE)
    capsys.readouterr()
    code = kg_main(["cypher", "--store-dir", str(target.store_dir), "--json", "--timeout", "2", "--", query])
    err = capsys.readouterr().err
    assert code in (0, 1), (query, code, err)
    if code == 1:
        assert err.startswith("kg: error: ") and len(err.strip().splitlines()) == 1, err
    refused = code == 1 and "not allowed" in err
    _check(expect, CypherWriteError(err) if refused else (CypherError(err) if code else None), query)
    assert file_hash(target.store_dir / SNAPSHOT_FILE) == before
    COUNTS["cli"] = COUNTS.get("cli", 0) + 1


@EMBEDDED_ONLY
def test_real_kg_cypher_refuses_writes_in_one_line(target: Target) -> None:
    assert target.store_dir is not None
    before = file_hash(target.store_dir / SNAPSHOT_FILE)
    for query in ["MATCH (n) DETACH DELETE n", "cReAtE (x:Evil)", "RETURN 1; MATCH (n) SET n.x = 1",
                  "CALL { MATCH (n) DETACH DELETE n }", "CALL apoc.create.node(['X'], {})"]:
        r = kg("cypher", query, "--store-dir", str(target.store_dir))
        assert r.returncode == 1 and r.stdout == ""
        no_traceback(r.stderr)
        assert r.stderr.startswith("kg: error: ") and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "not allowed" in r.stderr
    count = "MATCH (n) RETURN count(n) AS n"
    r = kg("cypher", count, "--store-dir", str(target.store_dir), "--json")
    assert r.returncode == 0 and orjson.loads(r.stdout)["rows"] == target.store.cypher(count).rows
    assert file_hash(target.store_dir / SNAPSHOT_FILE) == before
    COUNTS["cli subprocess"] = 6


# -- time and size limits ----------------------------------------------------------------------------------

SLOW = {"embedded": "MATCH (a), (b), (c) RETURN count(*)",
        # bounded: a Bolt server that ignores the query timeout (ArcadeDB) still finishes it a few seconds later.
        # 25M rows: ArcadeDB counts 3M in about 0.5 s on a quiet machine, inside the 1 s grace kg allows a server.
        "bolt": "UNWIND range(1, 5000) AS a UNWIND range(1, 5000) AS b WITH a, b WHERE a * b % 7 = 99 "
                "RETURN count(*) AS n"}
BOMBS = [  # each would take memory without bound (or near enough) if it ran to the end
    "RETURN size(reduce(s = 'x', i IN range(1, 40) | s + s)) AS n",
    "RETURN size(reduce(s = 'x', i IN range(1, 40) | replace(s, 'x', 'xx'))) AS n",
    "RETURN size(reduce(l = [1], i IN range(1, 40) | l + l)) AS n",
    "UNWIND range(1, 1000) AS i WITH collect(range(1, 9999999)) AS c RETURN size(c)",
    "WITH range(1, 3000) AS l RETURN [x IN l | l] AS big",
    "RETURN reduce(l = [], i IN range(1, 100000) | [l]) AS deep",
]


def test_slow_queries_are_stopped_and_reported(target: Target, unchanged: None) -> None:
    slow = SLOW[target.kind]
    with pytest.raises(CypherTimeout):
        target.store.cypher(slow, timeout_s=0.3)
    app = create_app(Settings(cypher_timeout_s=0.3), store=target.store)
    with TestClient(app) as c:
        r = c.post("/cypher", json={"query": slow})
    assert r.status_code == 408 and r.json()["error"] == "CypherTimeout"
    if target.store_dir is not None:
        r2 = kg("cypher", slow, "--store-dir", str(target.store_dir), "--timeout", "0.3")
        assert r2.returncode == 1 and "time limit" in r2.stderr and len(r2.stderr.strip().splitlines()) == 1


@EMBEDDED_ONLY
@pytest.mark.parametrize("query", BOMBS)
def test_memory_bombs_are_refused_quickly(target: Target, client: TestClient, query: str) -> None:
    r = client.post("/cypher", json={"query": query})
    assert r.status_code in (400, 408), r.text
    assert any(w in r.json()["detail"] for w in ("too large", "too much", "nested too deeply", "time limit"))


def test_results_are_capped(target: Target, client: TestClient) -> None:
    r = client.post("/cypher", json={"query": "UNWIND range(1, 100000) AS x RETURN x", "max_rows": 100})
    assert r.status_code == 200 and len(r.json()["rows"]) == 100 and r.json()["truncated"] is True
    r = client.post("/cypher", json={"query": "UNWIND range(1, 100000) AS x RETURN x"})
    assert len(r.json()["rows"]) == 1000 and r.json()["truncated"] is True  # the default cap
    assert client.post("/cypher", json={"query": "RETURN 1", "max_rows": 10_001}).status_code == 422


def test_zz_report(capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\n[reliability] Cypher queries fuzzed: {sum(COUNTS.values())} ({COUNTS}); none changed the graph")

