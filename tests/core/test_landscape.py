"""A landscape drawn from the paper-entity incidence arrays is the one drawn from the graph's edges."""

from __future__ import annotations

from kg.landscape import landscape


def test_incidence_landscape_equals_the_graph_walk(seeds_store) -> None:
    g = seeds_store.graph
    seeds_store._trend_index()
    incidence = seeds_store._explore()["incidence"]
    focuses = [e for e in seeds_store.entity_ids() if g.nodes[e]["label"] in ("Task", "Dataset")]
    assert len(focuses) > 20
    for e in focuses:
        for limit, cell_limit in ((25, 5), (3, 1)):
            walked = landscape(g, e, seeds_store._entity_ref, limit=limit, cell_limit=cell_limit)
            indexed = landscape(g, e, seeds_store._entity_ref, limit=limit, cell_limit=cell_limit,
                                incidence=incidence)
            assert indexed == walked, e
