"""Pure ASGI middlewares: bearer-token authentication (401) and a request body size limit (413), both applied
before any route runs; and the log filter that keeps the token out of every log, in any URL spelling."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from urllib.parse import parse_qsl, unquote_plus

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import ErrorBody

VIEW_COOKIE = "kg_view_token"
# A parameter: after the start, a query or path separator (`;` path parameters, `#` fragments, `/`), its key.
_PARAM = re.compile(r"((?:^|[?&;#/])([^=&;#?/\s]*)=)([^&;#\s]*)")
# After decoding, a `token` key with a value: in the clear when separators were percent-encoded (`?token%3DT`).
_DECODED_KEY = re.compile(r"(?:^|[?&;#/\s])token\s*=(?!\[redacted\])", re.IGNORECASE)
_QUERY_START = re.compile(r"[?;#&=%]")
REDACTED = "[redacted]"


def _decoded(text: str) -> str:
    for _ in range(4):  # `%2574oken`: decoded twice by a client, a proxy and the app, each maybe once
        plain = unquote_plus(text)
        if plain == text:
            break
        text = plain
    return text


def _redact(text: str) -> str:
    # keys are compared decoded, as the auth middleware reads them: `?%74oken=` authenticates too
    text = _PARAM.sub(lambda m: m[1] + REDACTED if _decoded(m[2]).lower() == "token" else m[0], text)
    if _DECODED_KEY.search(_decoded(text)):  # a `token=` spelled with encoded separators: cut from the query on
        cut = _QUERY_START.search(text, 1)
        text = (text[:cut.start() + 1] if cut and text[cut.start()] == "?" else text[:cut.start() if cut else 1]) \
            + REDACTED
    return text


def _token_pattern(tokens: set[str]) -> re.Pattern[str] | None:
    """Each token in any spelling a URL may give it: each character as itself or percent-encoded (any case,
    encoded again any number of times), a space also as `+`."""
    if not tokens:
        return None

    def char(c: str) -> str:
        if ord(c) >= 128:  # printable ASCII only (Settings); kept literal should that change
            return re.escape(c)
        plus = r"|\+" if c == " " else ""
        return f"(?:{re.escape(c)}|%(?:25)*{ord(c):02x}{plus})"

    def spelled(token: str) -> str:
        return "".join(char(c) for c in token)

    return re.compile("|".join(spelled(t) for t in sorted(tokens, key=len, reverse=True)), re.IGNORECASE)


class RedactTokens(logging.Filter):
    """Keep the API token out of logged records: ``token=...`` in any logged URL is rewritten (uvicorn's access
    log passes the path with its query as an argument), a query whose `token` key is hidden behind encoded
    separators is cut, and the tokens the filter was given are redacted wherever they appear, in any URL spelling
    (path parameters, path segments, fragments), in messages, arguments and formatted tracebacks."""

    def __init__(self, tokens: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.tokens: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        for token in tokens:
            self.add(token)

    def add(self, token: str) -> None:
        if token and token not in self.tokens:
            self.tokens.add(token)
            self._pattern = _token_pattern(self.tokens)

    def redact(self, text: str) -> str:
        if "=" in text or "%" in text:
            text = _redact(text)
        pattern = self._pattern
        return text if pattern is None else pattern.sub(REDACTED, text)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            if isinstance(record.args, tuple):
                record.args = tuple(self.redact(a) if isinstance(a, str) else a for a in record.args)
            if isinstance(record.msg, str):
                record.msg = self.redact(record.msg)
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = self.redact(record.exc_text)
            if record.stack_info:
                record.stack_info = self.redact(record.stack_info)
        except Exception:  # noqa: BLE001 - a record this cannot read is dropped rather than logged unredacted
            return False
        return True


# The loggers whose records may hold a URL: uvicorn's access and error logs, and the app's own.
REDACTED_LOGGERS = ("uvicorn.access", "uvicorn.error", "uvicorn.asgi", "kg.api")


def redact_access_log(token: str | None = None) -> None:
    """Install ``RedactTokens`` (once; called at startup, after uvicorn set up logging) on the loggers that may log
    a URL, and on the handlers of uvicorn's and the root logger (records logged elsewhere reach those), and teach
    it ``token``."""
    loggers = [logging.getLogger(name) for name in REDACTED_LOGGERS]
    targets: list[logging.Filterer] = [*loggers]
    for logger in (logging.getLogger(), logging.getLogger("uvicorn"), *loggers):
        targets.extend(logger.handlers)
    for target in targets:
        found = next((f for f in target.filters if isinstance(f, RedactTokens)), None)
        if found is None:
            found = RedactTokens()
            target.addFilter(found)
        if token:
            found.add(token)


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
