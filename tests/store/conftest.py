"""A real Bolt server for the store tests: ArcadeDB from the arcadedb-embedded package, started once per session.

If the server cannot start, the tests that need it fail (they are never skipped): CI must run them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.cache import record_hash
from kg.errors import StoreError
from kg.graph import PaperInput, derive_graph
from kg.store.arcadedb import BoltServer, arcadedb_server
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore

PASSWORD = "kg-test-password"
DATABASES = ("kg", "scratch")  # reads run against "kg"; tests that write use "scratch"
START_TIMEOUT_S = 120
KINDS = ["embedded", pytest.param("bolt", marks=pytest.mark.bolt)]


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """ArcadeDB with its Bolt plugin on a free port, databases ``kg`` and ``scratch``; killed at the end."""
    try:
        with arcadedb_server(tmp_path_factory.mktemp("arcadedb"), password=PASSWORD, databases=DATABASES,
                             start_timeout_s=START_TIMEOUT_S) as server:
            yield server
    except StoreError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def bolt_driver(bolt_server: BoltServer):
    from kg.store.neo4j_connect import connect

    driver = connect(bolt_server.uri, bolt_server.user, bolt_server.password, "kg")
    yield driver
    driver.close()


# -- stores built from the seeds -----------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def seed_inputs(seeds_store: EmbeddedStore) -> dict[str, PaperInput]:
    """The seeds' records and extractions, extracted once per session (by the shared ``seeds_store``)."""
    return seeds_store.load_inputs()


@pytest.fixture(scope="session")
def reference(seeds_store: EmbeddedStore) -> EmbeddedStore:
    return seeds_store


def _clear(driver: Any, database: str) -> None:
    driver.execute_query("MATCH (n) DETACH DELETE n", database_=database)


def _open(kind: str, path: Path, request: pytest.FixtureRequest, database: str) -> Store:
    if kind == "embedded":
        return EmbeddedStore(path / "store", writable=True)
    from kg.store.neo4j import Neo4jStore

    driver = request.getfixturevalue("bolt_driver")
    return Neo4jStore(driver, database=database, batch_size=200, cache_dir=path / "cache", timeout_s=60)


@pytest.fixture(scope="session", params=KINDS)
def store(request: pytest.FixtureRequest, seed_inputs: dict[str, PaperInput],
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """A store holding the seeds graph, for reads (written once, never changed by the tests)."""
    path = tmp_path_factory.mktemp(f"contract-{request.param}")
    s = _open(request.param, path, request, "kg")
    if request.param == "bolt":
        _clear(request.getfixturevalue("bolt_driver"), "kg")
    s.cache.append((record_hash(p.record), p) for p in seed_inputs.values())  # type: ignore[attr-defined]
    s.replace_graph(derive_graph(seed_inputs.values()), seed_inputs)
    if request.param == "embedded":
        s.close()
        s = EmbeddedStore(path / "store")  # re-read from disk
    yield s
    s.close()


@pytest.fixture(params=KINDS)
def empty_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A writable store with nothing in it (Bolt: the ``scratch`` database, cleared)."""
    if request.param == "bolt":
        _clear(request.getfixturevalue("bolt_driver"), "scratch")
    s = _open(request.param, tmp_path, request, "scratch")
    yield s
    s.close()
