"""Timelines, trends, landscapes and full-text search over an in-memory graph (a mixin of ``NxReads``)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import networkx as nx

from kg import explore
from kg.errors import NotFoundError
from kg.fulltext import FullTextIndex
from kg.graph import LABEL_TYPES
from kg.landscape import IncidenceAxes, landscape
from kg.models import EntityRef, EntityTimeline, Landscape, Trends
from kg.trends import TrendIndex

if TYPE_CHECKING:
    from kg.related import RelatedIndex

_LOCK = threading.Lock()  # builds of the lazy indexes below; rare, so one lock for every store is enough


class ExploreReads:
    """Needs ``graph``, ``by_label``, ``_related_index`` and ``_entity_ref`` (from ``NxReads``).

    The indexes are built on first use and belong to the graph they were built from: a store whose graph
    is replaced (``set_graph``) builds them again.
    """

    graph: nx.MultiDiGraph
    if TYPE_CHECKING:  # what NxReads provides
        def by_label(self, label: str) -> list[str]: ...
        def _related_index(self) -> RelatedIndex: ...
        def _entity_ref(self, eid: str) -> EntityRef: ...

    def _explore(self) -> dict[str, Any]:
        cache: dict[str, Any] | None = getattr(self, "_explore_cache", None)
        if cache is None or cache.get("graph") is not self.graph:
            cache = {"graph": self.graph}
            self._explore_cache = cache
        return cache

    def _trend_index(self) -> TrendIndex:
        cache = self._explore()
        if "trends" not in cache:
            with _LOCK:
                if "trends" not in cache:
                    r = self._related_index()
                    nodes = self.graph.nodes
                    cache["labels"] = [nodes[e]["label"] for e in r.entities]
                    cache["trends"] = TrendIndex.from_csr(r.papers, r.entities, r.indptr, r.indices, nodes)
                    cache["incidence"] = IncidenceAxes(cache["trends"], cache["labels"])
        index: TrendIndex = cache["trends"]
        return index

    def _fulltext(self) -> FullTextIndex:
        cache = self._explore()
        if "fulltext" not in cache:
            with _LOCK:
                if "fulltext" not in cache:
                    cache["fulltext"] = self._load_fulltext()
        index: FullTextIndex = cache["fulltext"]
        return index

    def _load_fulltext(self) -> FullTextIndex:
        """Built in memory here; the embedded store opens the one its build wrote."""
        nodes = self.graph.nodes
        return FullTextIndex.build((p, nodes[p]) for p in self.by_label("Paper"))

    def _entity_or_404(self, entity_id: str) -> EntityRef:
        d = self.graph.nodes.get(entity_id)
        if d is None or d.get("label") not in LABEL_TYPES:
            raise NotFoundError(f"no entity with id '{entity_id}'")
        return self._entity_ref(entity_id)

    # -- reads -----------------------------------------------------------------------------------------
    def timeline(self, entity_id: str) -> EntityTimeline:
        return explore.timeline(self._trend_index(), self._entity_or_404(entity_id))

    def trends(self, *, type: str | None = None, before: str | None = None, after: str | None = None,
               limit: int = 20, min_count: int = explore.DEFAULT_MIN_COUNT) -> Trends:
        index = self._trend_index()
        return explore.trends(index, self._entity_ref, self._explore()["labels"], type=type, before=before,
                              after=after, limit=limit, min_count=min_count)

    def landscape(self, entity_id: str, *, limit: int = 25, cell_limit: int = 5) -> Landscape:
        self._trend_index()
        return landscape(self.graph, entity_id, self._entity_ref, limit=limit,
                         cell_limit=cell_limit, incidence=self._explore()["incidence"])
