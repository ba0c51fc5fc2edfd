"""Static checks before execution, literal semantics and the error classes the openCypher TCK expects."""

from __future__ import annotations

import math
import re
from typing import Any

import networkx as nx
import pytest

from kg.cypher import run_query
from kg.cypher.errors import CypherArgumentError, CypherSyntaxError, CypherTypeError, UnsupportedCypher
from kg.cypher.parser import parse


def _graph() -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    for nid, label, name in (("a", "Person", "A"), ("b", "Person", "B"), ("c", "Person", "C")):
        g.add_node(nid, label=label, name=name)
    g.add_edge("a", "b", type="KNOWS")
    g.add_edge("b", "c", type="KNOWS")
    return g


G = _graph()


def rows(query: str, **params: Any) -> list[list[Any]]:
    return run_query(G, query, params).rows


@pytest.mark.parametrize(("query", "message"), [
    ("MATCH ()-[r]-() MATCH (r) RETURN r", "is a Relationship"),
    ("MATCH p = ()-->() MATCH (p) RETURN p", "is a Path"),
    ("MATCH p = ()-->(), p = ()-->() RETURN p", "already defined"),
    ("MATCH (a)-[r]->()-[r]->(a) RETURN r", "used twice"),
    ("WITH 1 AS n MATCH (n) RETURN n", "is a Integer"),
    ("MATCH (n) WHERE (n)-[r]->(m) RETURN n", "cannot introduce"),
    ("MATCH (n) WHERE (n) RETURN n", "expects a boolean, got Node"),
    ("RETURN false AND 123", "AND expects booleans"),
    ("RETURN true OR 123.4", "OR expects booleans"),
    ("RETURN NOT {}", "NOT expects a boolean"),
    ("RETURN 1 IN 'abc'", "IN expects a list"),
    ("RETURN 'a' % 2", "expects numbers"),
    ("RETURN any(x IN ['a', 'b'] WHERE x % 2 = 0)", "expects numbers"),
    ("MATCH (n) RETURN type(n)", "type() expects a relationship"),
    ("MATCH p = (a)-->(b) RETURN size(p)", "size() expects a list"),
    ("MATCH (n) RETURN [x IN [1, 2] | count(*)]", "not allowed inside list comprehensions"),
    ("RETURN count(rand())", "non-constant"),
    ("MATCH (a)--(b) RETURN a.x + b.x, a.x + b.x + count(*)", "not a grouping key"),
    ("MATCH (a)--(b) RETURN a.x + b.x, count(*) AS c ORDER BY a.x + b.x + count(*)", "not a grouping key"),
    ("MATCH (n) RETURN count(count(n))", "nested"),
    ("MATCH (n) WHERE count(n) > 1 RETURN n", "not allowed in WHERE"),
    ("MATCH (n) RETURN (n)-->()", "pattern expressions are allowed only"),
    ("RETURN foo(1)", "unknown function"),
    ("RETURN 1 LIMIT -1", "non-negative"),
    ("RETURN 1 SKIP 1.5", "non-negative integer"),
    ("RETURN undefinedVariable", "not defined"),
])
def test_invalid_queries_fail_before_running(query: str, message: str) -> None:
    with pytest.raises(CypherSyntaxError, match=re.escape(message)):
        parse(query)


def test_property_read_on_a_plain_value_is_a_type_error_found_statically() -> None:
    with pytest.raises(CypherTypeError, match="property `num` of a Integer"):
        parse("WITH 123 AS x RETURN x.num")
    with pytest.raises(CypherSyntaxError, match="of a Path"):
        parse("MATCH p = (n)-[*]->() WHERE p.name = 'x' RETURN p")


def test_null_variables_and_unknown_types_pass_the_static_checks() -> None:
    assert rows("WITH null AS a OPTIONAL MATCH p = (a)-[r]->() RETURN nodes(p)") == [[None]]
    assert rows("UNWIND [1, 2] AS x WITH x WHERE x > 1 RETURN x") == [[2]]


def test_with_where_sees_variables_bound_before_the_with() -> None:
    assert rows("MATCH (a:Person) WITH a.name AS name WHERE a.name = 'B' RETURN name") == [["B"]]
    assert rows("MATCH (a:Person) WITH DISTINCT a.name AS name WHERE a.name = 'C' RETURN name") == [["C"]]
    q = ("MATCH (a:Person {name: 'A'})-[:KNOWS]->(b)-[:KNOWS]->(c) OPTIONAL MATCH (a)-[r:KNOWS]->(c) "
         "WITH c WHERE r IS NULL RETURN c.name")
    assert rows(q) == [["C"]]
    with pytest.raises(CypherSyntaxError, match="not defined"):
        parse("MATCH (a) WITH count(*) AS n WHERE a.name = 'B' RETURN n")


@pytest.mark.parametrize(("literal", "value"), [
    (".1", 0.1), ("-.1e-5", -1e-6), ("0x7FFFFFFFFFFFFFFF", 2**63 - 1), ("-0x8000000000000000", -(2**63)),
    ("-9223372036854775808", -(2**63)), ("0o17", 15), ("-0o1000000000000000000000", -(2**63)), ("1e3", 1000.0),
    ("0" * 5000 + "7", 7),
])
def test_number_literals(literal: str, value: Any) -> None:
    assert rows(f"RETURN {literal} AS v") == [[value]]
    assert rows(f"RETURN [{literal}] AS v") == [[[value]]]


