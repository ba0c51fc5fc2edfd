"""`kg export` from either store: the same GraphML and JSON Lines, and CSV files laid out for neo4j-admin."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import networkx as nx
import pytest

from kg.errors import InputError
from kg.export import ARRAY_DELIMITER, export
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore


def test_jsonl_and_graphml_are_the_same_from_every_store(store: Store, reference: EmbeddedStore,
                                                         tmp_path: Path) -> None:
    for fmt in ("jsonl", "graphml"):
        mine, want = tmp_path / f"mine.{fmt}", tmp_path / f"want.{fmt}"
        export(store, fmt, mine)
        export(reference, fmt, want)
        assert mine.read_bytes() == want.read_bytes(), fmt
    lines = [json.loads(x) for x in (tmp_path / "mine.jsonl").read_text().splitlines()]
    st = reference.stats()
    assert sum(x["kind"] == "node" for x in lines) == reference.graph.number_of_nodes()
    assert sum(x["kind"] == "edge" for x in lines) == st.edges
    g = nx.read_graphml(tmp_path / "mine.graphml")
    node = next(d for _, d in g.nodes(data=True) if d["kind"] == "Method")
    assert isinstance(json.loads(node["aliases"]), list) and node["label"] == node["name"]


def test_neo4j_csv_has_the_import_layout(store: Store, reference: EmbeddedStore, tmp_path: Path) -> None:
    result = export(store, "neo4j-csv", tmp_path / "csv")
    names = {f.name for f in result.files}
    assert {"nodes_Paper.csv", "nodes_Method.csv", "rels_USES.csv", "rels_RELATED_TO.csv"} <= names
    with open(tmp_path / "csv" / "nodes_Method.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    assert header[:2] == ["id:ID", ":LABEL"]
    assert {"paper_count:int", "aliases:string[]", "name:string"} <= set(header)
    assert len(rows) - 1 == len(reference.by_label("Method"))
    aliases = header.index("aliases:string[]")
    for row in rows[1:]:
        want = reference.graph.nodes[row[0]]["aliases"]
        assert (row[aliases].split(ARRAY_DELIMITER) if row[aliases] else []) == want
    with open(tmp_path / "csv" / "rels_USES.csv", newline="") as fh:
        rel_header = next(csv.reader(fh))
    assert rel_header[:3] == [":START_ID", ":END_ID", ":TYPE"] and "start:int" in rel_header
    total_rels = sum(len(f.read_text().splitlines()) - 1 for f in result.files if f.name.startswith("rels_"))
    assert total_rels == reference.stats().edges
    assert result.command.startswith("neo4j-admin database import full ")
    assert "--array-delimiter=U+001F" in result.command and result.command.endswith(" neo4j")


def test_export_refuses_unknown_formats(reference: EmbeddedStore, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="choose one of"):
        export(reference, "xml", tmp_path / "x")
