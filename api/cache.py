"""A cache of whole JSON responses to GET requests, in front of routing: a repeated read costs no validation,
no thread hop and no store work. Safe because a served embedded store never changes while it is served.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TypeGuard

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kg.lru import LRUCache
from kg.store.base import Store

# The store's JSON reads. Not /health (it reports the server, not the store), /cypher (POST; the pool
# bounds it), the docs, or the HTML views (another owner; some set cookies).
CACHED_PREFIXES = ("/papers", "/entities", "/search", "/stats", "/trends", "/leaderboards")
MAX_ENTRY_BYTES = 1 << 20  # one very large answer (a hub entity with paper_limit=1000) must not evict the rest
# A response whose headers say any of these depends on more than the URL; never cached.
_PRIVATE = (b"set-cookie", b"vary", b"cache-control")


def cacheable_store(store: Store | None) -> TypeGuard[Store]:
    """Only a store whose answers are fixed while served: the embedded one opened read-only (a Neo4j database
    may be written by others under the server)."""
    return store is not None and store.fixed()


class ResponseCache:
    """Keep the status, headers and body of 200 JSON answers to GET ``CACHED_PREFIXES``, keyed by path and
    query string, within ``budget_bytes``; replay them without calling the app. ``store_of`` gives the store
    being served: a different store object, or a different graph in it, empties the cache."""

    def __init__(self, app: ASGIApp, budget_bytes: int, store_of: Callable[[Scope], Store | None]) -> None:
        self.app = app
        self.budget = budget_bytes
        self.store_of = store_of
        self.cache = LRUCache(budget_bytes)
        # The store and graph the entries were made from, held weakly: an id could be reused by a later object.
        self._for: tuple[weakref.ref, weakref.ref] | None = None
        self.hits = self.misses = 0

    def _usable(self, scope: Scope) -> bool:
        store = self.store_of(scope)
        if not cacheable_store(store):
            return False
        graph = store.local_graph()
        if graph is None:  # answers made elsewhere: nothing here tells when they change
            return False
        if self._for is None or self._for[0]() is not store or self._for[1]() is not graph:
            self.cache = LRUCache(self.budget)
            self._for = (weakref.ref(store), weakref.ref(graph))
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or self.budget <= 0 or scope["method"] != "GET"
                or not scope["path"].startswith(CACHED_PREFIXES) or not self._usable(scope)):
            await self.app(scope, receive, send)
            return
        key = (scope["path"], scope.get("query_string", b""))
        cache = self.cache  # this request's: an answer made from a store swapped meanwhile goes to the old one
        hit = cache.get(key)
        if hit is not None:
            self.hits += 1
            headers, body = hit
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        self.misses += 1
        start: Message | None = None
        chunks: list[bytes] = []

        async def keep(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body" and start is not None:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    self._put(cache, key, start, b"".join(chunks))
            await send(message)

        await self.app(scope, receive, keep)

    def _put(self, cache: LRUCache, key: tuple[str, bytes], start: Message, body: bytes) -> None:
        headers = [(bytes(k).lower(), bytes(v)) for k, v in start.get("headers", [])]
        if (start["status"] != 200 or len(body) > MAX_ENTRY_BYTES
                or not any(k == b"content-type" and v.startswith(b"application/json") for k, v in headers)
                or any(k in _PRIVATE for k, _ in headers)):
            return
        cache.put(key, (headers, body), len(body) + 64 * len(headers) + len(key[0]) + len(key[1]))
