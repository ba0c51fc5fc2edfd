"""`kg trends` (store-wide, or one entity's timeline with --entity) and `kg landscape NAME`, for terminals or --json."""

from __future__ import annotations

import click
import orjson

from kg.cli.main import json_option
from kg.cli.stores import StoreOptions, open_store, store_options
from kg.graph import ENTITY_LABELS
from kg.models import EntityTimeline, Landscape, TrendItem, Trends

_BARS = "·▁▂▃▄▅▆▇█"  # a dot for none, then eight heights


def spark(values: list[int]) -> str:
    """A one-line bar chart: each value as one of eight heights, scaled to the largest."""
    top = max(values, default=0)
    return "".join(_BARS[0 if v == 0 else 1 + round(7 * v / top) if top else 0] for v in values)


def _echo_json(model: Trends | EntityTimeline | Landscape) -> None:
    click.echo(orjson.dumps(model.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode())


def _print_items(title: str, items: list[TrendItem]) -> None:
    click.secho(f"\n{title}", bold=True)
    if not items:
        click.echo("  (none)")
    width = max((len(it.entity.name[:40]) for it in items), default=0)
    for it in items:
        click.echo(f"  {it.score:+6.2f}  {it.entity.name[:40]:<{width}}  {it.entity.type:<8} "
                   f"{it.before:>5} -> {it.after:<5} {100 * it.before_share:5.2f}% -> {100 * it.after_share:5.2f}%"
                   f"  {spark(it.series)}")


def print_trends(t: Trends) -> None:
    if t.before is None or t.after is None:
        click.echo(t.note)
        return
    click.echo(f"{t.before.label} ({t.before.papers} papers) -> {t.after.label} ({t.after.papers} papers)"
               f"{', ' + t.type + ' entities' if t.type else ''}; ranked with at least {t.min_count} papers in one "
               f"period; score = ln of the share ratio, one paper added to each count"
               + (f"\nnote: {t.note}" if t.note else ""))
    click.echo(f"bars: papers per {t.bucket}, {t.buckets[0]} .. {t.buckets[-1]}" if t.buckets else "")
    _print_items("RISING", t.rising)
    _print_items("FALLING", t.falling)
    _print_items(f"NEW IN {t.after.label}", t.new)


def print_timeline(t: EntityTimeline) -> None:
    click.secho(f"{t.entity.name}  [{t.entity.type}, {t.entity.id}]  {t.papers} papers", bold=True)
    for p in t.years:
        click.echo(f"  {p.period:<8}{p.papers:>6}  {100 * p.share:6.2f}% of {p.total}")
    if t.months:
        click.echo(f"  by month ({t.months[0].period} .. {t.months[-1].period}): {spark([p.papers for p in t.months])}")
    if t.no_year:
        click.echo(f"  {t.no_year} papers have no year")


@click.command()
@store_options
@json_option
@click.option("--type", "type_", type=click.Choice(list(ENTITY_LABELS)), help="Only entities of this type.")
@click.option("--from", "before", metavar="PERIOD",
              help="Earlier period: 2025, 2025-H2, 2025-Q3, 2025-07, 2025-07-14 or A..B.")
@click.option("--to", "after", metavar="PERIOD", help="Later period, compared with the earlier one.")
@click.option("--limit", default=15, show_default=True, help="Entities per list.")
@click.option("--min-count", default=5, show_default=True,
              help="Papers an entity needs in one of the periods to be ranked.")
@click.option("--entity", metavar="NAME", help="Instead: this entity's papers per year and month.")
def trends(store_opts: StoreOptions, as_json: bool, type_: str | None, before: str | None, after: str | None,
           limit: int, min_count: int, entity: str | None) -> None:
    """Entities rising, falling and new between two periods (default: the last full year against the one
    before, else the two halves of the dated range); or, with --entity, one entity's timeline."""
    with open_store(store_opts) as store:
        if entity is not None:
            tl = store.timeline(store.resolve_entity(entity))
            return _echo_json(tl) if as_json else print_timeline(tl)
        t = store.trends(type=type_, before=before, after=after, limit=limit, min_count=min_count)
    return _echo_json(t) if as_json else print_trends(t)


@click.command()
@click.argument("name")
@store_options
@json_option
@click.option("--limit", default=12, show_default=True, help="Rows and columns at most.")
def landscape(name: str, store_opts: StoreOptions, as_json: bool, limit: int) -> None:
    """A task's methods and models against the datasets they are evaluated on (a dataset's: against its tasks),
    each cell the number of papers linking both."""
    with open_store(store_opts) as store:
        ls = store.landscape(store.resolve_entity(name), limit=limit, cell_limit=3)
    if as_json:
        return _echo_json(ls)
    click.secho(f"{ls.entity.name}  [{ls.entity.type}, {ls.entity.id}]  {ls.note}", bold=True)
    count = {(c.row, c.column): c.count for c in ls.cells}
    # Whole names: each column is a number in the table and named in full above it.
    for i, a in enumerate(ls.columns, 1):
        click.echo(f"  [{i}] {a.entity.name} ({a.papers} paper{'' if a.papers == 1 else 's'})")
    cw = max((len(f"[{i}]") for i in range(1, len(ls.columns) + 1)), default=3)
    w = max((len(a.entity.name) for a in ls.rows), default=4)
    click.echo(" " * (w + 8) + " ".join(f"{f'[{i}]':>{cw}}" for i in range(1, len(ls.columns) + 1)))
    for r in ls.rows:
        cells = " ".join(f"{count.get((r.entity.id, c.entity.id), 0) or '·':>{cw}}" for c in ls.columns)
        click.echo(f"{r.entity.name:<{w}} {r.papers:>6}  {cells}")
    if ls.metrics:
        click.echo("\nmetrics: " + ", ".join(f"{m.entity.name} ({m.papers})" for m in ls.metrics))
