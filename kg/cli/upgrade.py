"""`kg upgrade`: save an embedded store made by an older kg in the current format, its graph unchanged."""

from __future__ import annotations

import click

from kg.cli.main import store_dir_option


@click.command()
@store_dir_option
def upgrade(store_dir: str) -> None:
    """Rewrite a store made by an older kg (graph.jsonl beside graph.snapshot) as graph.snapshot alone.

    Its extraction log is compressed line by line, each line kept as it is otherwise.

    The graph is not derived again: the stored graph is written as it is, so its answers stay the same
    (a `kg build` into the store upgrades it too, deriving the graph with this kg). A store whose name keys
    older matching rules made gets today's (else every open makes them afresh). Takes the store's write lock.
    """
    from pathlib import Path

    from kg.errors import InputError
    from kg.store.embedded import GRAPH_FILE, OLDER_GRAPH_FILES, SNAPSHOT_FILE, EmbeddedStore
    from kg.store.snapshot import VERSION

    if not any((Path(store_dir) / f).exists() for f in (SNAPSHOT_FILE, *OLDER_GRAPH_FILES)):
        raise InputError(f"{store_dir}: no kg store here (no {SNAPSHOT_FILE} or {GRAPH_FILE}); nothing to upgrade")
    with EmbeddedStore(store_dir, writable=True) as store:
        if not store.upgrade():
            click.echo(f"{store_dir}: already in the current format")
            return
    click.echo(f"{store_dir}: upgraded to the current format (snapshot format {VERSION}, its full-text index "
               f"checksummed, the extraction log compressed)")
