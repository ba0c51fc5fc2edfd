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
    q: Annotated[str, Query(min_length=1, max_length=500,
                            description="A name, alias or acronym, words, or a description in your own words")],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[SearchHit]:
    """Entities by name or alias (exact > prefix > word > fuzzy) and papers by meaning and words (BM25 over title
    and abstract fused with embedding similarity, so other words than the abstract's still find it), best first;
    each paper hit quotes the sentence of its abstract closest to the query."""
    return await read(store, store.search, q, limit, light=False)  # embeds the query: not on the event loop
