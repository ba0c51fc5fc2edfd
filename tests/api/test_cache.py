"""The response cache: a repeated GET of a store read is answered from memory, byte for byte the same, and
nothing that may differ between two requests is ever replayed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.main import create_app
from api.settings import Settings
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore


@pytest.fixture
def calls(store: Store, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of the store's reads, by method name."""
    counts: dict[str, int] = {}
    for name in ("related_papers", "get_entity", "search"):
        real = getattr(store, name)

        def counted(*a: Any, _real: Callable[..., Any] = real, _name: str = name, **kw: Any) -> Any:
            counts[_name] = counts.get(_name, 0) + 1
            return _real(*a, **kw)

        monkeypatch.setattr(store, name, counted)
    return counts


def _client(store: Store, store_dir: Path, **settings: Any) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(store_dir=str(store_dir), **settings), store=store)) as c:
        yield c


@pytest.fixture
def cached(store: Store, store_dir: Path) -> Iterator[TestClient]:
    yield from _client(store, store_dir)


def test_a_repeated_read_is_answered_from_memory_with_the_same_bytes(
        cached: TestClient, calls: dict[str, int], store: Store) -> None:
    pid = store.list_papers(limit=1).items[0].id
    for path in (f"/papers/{pid}/related", "/entities/MI", "/search?q=mutual", "/stats"):
        first, second = cached.get(path), cached.get(path)
        assert first.status_code == second.status_code == 200
        assert first.content == second.content and first.headers == second.headers
    assert calls == {"related_papers": 1, "get_entity": 1, "search": 1}
    # Another query string is another answer.
    assert cached.get("/search?q=mutual&limit=1").json() != cached.get("/search?q=mutual").json()
    assert calls["search"] == 2


def test_errors_health_and_cypher_are_never_replayed(cached: TestClient, calls: dict[str, int]) -> None:
    for _ in range(2):
        assert cached.get("/papers/no-such-paper/related").status_code == 404
        assert cached.get("/search?q=").status_code == 422
    assert calls.get("related_papers") == 2 and "search" not in calls  # 422 before the store is asked
    for _ in range(2):
        assert cached.post("/cypher", json={"query": "RETURN 1 AS one"}).json()["rows"] == [[1]]
    assert cached.get("/health").json()["status"] == "ok"


def test_a_cached_answer_still_needs_the_token(store: Store, store_dir: Path, calls: dict[str, int]) -> None:
    for c in _client(store, store_dir, token="s3cret-token-of-sixteen"):
        ok = c.get("/search?q=mutual", headers={"Authorization": "Bearer s3cret-token-of-sixteen"})
        assert ok.status_code == 200
        assert c.get("/search?q=mutual").status_code == 401
        assert c.get("/search?q=mutual", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert calls["search"] == 1


def test_no_cache_when_turned_off_or_when_the_store_can_change(
        store: Store, store_dir: Path, calls: dict[str, int], tmp_path: Path) -> None:
    for c in _client(store, store_dir, response_cache_mb=0):
        c.get("/search?q=mutual")
        c.get("/search?q=mutual")
    assert calls["search"] == 2
    # A store open for writing (a build in the same process) may change under the app: never cached.
    with EmbeddedStore(tmp_path / "w", writable=True) as w:
        for c in _client(w, tmp_path / "w"):
            assert c.get("/stats").json()["papers"] == 0
            w.graph.add_node("p1", label="Paper", title="T", abstract="A")
            assert c.get("/stats").json()["papers"] == 1


def test_a_new_store_empties_the_cache(store: Store, store_dir: Path) -> None:
    app = create_app(Settings(store_dir=str(store_dir)), store=store)
    with TestClient(app) as c:
        before = c.get("/stats").json()
        with EmbeddedStore(store_dir) as other:  # the same files, another graph object: answers are not reused
            other.stats = lambda: before | {"papers": -1}  # type: ignore[method-assign]
            app.state.store = other
            assert c.get("/stats").json()["papers"] == -1
        app.state.store = store