@pytest.mark.parametrize("literal", [
    "9223372036854775808", "-9223372036854775809", "0x8000000000000000", "-0x8000000000000001",
    "0o1000000000000000000000", "0x", "0x1G", "1.34E999", "1" + "0" * 5000,
    "\u00b9", "1\u00b2", "\u0663",  # digits to str.isdigit(), not to int(): superscripts, Arabic-Indic three
])
def test_number_literals_out_of_range_are_syntax_errors(literal: str) -> None:
    with pytest.raises(CypherSyntaxError):
        parse(f"RETURN {literal} AS v")


def test_integer_arithmetic_is_64_bit() -> None:
    with pytest.raises(CypherArgumentError, match="overflow"):
        rows("RETURN 9223372036854775807 + 1")
    with pytest.raises(CypherArgumentError, match="overflow"):
        rows("RETURN -(-9223372036854775808)")
    with pytest.raises(CypherArgumentError, match="division by zero"):
        rows("RETURN 1 / 0")


def test_nan_orders_with_nothing() -> None:
    out = rows("WITH 0.0 / 0.0 AS nan RETURN nan > 1, nan >= 1, nan < 1, nan <= 1, nan = nan, nan <> nan")
    assert out == [[False, False, False, False, False, True]]
    assert rows("RETURN 0.0 / 0.0 < 'a'") == [[None]]  # incomparable types stay null


def test_reversed_variable_length_bounds_match_nothing() -> None:
    for bounds in ("*2..1", "*1..0", "*..0"):
        assert rows(f"MATCH (a {{name: 'A'}})-[{bounds}]->(b) RETURN b") == []


def test_runtime_errors_have_the_tck_classes() -> None:
    with pytest.raises(CypherTypeError):
        rows("UNWIND [1, 'a'] AS x RETURN NOT x")
    with pytest.raises(CypherTypeError):
        rows("UNWIND [{}] AS x RETURN x[0]")
    with pytest.raises(CypherArgumentError):
        rows("RETURN range(1, 2, 0)")
    with pytest.raises(CypherArgumentError):
        rows("UNWIND [1] AS x RETURN percentileDisc(x, 1.5)")
    with pytest.raises(CypherSyntaxError, match="non-negative"):
        rows("MATCH (n) RETURN n LIMIT $n", n=-1)
    with pytest.raises(UnsupportedCypher, match="point"):
        rows("RETURN point({x: 1, y: 2})")


def test_math_functions() -> None:
    out = rows("RETURN sin(0), cos(0), atan2(1, 1), degrees(pi()), isNaN(0.0 / 0.0), cot(0)")[0]
    assert out[:2] == [0.0, 1.0] and math.isclose(out[2], math.pi / 4) and math.isclose(out[3], 180.0)
    assert out[4] is True and out[5] == math.inf


def test_full_exists_and_count_subqueries() -> None:
    q = "MATCH (n) WHERE exists { MATCH (n)-->(m) WITH n, count(*) AS c WHERE c = 1 RETURN true } RETURN n.name"
    assert sorted(rows(q)) == [["A"], ["B"]]
    q = "MATCH (n) RETURN n.name, COUNT { MATCH (n)-->(m) MATCH (m)-->(x) RETURN x } AS k ORDER BY n.name"
    assert rows(q) == [["A", 1], ["B", 0], ["C", 0]]
    q = "MATCH (n) WHERE EXISTS { MATCH (m) WHERE EXISTS { (n)-->(m) } } RETURN n.name ORDER BY n.name"
    assert rows(q) == [["A"], ["B"]]
    with pytest.raises(CypherSyntaxError, match="not defined"):
        parse("MATCH (n) WHERE EXISTS { MATCH (n)-->(m) RETURN z } RETURN n")


def test_relationship_list_bound_earlier_matches_as_variable_length() -> None:
    q = ("MATCH (a {name: 'A'})-[r1]->()-[r2]->(c) WITH [r1, r2] AS rs, a, c "
         "MATCH (x)-[rs*]->(y) RETURN x.name, y.name")
    assert rows(q) == [["A", "C"]]
    assert rows(q.replace("(x)-[rs*]->(y)", "(x)<-[rs*]-(y)")) == []
    # The list runs in the pattern's written order: right to left it must be [r2, r1].
    assert rows(q.replace("(x)-[rs*]->(y)", "(y)<-[rs*]-(x)")) == []
    assert rows(q.replace("[r1, r2]", "[r2, r1]").replace("(x)-[rs*]->(y)", "(y)<-[rs*]-(x)")) == [["A", "C"]]
    assert rows(q.replace("[rs*]", "[rs*3..]")) == []


def test_nodes_with_several_labels() -> None:
    g = nx.MultiDiGraph()
    g.add_node(1, label=("A", "B"), name="ab")
    g.add_node(2, label="A", name="a")
    got = run_query(g, "MATCH (n:A:B) RETURN n.name, labels(n)").rows
    assert got == [["ab", ["A", "B"]]]
    assert sorted(run_query(g, "MATCH (n:A) RETURN n.name").rows) == [["a"], ["ab"]]
    assert run_query(g, "MATCH (n:B) WHERE n:A RETURN n").rows[0][0]["_labels"] == ["A", "B"]
    assert run_query(g, "CALL db.labels() YIELD label RETURN label").rows == [["A"], ["B"]]
