"""Every read-only TCK scenario gives the same outcome on its graph frozen, where kg.cypher.vector may run it."""

from __future__ import annotations

import re
from typing import Any

import networkx as nx
import pytest

import kg.cypher.vector as vector

from .gherkin import load_scenarios
from .runner import FEATURES, _setup, _table_params, run_query, skip_reason

if not FEATURES.is_dir():  # pragma: no cover - the TCK lives in ../shared/tck next to the checkout
    pytest.skip(f"openCypher TCK not found at {FEATURES}", allow_module_level=True)


def _outcome(result: tuple[str, Any]) -> tuple[Any, ...]:
    kind, res = result
    if kind == "error":
        return ("error", res[0], type(res[1]).__name__)
    return ("rows", res[0], re.sub(r" at 0x[0-9a-f]+", "", repr(res[1])))  # paths print their address


@pytest.mark.slow
def test_frozen_graphs_answer_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[bool] = []
    real = vector.run

    def spy(query: Any, ctx: Any) -> Any:
        out = real(query, ctx)
        used.append(out is not None)
        return out

    monkeypatch.setattr(vector, "run", spy)
    vectorised, differ = 0, []
    for sc in load_scenarios(FEATURES):
        if skip_reason(sc) is not None:
            continue
        try:
            graph, params = _setup(sc)
        except Exception:  # noqa: BLE001 - a setup failure is test_tck's to report
            continue
        for st in sc.steps:
            if st.keyword == "Given" and st.text.startswith("parameters are"):
                params.update(_table_params(st))
        query = next(st.doc for st in sc.steps if st.keyword == "When") or ""
        plain = _outcome(run_query(graph, query, params))
        nx.freeze(graph)
        used.clear()
        frozen = _outcome(run_query(graph, query, params))
        vectorised += any(used)
        if frozen != plain:
            differ.append(sc.id)
    assert not differ
    assert vectorised >= 100  # the arrays did run a good part of them
