"""KGError -> HTTP: the one place exceptions become status codes, each with a message that names the culprit."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from api.admission import ServerBusy
from kg.cypher.errors import CypherError, CypherTimeout
from kg.errors import InputError, KGError, ModelError, NotFoundError, StoreError

log = logging.getLogger("kg.api")


class ErrorBody(BaseModel):
    """What every error response carries: a readable message and the kind of error."""

    detail: str
    error: str


# Most specific first: the first class in an exception's MRO found here decides its status.
STATUS: dict[type[BaseException], int] = {
    NotFoundError: 404,
    InputError: 422,
    StoreError: 503,
    ServerBusy: 503,
    ModelError: 503,
    CypherTimeout: 408,
    CypherError: 400,  # syntax, write clauses, unsupported features, runtime type errors
}

# For the OpenAPI document (and /docs): the error statuses each kind of route can answer.
# Errors are JSON even on routes whose own responses are HTML, hence the explicit media type.
_JSON: dict[str, Any] = {"content": {"application/json": {"schema": ErrorBody.model_json_schema()}}}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {**_JSON, "description": "No paper or entity with that id"}}
CYPHER_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {**_JSON, "description": "Syntax error, write clause or unsupported Cypher"},
    408: {**_JSON, "description": "The query ran past its time limit"},
    413: {**_JSON, "description": "Request body too large"},
    503: {**_JSON, "description": "Every Cypher slot is busy: retry after the Retry-After header's seconds"},
}


def status_for(exc: BaseException) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


async def kg_error_handler(request: Request, exc: Exception) -> JSONResponse:
    status = status_for(exc)
    if status >= 500 and not isinstance(exc, ServerBusy):  # a busy server is load, not a fault
        log.error("%s %s: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, ServerBusy) else None
    return JSONResponse(ErrorBody(detail=str(exc), error=type(exc).__name__).model_dump(), status_code=status,
                        headers=headers)


async def http_error_handler(request: Request, exc: Exception) -> JSONResponse:
    # Starlette's own errors (no such route, wrong method) in the same shape as ours.
    assert isinstance(exc, HTTPException)
    phrase = HTTPStatus(exc.status_code).phrase
    detail = str(exc.detail)
    if exc.status_code == 404 and detail == "Not Found":  # the router found no route: say for what
        detail = f"no route for {request.method} {request.url.path}"
    return JSONResponse(ErrorBody(detail=detail, error=phrase.replace(" ", "")).model_dump(),
                        status_code=exc.status_code, headers=exc.headers)


def install(app: FastAPI) -> None:
    app.add_exception_handler(KGError, kg_error_handler)
    app.add_exception_handler(HTTPException, http_error_handler)
