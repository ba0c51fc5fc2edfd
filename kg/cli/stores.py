"""Which store a command works on: the shared ``--store`` options and ``open_store``, the one place stores open."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click

from kg.cli.main import store_dir_option
from kg.store.base import Store

STORES = ("embedded", "neo4j")


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """What ``--store`` and its companions said; ``store_dir`` is also the Neo4j store's extraction cache."""

    kind: str = "embedded"
    store_dir: str = "kg-store"
    neo4j_uri: str = "bolt://localhost:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: str = ""
    neo4j_database: str | None = None

    def label(self) -> str:
        """How messages name the store: its directory, or its server (and database)."""
        if self.kind == "embedded":
            return self.store_dir
        return self.neo4j_uri + (f" database {self.neo4j_database}" if self.neo4j_database else "")


_OPTIONS = [
    click.option("--store", "store_kind", type=click.Choice(STORES), envvar="KG_STORE", default="embedded",
                 show_default=True, help="Where the graph lives (env KG_STORE)."),
    store_dir_option,
    click.option("--neo4j-uri", envvar="NEO4J_URI", default="bolt://localhost:7687", show_default=True,
                 help="Bolt URI of the Neo4j server (env NEO4J_URI)."),
    click.option("--neo4j-user", envvar="NEO4J_USER", default="neo4j", show_default=True,
                 help="Neo4j user (env NEO4J_USER)."),
    click.option("--neo4j-password", envvar="NEO4J_PASSWORD", default="", show_default=False,
                 help="Neo4j password (env NEO4J_PASSWORD; prefer the variable: options show in `ps`)."),
    click.option("--neo4j-database", envvar="NEO4J_DATABASE", default=None,
                 help="Neo4j database (env NEO4J_DATABASE; default: the server's default database)."),
]


def store_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add the store options to a command, which receives them as one ``store_opts: StoreOptions``."""

    @functools.wraps(f)
    def wrapper(*args: Any, store_kind: str, store_dir: str, neo4j_uri: str, neo4j_user: str,
                neo4j_password: str, neo4j_database: str | None, **kwargs: Any) -> Any:
        opts = StoreOptions(store_kind, store_dir, neo4j_uri, neo4j_user, neo4j_password, neo4j_database or None)
        return f(*args, store_opts=opts, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


@contextmanager
def open_store(opts: StoreOptions, *, writable: bool = False, wait: bool = False) -> Iterator[Store]:
    """The store ``opts`` names, closed (and its driver with it) on leaving the block."""
    if opts.kind == "embedded":
        from kg.store.embedded import EmbeddedStore

        with EmbeddedStore(opts.store_dir, writable=writable, wait=wait) as store:
            yield store
        return
    from kg.store.neo4j import Neo4jStore
    from kg.store.neo4j_connect import connect

    driver = connect(opts.neo4j_uri, opts.neo4j_user, opts.neo4j_password, opts.neo4j_database)
    try:
        with Neo4jStore(driver, database=opts.neo4j_database, cache_dir=opts.store_dir) as store:
            yield store
    finally:
        driver.close()
