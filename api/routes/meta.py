"""/stats and /health: what the graph holds and whether the service can answer."""

from __future__ import annotations

import weakref
from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from api.deps import StoreDep, read
from kg.models import Stats
from kg.store.base import Store

# A served embedded store is read-only, so its counts never change: counting 60k nodes on every /health poll
# (15 ms of the interpreter at 5k papers) would make liveness the slowest light endpoint. Other stores (Neo4j,
# which builds may write while it is served) are counted every time.
_STATS: weakref.WeakKeyDictionary[Store, Stats] = weakref.WeakKeyDictionary()


def _stats(store: Store) -> Stats:
    if not store.fixed():
        return store.stats()
    st = _STATS.get(store)
    if st is None:
        st = _STATS[store] = store.stats()
    return st

router = APIRouter(tags=["meta"])


class Health(BaseModel):
    status: Literal["ok"]
    papers: int
    store: str  # the backend's name, e.g. "embedded"


@router.get("/stats", response_model=Stats)
async def stats(store: StoreDep) -> Stats:
    """Counts of papers, entities and edges, by type."""
    return await read(store, _stats, store, light=store in _STATS)  # counting 83k papers takes 0.1 s


@router.get("/health", response_model=Health)
async def health(store: StoreDep) -> Health:
    """Liveness with a real read: the number of papers and which store answers."""
    return await read(store, _health, store, light=store in _STATS)


def prime(store: Store) -> None:
    """Count the store now (kg serve does, while it builds the indexes), so that the first /health is as
    light as the rest."""
    _health(store)


def _health(store: Store) -> Health:
    return Health(status="ok", papers=_stats(store).papers, store=store.kind or type(store).__name__)
