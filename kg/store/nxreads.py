"""Every read the API and CLI make, answered from an in-memory NetworkX graph with lazily built indexes."""

from __future__ import annotations

import difflib
import heapq
import math
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import networkx as nx
import numpy as np

from kg.canon import canonical_key
from kg.errors import InputError, NotFoundError
from kg.graph import ENTITY_LABELS, LABEL_TYPES, PAPER_EDGE_TYPES
from kg.models import (
    CypherResult,
    EntityDetail,
    EntityForm,
    EntityPaper,
    EntityRef,
    EntitySummary,
    Evidence,
    GraphView,
    Neighbour,
    Page,
    PaperDetail,
    PaperEntity,
    PaperSummary,
    RelatedEntity,
    RelatedPaper,
    SearchHit,
    SharedEntity,
    Stats,
)
from kg.related import PaperSimilarity, RelatedIndex, TextIndex
from kg.reported import RESULT_EDGE_TYPES, RESULT_LABEL
from kg.search import NameIndex, lcs_length
from kg.semantic import best_sentences, dense_matches, fuse
from kg.store.base import Store
from kg.store.explore_reads import ExploreReads

_ENTITY_LABEL_SET = set(ENTITY_LABELS.values())
# Nodes a neighbourhood view leaves out: authors and venues, and reported results (a dataset's leaderboard shows
# those; hundreds of them would crowd its papers and entities out of the view).
_NOT_IN_VIEWS = ("Author", "Venue", RESULT_LABEL)
PAPER_RERANK = 50  # papers fetched past the limit, so the entity bonus can lift one into it
# An entity's detail walks its papers' edges, decoded from the snapshot on first touch: up to 0.1 ms a paper
# (an entity of 1,476 papers took 0.16 s at 83k the first time); past this many the read is not light and a
# server runs it off its event loop.
INLINE_MAX_PAPERS = 300


def entity_name_keys(graph: nx.MultiDiGraph) -> dict[str, tuple[str, ...]]:
    """Each entity's canonical keys: its name's, each alias's, then its stored ``key``'s (search and lookup)."""
    nodes = graph._node
    return {n: tuple(canonical_key(x) for x in (d["name"], *d["aliases"], d.get("key", "")))
            for n, d in nodes.items() if d.get("label") in _ENTITY_LABEL_SET}


def graph_text_index(graph: nx.MultiDiGraph) -> TextIndex:
    """The text index ``derive_graph`` left with the graph, or one computed from its papers' titles and
    abstracts (a graph read from an older store, or fetched from Neo4j without embeddings)."""
    text = graph.graph.get("text_index")
    if isinstance(text, TextIndex):
        return text
    from kg.graph import build_text_index
    from kg.readers import PaperRecord

    nodes = graph._node
    ids = sorted(n for n, d in nodes.items() if d.get("label") == "Paper")
    return build_text_index((p, PaperRecord(id=p, title=None if nodes[p].get("title_generated")
                                            else nodes[p].get("title"), abstract=nodes[p].get("abstract") or "")
                             ) for p in ids)


SHARED_SHOWN = 5  # shared entities a related paper lists as its reasons
_VERB = {"PROPOSES": ("proposes", "propose"), "USES": ("uses", "use"), "EVALUATES_ON": ("evaluates on", "evaluate on"),
         "ADDRESSES": ("addresses", "address"), "MENTIONS": ("mentions", "mention")}


def shared_reason(this: str, other: str, name: str) -> str:
    """Why a shared entity relates two papers, in words: "both evaluate on GSM8K", "this paper proposes X; the
    other uses it"."""
    if this == other:
        return f"both {_VERB[this][1]} {name}"
    return f"this paper {_VERB[this][0]} {name}; the other {_VERB[other][0]} it"


