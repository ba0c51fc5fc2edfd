"""`kg export`: the graph as GraphML (Gephi), JSON Lines, or the CSV files `neo4j-admin` imports."""

from __future__ import annotations

import click

from kg.cli.main import prepare_output
from kg.cli.stores import StoreOptions, open_store, store_options
from kg.export import FORMATS
from kg.export import export as run_export


@click.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True,
              help="graphml: one file for Gephi; jsonl: one node or edge a line; neo4j-csv: a directory.")
@click.option("-o", "--output", "output", type=click.Path(), required=True,
              help="File to write (a directory for neo4j-csv); its folders are made.")
@click.option("--import-database", default="neo4j", show_default=True,
              help="Database named in the printed neo4j-admin command.")
@store_options
def export(fmt: str, output: str, import_database: str, store_opts: StoreOptions) -> None:
    """Write the whole graph of a store (embedded or Neo4j) to a file other tools read."""
    prepare_output(output, folder=fmt == "neo4j-csv")  # folders made, and writing checked, before the store loads
    with open_store(store_opts) as store:
        result = run_export(store, fmt, output, database=import_database)
    where = output if fmt != "neo4j-csv" else f"{len(result.files)} files in {output}"
    click.echo(f"exported {result.nodes} nodes and {result.edges} edges as {fmt} to {where}")
    if result.command:
        click.echo("import them into a stopped Neo4j 5 server with:")
        click.echo(f"  {result.command}")
