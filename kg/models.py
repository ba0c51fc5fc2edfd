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


class SharedEntity(_Model):
    """One specific thing two related papers share, with what each does with it."""

    entity: EntityRef
    this: str  # this paper's edge to it: PROPOSES, USES, EVALUATES_ON, ADDRESSES or MENTIONS
    other: str  # the related paper's edge to it
    reason: str  # "both evaluate on GSM8K", "this paper proposes H-SPLID; the other uses it"


class RelatedPaper(_Model):
    paper: PaperSummary
    score: float  # the combined score the list is ranked by
    text_similarity: float  # cosine of the two papers' embeddings (title + abstract)
    word_similarity: float  # cosine of their TF-IDF rows (words, word pairs; those in over 5 % of papers left out)
    shared: list[EntityRef]  # the specific entities both papers have, rarest first
    reasons: list[SharedEntity]  # the same, each with both papers' roles
    why: str  # one line: the reasons, then the text similarity


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


class EntityForm(_Model):
    """Another form a node holds, and why it joined: "short form defined in arXiv:2401.01234", "spelling
    variant", "same name" (case, plural, hyphens), "merged by the overrides file, line 3"."""

    form: str
    why: str


class EntityDetail(EntitySummary):
    forms: list[EntityForm]  # the aliases, each with why it is this node
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
    sentence: str | None = None  # a paper hit's sentence closest to the query


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
    results: int = 0  # reported results (Result nodes, issue 34)


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


# -- exploring a field: timelines, trends, landscapes, full-text hits ---------------------------------------
class TimelinePoint(_Model):
    period: str  # "2025" or "2025-07"
    papers: int  # the entity's papers in the period
    total: int  # all the store's papers in the period
    share: float  # papers / total


class EntityTimeline(_Model):
    entity: EntityRef
    papers: int  # all the entity's papers
    years: list[TimelinePoint]  # every year of the store's range, zeros included
    months: list[TimelinePoint]  # every month of the store's dated range; papers with a published date only
    no_year: int  # the entity's papers with neither year nor date (in no point)
    undated: int  # the entity's papers without a published date (in years, not in months)


class PeriodInfo(_Model):
    label: str  # "2025", "2025-H2", "2024-01-01..2024-02-09"
    first_day: str
    last_day: str
    papers: int


class TrendItem(_Model):
    entity: EntityRef
    before: int  # papers in the earlier period
    after: int
    before_share: float  # of the period's papers
    after_share: float
    score: float  # ln(((after + 1) / N_after) / ((before + 1) / N_before))
    series: list[int]  # papers per bucket of Trends.buckets


class Trends(_Model):
    type: str | None
    before: PeriodInfo | None
    after: PeriodInfo | None
    min_count: int
    bucket: Literal["year", "month"]
    buckets: list[str]
    totals: list[int]  # all papers per bucket
    rising: list[TrendItem]
    falling: list[TrendItem]
    new: list[TrendItem]  # no paper before the later period starts
    note: str = ""


class LandscapeAxis(_Model):
    entity: EntityRef
    papers: int  # how many of the focus entity's papers link to this one


class LandscapePaper(_Model):
    id: str
    title: str
    year: int | None = None
    stated: bool  # the paper states a relation between the row and the column (not only mentions both)
    evidence: list[Evidence]  # the stated relation's sentence first, then the sentences naming each


class LandscapeCell(_Model):
    row: str  # entity id of a rows entry
    column: str
    count: int  # papers linking both (and the focus)
    papers: list[LandscapePaper]  # the first few: stated relations first, then newest
    metrics: list[str]  # ids of the metrics entries those papers use


class Landscape(_Model):
    entity: EntityRef
    papers: int  # papers linked to the focus entity
    column_type: Literal["dataset", "task"]
    rows: list[LandscapeAxis]  # methods and models
    columns: list[LandscapeAxis]  # datasets (for a task) or tasks (for a dataset)
    metrics: list[LandscapeAxis]
    cells: list[LandscapeCell]
    note: str = ""


# -- leaderboards (issue 34): a dataset's reported results, ranked per metric -------------------------------
class LeaderboardRow(_Model):
    rank: int | None  # 1 = best in the metric's direction (equal values share a rank); None in an unranked group
    value: float | None  # the number parsed from ``text``
    text: str  # the value as the abstract writes it: "92.3%", "0.412", "3.2×"
    system: str | None  # as the abstract names it, else the linked entity's name (the paper's proposed one)
    system_id: str | None  # the system's entity, when linked
    metric: str | None  # the metric as this paper writes it
    paper_id: str
    paper_title: str
    year: int | None = None
    sentence: str  # the sentence stating the value
    result_id: str  # the Result node
    results: int = 1  # this paper's results for this system in the group; the row shows its best


class LeaderboardGroup(_Model):
    metric: str | None  # the metric entity's name (else the metric as written; None: the abstracts name none)
    metric_id: str | None
    kind: Literal["score", "gain"]
    unit: Literal["percent", "ratio", "number"]
    direction: Literal["higher", "lower"] | None  # which way is better; None: unknown, listed unranked
    ranked: bool
    total: int  # rows (papers and systems) before the limit
    rows: list[LeaderboardRow]


class Leaderboard(_Model):
    dataset: EntityRef
    kind: Literal["score", "gain"]
    metric: str | None = None  # the --metric / ?metric= filter
    results: dict[str, int]  # all results on the dataset, by kind
    groups: list[LeaderboardGroup]  # one per metric, kind and unit: never ranked together
    note: str = ""
