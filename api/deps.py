"""Dependencies shared by the routes, as ``Annotated`` aliases so handlers read as plain typed functions."""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from anyio import CapacityLimiter, to_thread
from fastapi import Depends, Path, Request

from api.settings import Settings
from kg.errors import StoreError
from kg.procs import usable_cores
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

# Reads that are not light (search, related papers, first reads of an entity) run on at most this many threads
# at once, one a core (at most 4), the rest waiting their turn: every thread running Python takes the interpreter
# from the event loop in turns, and with 50 clients 40 threads of searches made every request wait for them
# (bench/load.py, 2 cores: /health p99 99 ms and small Cypher p95 1.7 s with the usual 40 threads; 14 and 138 ms
# with two; one and four answered fewer requests a second).
HEAVY_READ_THREADS = max(1, min(4, usable_cores()))
_lanes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, CapacityLimiter]] = weakref.WeakKeyDictionary()


def loop_lane(name: str, threads: int) -> CapacityLimiter:
    """The running event loop's limiter ``name`` of ``threads`` threads (a limiter belongs to the loop that made it,
    so each serving process and each test's loop gets its own)."""
    lanes = _lanes.setdefault(asyncio.get_running_loop(), {})
    lane = lanes.get(name)
    if lane is None:
        lane = lanes[name] = CapacityLimiter(threads)
    return lane


async def read(store: Store, fn: Callable[..., T], *args: Any, entity_id: str | None = None, light: bool = True,
               **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, a read of ``store``: on the event loop when the store says the read is light
    (``Store.reads_inline``), else on a thread: of the heavy reads' lane (``HEAVY_READ_THREADS``) when the
    store's reads run Python (``Store.reads_on_cpu``), of the threadpool when they wait for a server. Most embedded
    reads take a fraction of a millisecond; handing each to a thread, and its answer back, cost more than the read,
    and 40 threads taking turns at the interpreter lock made every request wait under load (50 clients: a third of
    the CPU, 1.74 -> 1.15 ms a request). ``light=False``: this call is not light whatever the store (its first,
    uncached run)."""
    if light and store.reads_inline(entity_id):
        return fn(*args, **kwargs)
    if not store.reads_on_cpu:  # a Neo4j read waits for the server: anyio's threadpool, 40 at once
        return await to_thread.run_sync(functools.partial(fn, *args, **kwargs))
    return await on_heavy_lane(fn, *args, **kwargs)


async def on_heavy_lane(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on a thread, at most ``HEAVY_READ_THREADS`` of them at once in this event loop."""
    lane = loop_lane("heavy reads", HEAVY_READ_THREADS)
    return await to_thread.run_sync(functools.partial(fn, *args, **kwargs), limiter=lane)


StoreDep = Annotated[Store, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