def why_related(reasons: Sequence[SharedEntity], text_similarity: float) -> str:
    """The reasons of a related paper in one line, the text similarity last."""
    parts = [r.reason for r in reasons[:3]]
    parts.append(f"abstracts {_closeness(text_similarity)} (text similarity {text_similarity:.2f})")
    return "; ".join(parts)


def _closeness(sim: float) -> str:
    # Centred embeddings: unrelated abstracts sit about 0, the 99.9th percentile of random pairs at about 0.5.
    return ("very similar" if sim >= 0.5 else "similar" if sim >= 0.3 else "somewhat similar" if sim >= 0.15
            else "little alike")


def _graph_view(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], total_nodes: int, note: str) -> GraphView:
    """A view built here from the store's own node and edge maps, not validated again: pydantic copies every map of
    a 5,000-node view in one call that holds the interpreter 30 to 180 ms, and the server's event loop waits as
    long for it (the view is built on a thread). The same fields and values as ``GraphView(...)``."""
    return GraphView.model_construct(nodes=nodes, edges=edges, total_nodes=total_nodes, note=note)


def paper_entity_map(graph: nx.MultiDiGraph) -> dict[str, list[str]]:
    """Each paper's entities (the targets of its paper-to-entity edges): the related-papers index's input."""
    return {p: [v for _, v, t in graph.out_edges(p, data="type") if t in PAPER_EDGE_TYPES]
            for p, lab in graph.nodes(data="label") if lab == "Paper"}


def ranked_hits(entity_hits: list[SearchHit], found: list[tuple[str, float]], linked: set[str],
                nodes: Mapping[str, Mapping[str, Any]], limit: int, query: str = "") -> list[SearchHit]:
    """Entity hits and full-text paper hits in one list, best first (ties: entities first, then by id).

    A paper scores its fused BM25 and embedding rank (``kg.semantic``) scaled so the best is 0.9, plus 0.3 when
    it has a paper edge to the entity the query names (``linked``): at most 1.2, below an exact entity match
    (1.5). Only the hits that make the cut are built: a search fetches ``PAPER_RERANK`` papers past the limit,
    and most are dropped here; each paper hit quotes the sentence of its abstract closest to ``query``."""
    best = found[0][1] if found else 1.0
    ranked: list[tuple[float, str, str, SearchHit | None]] = [(-h.score, "entity", h.id, h) for h in entity_hits]
    ranked += [(-round(0.9 * s / best + (0.3 if pid in linked else 0.0), 6), "paper", pid, None) for pid, s in found]
    ranked.sort(key=lambda r: r[:3])
    top = ranked[:limit]
    quotes = iter(best_sentences(query, [nodes[pid].get("abstract") or "" for _, _, pid, hit in top if hit is None]))
    return [hit if hit is not None else
            SearchHit(kind="paper", id=pid, name=nodes[pid]["title"], type="paper", score=-neg,
                      matched=nodes[pid]["title"], sentence=next(quotes))
            for neg, _, pid, hit in top]


