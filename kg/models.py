"""Backend-neutral read models: what stores return and the API and CLI show."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Model):
    """Where the text states an edge: the paper, the sentence, and the mention's character offsets in the abstract."""

    paper_id: str
    sentence: str
    start: int
    end: int


class EntityRef(_Model):
    id: str
    name: str
    type: str
    paper_count: int


class EntitySummary(EntityRef):
    aliases: list[str]
    mention_count: int


class PaperSummary(_Model):
    id: str
    title: str
    year: int | None = None
    venue: str | None = None
    authors: list[str] = []
    entity_count: int = 0


class PaperEntity(_Model):
    entity: EntityRef
    edge: str
    mentions: int
    evidence: Evidence


class PaperDetail(PaperSummary):
    abstract: str
    entities: dict[str, list[PaperEntity]]  # keyed by edge type: PROPOSES, USES, ...


class RelatedPaper(_Model):
    paper: PaperSummary
    score: float
    shared: list[EntityRef]  # the shared entities that produced the score, rarest first


class EntityPaper(_Model):
    paper: PaperSummary
    edge: str
    evidence: Evidence


class Neighbour(_Model):
    entity: EntityRef
    edge: str
    direction: Literal["out", "in"]
    count: int  # how many papers state this edge
    evidence: list[Evidence]


class EntityDetail(EntitySummary):
    papers: list[EntityPaper]
    neighbours: list[Neighbour]


class RelatedEntity(_Model):
    entity: EntityRef
    papers: int  # papers in which both appear
    score: float  # papers / sqrt(paper_count(a) * paper_count(b))


class SearchHit(_Model):
    kind: Literal["paper", "entity"]
    id: str
    name: str
    type: str  # entity type, or "paper"
    score: float
    matched: str  # the name, alias or title that matched


class Page(_Model, Generic[T]):
    total: int
    limit: int
    offset: int
    items: list[T]


class Stats(_Model):
    papers: int
    entities: int
    edges: int
    entities_by_type: dict[str, int]
    edges_by_type: dict[str, int]
    authors: int = 0
    venues: int = 0


class CypherResult(_Model):
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False


class GraphView(_Model):
    """A subgraph for drawing: nodes and edges as plain property maps."""

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    total_nodes: int  # in the whole graph (or neighbourhood) before capping
    note: str = ""
