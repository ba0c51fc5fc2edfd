"""/trends, /entities/{id}/timeline, /entities/{id}/landscape: exploring a field rather than one node."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.deps import EntityRef, EntityType, StoreDep
from api.errors import NOT_FOUND, ErrorBody
from kg.models import EntityTimeline, Landscape, Trends

router = APIRouter(tags=["explore"])



class FieldErrors(BaseModel):
    """FastAPI's own 422: which parameters failed validation, and why."""

    detail: list[dict[str, Any]]


# A 422 is either kg's (a period that is no date, periods out of order) or a parameter's validation; JSON even
# on the HTML views, hence the explicit media type.
BAD_INPUT: dict[int | str, dict[str, Any]] = {
    422: {"content": {"application/json": {"schema": {"anyOf": [ErrorBody.model_json_schema(),
                                                                 FieldErrors.model_json_schema()]}}},
          "description": "A bad parameter: an unknown type, a malformed period, periods out of order"}}
PERIOD_HELP = ("2025, 2025-H2, 2025-Q3, 2025-07, 2025-07-14, or a range A..B. Default: the last full year against "
               "the one before, else the two halves of the papers' dated range")
_ONE = r"[1-9]\d{3}(-([Hh][12]|[Qq][1-4]|(0?[1-9]|1[0-2])(-(0?[1-9]|[12]\d|3[01]))?))?"
# The grammar of kg.trends.parse_period; what it cannot say (30 February, periods out of order) is a 422 too.
Period = Annotated[str | None, Query(min_length=4, max_length=50, pattern=rf"^{_ONE}(\.\.{_ONE})?$")]


@router.get("/trends", response_model=Trends, responses=BAD_INPUT, openapi_extra={"x-codeSamples": [
    {"lang": "Shell", "source": "curl -s 'localhost:8000/trends?type=dataset&from=2024&to=2025&limit=5'"}]})
def trends(
    store: StoreDep,
    type: Annotated[EntityType | None, Query(description="Only entities of this type")] = None,
    before: Annotated[Period, Query(alias="from", description="The earlier period: " + PERIOD_HELP,
                                    examples=["2024"])] = None,
    after: Annotated[Period, Query(alias="to", description="The later period, compared with the earlier",
                                   examples=["2025"])] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="Entities per list")] = 20,
    min_count: Annotated[int, Query(ge=1, le=100_000,
                                    description="Papers an entity needs in one of the periods to be ranked")] = 5,
) -> Trends:
    """The entities rising and falling fastest between two periods (by their share of each period's papers,
    a smoothed log ratio), and those new in the later one; with each entity's papers per month or year."""
    return store.trends(type=type, before=before, after=after, limit=limit, min_count=min_count)


# Declared before /entities/{ref:path} (this router is included first), so these suffixes win.
@router.get("/entities/{entity_ref:path}/timeline", response_model=EntityTimeline, responses=NOT_FOUND,
            openapi_extra={"x-codeSamples": [
                {"lang": "Shell", "source": "curl -s 'localhost:8000/entities/GSM8K/timeline'"}]})
def timeline(store: StoreDep, entity_ref: EntityRef) -> EntityTimeline:
    """An entity's papers per year (every year of the store) and per month (papers with a published date),
    each with the share of all papers of that year or month."""
    return store.timeline(store.resolve_entity(entity_ref))


@router.get("/entities/{entity_ref:path}/landscape", response_model=Landscape, responses={**NOT_FOUND, **BAD_INPUT},
            openapi_extra={"x-codeSamples": [
                {"lang": "Shell", "source": "curl -s 'localhost:8000/entities/reasoning/landscape?limit=10'"}]})
def landscape(
    store: StoreDep,
    entity_ref: EntityRef,
    limit: Annotated[int, Query(ge=1, le=200, description="Rows, columns and metrics at most")] = 25,
    cell_limit: Annotated[int, Query(ge=1, le=100, description="Papers listed per cell")] = 5,
) -> Landscape:
    """For a task: the methods and models its papers use against the datasets they evaluate on (for a dataset:
    against the tasks), each cell the papers linking both with their evidence sentences; 422 for other types."""
    return store.landscape(store.resolve_entity(entity_ref), limit=limit, cell_limit=cell_limit)
