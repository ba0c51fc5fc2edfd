"""Dependencies shared by the routes, as ``Annotated`` aliases so handlers read as plain typed functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Depends, Path, Request
from starlette.concurrency import run_in_threadpool

from api.settings import Settings
from kg.errors import StoreError
from kg.store.base import Store

# Path segments: ids are at most kg.readers.MAX_ID_CHARS long, and names and aliases are shorter still.
MAX_REF_CHARS = 300
# Any non-empty segment: no regex pattern, since regex engines disagree on what is blank (Rust's \S, which
# FastAPI validates with, refuses U+0085; the schema's ECMA \S accepts it), and a schema the server does not keep
# to misleads every client and fuzzer. A blank id is simply not found (404); so is an empty one, which is what a
# segment of line breaks reaches the handler as (the ``:path`` convertor's ``.*`` stops before a newline).
PaperId = Annotated[str, Path(max_length=MAX_REF_CHARS, description="A paper id")]
EntityRef = Annotated[str, Path(max_length=MAX_REF_CHARS, description="An entity id, name or alias")]

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


T = TypeVar("T")


async def read(store: Store, fn: Callable[..., T], *args: Any, entity_id: str | None = None, light: bool = True,
               **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, a read of ``store``: on the event loop when the store says the read is light
    (``Store.reads_inline``), else in the threadpool. Most embedded reads take a fraction of a millisecond;
    handing each to a thread, and its answer back, cost more than the read, and 40 threads taking turns at the
    interpreter lock made every request wait under load (50 clients: a third of the CPU, 1.74 -> 1.15 ms a request).
    ``light=False``: this call is not light whatever the store (its first, uncached run)."""
    if light and store.reads_inline(entity_id):
        return fn(*args, **kwargs)
    return await run_in_threadpool(fn, *args, **kwargs)


StoreDep = Annotated[Store, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
