"""KGError -> HTTP: the one place exceptions become status codes, each with a message that names the culprit.

Every error body is valid JSON whatever it echoes (``api.safejson``), no handler raises, and an exception no
handler knows is a JSON 500 logged as its type and frames only (its message may quote the request), once per
place it was raised."""

from __future__ import annotations

import contextlib
import logging
import traceback
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.admission import ServerBusy
from api.safejson import MAX_DEPTH, encode_error
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
    400: {**_JSON, "description": "Syntax error, write clause or unsupported Cypher; a lone surrogate in the body, "
                                  f"or a parameter or answer nested more than {MAX_DEPTH} levels deep"},
    408: {**_JSON, "description": "The query ran past its time limit"},
    413: {**_JSON, "description": "Request body too large"},
    503: {**_JSON, "description": "Every Cypher slot is busy: retry after the Retry-After header's seconds"},
}


def status_for(exc: BaseException) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


# The error type ``api.routes.cypher``'s body check raises (a lone surrogate, nesting past MAX_DEPTH): a 400.
BAD_BODY = "kg_bad_body"


class SafeJSONResponse(JSONResponse):
    """A JSON response whose rendering never raises: lone surrogates escaped, NaN and infinities as strings, deep
    values cut (``api.safejson.encode_error``)."""

    def render(self, content: Any) -> bytes:
        return encode_error(content)


def _error(status: int, detail: Any, error: str, headers: dict[str, str] | None = None) -> SafeJSONResponse:
    return SafeJSONResponse({"detail": detail, "error": error}, status_code=status, headers=headers)


async def kg_error_handler(request: Request, exc: Exception) -> JSONResponse:
    status = status_for(exc)
    if status >= 500 and not isinstance(exc, ServerBusy):  # a busy server is load, not a fault
        log.error("%s %s: %s: %s", request.method, request.scope.get("path", ""), type(exc).__name__, exc)
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, ServerBusy) else None
    return _error(status, str(exc), type(exc).__name__, headers)


async def http_error_handler(request: Request, exc: Exception) -> JSONResponse:
    # Starlette's own errors (no such route, wrong method) in the same shape as ours.
    assert isinstance(exc, HTTPException)
    try:
        phrase = HTTPStatus(exc.status_code).phrase
    except ValueError:
        phrase = "Error"
    detail = str(exc.detail)
    if exc.status_code == 404 and detail == "Not Found":  # the router found no route: say for what
        # the path as routed (request.url would parse the Host header, which may not parse)
        detail = f"no route for {request.method} {request.scope.get('path', '')}"
    if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):  # json.loads of a body nested deep
        return _error(400, f"body: nested more than {MAX_DEPTH} levels deep (lists and maps), the most a request "
                           f"may hold", "InputError")
    return SafeJSONResponse({"detail": detail, "error": phrase.replace(" ", "")}, status_code=exc.status_code,
                            headers=exc.headers)


async def validation_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422 (``{"detail": [{"loc", "msg", "type", "input"}...]}``), rendered so that no input can break
    it; a body the Cypher route's check refused (``BAD_BODY``) is a 400 naming the field instead."""
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    for e in errors:
        if e.get("type") == BAD_BODY:
            return _error(400, str(e.get("msg", "")), "InputError")
    keep = ("type", "loc", "msg", "input", "ctx")
    return SafeJSONResponse({"detail": [{k: e[k] for k in keep if k in e} for e in errors]}, status_code=422)


class CatchAll:
    """The outermost middleware: an exception that reaches it is a JSON 500, and the log gets one line with its
    type and where it was raised, plus its frames the first time that place fails; never its message or the
    request, which may quote the query, its parameters or the token."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: set[tuple[str, str]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:  # noqa: BLE001 - the point of this middleware
            self._log(scope, exc)
            if not started:
                response = _error(500, f"internal error ({type(exc).__name__}); the server's log says where it "
                                       f"happened", "InternalError")
                with contextlib.suppress(Exception):  # the client may be gone
                    await response(scope, receive, send)

    def _log(self, scope: Scope, exc: Exception) -> None:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
        key = (type(exc).__name__, where)
        first = key not in self.seen and len(self.seen) < 1000
        self.seen.add(key)
        log.error("500 %s %s: %s at %s%s", scope.get("method", ""), scope.get("path", ""), key[0], where,
                  ("\n" + "".join(traceback.format_list(frames)).rstrip()) if first else " (frames logged before)")


def install(app: FastAPI) -> None:
    app.add_exception_handler(KGError, kg_error_handler)
    app.add_exception_handler(HTTPException, http_error_handler)
    app.add_exception_handler(RequestValidationError, validation_error_handler)
