"""Export the graph for other tools: GraphML (Gephi), JSON Lines, and the CSV files neo4j-admin imports."""

from __future__ import annotations

import csv
import os
import shlex
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import orjson

from kg.cypher.temporal import Temporal
from kg.errors import InputError
from kg.graph import PaperInput
from kg.store.base import Store

FORMATS = ("graphml", "jsonl", "neo4j-csv")
ARRAY_DELIMITER = "\x1f"  # the ASCII unit separator: never in abstracts, names or ids
INPUT_PROP = "_input"


@dataclass
class ExportResult:
    nodes: int
    edges: int
    files: list[Path] = field(default_factory=list)
    command: str = ""  # the neo4j-admin command that imports the CSV files


def store_graph(store: Store) -> nx.MultiDiGraph:
    """The whole graph of ``store``: the embedded store holds it; the Neo4j store fetches it."""
    return store.whole_graph()


def _props(attrs: Mapping[str, Any], reserved: str) -> dict[str, Any]:
    # Temporal values (a paper's `published` date) leave as ISO 8601 text, as graph.jsonl holds them.
    return {k: str(v) if isinstance(v := attrs[k], Temporal) else v for k in sorted(attrs)
            if k != reserved and attrs[k] is not None}


def _nodes(g: nx.MultiDiGraph) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for n in sorted(g.nodes):
        attrs = g.nodes[n]
        yield n, attrs["label"], _props(attrs, "label")


def _edges(g: nx.MultiDiGraph) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    rows = [(u, v, d["type"], _props(d, "type")) for u, v, d in g.edges(data=True)]
    rows.sort(key=lambda r: (r[0], r[2], r[1], str(r[3].get("paper_id", ""))))
    yield from rows


def write_graphml(g: nx.MultiDiGraph, path: Path) -> ExportResult:
    """GraphML for Gephi: ``label`` is the display name, ``kind`` the node label; lists become JSON strings."""
    out = nx.MultiDiGraph()
    for n, label, props in _nodes(g):
        flat = {k: orjson.dumps(v).decode() if isinstance(v, list) else v for k, v in props.items()}
        out.add_node(n, **{**flat, "kind": label, "label": str(props.get("name", n))})
    for i, (u, v, t, props) in enumerate(_edges(g)):
        flat = {k: orjson.dumps(x).decode() if isinstance(x, list) else x for k, x in props.items()}
        out.add_edge(u, v, key=f"e{i}", type=t, label=t, **flat)
    nx.write_graphml(out, path)
    return ExportResult(g.number_of_nodes(), g.number_of_edges(), [path])


def write_jsonl(g: nx.MultiDiGraph, path: Path) -> ExportResult:
    """One JSON object a line: nodes ``{"kind": "node", "id", "label", "properties"}`` first, then edges
    ``{"kind": "edge", "source", "target", "type", "properties"}``."""
    with open(path, "wb") as fh:
        for n, label, props in _nodes(g):
            fh.write(orjson.dumps({"kind": "node", "id": n, "label": label, "properties": props}) + b"\n")
        for u, v, t, props in _edges(g):
            fh.write(orjson.dumps({"kind": "edge", "source": u, "target": v, "type": t, "properties": props})
                     + b"\n")
    return ExportResult(g.number_of_nodes(), g.number_of_edges(), [path])


def _csv_type(values: Iterable[Any]) -> str:
    """The neo4j-admin header type that holds every value of a column."""
    kinds = {type(v) for v in values}
    if kinds <= {bool}:
        return "boolean"
    if kinds <= {int}:
        return "int" if all(-(2**31) <= v < 2**31 for v in values) else "long"
    if kinds <= {int, float}:
        return "double"
    if kinds <= {list, tuple}:
        return "string[]"
    return "string"


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return ARRAY_DELIMITER.join(str(x).replace(ARRAY_DELIMITER, " ") for x in v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v).replace(ARRAY_DELIMITER, " ") if isinstance(v, str) else v


def _write_csv(path: Path, fixed: list[str], rows: list[tuple[list[Any], dict[str, Any]]]) -> None:
    keys = sorted({k for _, props in rows for k in props})
    types = {k: _csv_type([p[k] for _, p in rows if k in p]) for k in keys}
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(fixed + [f"{k}:{types[k]}" for k in keys])
        for head, props in rows:
            w.writerow(head + [_cell(props.get(k)) for k in keys])


def write_neo4j_csv(g: nx.MultiDiGraph, directory: Path, *, inputs: Mapping[str, PaperInput] | None = None,
                    database: str = "neo4j") -> ExportResult:
    """Per-label node files (``id:ID``, ``:LABEL``, typed properties) and per-type relationship files
    (``:START_ID``, ``:END_ID``, ``:TYPE``). With ``inputs``, Papers keep their extraction, so the imported
    database is a complete kg store that later builds can merge into."""
    from kg.store.neo4j import input_json

    directory.mkdir(parents=True, exist_ok=True)
    nodes: dict[str, list[tuple[list[Any], dict[str, Any]]]] = defaultdict(list)
    for n, label, props in _nodes(g):
        props = {k: v for k, v in props.items() if k != "id"}
        if label == "Paper" and inputs is not None and n in inputs:
            props[INPUT_PROP] = input_json(inputs[n])
        nodes[label].append(([n, label], props))
    rels: dict[str, list[tuple[list[Any], dict[str, Any]]]] = defaultdict(list)
    for u, v, t, props in _edges(g):
        rels[t].append(([u, v, t], props))
    files: list[Path] = []
    for label, rows in sorted(nodes.items()):
        files.append(directory / f"nodes_{label}.csv")
        _write_csv(files[-1], ["id:ID", ":LABEL"], rows)
    node_files = list(files)
    for rel_type, rows in sorted(rels.items()):
        files.append(directory / f"rels_{rel_type}.csv")
        _write_csv(files[-1], [":START_ID", ":END_ID", ":TYPE"], rows)
    args = ["neo4j-admin", "database", "import", "full", "--overwrite-destination",
            "--array-delimiter=U+001F", "--multiline-fields=true"]
    args += [f"--nodes={f}" for f in node_files] + [f"--relationships={f}" for f in files[len(node_files):]]
    command = shlex.join([*args, database])
    return ExportResult(g.number_of_nodes(), g.number_of_edges(), files, command)


def export(store: Store, fmt: str, path: str | os.PathLike[str], *, database: str = "neo4j") -> ExportResult:
    """Write the graph of ``store`` to ``path`` (a file; a directory for ``neo4j-csv``) in format ``fmt``."""
    if fmt not in FORMATS:
        raise InputError(f"unknown export format '{fmt}'; choose one of: {', '.join(FORMATS)}")
    out = Path(path)
    if fmt != "neo4j-csv" and out.is_dir():
        raise InputError(f"{out}: is a directory; give a file name for {fmt}")
    if fmt == "neo4j-csv" and out.exists() and not out.is_dir():
        raise InputError(f"{out}: is a file; neo4j-csv writes a directory of CSV files")
    g = store_graph(store)
    if fmt == "graphml":
        return write_graphml(g, out)
    if fmt == "jsonl":
        return write_jsonl(g, out)
    return write_neo4j_csv(g, out, inputs=store.load_inputs(), database=database)
