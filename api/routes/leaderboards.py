"""/leaderboards/{dataset}: the results papers report on a dataset, ranked per metric (kg.leaderboard, issue 34)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from api.deps import EntityRef, StoreDep, read
from api.errors import NOT_FOUND
from kg.leaderboard import leaderboard
from kg.models import Leaderboard

router = APIRouter(prefix="/leaderboards", tags=["leaderboards"])

_ROW = {"rank": 1, "value": 94.1, "text": "94.1%", "system": "TinyMath", "system_id": "tinymath",
        "metric": "accuracy", "paper_id": "p-0123456789ab", "paper_title": "Small models that reason", "year": 2025,
        "sentence": "Our model reaches 94.1% accuracy on GSM8K, while GraphZip reaches 91.0% accuracy.",
        "result_id": "result:p-0123456789ab:0", "results": 1}
EXAMPLE: dict[str, Any] = {
    "dataset": {"id": "gsm8k", "name": "GSM8K", "type": "dataset", "paper_count": 4}, "kind": "score",
    "metric": None, "results": {"gain": 1, "score": 7}, "note": "",
    "groups": [{"metric": "accuracy", "metric_id": "accuracy", "kind": "score", "unit": "percent",
                "direction": "higher", "ranked": True, "total": 4, "rows": [_ROW]}]}


# Names can hold '/', hence ``:path``, as in /entities.
@router.get("/{dataset_ref:path}", response_model=Leaderboard,
            responses={200: {"content": {"application/json": {"example": EXAMPLE}}}, **NOT_FOUND},
            openapi_extra={"x-codeSamples": [
                {"lang": "Shell", "source": "curl -s 'localhost:8000/leaderboards/GSM8K?metric=accuracy&limit=5'"}]})
async def get_leaderboard(
    store: StoreDep,
    dataset_ref: EntityRef,
    metric: Annotated[str | None, Query(max_length=200, description="Only this metric (a name or alias)")] = None,
    kind: Annotated[Literal["score", "gain"],
                    Query(description="Scores (levels reached) or gains (differences and ratios)")] = "score",
    limit: Annotated[int, Query(ge=1, le=1000, description="Rows per metric")] = 20,
) -> Leaderboard:
    """The results papers report on a dataset (an id, name or alias), one group per metric, kind and unit:
    one row per paper and system (its best value), ranked in the metric's direction where it is known (lower is
    better for error, FID, perplexity, latency...), each with its year, paper and sentence. 404 for a name no
    entity has, and for a metric none of the dataset's results are in (the message lists those it has)."""
    # One Cypher read over the dataset's results: never light enough for the event loop.
    return await read(store, leaderboard, store, dataset_ref, kind=kind, metric=metric, limit=limit, light=False)
