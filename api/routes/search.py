"""/search: papers and entities in one ranked list."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import StoreDep, read
from kg.models import SearchHit

router = APIRouter(prefix="/search", tags=["search"])


@router.get("", response_model=list[SearchHit])
async def search(
    store: StoreDep,
    q: Annotated[str, Query(min_length=1, max_length=500, description="A name, alias, acronym or words")],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[SearchHit]:
    """Entities by name or alias (exact > prefix > word > fuzzy) and papers by title and abstract, best first."""
    return await read(store, store.search, q, limit)
