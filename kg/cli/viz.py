"""`kg viz`: write an interactive HTML view of the graph to a file that works offline."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kg.cli.main import prepare_output, store_dir_option
from kg.graph import ENTITY_LABELS
from kg.store.embedded import EmbeddedStore

DEFAULT_LINK_BASE = "http://127.0.0.1:8000/view"  # where `kg serve` answers by default


def _types(value: str | None) -> list[str] | None:
    if not value:
        return None
    types = [t.strip().lower() for t in value.split(",") if t.strip()]
    for t in types:
        if t not in ENTITY_LABELS:
            raise click.BadParameter(f"unknown type '{t}'; choose from: {', '.join(ENTITY_LABELS)}",
                                     param_hint="--types")
    return types


@click.command()
@click.option("--paper", "paper_id", metavar="ID", help="Draw this paper, its entities and related papers.")
@click.option("--entity", "entity_ref", metavar="ID", help="Draw this entity (id, name or alias) and its surroundings.")
@click.option("--top", default=150, show_default=True, type=click.IntRange(1, 20_000),
              help="Overview: draw the top N entities by paper count.")
@click.option("--types", metavar="T,T", help=f"Overview: only these entity types ({','.join(ENTITY_LABELS)}).")
@click.option("--hops", default=1, show_default=True, type=click.IntRange(1, 2),
              help="Paper or entity: how many hops out to draw (1 or 2).")
@click.option("--limit", default=200, show_default=True, type=click.IntRange(1, 20_000),
              help="Paper or entity: at most this many nodes.")
@click.option("--link-base", default=DEFAULT_LINK_BASE, show_default=True,
              help="Clicking a node opens LINK_BASE/paper/ID or LINK_BASE/entity/ID; '' turns links off.")
@click.option("-o", "--output", required=True, type=click.Path(allow_dash=True),
              help="The HTML file to write ('-' for stdout); its folders are made.")
@store_dir_option
def viz(paper_id: str | None, entity_ref: str | None, top: int, types: str | None, hops: int, limit: int,
        link_base: str, output: str, store_dir: str) -> None:
    """Write an HTML view: the concept graph (default), or a paper's or an entity's neighbourhood.

    The page inlines its scripts and data, so it opens from disk with no network.
    """
    if paper_id and entity_ref:
        raise click.UsageError("give --paper or --entity, not both")
    prepare_output(output)  # `-o views/new/overview.html`: folders made, and writing checked, before the store loads
    from viz import entity_view, overview_view, paper_view  # viz imports kg, so only at call time

    store = EmbeddedStore(store_dir)
    if paper_id:
        rendered = paper_view(store, paper_id, hops=hops, limit=limit, link_base=link_base)
    elif entity_ref:
        rendered = entity_view(store, entity_ref, hops=hops, limit=limit, link_base=link_base)
    else:
        rendered = overview_view(store, top_n=top, types=_types(types), link_base=link_base)
    if output == "-":
        sys.stdout.write(rendered.html)
        return
    Path(output).write_text(rendered.html, encoding="utf-8")
    v = rendered.view
    click.echo(f"wrote {output}: {len(v.nodes)} nodes, {len(v.edges)} edges ({v.note})", err=True)