class NxReads(ExploreReads, Store):
    """Read methods over ``self.graph``; subclasses load and persist it."""

    def __init__(self, graph: nx.MultiDiGraph) -> None:
        self.set_graph(graph)

    def local_graph(self) -> nx.MultiDiGraph:
        return self.graph

    def set_graph(self, graph: nx.MultiDiGraph) -> None:
        self.graph = graph
        self._alias: dict[str, str] | None = None
        self._keys: dict[str, tuple[str, ...]] | None = None
        self._related: RelatedIndex | None = None
        self._text: TextIndex | None = None
        self._similarity: PaperSimilarity | None = None
        self._by_label: dict[str, list[str]] | None = None
        self._ranks: dict[str, list[str]] | None = None
        self._search: tuple[list[str], NameIndex] | None = None
        self._search_lock = threading.Lock()
        self._warmed = False

    # -- indexes, built on first use ---------------------------------------------------------------
    def by_label(self, label: str) -> list[str]:
        if self._by_label is None:
            idx: dict[str, list[str]] = defaultdict(list)
            for n, lab in self.graph.nodes(data="label"):
                idx[lab].append(n)
            self._by_label = dict(idx)
        return self._by_label.get(label, [])

    def _ranked(self, kind: str) -> list[str]:
        """Papers newest first (``kind`` "paper"), or entities (all: "entity", or one type) most papers first;
        ties by title or name, then id. Sorted once per graph: listings page through it."""
        if self._ranks is None:
            self._ranks = {}
        ranked = self._ranks.get(kind)
        if ranked is None:
            if kind == "paper":
                ranked = self._rank_papers(self.by_label("Paper"))
            else:
                ranked = self._rank_entities(self.entity_ids() if kind == "entity"
                                             else self.by_label(ENTITY_LABELS[kind]))
            self._ranks[kind] = ranked
        return ranked

    def _rank_papers(self, ids: Iterable[str]) -> list[str]:
        nodes = self.graph.nodes
        return sorted(ids, key=lambda p: (-(nodes[p].get("year") or 0), nodes[p]["title"].casefold(), p))

    def _rank_entities(self, ids: Iterable[str]) -> list[str]:
        nodes = self.graph.nodes
        return sorted(ids, key=lambda e: (-nodes[e]["paper_count"], nodes[e]["name"].casefold(), e))

    def entity_ids(self) -> list[str]:
        return [n for lab in ENTITY_LABELS.values() for n in self.by_label(lab)]

    def warm(self) -> None:
        from kg.cypher.columns import warm

        warm(self.graph)  # Cypher's arrays and common property columns
        self._related_index()
        self._paper_similarity()
        self._alias_index()
        self._search_indexes()
        self._fulltext()
        self._trend_index()
        self._warmed = True

    def reads_inline(self, entity_id: str | None = None) -> bool:
        # In memory; once warm() has built the indexes, no read waits on a lock or builds one for seconds.
        if not self._warmed:
            return False
        d = self.graph._node.get(entity_id) if entity_id is not None else None
        return d is None or d.get("paper_count", 0) <= INLINE_MAX_PAPERS

    def _name_keys(self) -> dict[str, tuple[str, ...]]:
        if self._keys is None:
            self._keys = self._load_name_keys()
        return self._keys

    def _load_name_keys(self) -> dict[str, tuple[str, ...]]:
        return entity_name_keys(self.graph)

    def _alias_index(self) -> dict[str, str]:
        if self._alias is None:
            idx: dict[str, str] = {}
            keys = self._name_keys()
            # Better-known entities claim a shared alias first.
            for n in sorted(self.entity_ids(), key=lambda n: (-self.graph.nodes[n]["paper_count"], n)):
                for k in keys[n]:
                    idx.setdefault(k, n)
            self._alias = idx
        return self._alias

    def _related_index(self) -> RelatedIndex:
        if self._related is None:
            self._related = RelatedIndex(paper_entity_map(self.graph))
        return self._related

    def _text_index(self) -> TextIndex:
        if self._text is None:
            self._text = self._load_text_index()
        return self._text

    def _load_text_index(self) -> TextIndex:
        return graph_text_index(self.graph)

    def _paper_similarity(self) -> PaperSimilarity:
        if self._similarity is None:
            with self._search_lock:  # warm() in the background and the first requests: built once
                if self._similarity is None:
                    self._similarity = PaperSimilarity(self._related_index(), self._text_index())
        return self._similarity

    # -- conversions ---------------------------------------------------------------------------------
    def _node(self, node_id: str, label: str | set[str], what: str) -> dict[str, Any]:
        d = self.graph.nodes.get(node_id)
        labels = {label} if isinstance(label, str) else label
        if d is None or d.get("label") not in labels:
            raise NotFoundError(f"no {what} with id '{node_id}'")
        return d

    def _paper_summary(self, pid: str) -> PaperSummary:
        d = self.graph.nodes[pid]
        return PaperSummary(id=pid, title=d["title"], year=d.get("year"), venue=d.get("venue"),
                            authors=d.get("authors") or [], entity_count=d.get("entity_count", 0))

    def _entity_ref(self, eid: str) -> EntityRef:
        d = self.graph.nodes[eid]
        return EntityRef(id=eid, name=d["name"], type=LABEL_TYPES[d["label"]], paper_count=d["paper_count"])

    def _entity_summary(self, eid: str) -> EntitySummary:
        d = self.graph.nodes[eid]
        return EntitySummary(id=eid, name=d["name"], type=LABEL_TYPES[d["label"]], paper_count=d["paper_count"],
                             aliases=d["aliases"], mention_count=d["mention_count"])

    @staticmethod
    def _evidence(d: Mapping[str, Any]) -> Evidence:
        return Evidence(paper_id=d["paper_id"], sentence=d["sentence"], start=d["start"], end=d["end"])

    # -- reads -----------------------------------------------------------------------------------------
    def stats(self) -> Stats:
        labels = Counter(lab for _, lab in self.graph.nodes(data="label"))
        # A snapshot-backed graph knows its edge counts without decoding every edge.
        edges = getattr(self.graph, "edge_type_counts", None) or Counter(t for _, _, t in self.graph.edges(data="type"))
        return Stats(papers=labels.get("Paper", 0), entities=sum(labels.get(lab, 0) for lab in _ENTITY_LABEL_SET),
                     edges=self.graph.number_of_edges(),
                     entities_by_type={LABEL_TYPES[lab]: labels[lab] for lab in ENTITY_LABELS.values()
                                       if labels.get(lab)},
                     edges_by_type=dict(sorted(edges.items())), authors=labels.get("Author", 0),
                     venues=labels.get("Venue", 0), results=labels.get(RESULT_LABEL, 0))

    def get_paper(self, paper_id: str) -> PaperDetail:
        d = self._node(paper_id, "Paper", "paper")
        groups: dict[str, list[PaperEntity]] = {t: [] for t in PAPER_EDGE_TYPES}
        for _, eid, e in self.graph.out_edges(paper_id, data=True):
            if e["type"] in groups:
                groups[e["type"]].append(PaperEntity(entity=self._entity_ref(eid), edge=e["type"],
                                                     mentions=e.get("mentions", 1), evidence=self._evidence(e)))
        for items in groups.values():
            items.sort(key=lambda pe: (pe.evidence.start, pe.entity.id))
        s = self._paper_summary(paper_id)
        return PaperDetail(**s.model_dump(), abstract=d["abstract"], entities={k: v for k, v in groups.items() if v})

    def resolve_entity(self, ref: str) -> str:
        if ref in self.graph and self.graph.nodes[ref].get("label") in _ENTITY_LABEL_SET:
            return ref
        eid = self._alias_index().get(canonical_key(ref))
        if eid is None:
            raise NotFoundError(f"no entity with id, name or alias '{ref}'")
        return eid

    def get_entity(self, entity_id: str, *, paper_limit: int = 100, neighbour_limit: int = 100) -> EntityDetail:
        self._node(entity_id, _ENTITY_LABEL_SET, "entity")
        nodes = self.graph.nodes
        # Sort plain tuples and build models only for what is returned: a common entity has thousands of papers.
        paper_edges: list[tuple[bool, int, str, dict[str, Any]]] = []
        grouped: dict[tuple[str, str, Literal["in", "out"]], list[dict[str, Any]]] = defaultdict(list)
        for u, _, e in self.graph.in_edges(entity_id, data=True):
            if e["type"] in PAPER_EDGE_TYPES:
                paper_edges.append((e["type"] != "PROPOSES", -(nodes[u].get("year") or 0), u, e))
            elif e["type"] not in RESULT_EDGE_TYPES:  # a result is no neighbour: kg leaderboard lists them
                grouped[(u, e["type"], "in")].append(e)
        for _, v, e in self.graph.out_edges(entity_id, data=True):
            grouped[(v, e["type"], "out")].append(e)
        paper_edges.sort(key=lambda t: t[:3])
        papers = [EntityPaper(paper=self._paper_summary(u), edge=e["type"], evidence=self._evidence(e))
                  for _, _, u, e in paper_edges[:paper_limit]]
        top = sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0][1], kv[0][0]))[:neighbour_limit]
        neighbours = [Neighbour(entity=self._entity_ref(o), edge=t, direction=dr, count=len(ev),
                                evidence=[self._evidence(e) for e in sorted(ev, key=lambda x: x["paper_id"])[:3]])
                      for (o, t, dr), ev in top]
        s = self._entity_summary(entity_id)
        d = self.graph.nodes[entity_id]
        whys = list(d.get("alias_why") or [])  # a store derived before kg said why has none
        forms = [EntityForm(form=a, why=whys[i] if i < len(whys) else "") for i, a in enumerate(d["aliases"])]
        return EntityDetail(**s.model_dump(), forms=forms, papers=papers, neighbours=neighbours)

    def list_papers(self, *, venue: str | None = None, year: int | None = None, entity: str | None = None,
                    q: str | None = None, limit: int = 20, offset: int = 0) -> Page[PaperSummary]:
        linked: set[str] | None = None
        if entity is not None:
            eid = self.resolve_entity(entity)
            linked = {u for u, _, t in self.graph.in_edges(eid, data="type") if t in PAPER_EDGE_TYPES}
        nodes = self.graph.nodes
        if q and q.strip():
            # Ranked by BM25 (kg.fulltext); the filters go into the same query, so the total is exact.
            total, found = self._fulltext().search(q, limit=limit, offset=offset, year=year, venue=venue,
                                                   ids=sorted(linked) if linked is not None else None)
            return Page[PaperSummary](total=total, limit=limit, offset=offset,
                                      items=[self._paper_summary(p) for p, _ in found])
        # Filtering keeps the order, so every listing is a filter of the one ranked list of all papers.
        out = []
        cased = venue.casefold() if venue is not None else None
        # An entity with few papers: sorting them beats filtering the list of all papers.
        for pid in (self._ranked("paper") if linked is None or len(linked) * 8 > len(nodes)
                    else self._rank_papers(linked)):
            if linked is not None and pid not in linked:
                continue
            d = nodes[pid]
            if cased is not None and (d.get("venue") or "").casefold() != cased:
                continue
            if year is not None and d.get("year") != year:
                continue
            out.append(pid)
        return Page[PaperSummary](total=len(out), limit=limit, offset=offset,
                                  items=[self._paper_summary(p) for p in out[offset : offset + limit]])

    def _match_entity(self, eid: str, qk: str) -> tuple[float, str] | None:
        """How well the canonical query ``qk`` matches an entity's names: (score, the name that matched)."""
        d = self.graph.nodes[eid]
        best: tuple[float, str] | None = None
        for name, nk in zip((d["name"], *d["aliases"]), self._name_keys()[eid], strict=False):
            if nk == qk:
                s = 1.5  # an exact name or alias outranks any paper (papers score at most 1.2)
            elif nk.startswith(qk):
                s = 0.8
            elif f" {qk}" in f" {nk}":
                s = 0.6
            elif len(qk) >= 4 and abs(len(nk) - len(qk)) <= 3 and (best is None or best[0] < 0.5):
                # (a fuzzy score is below 0.5, so it cannot replace a better name's; skipping it saves difflib)
                # The common-subsequence ratio bounds ratio() from above (tighter than quick_ratio()) and costs
                # far less.
                r = (difflib.SequenceMatcher(None, qk, nk).ratio()
                     if 2.0 * lcs_length(qk, nk) / (len(qk) + len(nk)) >= 0.8 else 0.0)
                s = 0.5 * r if r >= 0.8 else 0.0
            else:
                s = 0.0
            if s and (best is None or s > best[0]):
                best = (s, name)
        return best

    def list_entities(self, *, type: str | None = None, q: str | None = None, limit: int = 20,
                      offset: int = 0) -> Page[EntitySummary]:
        nodes = self.graph.nodes
        if q:
            qk = canonical_key(q)
            ents, names = self._search_indexes()
            label = ENTITY_LABELS[type] if type is not None else None
            ids = self._rank_entities(e for e in (ents[i] for i in names.candidates(qk))
                                      if (label is None or nodes[e]["label"] == label) and self._match_entity(e, qk))
        else:
            ids = self._ranked(type or "entity")
        return Page[EntitySummary](total=len(ids), limit=limit, offset=offset,
                                   items=[self._entity_summary(e) for e in ids[offset : offset + limit]])

    def related_papers(self, paper_id: str, k: int = 10) -> list[RelatedPaper]:
        self._node(paper_id, "Paper", "paper")
        sim = self._paper_similarity()
        out = []
        for q, score, dense, lexical, shared in sim.related(paper_id, k):
            reasons = [self._shared_entity(paper_id, q, e) for e in sim.specific(shared)[:SHARED_SHOWN]]
            out.append(RelatedPaper(paper=self._paper_summary(q), score=score, text_similarity=dense,
                                    word_similarity=lexical, shared=[r.entity for r in reasons], reasons=reasons,
                                    why=why_related(reasons, dense)))
        return out

    def _paper_edge(self, paper_id: str, entity_id: str) -> str:
        edges = self.graph.succ[paper_id].get(entity_id, {})
        return next((d["type"] for d in edges.values() if d["type"] in PAPER_EDGE_TYPES), "MENTIONS")

    def _shared_entity(self, p: str, q: str, e: str) -> SharedEntity:
        ref = self._entity_ref(e)
        a, b = self._paper_edge(p, e), self._paper_edge(q, e)
        return SharedEntity(entity=ref, this=a, other=b, reason=shared_reason(a, b, ref.name))

    def related_entities(self, entity_id: str, k: int = 10) -> list[RelatedEntity]:
        self._node(entity_id, _ENTITY_LABEL_SET, "entity")
        papers = {u for u, _, t in self.graph.in_edges(entity_id, data="type") if t in PAPER_EDGE_TYPES}
        co: Counter[str] = Counter()
        for p in papers:
            co.update({v for _, v, t in self.graph.out_edges(p, data="type")
                       if t in PAPER_EDGE_TYPES and v != entity_id})
        mine = max(1, len(papers))
        scored = [(c / math.sqrt(mine * self.graph.nodes[o]["paper_count"]), c, o) for o, c in co.items()]
        scored.sort(key=lambda x: (-x[0], -x[1], x[2]))
        return [RelatedEntity(entity=self._entity_ref(o), papers=c, score=round(s, 6)) for s, c, o in scored[:k]]

    def _search_indexes(self) -> tuple[list[str], NameIndex]:
        with self._search_lock:
            if self._search is None:
                ents = self.entity_ids()
                keys = self._name_keys()
                names = NameIndex([keys[e][:-1] for e in ents])  # the stored key is for lookups, not search
                nodes = self.graph._node
                names.paper_counts = np.fromiter((nodes[e]["paper_count"] for e in ents), dtype=np.float64,
                                                 count=len(ents))
                self._search = (ents, names)
            return self._search

    def search(self, q: str, limit: int = 20) -> list[SearchHit]:
        """Entities whose names match ``q`` and papers whose title or abstract hold its words, best first.

        Entities are scored per candidate (``_match_entity``), found by the name index in ``kg.search``;
        papers by BM25 over title and abstract (``kg.fulltext``), every word required.
        """
        qk = canonical_key(q)
        if not qk:
            return []
        hits = self._entity_hits(qk, limit)
        _, bm25 = self._fulltext().search(q, limit=limit + PAPER_RERANK)
        found = fuse(bm25, dense_matches(self._text_index(), q))[: limit + PAPER_RERANK]
        named = self._alias_index().get(qk)
        # From the paper-entity incidence, not the papers' edges: decoding 70 papers' edges cost more than all
        # the rest of a search.
        linked = self._related_index().papers_with(named, [p for p, _ in found]) if named is not None else set()
        return ranked_hits(hits, found, linked, self.graph._node, limit, q)

    def _entity_hits(self, qk: str, limit: int) -> list[SearchHit]:
        """The ``limit`` entities whose names best match the canonical query ``qk``."""
        ents, names = self._search_indexes()
        nodes = self.graph._node
        owners, bound = names.bounded(qk)
        most = bound * (1.0 + 0.1 * np.log1p(names.paper_counts[owners]))  # the most each candidate can score
        hits: list[SearchHit] = []
        top: list[float] = []  # the best `limit` scores so far, a min-heap
        for i in np.argsort(-most, kind="stable").tolist():
            # Candidates come best bound first: once `limit` scores beat the next bound, none after can enter
            # (the margin covers rounding and numpy's log1p against math's).
            if len(top) >= limit and top[0] > most[i] + 1e-6:
                break
            eid = ents[owners[i]]
            m = self._match_entity(eid, qk)
            if m:
                d = nodes[eid]
                # Among equal matches, the entity more papers use ranks first.
                score = round(m[0] * (1.0 + 0.1 * math.log1p(d["paper_count"])), 6)
                hits.append(SearchHit(kind="entity", id=eid, name=d["name"], type=LABEL_TYPES[d["label"]],
                                      score=score, matched=m[1]))
                if len(top) < limit:
                    heapq.heappush(top, score)
                elif score > top[0]:
                    heapq.heapreplace(top, score)
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:limit]

    def cypher(self, query: str, parameters: Mapping[str, Any] | None = None, *, max_rows: int = 1000,
               timeout_s: float = 10.0) -> CypherResult:
        from kg.cypher import run_query

        r = run_query(self.graph, query, dict(parameters or {}), max_rows=max_rows, timeout_s=timeout_s)
        return CypherResult(columns=r.columns, rows=r.rows, truncated=r.truncated)

    # -- views -----------------------------------------------------------------------------------------
    _VIEW_ABSTRACT_CHARS = 600  # enough for a tooltip; full abstracts would bloat big views

    def _view_node(self, n: str) -> dict[str, Any]:
        d = self.graph.nodes[n]
        out = {"id": n, "label": d["label"], "name": d["name"]}
        if d["label"] == "Paper":
            abstract = d.get("abstract", "")
            if len(abstract) > self._VIEW_ABSTRACT_CHARS:
                abstract = abstract[: self._VIEW_ABSTRACT_CHARS].rstrip() + "…"
            out |= {"year": d.get("year"), "venue": d.get("venue"), "paper_count": 1,
                    "authors": (d.get("authors") or [])[:10], "abstract": abstract}
        else:
            out |= {"aliases": d.get("aliases", []), "paper_count": d.get("paper_count", 1),
                    "mention_count": d.get("mention_count", 0)}
        return out

    def _view_edges(self, nodes: set[str]) -> list[dict[str, Any]]:
        agg: dict[tuple[str, str, str], dict[str, Any]] = {}
        for n in nodes:
            for _, v, e in self.graph.out_edges(n, data=True):
                if v not in nodes:
                    continue
                key = (n, v, e["type"])
                ev = {"sentence": e.get("sentence", ""), "paper_id": e.get("paper_id"), "score": e.get("score")}
                if key not in agg:
                    agg[key] = {"source": n, "target": v, "type": e["type"], "count": 0, **ev}
                # The evidence shown for an edge several papers state: the lowest paper id's, whatever order the
                # store handed the edges over in (the embedded store and Neo4j differ).
                elif (ev["paper_id"] or "", ev["sentence"]) < (agg[key]["paper_id"] or "", agg[key]["sentence"]):
                    agg[key].update(ev)
                agg[key]["count"] += 1
        return sorted(agg.values(), key=lambda x: (x["source"], x["target"], x["type"]))

    def _co_occurrence_edges(self, keep: set[str], per_node: int) -> list[dict[str, Any]]:
        """CO_OCCURS edges: each kept entity to its ``per_node`` most strongly co-occurring kept entities.

        Typed relations between the top entities are sparse on small corpora, which leaves the overview a
        cloud of unconnected dots; co-occurrence shows which concepts the corpus discusses together.
        """
        shared: Counter[tuple[str, str]] = Counter()
        for p in self.by_label("Paper"):
            es = sorted({v for _, v, t in self.graph.out_edges(p, data="type") if t in PAPER_EDGE_TYPES and v in keep})
            shared.update((a, b) for i, a in enumerate(es) for b in es[i + 1 :])
        pc = {n: max(1, self.graph.nodes[n]["paper_count"]) for n in keep}
        best: dict[str, list[tuple[float, int, str, str]]] = defaultdict(list)
        for (a, b), c in shared.items():
            s = c / math.sqrt(pc[a] * pc[b])
            best[a].append((-s, -c, b, a))
            best[b].append((-s, -c, a, b))
        pairs: dict[tuple[str, str], tuple[int, float]] = {}
        for items in best.values():
            for neg_s, neg_c, x, y in sorted(items)[:per_node]:
                pairs[(min(x, y), max(x, y))] = (-neg_c, round(-neg_s, 4))
        return [{"source": a, "target": b, "type": "CO_OCCURS", "count": c, "sentence": "", "paper_id": None,
                 "score": s} for (a, b), (c, s) in sorted(pairs.items())]

    def overview(self, *, top_n: int = 150, types: list[str] | None = None) -> GraphView:
        unknown = [t for t in types or [] if t not in ENTITY_LABELS]
        if unknown:
            raise InputError(f"unknown entity type '{unknown[0]}'; choose from: {', '.join(ENTITY_LABELS)}")
        labels = [ENTITY_LABELS[t] for t in (types or ENTITY_LABELS)]
        ids = [n for lab in labels for n in self.by_label(lab)]
        # Among equally common entities, the more often mentioned ones are the better known.
        ids.sort(key=lambda n: (-self.graph.nodes[n]["paper_count"], -self.graph.nodes[n].get("mention_count", 0), n))
        keep = set(ids[:top_n])
        note = f"showing {len(keep)} of {len(ids)} entities (top {top_n} by paper count" + (
            f"; types: {', '.join(types)})" if types else ")")
        edges = self._view_edges(keep) + self._co_occurrence_edges(keep, per_node=3)
        return _graph_view([self._view_node(n) for n in sorted(keep)], edges, len(ids), note)

    def neighbourhood(self, node_id: str, *, hops: int = 1, limit: int = 200) -> GraphView:
        if node_id not in self.graph or self.graph.nodes[node_id]["label"] in _NOT_IN_VIEWS:
            raise NotFoundError(f"no paper or entity with id '{node_id}'")
        seen = {node_id}
        frontier = [node_id]
        total = 1
        for _ in range(hops):
            nxt = []
            for n in frontier:
                nbrs = set(self.graph.successors(n)) | set(self.graph.predecessors(n))
                for m in sorted(nbrs, key=lambda m: (-self.graph.nodes[m].get("paper_count", 1), m)):
                    if m in seen or self.graph.nodes[m]["label"] in _NOT_IN_VIEWS:
                        continue
                    total += 1
                    if len(seen) < limit:
                        seen.add(m)
                        nxt.append(m)
            frontier = nxt
        note = f"showing {len(seen)} of {total} nodes within {hops} hop{'s' if hops > 1 else ''}"
        return _graph_view([self._view_node(n) for n in sorted(seen)], self._view_edges(seen), total, note)
