"""/view: interactive HTML graph views (overview, paper, entity) that load nothing from the network."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from anyio import to_thread
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from api.deps import EntityRef, EntityType, PaperId, StoreDep, loop_lane
from api.errors import NOT_FOUND
from api.routes.explore import BAD_INPUT, Period
from viz import (
    RenderedPage,
    RenderedView,
    entity_view,
    landscape_view,
    overview_view,
    paper_view,
    search_view,
    trends_view,
)

router = APIRouter(prefix="/view", tags=["views"])

Hops = Annotated[int, Query(ge=1, le=2, description="How far from the paper or entity to draw: 1 or 2")]
Limit = Annotated[int, Query(ge=1, le=5000, description="At most this many nodes")]
_HTML: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/html": {}}, "description": "A self-contained HTML page"}}


def _link_base(request: Request) -> str:
    # Nodes link to the other views of this same server, behind whatever root path it is mounted at.
    return request.scope.get("root_path", "") + router.prefix


# A page is built on a thread, never on the event loop; a big one (past BIG_VIEW nodes asked for: up to seconds of
# Python) in a lane of BIG_VIEW_THREADS threads, the others in the usual threadpool. Every thread running Python
# takes the interpreter from the event loop in turns, so four clients looping 5,000-node views, each on its own
# thread, made /health wait 250-665 ms; big pages now wait for their lane instead, and the loop shares the
# interpreter with one of them at most.
BIG_VIEW = 500
BIG_VIEW_THREADS = 1


async def _render(nodes: int, view: Callable[..., RenderedView | RenderedPage], *args: Any,
                  **kwargs: Any) -> HTMLResponse:
    """``view(*args, **kwargs)`` as a page, built and encoded on a thread (the big views' lane past BIG_VIEW)."""
    def build() -> HTMLResponse:
        return _page(view(*args, **kwargs))

    lane = loop_lane("big views", BIG_VIEW_THREADS) if nodes > BIG_VIEW else None
    return await to_thread.run_sync(build, limiter=lane)


def _page(rendered: RenderedView | RenderedPage) -> HTMLResponse:
    return HTMLResponse(rendered.html, headers={
        # The page's own policy, plus what only a header can say: no other site may frame the page.
        "Content-Security-Policy": rendered.csp + "; frame-ancestors 'none'",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Opener-Policy": "same-origin",
    })


@router.get("", response_class=HTMLResponse, responses=_HTML)
async def overview(
    request: Request,
    store: StoreDep,
    top: Annotated[int, Query(ge=1, le=5000, description="Draw the top N entities by paper count")] = 150,
    types: Annotated[list[EntityType] | None,
                     Query(max_length=12, description="Only these entity types (repeatable)")] = None,
) -> HTMLResponse:
    """The concept graph of the corpus: the top entities, their relations and co-occurrences."""
    return await _render(top, overview_view, store, top_n=top, types=list(types) if types else None,
                         link_base=_link_base(request))


# Paper ids may hold '/' (DOIs), hence ``:path``, as in /papers.
@router.get("/paper/{paper_id:path}", response_class=HTMLResponse, responses={**_HTML, **NOT_FOUND})
async def paper(request: Request, store: StoreDep, paper_id: PaperId, hops: Hops = 1,
                limit: Limit = 200) -> HTMLResponse:
    """A paper, its entities by edge type, and its related papers."""
    return await _render(limit, paper_view, store, paper_id, hops=hops, limit=limit, link_base=_link_base(request))


# The segment may be an id or any name or alias; names can hold '/', hence ``:path``.
@router.get("/entity/{entity_ref:path}", response_class=HTMLResponse, responses={**_HTML, **NOT_FOUND})
async def entity(request: Request, store: StoreDep, entity_ref: EntityRef, hops: Hops = 1,
                 limit: Limit = 200) -> HTMLResponse:
    """An entity (by id, name or alias) and the papers and entities around it."""
    return await _render(limit, entity_view, store, entity_ref, hops=hops, limit=limit,
                         link_base=_link_base(request))


@router.get("/trends", response_class=HTMLResponse, responses={**_HTML, **BAD_INPUT})
async def trends(
    request: Request,
    store: StoreDep,
    type: Annotated[EntityType | None, Query(description="Only entities of this type")] = None,
    before: Annotated[Period, Query(alias="from", description="The earlier period (as /trends)")] = None,
    after: Annotated[Period, Query(alias="to", description="The later period")] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="Entities per list")] = 20,
    min_count: Annotated[int, Query(ge=1, le=100_000, description="Papers needed in one period")] = 5,
) -> HTMLResponse:
    """The store's rising, falling and new entities between two periods, with a chart of each one's papers."""
    return await _render(0, trends_view, store, type=type, before=before, after=after, limit=limit,
                         min_count=min_count, link_base=_link_base(request))


@router.get("/search", response_class=HTMLResponse, responses={**_HTML, **BAD_INPUT})
async def search(
    request: Request,
    store: StoreDep,
    q: Annotated[str, Query(max_length=500, description="Words, or a description of what you look for")] = "",
    limit: Annotated[int, Query(ge=1, le=100, description="Hits at most")] = 20,
) -> HTMLResponse:
    """Papers by meaning and words (as /search), each quoting its closest sentence; the views' search box
    opens this page for a query that names no node of the view."""
    return await _render(0, search_view, store, q, limit=limit, link_base=_link_base(request))


@router.get("/landscape/{entity_ref:path}", response_class=HTMLResponse, responses={**_HTML, **NOT_FOUND, **BAD_INPUT})
async def landscape(request: Request, store: StoreDep, entity_ref: EntityRef,
                    limit: Annotated[int, Query(ge=1, le=200, description="Rows and columns at most")] = 25,
                    cell_limit: Annotated[int, Query(ge=1, le=100, description="Papers listed per cell")] = 5,
                    ) -> HTMLResponse:
    """A task's methods against its datasets (a dataset's: against its tasks); a cell opens its papers."""
    return await _render(limit * cell_limit, landscape_view, store, entity_ref, limit=limit, cell_limit=cell_limit,
                         link_base=_link_base(request))
