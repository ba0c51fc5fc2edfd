"""Reads over Bolt: Cypher fetches the part of the graph a read touches; the embedded store's code answers.

Each read asks the server for a small subgraph (a paper and its edges, an entity's neighbourhood, the
candidates of a search) and runs the very same ``NxReads`` method over it, so both stores give equal
answers by construction. Two whole-graph indexes are cached, as the embedded store caches them: the
entities (names and aliases, for resolving and fuzzy matching) and each paper's entity ids (for
related-paper scores, which depend on every paper). They are re-read when the server's node or
relationship count changes, checked at most every ``RECHECK_S`` seconds.

Word filters sent to the server (paper lists and search candidates) lower-case with Cypher's ``toLower``;
Python's ``casefold`` also folds a few characters further (``ß`` -> ``ss``, ligatures), so a word written
with one of those may match on the embedded store and not here.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx
import numpy as np

from kg import explore
from kg.canon import canonical_key
from kg.errors import NotFoundError, StoreError
from kg.fulltext import FullTextIndex
from kg.graph import ENTITY_LABELS, LABEL_TYPES, PAPER_EDGE_TYPES, PaperInput, TextIndexBuilder
from kg.landscape import COLUMN_LABEL, axes
from kg.models import (
    EntityDetail,
    EntityRef,
    EntitySummary,
    EntityTimeline,
    GraphView,
    Landscape,
    Page,
    PaperDetail,
    PaperSummary,
    RelatedEntity,
    RelatedPaper,
    SearchHit,
    Stats,
    Trends,
)
from kg.readers import PaperRecord
from kg.related import PaperSimilarity, RelatedIndex, TextIndex
from kg.reported import RESULT_LABEL
from kg.semantic import dense_matches, fuse
from kg.store import neo4j_queries as Q
from kg.store.base import Store
from kg.store.neo4j_values import from_driver
from kg.store.nxreads import NxReads, ranked_hits
from kg.trends import TrendIndex

RECHECK_S = 2.0
_SIMILARITY_LOCK = threading.Lock()  # one build of the related-papers scorer at a time
PAPER_RERANK = 50  # as NxReads.search: papers fetched past the limit for the entity bonus


class _Sub(NxReads):
    """NxReads over a fetched subgraph; the whole-graph indexes, where a read needs them, are passed in."""

    def __init__(self, graph: nx.MultiDiGraph, *, related: RelatedIndex | None = None,
                 alias: dict[str, str] | None = None, similarity: PaperSimilarity | None = None) -> None:
        super().__init__(graph)
        self._shared_related = related
        self._shared_alias = alias
        self._shared_similarity = similarity

    def _related_index(self) -> RelatedIndex:
        return self._shared_related or super()._related_index()

    def _paper_similarity(self) -> PaperSimilarity:
        return self._shared_similarity or super()._paper_similarity()

    def _text_index(self) -> TextIndex:
        return self._shared_similarity.text if self._shared_similarity is not None else super()._text_index()

    def _alias_index(self) -> dict[str, str]:
        return self._shared_alias or super()._alias_index()

    def load_inputs(self) -> dict[str, PaperInput]:
        raise StoreError("a fetched subgraph holds no inputs")

    def replace_graph(self, graph: nx.MultiDiGraph, inputs: Mapping[str, PaperInput]) -> None:
        raise StoreError("a fetched subgraph cannot be written")


def add_node(g: nx.MultiDiGraph, label: str, props: Mapping[str, Any]) -> str:
    """Add or complete a node; null values are projections that left something out, not properties."""
    clean = {k: from_driver(v) for k, v in props.items() if v is not None and k != "label"}
    nid = clean["id"]
    if nid in g:
        g.nodes[nid].update(clean)
    else:
        if label in Q.ENTITY_LABEL_NAMES:
            # CSV imports (neo4j-admin) cannot hold an empty list: a missing alias list is an empty one.
            clean.setdefault("aliases", [])
            clean.setdefault("alias_why", [])
        g.add_node(nid, label=label, **clean)
    return str(nid)


def add_edge(g: nx.MultiDiGraph, start: str, rel_type: str, props: Mapping[str, Any], end: str) -> None:
    """Add an edge once, however many fetches return it: keyed by type and, if it has one, paper."""
    pid = props.get("paper_id")
    g.add_edge(start, end, key=f"{rel_type}|{pid}" if pid else rel_type, type=rel_type, **props)


def _add_rows(g: nx.MultiDiGraph, rows: Iterable[Mapping[str, Any]]) -> None:
    """Rows of (s, type, props, e[, label, node]): the far node first, so no edge meets a bare node."""
    for row in rows:
        if "node" in row:
            add_node(g, row["label"], row["node"])
        add_edge(g, row["s"], row["type"], row["props"], row["e"])


class BoltReads(Store):
    """Every read of the Store interface, for a subclass that supplies ``_read(query, **params)``."""

    def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _forget(self) -> None:
        """Drop the cached indexes (after a write, or when the server's graph changed)."""
        self._entity_view: _Sub | None = None
        self._related: RelatedIndex | None = None
        self._similarity: PaperSimilarity | None = None
        self._trends: tuple[TrendIndex, list[str]] | None = None
        self._fulltext_index: FullTextIndex | None = None
        self._version: tuple[int, int] | None = None
        self._checked = 0.0

    # -- cached whole-graph indexes ------------------------------------------------------------------
    def _fresh(self) -> None:
        if not hasattr(self, "_checked"):
            self._forget()
        now = time.monotonic()
        if self._version is not None and now - self._checked < RECHECK_S:
            return
        row = self._read(Q.COUNTS)[0]
        version = (row["nodes"], row["rels"])
        if version != self._version:
            self._forget()
            self._version = version
        self._checked = now

    def _entities(self) -> _Sub:
        """All entity nodes, with every property: names, aliases and counts."""
        self._fresh()
        if self._entity_view is None:
            g = nx.MultiDiGraph()
            for row in self._read(Q.ENTITIES):
                add_node(g, row["label"], row["props"])
            self._entity_view = _Sub(g)
        return self._entity_view

    def _related_index(self) -> RelatedIndex:
        self._fresh()
        if self._related is None:
            self._related = RelatedIndex({row["id"]: row["es"] for row in self._read(Q.PAPER_ENTITY_IDS)})
        return self._related

    def _paper_similarity(self) -> PaperSimilarity:
        """The related-papers scorer over the server's papers: their stored embeddings (a paper stored by a kg
        before them is embedded here) and TF-IDF rows computed from the abstracts, as the embedded store keeps
        them, so both stores rank alike."""
        related = self._related_index()
        with _SIMILARITY_LOCK:
            return self._build_similarity(related)

    def _build_similarity(self, related: RelatedIndex) -> PaperSimilarity:
        if self._similarity is None or self._similarity.entities is not related:  # the graph changed meanwhile
            rows = sorted(self._read(Q.PAPER_EMBEDDINGS), key=lambda r: r["id"])
            texts = TextIndexBuilder(len(rows))
            for r in rows:  # as derive_graph built it, with the stored embeddings of this kg's embedder
                stored = r.get("embedding") if r.get("embedder") == texts.embedder.name else None
                texts.add(r["id"], PaperRecord(id=r["id"], abstract=r.get("abstract") or "",
                                               title=None if r.get("title_generated") else r.get("title")),
                          None if stored is None else np.asarray(stored, dtype=np.float32))
            self._similarity = PaperSimilarity(related, texts.finish())
        return self._similarity

    def _trend_index(self) -> tuple[TrendIndex, list[str]]:
        """The papers' dates with the paper-entity incidence, and each entity column's label."""
        related = self._related_index()
        view = self._entities().graph
        if self._trends is None:
            nodes = {row["id"]: row for row in self._read(Q.PAPER_DATES)}
            index = TrendIndex.from_csr(related.papers, related.entities, related.indptr, related.indices, nodes)
            self._trends = (index, [view.nodes[e]["label"] for e in related.entities])
        return self._trends

    def _fulltext(self) -> FullTextIndex:
        self._fresh()
        if self._fulltext_index is None:
            self._fulltext_index = FullTextIndex.build((row["id"], row) for row in self._read(Q.PAPER_TEXTS))
        return self._fulltext_index

    def _entity_label(self, entity_id: str) -> str | None:
        d = self._entities().graph.nodes.get(entity_id)
        return None if d is None else str(d["label"])

    # -- fetching parts of the graph ---------------------------------------------------------------
    def _fetch_nodes(self, g: nx.MultiDiGraph, ids_by_label: Mapping[str, Iterable[str]], *,
                     brief: bool = False) -> None:
        for label, ids in ids_by_label.items():
            for row in self._read(Q.nodes_by_id(label, brief=brief), ids=sorted(set(ids))):
                add_node(g, row["label"], row["props"])

    def _by_label(self, g: nx.MultiDiGraph, ids: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for n in ids:
            out[g.nodes[n]["label"]].append(n)
        return out

    def _node_graph(self, node_id: str, label: str | None) -> nx.MultiDiGraph:
        g = nx.MultiDiGraph()
        if label is not None:
            self._fetch_nodes(g, {label: [node_id]})
        return g

    # -- reads ---------------------------------------------------------------------------------------
    def stats(self) -> Stats:
        labels: Counter[str] = Counter()
        for row in self._read(Q.NODE_COUNTS):
            labels[row["labels"][0] if row["labels"] else ""] += row["n"]
        edges = {row["type"]: row["n"] for row in self._read(Q.REL_COUNTS)}
        entity_labels = list(ENTITY_LABELS.values())
        return Stats(papers=labels.get("Paper", 0), entities=sum(labels.get(lab, 0) for lab in entity_labels),
                     edges=sum(edges.values()),
                     entities_by_type={LABEL_TYPES[lab]: labels[lab] for lab in entity_labels if labels.get(lab)},
                     edges_by_type=dict(sorted(edges.items())), authors=labels.get("Author", 0),
                     venues=labels.get("Venue", 0), results=labels.get(RESULT_LABEL, 0))

    def get_paper(self, paper_id: str) -> PaperDetail:
        g = self._node_graph(paper_id, "Paper")
        if paper_id in g:
            _add_rows(g, self._read(Q.incident("Paper", paper_edges_only=True), ids=[paper_id]))
        return _Sub(g).get_paper(paper_id)

    def resolve_entity(self, ref: str) -> str:
        return self._entities().resolve_entity(ref)

    def get_entity(self, entity_id: str, *, paper_limit: int = 100, neighbour_limit: int = 100) -> EntityDetail:
        label = self._entity_label(entity_id)
        g = self._node_graph(entity_id, label)
        if label is not None and entity_id in g:
            _add_rows(g, self._read(Q.incident(label), ids=[entity_id]))
        return _Sub(g).get_entity(entity_id, paper_limit=paper_limit, neighbour_limit=neighbour_limit)

    def list_papers(self, *, venue: str | None = None, year: int | None = None, entity: str | None = None,
                    q: str | None = None, limit: int = 20, offset: int = 0) -> Page[PaperSummary]:
        if q and q.strip():
            return self._ranked_papers(venue=venue, year=year, entity=entity, q=q, limit=limit, offset=offset)
        terms: list[str] = []
        g = nx.MultiDiGraph()
        eid = None
        if entity is not None:
            eid = self.resolve_entity(entity)
            label = str(self._entities().graph.nodes[eid]["label"])
            add_node(g, label, self._entities().graph.nodes[eid])
            for row in self._read(Q.list_papers_of(label, with_abstract=bool(terms)), entity=eid, year=year,
                                  terms=terms):
                add_edge(g, add_node(g, "Paper", row["props"]), row["type"], row["rprops"], eid)
        else:
            for row in self._read(Q.list_papers(with_abstract=bool(terms)), year=year, terms=terms):
                add_node(g, "Paper", row["props"])
        return _Sub(g).list_papers(venue=venue, year=year, entity=eid, q=q, limit=limit, offset=offset)

    def list_entities(self, *, type: str | None = None, q: str | None = None, limit: int = 20,
                      offset: int = 0) -> Page[EntitySummary]:
        return self._entities().list_entities(type=type, q=q, limit=limit, offset=offset)

    def related_papers(self, paper_id: str, k: int = 10) -> list[RelatedPaper]:
        sim = self._paper_similarity()
        g = self._node_graph(paper_id, "Paper")
        if paper_id in g:
            found = sim.related(paper_id, k)
            qs = [q for q, *_ in found]
            self._fetch_nodes(g, {"Paper": qs}, brief=True)
            # Both papers' edges to what they share: the roles each related paper's reasons name.
            _add_rows(g, self._read(Q.incident("Paper", paper_edges_only=True), ids=[paper_id, *qs]))
        return _Sub(g, related=sim.entities, similarity=sim).related_papers(paper_id, k)

    def related_entities(self, entity_id: str, k: int = 10) -> list[RelatedEntity]:
        label = self._entity_label(entity_id)
        g = self._node_graph(entity_id, label)
        if label is not None and entity_id in g:
            rows = self._read(Q.co_papers(label), id=entity_id)
            for row in rows:
                add_node(g, "Paper", row["paper"])
            _add_rows(g, rows)
        return _Sub(g).related_entities(entity_id, k)

    def _ranked_papers(self, *, venue: str | None, year: int | None, entity: str | None, q: str, limit: int,
                       offset: int) -> Page[PaperSummary]:
        """``list_papers`` with words: ranked by the full-text index, the page's papers fetched by id."""
        ids = None
        if entity is not None:
            eid = self.resolve_entity(entity)
            label = str(self._entities().graph.nodes[eid]["label"])
            ids = [row["props"]["id"] for row in self._read(Q.list_papers_of(label, with_abstract=False), entity=eid,
                                                             year=None, terms=[])]
        total, found = self._fulltext().search(q, limit=limit, offset=offset, year=year, venue=venue, ids=ids)
        g = nx.MultiDiGraph()
        self._fetch_nodes(g, {"Paper": [p for p, _ in found]}, brief=True)
        return Page[PaperSummary](total=total, limit=limit, offset=offset,
                                  items=[_Sub(g)._paper_summary(p) for p, _ in found])

    def search(self, q: str, limit: int = 20) -> list[SearchHit]:
        """As ``NxReads.search``: the entities from the cached entity view and its name index, the papers from
        the full-text index, with the found papers' edges to the entity the query names fetched."""
        view = self._entities()
        qk = canonical_key(q)
        if not qk:
            return []
        hits = view._entity_hits(qk, limit)
        _, bm25 = self._fulltext().search(q, limit=limit + PAPER_RERANK)
        found = fuse(bm25, dense_matches(self._paper_similarity().text, q))[: limit + PAPER_RERANK]
        papers = [p for p, _ in found]
        named = view._alias_index().get(qk)
        g = nx.MultiDiGraph()
        self._fetch_nodes(g, {"Paper": papers})  # with their abstracts: each hit quotes its closest sentence
        linked: set[str] = set()
        if named is not None and papers:
            _add_rows(g, self._read(Q.SEARCH_PAPER_EDGES, papers=papers, entities=[named]))
            linked = {p for p in papers
                      if any(e["type"] in PAPER_EDGE_TYPES for e in g._succ[p].get(named, {}).values())}
        return ranked_hits(hits, found, linked, g._node, limit, q)

    # -- exploring a field ---------------------------------------------------------------------------
    def _describe(self, entity_id: str) -> EntityRef:
        return self._entities()._entity_ref(entity_id)

    def timeline(self, entity_id: str) -> EntityTimeline:
        if self._entity_label(entity_id) is None:
            raise NotFoundError(f"no entity with id '{entity_id}'")
        index, _ = self._trend_index()
        return explore.timeline(index, self._describe(entity_id))

    def trends(self, *, type: str | None = None, before: str | None = None, after: str | None = None,
               limit: int = 20, min_count: int = explore.DEFAULT_MIN_COUNT) -> Trends:
        index, labels = self._trend_index()
        return explore.trends(index, self._describe, labels, type=type, before=before, after=after, limit=limit,
                              min_count=min_count)

    def landscape(self, entity_id: str, *, limit: int = 25, cell_limit: int = 5) -> Landscape:
        label = self._entity_label(entity_id)
        g = self._node_graph(entity_id, label)
        if label in COLUMN_LABEL and entity_id in g:
            # The focus's papers and all their paper edges; then the relations among the rows and columns
            # the first pass picks (the only entity-to-entity edges a landscape reads).
            rows = self._read(Q.co_papers(label), id=entity_id)
            for row in rows:
                add_node(g, "Paper", row["paper"])
            _add_rows(g, rows)
            _, top_rows, top_cols, _ = axes(g, entity_id, limit)
            for lab, ids in self._by_label(g, top_rows + top_cols).items():
                _add_rows(g, self._read(Q.edges_among(lab), ids=ids, among=top_rows + top_cols))
        return _Sub(g).landscape(entity_id, limit=limit, cell_limit=cell_limit)

    def overview(self, *, top_n: int = 150, types: list[str] | None = None) -> GraphView:
        view = self._entities()
        # First pass on the entities alone picks the nodes; the second adds their edges and co-occurrences.
        keep = [n["id"] for n in _Sub(view.graph).overview(top_n=top_n, types=types).nodes]
        g = view.graph.copy()
        for label, ids in self._by_label(g, keep).items():
            _add_rows(g, self._read(Q.papers_to(label), ids=ids))
            _add_rows(g, self._read(Q.edges_among(label), ids=ids, among=keep))
        return _Sub(g).overview(top_n=top_n, types=types)

    def neighbourhood(self, node_id: str, *, hops: int = 1, limit: int = 200) -> GraphView:
        g = self._node_graph(node_id, self._entity_label(node_id) or "Paper")
        if node_id not in g:
            return _Sub(g).neighbourhood(node_id, hops=hops, limit=limit)  # raises NotFoundError
        # Expand hop by hop exactly the nodes the breadth-first walk expands: those it added last hop.
        expanded: set[str] = set()
        frontier = [node_id]
        for h in range(1, hops + 1):
            for label, ids in self._by_label(g, frontier).items():
                _add_rows(g, self._read(Q.incident(label), ids=ids))
            expanded.update(frontier)
            seen = [n["id"] for n in _Sub(g).neighbourhood(node_id, hops=h, limit=limit).nodes]
            frontier = [n for n in seen if n not in expanded]
        seen_ids = sorted(expanded | set(frontier))
        self._fetch_nodes(g, {"Paper": [n for n in seen_ids if g.nodes[n]["label"] == "Paper"]})  # abstracts
        for label, ids in self._by_label(g, [n for n in frontier if n not in expanded]).items():
            # Edges between two nodes of the last hop: the walk never expanded either end.
            _add_rows(g, self._read(Q.edges_among(label), ids=ids, among=seen_ids))
        return _Sub(g).neighbourhood(node_id, hops=hops, limit=limit)
