"""Which store a command works on: the shared ``--store`` options and ``open_store``, the one place stores open."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from kg.cli.main import store_dir_option
from kg.store import open_store as open_kind
from kg.store import store_kinds
from kg.store.base import Store, StoreOptions


class StoreKind(click.Choice):
    """A kind in kg.store's registry, read when the option is parsed, so kinds that packages add through entry
    points (or a test) after kg.cli is imported are choices too."""

    def __init__(self) -> None:
        super().__init__([])

    @property
    def choices(self) -> tuple[str, ...]:
        return store_kinds()

    @choices.setter
    def choices(self, value: object) -> None:
        pass


_Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
_OPTIONS: list[_Decorator] = [  # click.option's and store_dir_option, applied in turn
    click.option("--store", "store_kind", type=StoreKind(), envvar="KG_STORE", default="embedded",
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

    command: Callable[..., Any] = wrapper
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


@contextmanager
def open_store(opts: StoreOptions, *, writable: bool = False, wait: bool = False) -> Iterator[Store]:
    """The store ``opts`` names (any kind in kg.store's registry), closed on leaving the block."""
    with open_kind(opts, writable=writable, wait=wait) as store:
        yield store
