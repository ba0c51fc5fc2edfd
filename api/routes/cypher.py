"""/cypher: read-only Cypher over the graph, with a row cap, a time limit, a memory limit and admission control."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Annotated, Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from api.deps import SettingsDep, StoreDep
from api.errors import CYPHER_ERRORS
from kg.errors import KGError
from kg.models import CypherResult

router = APIRouter(prefix="/cypher", tags=["cypher"])


class CypherQuery(BaseModel):
    """A read-only Cypher query with its parameters (``$name`` in the text)."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, Field(min_length=1, max_length=10_000, examples=[
        "MATCH (p:Paper)-[:PROPOSES]->(m:Method) RETURN p.title, m.name LIMIT 5"])]
    parameters: Annotated[dict[str, Any], Field(max_length=100)] = {}
    max_rows: Annotated[int | None, Field(ge=1, le=10_000, description="Row cap; default 1000")] = None


@router.post("", response_model=CypherResult, responses=CYPHER_ERRORS)
async def run_cypher(request: Request, store: StoreDep, settings: SettingsDep,
                     body: CypherQuery) -> CypherResult | Response:
    """Run a read-only Cypher query; write clauses get 400 and change nothing; rows past the cap set ``truncated``.

    A query past the time limit gets 408, one past the memory limit 400; when every Cypher worker is busy a
    query waits briefly, then gets 503 with ``Retry-After``."""
    max_rows = min(body.max_rows or settings.cypher_max_rows, settings.cypher_max_rows_limit)
    work = asyncio.ensure_future(request.app.state.cypher.run(store, body.query, body.parameters, max_rows))
    gone = asyncio.ensure_future(_hung_up(request))
    try:
        await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if not work.done():  # the client left: stop its query now (its worker is killed), not at its time limit
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError, KGError):
            await work
        return Response(status_code=499)  # nobody reads it; nginx's code for "client closed the request"
    return work.result()


async def _hung_up(request: Request) -> None:
    """Return when the client disconnects (its body was read already: the next message is the hang-up)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
