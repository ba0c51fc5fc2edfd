"""`kg leaderboard DATASET`: the results papers report on a dataset, ranked per metric (kg.leaderboard)."""

from __future__ import annotations

import click
import orjson

from kg.cli.cypher import CELL_WIDTH, format_table
from kg.cli.main import json_option
from kg.cli.show import did_you_mean
from kg.cli.stores import StoreOptions, open_store, store_options
from kg.errors import NotFoundError
from kg.leaderboard import KINDS, leaderboard
from kg.models import Leaderboard, LeaderboardGroup

TITLE_WIDTH = 40  # a paper's title in the table, unless --wide


def _cut(text: str, width: int | None) -> str:
    text = " ".join(text.split())
    return text if width is None or len(text) <= width else text[: width - 1].rstrip() + "…"


def group_heading(g: LeaderboardGroup) -> str:
    """``accuracy · score in percent · higher is better · 4 of 5 papers and systems``."""
    how = (f"{g.direction} is better" if g.ranked else
           "gains against their own baselines, not ranked" if g.kind == "gain" else "direction unknown, not ranked")
    shown = f"{len(g.rows)} of {g.total}" if len(g.rows) < g.total else f"{g.total}"
    return (f"{g.metric or '(metric not named)'} · {g.kind} in {g.unit} · {how} · {shown} "
            f"row{'s' * (g.total != 1)}")


def print_leaderboard(lb: Leaderboard, *, wide: bool = False) -> None:
    """The groups as tables (rank, value, system, year, paper, sentence) on stdout, counts on stderr."""
    d = lb.dataset
    counts = ", ".join(f"{n} {k}{'s' * (n != 1)}" for k, n in lb.results.items()) or "no results"
    click.secho(f"{d.name}  [{d.type}, {d.id}] · {counts}", bold=True)
    width = None if wide else CELL_WIDTH
    for g in lb.groups:
        click.secho(f"\n{group_heading(g)}", bold=True)
        rows: list[list[object]] = [
            [r.rank if r.rank is not None else "-", r.text, r.system or "", r.year or "", r.paper_id,
             _cut(r.paper_title, None if wide else TITLE_WIDTH), r.sentence] for r in g.rows]
        click.echo(format_table(["rank", "value", "system", "year", "paper", "title", "sentence"], rows, width=width))
    if lb.note:
        click.echo(f"\n{lb.note}", err=True)
    cut = any(len(g.rows) < g.total for g in lb.groups)
    n = sum(len(g.rows) for g in lb.groups)
    click.echo(f"\n{n} row{'s' * (n != 1)} in {len(lb.groups)} group{'s' * (len(lb.groups) != 1)}"
               + (" (--limit for more)" if cut else ""), err=True)


@click.command()
@click.argument("dataset")
@click.option("--metric", help="Only this metric (a name or alias, as the abstracts write it or kg entity knows it).")
@click.option("--kind", type=click.Choice(list(KINDS)), default="score", show_default=True,
              help="Scores (levels reached) or gains (differences and ratios against a baseline).")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1), help="Rows per metric.")
@click.option("--wide", is_flag=True, help=f"Show whole cells (else each is cut at {CELL_WIDTH} characters).")
@store_options
@json_option
def leaderboard_cmd(dataset: str, metric: str | None, kind: str, limit: int, wide: bool, store_opts: StoreOptions,
                    as_json: bool) -> None:
    """The results papers report on DATASET (an id, name or alias), one table per metric: one row per paper and
    system, its best value, ranked in the metric's direction (lower is better for error, FID, perplexity,
    latency...; unknown metrics and gains unranked), with the sentence it comes from.

    Example: kg leaderboard GSM8K --metric accuracy
    """
    with open_store(store_opts) as store:
        try:
            store.resolve_entity(dataset)
        except NotFoundError as exc:
            raise NotFoundError(str(exc) + did_you_mean(store, dataset, type="dataset")) from None
        lb = leaderboard(store, dataset, kind=kind, metric=metric, limit=limit)
    if as_json:
        click.echo(orjson.dumps(lb.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode())
        return
    print_leaderboard(lb, wide=wide)
