"""A task's (or dataset's) landscape: which methods meet which datasets (or tasks) in its papers, with evidence.

The papers are those with a paper edge to the focus entity (``ADDRESSES`` a task, ``EVALUATES_ON`` a dataset,
or ``PROPOSES``/``USES``/``MENTIONS`` it). Rows are the methods and models those papers link to, columns the
datasets (for a task) or the tasks (for a dataset), each ranked by how many of the papers link to it. A cell
holds the papers linking its row and its column; a paper whose text states a relation between the two (an
``EVALUATED_ON``, ``USED_FOR``, ``COMPARED_WITH``, ``PART_OF`` or ``IS_A`` edge with that paper's id) is
marked ``stated`` and listed first, with that sentence first among its evidence.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import networkx as nx

from kg.errors import InputError, NotFoundError
from kg.graph import ENTITY_EDGE_TYPES, LABEL_TYPES, PAPER_EDGE_TYPES
from kg.models import EntityRef, Evidence, Landscape, LandscapeAxis, LandscapeCell, LandscapePaper

ROW_LABELS = ("Method", "Model")
COLUMN_LABEL = {"Task": "Dataset", "Dataset": "Task"}
_RELATIONS = set(ENTITY_EDGE_TYPES)
_PAPER_EDGES = set(PAPER_EDGE_TYPES)


def _evidence(e: dict[str, Any]) -> Evidence:
    return Evidence(paper_id=e["paper_id"], sentence=e["sentence"], start=e["start"], end=e["end"])


def focus_papers(graph: nx.MultiDiGraph, focus: str) -> list[str]:
    return sorted(u for u, keyed in graph._pred[focus].items()
                  if any(e["type"] in _PAPER_EDGES for e in keyed.values()))


def axes(graph: nx.MultiDiGraph, focus: str, limit: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """The focus's papers and the top ``limit`` rows, columns and metrics (entity ids), before any cell."""
    label = graph.nodes[focus]["label"]
    col_label = COLUMN_LABEL[label]
    papers = focus_papers(graph, focus)
    counts: dict[str, Counter[str]] = {"row": Counter(), "col": Counter(), "metric": Counter()}
    kind_of = {**dict.fromkeys(ROW_LABELS, "row"), col_label: "col", "Metric": "metric"}
    nodes = graph.nodes
    succ = graph._succ  # the adjacency dicts themselves: networkx's edge views cost more than the reads here
    for p in papers:
        for v, keyed in succ[p].items():
            kind = kind_of.get(nodes[v].get("label"))
            if kind and v != focus and any(e["type"] in _PAPER_EDGES for e in keyed.values()):
                counts[kind][v] += 1

    def top(c: Counter[str]) -> list[str]:
        return sorted(c, key=lambda e: (-c[e], nodes[e]["name"].casefold(), e))[:limit]

    return papers, top(counts["row"]), top(counts["col"]), top(counts["metric"])


def landscape(graph: nx.MultiDiGraph, focus: str, describe: Callable[[str], EntityRef], *, limit: int = 25,
              cell_limit: int = 5) -> Landscape:
    """The landscape of ``focus`` (a task or a dataset) from ``graph``'s typed edges."""
    d = graph.nodes.get(focus)
    if d is None or d.get("label") not in LABEL_TYPES:
        raise NotFoundError(f"no entity with id '{focus}'")
    if d["label"] not in COLUMN_LABEL:
        raise InputError(f"a landscape is drawn for a task or a dataset; '{d['name']}' is a {LABEL_TYPES[d['label']]}")
    papers, rows, cols, metrics = axes(graph, focus, limit)
    row_set, col_set, metric_set = set(rows), set(cols), set(metrics)
    mention: dict[tuple[str, str], dict[str, Any]] = {}  # (paper, entity) -> the paper edge's evidence
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    paper_metrics: dict[str, list[str]] = {}
    axis_count: Counter[str] = Counter()
    succ = graph._succ
    for p in papers:
        mine: dict[str, dict[str, Any]] = {}
        for v, keyed in succ[p].items():
            if v in row_set or v in col_set or v in metric_set:
                e = next((e for e in keyed.values() if e["type"] in _PAPER_EDGES), None)
                if e is not None:
                    mine[v] = e
        rs = sorted(v for v in mine if v in row_set)
        cs = sorted(v for v in mine if v in col_set)
        paper_metrics[p] = sorted(v for v in mine if v in metric_set)
        axis_count.update(v for v in mine if v in row_set or v in col_set or v in metric_set)
        for v in (*rs, *cs):
            mention[(p, v)] = mine[v]
        for r in rs:
            for c in cs:
                cells[(r, c)].append(p)
    stated = _stated(graph, rows, col_set, set(papers))
    nodes = graph.nodes
    out_cells = []
    for (r, c), ps in sorted(cells.items()):
        ranked = sorted(ps, key=lambda p: ((r, c, p) not in stated, -(nodes[p].get("year") or 0), p))
        listed = []
        for p in ranked[:cell_limit]:
            ev = []
            if (r, c, p) in stated:
                ev.append(_evidence(stated[(r, c, p)]))
            ev += [_evidence(mention[(p, v)]) for v in (r, c) if "sentence" in mention[(p, v)]]
            seen: set[str] = set()
            unique = [x for x in ev if not (x.sentence in seen or seen.add(x.sentence))]  # type: ignore[func-returns-value]
            listed.append(LandscapePaper(id=p, title=nodes[p]["title"], year=nodes[p].get("year"),
                                         stated=(r, c, p) in stated, evidence=unique))
        used = sorted({m for p in ps for m in paper_metrics[p]}, key=metrics.index)
        out_cells.append(LandscapeCell(row=r, column=c, count=len(ps), papers=listed, metrics=used))

    def axis(ids: Iterable[str]) -> list[LandscapeAxis]:
        return [LandscapeAxis(entity=describe(e), papers=axis_count[e]) for e in ids]

    note = (f"{len(papers)} papers; top {len(rows)} methods and models by papers, top {len(cols)} "
            f"{'datasets' if d['label'] == 'Task' else 'tasks'}")
    return Landscape(entity=describe(focus), papers=len(papers),
                     column_type="dataset" if d["label"] == "Task" else "task",
                     rows=axis(rows), columns=axis(cols), metrics=axis(metrics), cells=out_cells, note=note)


def _stated(graph: nx.MultiDiGraph, rows: list[str], cols: set[str], papers: set[str]) \
        -> dict[tuple[str, str, str], dict[str, Any]]:
    """(row, column, paper) -> the evidence of a relation that paper states between them, either direction."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in rows:
        for adj in (graph._succ[r], graph._pred[r]):
            for c in cols.intersection(adj):  # only the columns, never the (many) papers around a method
                for attrs in adj[c].values():
                    pid = attrs.get("paper_id")
                    if attrs["type"] in _RELATIONS and pid in papers and "sentence" in attrs:
                        key = (r, c, pid)
                        if key not in out or ((attrs["type"], attrs["sentence"])
                                              < (out[key]["type"], out[key]["sentence"])):
                            out[key] = attrs
    return out
