"""A task's (or dataset's) landscape: which methods meet which datasets (or tasks) in its papers, with evidence.

The papers are those with a paper edge to the focus entity (``ADDRESSES`` a task, ``EVALUATES_ON`` a dataset,
or ``PROPOSES``/``USES``/``MENTIONS`` it). Rows are the methods and models those papers link to, columns the
datasets (for a task) or the tasks (for a dataset), each ranked by how many of the papers link to it. A cell
holds the papers linking its row and its column; a paper whose text states a relation between the two (an
``EVALUATED_ON``, ``USED_FOR``, ``COMPARED_WITH``, ``PART_OF`` or ``IS_A`` edge with that paper's id) is
marked ``stated`` and listed first, with that sentence first among its evidence.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np

from kg.errors import InputError, NotFoundError
from kg.graph import ENTITY_EDGE_TYPES, LABEL_TYPES, PAPER_EDGE_TYPES
from kg.models import EntityRef, Evidence, Landscape, LandscapeAxis, LandscapeCell, LandscapePaper
from kg.trends import TrendIndex

ROW_LABELS = ("Method", "Model")
COLUMN_LABEL = {"Task": "Dataset", "Dataset": "Task"}
_RELATIONS = set(ENTITY_EDGE_TYPES)
_PAPER_EDGES = set(PAPER_EDGE_TYPES)


def _evidence(e: dict[str, Any]) -> Evidence:
    return Evidence(paper_id=e["paper_id"], sentence=e["sentence"], start=e["start"], end=e["end"])


def focus_papers(graph: nx.MultiDiGraph, focus: str) -> list[str]:
    return sorted(u for u, keyed in graph._pred[focus].items()
                  if any(e["type"] in _PAPER_EDGES for e in keyed.values()))


def _top(counts: Mapping[str, int], nodes: Mapping[str, Mapping[str, Any]], limit: int) -> list[str]:
    """The ``limit`` entities most papers link to; equal counts by name, then id."""
    pool: Iterable[str] = counts
    if len(counts) > limit:  # only names with at least the limit-th count can make the list: sort just those
        cut = heapq.nlargest(limit, counts.values())[-1]
        pool = [e for e, n in counts.items() if n >= cut]
    return sorted(pool, key=lambda e: (-counts[e], nodes[e]["name"].casefold(), e))[:limit]


def axes(graph: nx.MultiDiGraph, focus: str, limit: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """The focus's papers and the top ``limit`` rows, columns and metrics (entity ids), before any cell."""
    label = graph.nodes[focus]["label"]
    col_label = COLUMN_LABEL[label]
    papers = focus_papers(graph, focus)
    counts: dict[str, Counter[str]] = {"row": Counter(), "col": Counter(), "metric": Counter()}
    kind_of = {**dict.fromkeys(ROW_LABELS, "row"), col_label: "col", "Metric": "metric"}
    # The graph's own dicts: networkx's node and edge views cost more than the reads here, tens of thousands
    # of them for a task with a few thousand papers.
    nodes, succ = graph._node, graph._succ
    for p in papers:
        for v, keyed in succ[p].items():
            kind = kind_of.get(nodes[v].get("label"))
            if kind and v != focus and any(e["type"] in _PAPER_EDGES for e in keyed.values()):
                counts[kind][v] += 1
    return papers, _top(counts["row"], nodes, limit), _top(counts["col"], nodes, limit), \
        _top(counts["metric"], nodes, limit)


def _links_from_graph(graph: nx.MultiDiGraph, papers: list[str], axis: set[str]) -> dict[str, list[str]]:
    """Each paper's axis entities (those it has a paper edge to)."""
    succ = graph._succ
    return {p: [v for v, keyed in succ[p].items()
                if v in axis and any(e["type"] in _PAPER_EDGES for e in keyed.values())] for p in papers}


class IncidenceAxes:
    """``axes`` and each paper's axis entities from the paper-entity incidence (``kg.trends.TrendIndex``'s
    arrays) instead of every paper's edges: numpy over the focus's papers' rows. The same answers."""

    def __init__(self, index: TrendIndex, labels: Sequence[str]) -> None:
        self.index = index
        codes = {lab: i for i, lab in enumerate(sorted(set(labels)))}
        self.code_of = codes
        self.label_code = np.fromiter((codes[lab] for lab in labels), dtype=np.int64, count=len(labels))
        self._last: tuple[str, np.ndarray, np.ndarray] | None = None

    def _entries(self, focus: str) -> tuple[np.ndarray, np.ndarray]:
        """(paper row position among the focus's papers, entity column) for each of their incidence entries."""
        last = self._last
        if last is not None and last[0] == focus:
            return last[1], last[2]
        ix = self.index
        rows = ix.entity_papers(focus)
        lo, hi = ix.indptr[rows], ix.indptr[rows + 1]
        lengths = hi - lo
        flat = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        owner, cols = np.repeat(np.arange(len(rows)), lengths), ix.indices[flat].astype(np.int64)
        self._last = (focus, owner, cols)
        return owner, cols

    def axes(self, graph: nx.MultiDiGraph, focus: str, limit: int) -> tuple[list[str], list[str], list[str], list[str]]:
        ix, nodes = self.index, graph._node
        col_label = COLUMN_LABEL[nodes[focus]["label"]]
        papers = [ix.papers[i] for i in ix.entity_papers(focus).tolist()]
        owner, cols = self._entries(focus)
        focus_col = ix.col.get(focus, -1)
        out = []
        for kind in (ROW_LABELS, (col_label,), ("Metric",)):
            codes = [self.code_of[lab] for lab in kind if lab in self.code_of]
            js = cols[np.isin(self.label_code[cols], codes) & (cols != focus_col)]
            n = np.bincount(js, minlength=len(ix.entities))
            hit = np.nonzero(n)[0]
            out.append(_top(dict(zip([ix.entities[j] for j in hit.tolist()], n[hit].tolist(), strict=True)),
                            nodes, limit))
        return papers, out[0], out[1], out[2]

    def links(self, focus: str, papers: list[str], axis: set[str]) -> dict[str, list[str]]:
        ix = self.index
        owner, cols = self._entries(focus)
        wanted = np.asarray(sorted(ix.col[e] for e in axis if e in ix.col), dtype=np.int64)
        keep = np.isin(cols, wanted)
        out: dict[str, list[str]] = {p: [] for p in papers}
        ents = ix.entities
        for i, j in zip(owner[keep].tolist(), cols[keep].tolist(), strict=True):
            out[papers[i]].append(ents[j])
        return out


