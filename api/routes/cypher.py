"""/cypher: read-only Cypher over the graph, with a row cap, a time limit, a memory limit and admission control."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Annotated, Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from api.deps import SettingsDep, StoreDep
from api.errors import BAD_BODY, CYPHER_ERRORS
from api.safejson import MAX_DEPTH, check_body
from kg.errors import KGError
from kg.models import CypherResult

router = APIRouter(prefix="/cypher", tags=["cypher"])


class CypherQuery(BaseModel):
    """A read-only Cypher query with its parameters (``$name`` in the text). Strings must be Unicode text (no
    lone surrogates) and each parameter's value may nest at most ``MAX_DEPTH`` lists and maps: else 400."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _text_and_depth(cls, body: Any) -> Any:
        # Before the fields are validated: a lone surrogate is named here, not echoed by pydantic's error.
        why = check_body(body)
        if why is not None:
            raise PydanticCustomError(BAD_BODY, "{why}", {"why": why})
        return body

    query: Annotated[str, Field(min_length=1, max_length=10_000, examples=[
        "MATCH (p:Paper)-[:PROPOSES]->(m:Method) RETURN p.title, m.name LIMIT 5"])]
    parameters: Annotated[dict[str, Any], Field(max_length=100, description=(
        f"Values for the query's $names: JSON values nesting at most {MAX_DEPTH} lists and maps"))] = {}
    max_rows: Annotated[int | None, Field(ge=1, le=10_000, description="Row cap; default 1000")] = None


@router.post("", response_model=CypherResult, responses=CYPHER_ERRORS)
async def run_cypher(request: Request, store: StoreDep, settings: SettingsDep,
                     body: CypherQuery) -> CypherResult | Response:
    """Run a read-only Cypher query; write clauses get 400 and change nothing; rows past the cap set ``truncated``.
    Floats JSON has no literal for come back as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``.

    A query past the time limit gets 408, one past the memory limit 400; when every Cypher worker is busy a
    query waits briefly, then gets 503 with ``Retry-After``."""
    max_rows = min(body.max_rows or settings.cypher_max_rows, settings.cypher_max_rows_limit)
    work = asyncio.ensure_future(request.app.state.cypher.run_json(store, body.query, body.parameters, max_rows))
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
    # Written by the worker (NaN as "NaN", lone surrogates escaped, no value past MAX_DEPTH): sent as it is.
    return Response(work.result(), media_type="application/json")


async def _hung_up(request: Request) -> None:
    """Return when the client disconnects (its body was read already: the next message is the hang-up)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
