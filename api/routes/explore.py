"""/trends, /entities/{id}/timeline, /entities/{id}/landscape: exploring a field rather than one node."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.deps import EntityRef, EntityType, StoreDep
from api.errors import NOT_FOUND, ErrorBody
from kg.models import EntityTimeline, Landscape, Trends

router = APIRouter(tags=["explore"])

# Response examples for /docs (from the seeds store, lists shortened).
_LLM = {"id": "large-language-model", "name": "large language models", "type": "model", "paper_count": 13}
TRENDS_EXAMPLE = {
    "type": "task", "min_count": 2, "bucket": "year", "buckets": ["2025", "2026"], "totals": [38, 19], "note": "",
    "before": {"label": "2025", "first_day": "2025-01-01", "last_day": "2025-12-31", "papers": 38},
    "after": {"label": "2026", "first_day": "2026-01-01", "last_day": "2026-12-31", "papers": 19},
    "rising": [{"entity": {"id": "compression", "name": "compression", "type": "task", "paper_count": 2},
                "before": 0, "after": 2, "before_share": 0.0, "after_share": 0.105263, "score": 1.791759,
                "series": [0, 2]}],
    "falling": [{"entity": {"id": "reasoning", "name": "reasoning", "type": "task", "paper_count": 5},
                 "before": 5, "after": 0, "before_share": 0.131579, "after_share": 0.0, "score": -1.098612,
                 "series": [5, 0]}],
    "new": []}
TIMELINE_EXAMPLE = {
    "entity": _LLM, "papers": 13, "no_year": 0, "undated": 13, "months": [],
    "years": [{"period": "2025", "papers": 7, "total": 38, "share": 0.184211},
              {"period": "2026", "papers": 6, "total": 19, "share": 0.315789}]}
LANDSCAPE_EXAMPLE = {
    "entity": {"id": "reasoning", "name": "reasoning", "type": "task", "paper_count": 5}, "papers": 5,
    "column_type": "dataset", "note": "5 papers; top 1 method or model by papers, top 1 dataset",
    "rows": [{"entity": _LLM, "papers": 3}],
    "columns": [{"entity": {"id": "tabular-data", "name": "tabular data", "type": "dataset", "paper_count": 1},
                 "papers": 1}],
    "metrics": [{"entity": {"id": "accuracy", "name": "accuracy", "type": "metric", "paper_count": 9}, "papers": 1}],
    "cells": [{"row": "large-language-model", "column": "tabular-data", "count": 1, "metrics": ["accuracy"],
               "papers": [{"id": "p-0123456789ab", "title": "Large language models on tables", "year": 2025,
                           "stated": True, "evidence": [{"paper_id": "p-0123456789ab", "sentence":
                                                         "We evaluate LLMs on tabular data.", "start": 12,
                                                         "end": 16}]}]}]}


def _example(body: dict[str, Any]) -> dict[int | str, dict[str, Any]]:
    return {200: {"content": {"application/json": {"example": body}}}}



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


@router.get("/trends", response_model=Trends, responses={**_example(TRENDS_EXAMPLE), **BAD_INPUT},
            openapi_extra={"x-codeSamples": [
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
@router.get("/entities/{entity_ref:path}/timeline", response_model=EntityTimeline,
            responses={**_example(TIMELINE_EXAMPLE), **NOT_FOUND},
            openapi_extra={"x-codeSamples": [
                {"lang": "Shell", "source": "curl -s 'localhost:8000/entities/GSM8K/timeline'"}]})
def timeline(store: StoreDep, entity_ref: EntityRef) -> EntityTimeline:
    """An entity's papers per year (every year of the store) and per month (papers with a published date),
    each with the share of all papers of that year or month."""
    return store.timeline(store.resolve_entity(entity_ref))


@router.get("/entities/{entity_ref:path}/landscape", response_model=Landscape,
            responses={**_example(LANDSCAPE_EXAMPLE), **NOT_FOUND, **BAD_INPUT},
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