def landscape(graph: nx.MultiDiGraph, focus: str, describe: Callable[[str], EntityRef], *, limit: int = 25,
              cell_limit: int = 5, incidence: IncidenceAxes | None = None) -> Landscape:
    """The landscape of ``focus`` (a task or a dataset) from ``graph``'s typed edges (its papers and their
    entities from ``incidence`` when given: the graph's paper edges as arrays)."""
    d = graph.nodes.get(focus)
    if d is None or d.get("label") not in LABEL_TYPES:
        raise NotFoundError(f"no entity with id '{focus}'")
    if d["label"] not in COLUMN_LABEL:
        raise InputError(f"a landscape is drawn for a task or a dataset; '{d['name']}' is a {LABEL_TYPES[d['label']]}")
    if incidence is not None:
        papers, rows, cols, metrics = incidence.axes(graph, focus, limit)
        links = incidence.links(focus, papers, {*rows, *cols, *metrics})
    else:
        papers, rows, cols, metrics = axes(graph, focus, limit)
        links = _links_from_graph(graph, papers, {*rows, *cols, *metrics})
    row_set, col_set, metric_set = set(rows), set(cols), set(metrics)
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    paper_metrics: dict[str, list[str]] = {}
    axis_count: Counter[str] = Counter()
    for p in papers:
        mine = links[p]
        rs = sorted(v for v in mine if v in row_set)
        cs = sorted(v for v in mine if v in col_set)
        paper_metrics[p] = sorted(v for v in mine if v in metric_set)
        axis_count.update(mine)
        for r in rs:
            for c in cs:
                cells[(r, c)].append(p)
    stated = _stated(graph, rows, col_set, set(papers))
    nodes, succ = graph._node, graph._succ

    def mention(p: str, v: str) -> dict[str, Any]:
        """The paper edge's evidence: read only for the papers a cell lists."""
        return next(e for e in succ[p][v].values() if e["type"] in _PAPER_EDGES)

    out_cells = []
    for (r, c), ps in sorted(cells.items()):
        ranked = sorted(ps, key=lambda p: ((r, c, p) not in stated, -(nodes[p].get("year") or 0), p))
        listed = []
        for p in ranked[:cell_limit]:
            ev = []
            if (r, c, p) in stated:
                ev.append(_evidence(stated[(r, c, p)]))
            ev += [_evidence(e) for e in (mention(p, r), mention(p, c)) if "sentence" in e]
            seen: set[str] = set()
            unique = []  # one quote per sentence, the first
            for x in ev:
                if x.sentence not in seen:
                    seen.add(x.sentence)
                    unique.append(x)
            listed.append(LandscapePaper(id=p, title=nodes[p]["title"], year=nodes[p].get("year"),
                                         stated=(r, c, p) in stated, evidence=unique))
        used = sorted({m for p in ps for m in paper_metrics[p]}, key=metrics.index)
        out_cells.append(LandscapeCell(row=r, column=c, count=len(ps), papers=listed, metrics=used))

    def axis(ids: Iterable[str]) -> list[LandscapeAxis]:
        return [LandscapeAxis(entity=describe(e), papers=axis_count[e]) for e in ids]

    note = (f"{_count(len(papers), 'paper')}; top {_count(len(rows), 'method or model', 'methods and models')} "
            f"by papers, top {_count(len(cols), 'dataset' if d['label'] == 'Task' else 'task')}")
    return Landscape(entity=describe(focus), papers=len(papers),
                     column_type="dataset" if d["label"] == "Task" else "task",
                     rows=axis(rows), columns=axis(cols), metrics=axis(metrics), cells=out_cells, note=note)


def _count(n: int, one: str, many: str | None = None) -> str:
    """'1 paper', '3 papers': the word agrees with the number."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def _stated(graph: nx.MultiDiGraph, rows: list[str], cols: set[str], papers: set[str]) \
        -> dict[tuple[str, str, str], dict[str, Any]]:
    """(row, column, paper) -> the evidence of a relation that paper states between them, either direction."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    succ = graph._succ
    columns = sorted(cols)
    for r in rows:
        # r -> c and c -> r, each read from its source's out-edges: an entity's in-edges hold every paper that
        # links to it (tens of thousands for a common method), its out-edges only its relations.
        out_r = succ[r]
        for c in columns:
            for keyed in (out_r.get(c), succ[c].get(r)):
                for attrs in (keyed or {}).values():
                    pid = attrs.get("paper_id")
                    if attrs["type"] in _RELATIONS and pid in papers and "sentence" in attrs:
                        key = (r, c, pid)
                        if key not in out or ((attrs["type"], attrs["sentence"])
                                              < (out[key]["type"], out[key]["sentence"])):
                            out[key] = attrs
    return out
