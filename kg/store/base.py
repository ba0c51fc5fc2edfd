"""The store interface every backend implements, so the API, CLI and views never see a driver."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

import networkx as nx

from kg.errors import StoreError
from kg.graph import PaperInput
from kg.models import (
    CypherResult,
    EntityDetail,
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

if TYPE_CHECKING:
    from kg.cache import ExtractionCache


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """Where a store is: its kind (a name in ``kg.store``'s registry) and what that kind needs to open it.
    ``store_dir`` is the embedded store's folder, and the extraction log's folder of any other kind."""

    kind: str = "embedded"
    store_dir: str = "kg-store"
    neo4j_uri: str = "bolt://localhost:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: str = ""
    neo4j_database: str | None = None

    def label(self) -> str:
        """How messages name the store: its directory, or its server (and database)."""
        if self.kind == "embedded":
            return self.store_dir
        return self.neo4j_uri + (f" database {self.neo4j_database}" if self.neo4j_database else "")


class Store(ABC):
    """A knowledge graph store. Writes replace the derived graph as a whole; reads return kg models.

    Callers use only what is declared here: a store that has no graph in this process says so through
    ``local_graph()`` returning None, never by lacking an attribute.
    """

    kind: ClassVar[str] = ""  # its name in the registry (kg.store.store_kinds), as --store and /health say it
    # A read spends its time running Python (the embedded store), not waiting for a server: the API runs at most
    # a few such reads at once (api.deps.HEAVY_READ_THREADS), where reads that wait may run side by side.
    reads_on_cpu: ClassVar[bool] = True
    cache: ExtractionCache  # the extraction log: what each paper's extraction was, for builds to reuse

    @classmethod
    def open(cls, options: StoreOptions, *, writable: bool = False, wait: bool = False) -> Self:
        """Open the store ``options`` names (read-only unless ``writable``; ``wait`` for another build's lock);
        the store owns what it opened (files, a driver) and releases it in ``close``. Every kind in the
        registry implements it; a view over a graph in hand (an in-memory subgraph) cannot be opened."""
        raise StoreError(f"a {cls.__name__} cannot be opened by name; it is made over a graph in hand")

    # -- what callers may rely on --------------------------------------------------------------------
    def fixed(self) -> bool:
        """Whether its answers cannot change while it is open (an embedded store opened read-only), so they
        may be cached. False for a database others may write to."""
        return False

    def local_graph(self) -> nx.MultiDiGraph | None:
        """The graph held in this process, when the store answers Cypher itself from memory (worker processes
        can share it); None for a store whose server runs queries."""
        return None

    def whole_graph(self) -> nx.MultiDiGraph:
        """The whole graph, for exports: the one held in memory, or fetched from the server."""
        graph = self.local_graph()
        if graph is None:
            raise StoreError(f"the {self.kind or type(self).__name__} store cannot export its whole graph")
        return graph

    def info(self) -> dict[str, Any]:
        """What ``kg stats`` and /health say about where the store is: at least ``{"store": kind}``."""
        return {"store": self.kind}

    # -- writing ---------------------------------------------------------------------------------
    @abstractmethod
    def load_inputs(self) -> Mapping[str, PaperInput]:
        """Every paper the store holds, with its extraction, so a build can merge and re-derive."""

    @abstractmethod
    def replace_graph(self, graph: nx.MultiDiGraph, inputs: Mapping[str, PaperInput]) -> None:
        """Make ``graph`` (derived from ``inputs``) the stored graph, atomically where the backend can."""

    def embeddings(self) -> dict[str, Any]:
        """The stored papers' embeddings by input hash, for a build to re-use (empty: every paper is embedded)."""
        return {}

    def warm(self) -> None:  # noqa: B027 - optional hook
        """Build the indexes reads use lazily (search, aliases, related papers), e.g. in a background thread
        right after a server starts, so the first user does not wait for them."""

    def reads_inline(self, entity_id: str | None = None) -> bool:
        """Whether a light read (of ``entity_id``, when given) may run on the server's event loop rather than in
        its threadpool: true only for a store that reads from memory, with its indexes built, where the read
        is short. False here: a store that waits on a network, or builds an index, must not hold the loop."""
        return False

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release files, locks or sessions."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------------
    @abstractmethod
    def stats(self) -> Stats: ...

    @abstractmethod
    def get_paper(self, paper_id: str) -> PaperDetail: ...

    @abstractmethod
    def resolve_entity(self, ref: str) -> str:
        """The id of the entity whose id, name or alias is ``ref`` (case, plural and hyphen variants too)."""

    @abstractmethod
    def get_entity(self, entity_id: str, *, paper_limit: int = 100, neighbour_limit: int = 100) -> EntityDetail: ...

    @abstractmethod
    def list_papers(self, *, venue: str | None = None, year: int | None = None, entity: str | None = None,
                    q: str | None = None, limit: int = 20, offset: int = 0) -> Page[PaperSummary]: ...

    @abstractmethod
    def list_entities(self, *, type: str | None = None, q: str | None = None, limit: int = 20,
                      offset: int = 0) -> Page[EntitySummary]: ...

    @abstractmethod
    def related_papers(self, paper_id: str, k: int = 10) -> list[RelatedPaper]: ...

    @abstractmethod
    def related_entities(self, entity_id: str, k: int = 10) -> list[RelatedEntity]: ...

    @abstractmethod
    def search(self, q: str, limit: int = 20) -> list[SearchHit]: ...

    @abstractmethod
    def cypher(self, query: str, parameters: Mapping[str, Any] | None = None, *, max_rows: int = 1000,
               timeout_s: float = 10.0) -> CypherResult:
        """Run read-only Cypher; write clauses raise ``CypherWriteError`` and change nothing."""

    @abstractmethod
    def overview(self, *, top_n: int = 150, types: list[str] | None = None) -> GraphView:
        """The concept graph: the ``top_n`` entities by paper count and the edges among them."""

    @abstractmethod
    def neighbourhood(self, node_id: str, *, hops: int = 1, limit: int = 200) -> GraphView:
        """A paper's or entity's surroundings within ``hops``, at most ``limit`` nodes."""

    # -- exploring a field -----------------------------------------------------------------------------
    @abstractmethod
    def timeline(self, entity_id: str) -> EntityTimeline:
        """The entity's papers per year and (for papers with a published date) per month, with the shares."""

    @abstractmethod
    def trends(self, *, type: str | None = None, before: str | None = None, after: str | None = None,
               limit: int = 20, min_count: int = 5) -> Trends:
        """Entities rising, falling and new between two periods (``kg.trends``; default: see ``explore``)."""

    @abstractmethod
    def landscape(self, entity_id: str, *, limit: int = 25, cell_limit: int = 5) -> Landscape:
        """A task's or dataset's methods against its datasets or tasks, cells holding papers and evidence."""
