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
_KIND: weakref.WeakKeyDictionary[Store, str] = weakref.WeakKeyDictionary()


def _stats(store: Store) -> Stats:
    if getattr(store, "writable", True):
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
    return await read(store, _stats, store)


@router.get("/health", response_model=Health)
async def health(store: StoreDep) -> Health:
    """Liveness with a real read: the number of papers and which store answers."""
    return await read(store, _health, store)


def _health(store: Store) -> Health:
    kind = _KIND.get(store)
    if kind is None:  # info() walks the store's files: once per store, not on every poll
        info = getattr(store, "info", None)
        kind = _KIND[store] = str(info().get("store", "")) if callable(info) else type(store).__name__
    return Health(status="ok", papers=_stats(store).papers, store=kind)
