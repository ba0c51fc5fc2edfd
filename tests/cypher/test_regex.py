"""`=~` with RE2: what Java reads differently is refused, and only that."""

from __future__ import annotations

import networkx as nx
import pytest

from kg.cypher import CypherError, run_query


def matches(text: str, pattern: str) -> bool:
    return run_query(nx.MultiDiGraph(), "RETURN $t =~ $p AS m", {"t": text, "p": pattern}).rows[0][0]


def test_a_literal_double_ampersand_outside_a_class_is_not_an_intersection() -> None:
    # was refused as "Java's character-class intersection" whenever the pattern also had a class
    assert matches("R&&D 2", r"R&&D [0-9]")
    assert matches("a&&b", r"[a-z]\&&b") is True


@pytest.mark.parametrize("pattern", ["[a-z&&[^e]]", "[\\w&&[^_]]+", "x[a&&b]"])
def test_an_intersection_inside_a_class_is_refused(pattern: str) -> None:
    with pytest.raises(CypherError, match="intersection"):
        matches("abc", pattern)
