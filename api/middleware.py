"""Pure ASGI middlewares: bearer-token authentication (401) and a request body size limit (413), both applied
before any route runs; and the access-log filter that keeps ``?token=`` out of the log."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import ErrorBody

VIEW_COOKIE = "kg_view_token"
_TOKEN_PARAM = re.compile(r"(?i)((?:^|[?&;])token=)[^&;#\s]*")


class RedactTokens(logging.Filter):
    """Rewrite ``token=...`` in logged request paths (uvicorn's access log passes the path with its query as an
    argument) so the log never holds the API token in clear."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, str) and "token=" in a.lower() for a in record.args):
            record.args = tuple(_TOKEN_PARAM.sub(r"\1[redacted]", a) if isinstance(a, str) else a
                                for a in record.args)
        elif isinstance(record.msg, str) and "token=" in record.msg.lower():
            record.msg = _TOKEN_PARAM.sub(r"\1[redacted]", record.msg)
        return True


def redact_access_log() -> None:
    """Install ``RedactTokens`` on uvicorn's access logger (once; called at startup, after uvicorn set up logging)."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactTokens) for f in logger.filters):
        logger.addFilter(RedactTokens())


async def _send_error(send: Send, status: int, body: ErrorBody, extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    data = body.model_dump_json().encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *extra]})
    await send({"type": "http.response.body", "body": data})


class TokenAuth:
    """Every request needs ``Authorization: Bearer <token>``, else 401.

    A browser cannot send that header when it opens a link, so the HTML views under ``view_prefix`` also take
    ``?token=<token>``; a view opened that way sets an HttpOnly, SameSite=Strict cookie for ``view_prefix``
    (a digest of the token, not the token) so the links between views keep working.
    """

    def __init__(self, app: ASGIApp, token: str, view_prefix: str = "/view") -> None:
        self.app = app
        self.token = token.encode()
        self.view_prefix = view_prefix
        self.cookie_value = hashlib.sha256(b"kg-view-cookie:" + self.token).hexdigest().encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = scope["headers"]
        if any(k == b"authorization" and self._bearer_ok(v) for k, v in headers):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and (
                path == self.view_prefix or path.startswith(self.view_prefix + "/")):
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if hmac.compare_digest(query.get("token", "").encode("latin-1"), self.token):
                await self.app(scope, receive, self._with_cookie(send, root))
                return
            if any(k == b"cookie" and self._cookie_ok(v) for k, v in headers):
                await self.app(scope, receive, send)
                return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await _send_error(send, 401, ErrorBody(
            detail="missing or wrong API token: send 'Authorization: Bearer <token>' (views also take ?token=)",
            error="Unauthorized"), ((b"www-authenticate", b'Bearer realm="kg"'),))

    def _bearer_ok(self, value: bytes) -> bool:
        scheme, _, credentials = value.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self.token)

    def _cookie_ok(self, value: bytes) -> bool:
        for part in value.split(b";"):
            name, _, v = part.strip().partition(b"=")
            if name == VIEW_COOKIE.encode() and hmac.compare_digest(v, self.cookie_value):
                return True
        return False

    def _with_cookie(self, send: Send, root: str) -> Send:
        cookie = (f"{VIEW_COOKIE}={self.cookie_value.decode()}; Path={root}{self.view_prefix}; HttpOnly; "
                  f"SameSite=Strict").encode()

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
            await send(message)

        return send_with_cookie


class BodyLimit:
    """Buffer at most ``max_bytes`` of a request body; a larger one (declared or streamed) gets 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refuse(send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left before sending it all
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def _refuse(self, send: Send) -> None:
        await _send_error(send, 413, ErrorBody(detail=f"request body larger than {self.max_bytes} bytes",
                                               error="InputError"))


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the buffered body over once, then defers to the real one (for disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
