"""/entities: list entities by type or name, one entity by id/name/alias, and the entities it co-occurs with."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import EntityRef, EntityType, StoreDep, read
from api.errors import NOT_FOUND
from kg.models import EntityDetail, EntitySummary, Page, RelatedEntity

router = APIRouter(prefix="/entities", tags=["entities"])


@router.get("", response_model=Page[EntitySummary])
def list_entities(
    store: StoreDep,
    type: Annotated[EntityType | None, Query(description="Only entities of this type")] = None,
    q: Annotated[str | None, Query(max_length=200, description="Name or alias: exact, prefix, word or fuzzy")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> Page[EntitySummary]:
    """Entities, most papers first, filtered by type and name; paginated with the total."""
    return store.list_entities(type=type, q=q, limit=limit, offset=offset)


# The segment may be an id or any name or alias ("STE"); names can hold '/', hence ``:path``.
@router.get("/{entity_ref:path}/related", response_model=list[RelatedEntity], responses=NOT_FOUND)
async def related_entities(store: StoreDep, entity_ref: EntityRef,
                           k: Annotated[int, Query(ge=1, le=100)] = 10) -> list[RelatedEntity]:
    """The entities that appear in the same papers as this one, scored by normalised co-occurrence."""
    eid = await read(store, store.resolve_entity, entity_ref)
    return await read(store, store.related_entities, eid, k, entity_id=eid)


@router.get("/{entity_ref:path}", response_model=EntityDetail, responses=NOT_FOUND)
async def get_entity(
    store: StoreDep,
    entity_ref: EntityRef,
    paper_limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    neighbour_limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> EntityDetail:
    """One entity by id, name or alias: its aliases, the papers that state it (with evidence) and its neighbours."""
    eid = await read(store, store.resolve_entity, entity_ref)
    return await read(store, store.get_entity, eid, paper_limit=paper_limit, neighbour_limit=neighbour_limit,
                      entity_id=eid)
