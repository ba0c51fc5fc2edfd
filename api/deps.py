"""Dependencies shared by the routes, as ``Annotated`` aliases so handlers read as plain typed functions."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Depends, Path, Request

from api.settings import Settings
from kg.errors import StoreError
from kg.store.base import Store

# Path segments: ids are at most kg.readers.MAX_ID_CHARS long, and names and aliases are shorter still.
MAX_REF_CHARS = 300
# Any non-empty segment: no regex pattern, since regex engines disagree on what is blank (Rust's \S, which
# FastAPI validates with, refuses U+0085; the schema's ECMA \S accepts it), and a schema the server does not keep
# to misleads every client and fuzzer. A blank id is simply not found (404).
PaperId = Annotated[str, Path(min_length=1, max_length=MAX_REF_CHARS, description="A paper id")]
EntityRef = Annotated[str, Path(min_length=1, max_length=MAX_REF_CHARS, description="An entity id, name or alias")]

# The entity types of kg.graph.ENTITY_LABELS (a test keeps the two in step); anything else is a 422.
EntityType = Literal["method", "model", "dataset", "task", "metric", "concept"]


async def get_store(request: Request) -> Store:
    store: Store | None = getattr(request.app.state, "store", None)
    if store is None:
        raise StoreError("the store is not open (the app is starting or shutting down)")
    return store


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


StoreDep = Annotated[Store, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
