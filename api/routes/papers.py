"""/papers: list and filter papers, one paper with its entities and evidence, and its related papers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import PaperId, StoreDep, read
from api.errors import NOT_FOUND
from kg.models import Page, PaperDetail, PaperSummary, RelatedPaper

router = APIRouter(prefix="/papers", tags=["papers"])


@router.get("", response_model=Page[PaperSummary], responses=NOT_FOUND)
def list_papers(
    store: StoreDep,
    venue: Annotated[str | None, Query(max_length=200, description="Exact venue name, any case")] = None,
    year: Annotated[int | None, Query(ge=0, le=9999)] = None,
    entity: Annotated[str | None, Query(min_length=1, max_length=200,
                                        description="Papers linked to this entity (id, name or alias)")] = None,
    q: Annotated[str | None, Query(max_length=500, description="Words all found in title or abstract")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Page[PaperSummary]:
    """Papers, newest first, filtered by venue, year, entity and text; paginated with the total."""
    return store.list_papers(venue=venue, year=year, entity=entity, q=q, limit=limit, offset=offset)


# Paper ids may contain ':' and '/' (arXiv ids, DOIs), hence ``:path``; /related is declared first so it wins.
@router.get("/{paper_id:path}/related", response_model=list[RelatedPaper], responses=NOT_FOUND)
async def related_papers(store: StoreDep, paper_id: PaperId,
                         k: Annotated[int, Query(ge=1, le=100)] = 10) -> list[RelatedPaper]:
    """The most related papers, best first: by embedding and TF-IDF similarity of title and abstract and by the
    specific entities both have, each with why (the shared entities with each paper's role, the similarity)."""
    return await read(store, store.related_papers, paper_id, k, light=False)  # ~10 ms at 83k: not on the loop


@router.get("/{paper_id:path}", response_model=PaperDetail, responses=NOT_FOUND)
async def get_paper(store: StoreDep, paper_id: PaperId) -> PaperDetail:
    """One paper: its abstract and its entities grouped by edge type, each with the sentence that states it."""
    return await read(store, store.get_paper, paper_id)
