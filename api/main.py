"""Build the FastAPI app: settings in, store opened once in the lifespan (or handed in), routers included."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from api import errors
from api.cache import ResponseCache
from api.cypher_service import CypherService
from api.middleware import BodyLimit, TokenAuth, redact_access_log
from api.routes import cypher, entities, explore, leaderboards, meta, papers, search
from api.settings import Settings
from kg import __version__
from kg.store import open_store as open_store_kind
from kg.store.base import Store, StoreOptions


def open_store(settings: Settings) -> Store:
    """Open the configured store read-only (any kind in kg.store's registry); serving never writes. A Neo4j
    store is served by ``kg serve --store neo4j``, which opens it with its server's address and credentials."""
    return open_store_kind(StoreOptions(kind=settings.store_kind, store_dir=settings.store_dir))


def create_app(settings: Settings | None = None, *, store: Store | None = None,
               store_factory: Callable[[Settings], Store] = open_store) -> FastAPI:
    """The API app. Pass ``store`` (or set ``app.state.store`` before startup) to serve an already-open
    store, which the caller closes; otherwise the lifespan opens one with ``store_factory(settings)`` at
    startup and closes it at shutdown."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        redact_access_log(settings.token)
        opened = app.state.store is None
        if opened:
            app.state.store = store_factory(settings)
        try:
            app.state.cypher.start(app.state.store)  # forks the Cypher workers, sharing the loaded store
            yield
        finally:
            app.state.cypher.close()
            if opened:
                app.state.store.close()
                app.state.store = None

    # FastAPIOffline serves Swagger UI and ReDoc from package files: /docs works with no network.
    app = FastAPIOffline(title="kg", version=__version__, lifespan=lifespan,
                  summary="A typed knowledge graph of research-paper abstracts: papers, entities, search, Cypher.")
    app.state.settings = settings
    app.state.store = store
    app.state.cypher = CypherService(settings)
    errors.install(app)
    # Inside the body limit and the token check, so a cached answer is given only to a request they let in.
    app.add_middleware(ResponseCache, budget_bytes=settings.response_cache_mb * 1024 * 1024,
                       store_of=lambda scope: app.state.store)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    if settings.token:  # added after the others, so it runs first: a request without the token is not even read
        app.add_middleware(TokenAuth, token=settings.token)
    # Outermost: whatever escapes every handler is a JSON 500 logged without the request (api.errors).
    app.add_middleware(errors.CatchAll)
    for module in (papers, explore, entities, leaderboards, search, cypher, meta):  # explore's /entities/{id}/... first
        app.include_router(module.router)
    # HTML views live in their own module (another owner); served when present.
    if importlib.util.find_spec("api.routes.views") is not None:
        from api.routes import views

        app.include_router(views.router)
    return app
