"""`kg cypher QUERY`: read-only Cypher against the store, as a table or JSON."""

from __future__ import annotations

from typing import Any

import click
import orjson

from kg.cli.main import json_option
from kg.cli.stores import StoreOptions, open_store, store_options
from kg.errors import InputError


def parse_param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE``; VALUE is JSON when it parses as JSON (``5``, ``true``, ``["a"]``), else a string."""
    name, sep, raw = text.partition("=")
    if not sep or not name.isidentifier():
        raise InputError(f"--param {text!r}: expected NAME=VALUE")
    try:
        return name, orjson.loads(raw)
    except orjson.JSONDecodeError:
        return name, raw


CELL_WIDTH = 60  # characters a table cell shows, unless --wide


def _cell(v: Any, width: int | None = CELL_WIDTH) -> str:
    s = v if isinstance(v, str) else orjson.dumps(v).decode()
    s = " ".join(s.split())  # one line a row, always
    return s if width is None or len(s) <= width else s[: width - 1] + "…"


def format_table(columns: list[str], rows: list[list[Any]], *, width: int | None = CELL_WIDTH) -> str:
    """Columns padded to their widest cell; each cell cut at ``width`` characters with '…' (None: whole)."""
    cells = [[_cell(v, width) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(out)


@click.command()
@click.argument("query")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE", help="A query parameter (repeatable).")
@click.option("--max-rows", default=1000, show_default=True, help="Return at most this many rows.")
@click.option("--timeout", "timeout_s", default=10.0, show_default=True, help="Stop the query after this many seconds.")
@click.option("--wide", is_flag=True, help=f"Show whole cells (else each is cut at {CELL_WIDTH} characters).")
@store_options
@json_option
def cypher(query: str, params: tuple[str, ...], max_rows: int, timeout_s: float, wide: bool, store_opts: StoreOptions,
           as_json: bool) -> None:
    """Run a read-only Cypher QUERY; write clauses are refused and change nothing.

    Example: kg cypher 'MATCH (p:Paper)-[:EVALUATES_ON]->(d:Dataset {name: $d}) RETURN p.title' --param d=CIFAR-10
    """
    parameters = dict(parse_param(p) for p in params)
    with open_store(store_opts) as store:
        r = store.cypher(query, parameters, max_rows=max_rows, timeout_s=timeout_s)
    if as_json:
        click.echo(orjson.dumps(r.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode())
        return
    click.echo(format_table(r.columns, r.rows, width=None if wide else CELL_WIDTH))
    click.echo(f"\n{len(r.rows)} row{'s' * (len(r.rows) != 1)}" + (f" (capped at {max_rows})" if r.truncated else ""),
               err=True)
