"""/stats and /health: what the graph holds and whether the service can answer."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from api.deps import StoreDep
from kg.models import Stats

router = APIRouter(tags=["meta"])


class Health(BaseModel):
    status: Literal["ok"]
    papers: int
    store: str  # the backend's name, e.g. "embedded"


@router.get("/stats", response_model=Stats)
def stats(store: StoreDep) -> Stats:
    """Counts of papers, entities and edges, by type."""
    return store.stats()


@router.get("/health", response_model=Health)
def health(store: StoreDep) -> Health:
    """Liveness with a real read: the number of papers and which store answers."""
    info = getattr(store, "info", None)
    kind = str(info().get("store", "")) if callable(info) else type(store).__name__
    return Health(status="ok", papers=store.stats().papers, store=kind)
