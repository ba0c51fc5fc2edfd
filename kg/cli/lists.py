"""`kg papers [QUERY]` and `kg entities`: the store's papers (filtered, or found by words) and entities, as tables
or (--json) one array, the API's /papers and /entities listings from the terminal."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import click
import orjson

from kg.cli.cypher import CELL_WIDTH, format_table
from kg.cli.main import json_option
from kg.cli.show import did_you_mean
from kg.cli.stores import StoreOptions, open_store, store_options
from kg.errors import InputError, NotFoundError
from kg.graph import ENTITY_LABELS
from kg.models import Page, PaperSummary

if TYPE_CHECKING:
    from pydantic import BaseModel

    from kg.store.base import Store


def _wide_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--wide", is_flag=True, help=f"Show whole cells (else each is cut at {CELL_WIDTH} "
                                                     "characters).")(f)


def _print(items: Sequence[BaseModel], columns: list[str], rows: list[list[object]], shown: str, as_json: bool,
           wide: bool) -> None:
    """One JSON array on stdout (as kg search), else a table there and the count on stderr (as kg cypher)."""
    if as_json:
        click.echo(orjson.dumps([i.model_dump(mode="json") for i in items], option=orjson.OPT_INDENT_2).decode())
        return
    click.echo(format_table(columns, rows, width=None if wide else CELL_WIDTH))
    click.echo(f"\n{shown}", err=True)


def parse_entity_filter(spec: str) -> tuple[str | None, str]:
    """``dataset:CIFAR-10`` -> ("dataset", "CIFAR-10"); a prefix that is no entity type is part of the name."""
    head, sep, rest = spec.partition(":")
    if sep and head.strip().lower() in ENTITY_LABELS and rest.strip():
        return head.strip().lower(), rest.strip()
    return None, spec.strip()


def resolve_typed(store: Store, spec: str) -> str:
    """The id of the entity ``[TYPE:]NAME`` names (id, name or alias, as ``kg entity``); with a TYPE, one of that
    type, else NotFoundError saying what the name is and suggesting names."""
    type_, name = parse_entity_filter(spec)
    if not name:
        raise InputError(f"--entity {spec!r}: expected [TYPE:]NAME")
    try:
        eid = store.resolve_entity(name)
    except NotFoundError as exc:
        raise NotFoundError(str(exc) + did_you_mean(store, name, type=type_)) from None
    if type_ is None:
        return eid
    found = store.get_entity(eid, paper_limit=1, neighbour_limit=1)
    if found.type == type_:
        return eid
    # The name's own entity is of another type: a same-named entity of this type (listed by name) if there is one.
    key = " ".join(name.casefold().split())
    for e in store.list_entities(type=type_, q=name, limit=20).items:
        if key in {" ".join(n.casefold().split()) for n in (e.name, *e.aliases)}:
            return e.id
    raise NotFoundError(f"no {type_} named '{name}' ('{found.name}' is a {found.type})"
                        + did_you_mean(store, name, type=type_))


class _PaperFilters(TypedDict, total=False):
    """The filters of ``Store.list_papers``."""

    q: str | None
    year: int | None
    venue: str | None
    entity: str | None


def _all(store: Store, **filters: Unpack[_PaperFilters]) -> Page[PaperSummary]:
    """Every paper ``list_papers`` gives for these filters, in its order."""
    page = store.list_papers(limit=1, **filters)
    return store.list_papers(limit=page.total, **filters) if page.total > 1 else page


def find_papers(store: Store, q: str | None, *, year: int | None, venue: str | None, entities: list[str],
                limit: int) -> Page[PaperSummary]:
    """``store.list_papers`` (BM25 over title and abstract when ``q``, else newest first) linked to every one of
    the entity ids; the total counts every match, ``items`` the first ``limit``."""
    filters: _PaperFilters = {"q": q, "year": year, "venue": venue, "entity": entities[0] if entities else None}
    if len(entities) <= 1:
        return store.list_papers(limit=limit, **filters)
    # list_papers takes one entity: the papers of the others are intersected with its list, keeping its order.
    others = [{p.id for p in _all(store, entity=e).items} for e in entities[1:]]
    hits = [p for p in _all(store, **filters).items if all(p.id in o for o in others)]
    return Page[PaperSummary](total=len(hits), limit=limit, offset=0, items=hits[:limit])


@click.command()
@click.argument("query", nargs=-1)
@click.option("--year", type=int, help="Only papers of this year.")
@click.option("--venue", help="Only papers of this venue (exact name, any case).")
@click.option("--entity", "--type-of-entity", "entity_specs", multiple=True, metavar="[TYPE:]NAME",
              help="Only papers linked to this entity: an id, name or alias, with its type to pick among "
                   "same-named ones (dataset:ImageNet); repeatable, papers linked to all.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1), help="How many papers to list.")
@_wide_option
@store_options
@json_option
def papers(query: tuple[str, ...], year: int | None, venue: str | None, entity_specs: tuple[str, ...], limit: int,
           wide: bool, store_opts: StoreOptions, as_json: bool) -> None:
    """Papers, newest first; with QUERY, those holding all its words in title or abstract, best match first
    (`kg search` ranks by meaning instead).

    Example: kg papers quantization --year 2025 --entity task:"image classification"
    """
    q = " ".join(query).strip() or None
    with open_store(store_opts) as store:
        eids = [resolve_typed(store, s) for s in entity_specs]
        page = find_papers(store, q, year=year, venue=venue, entities=eids, limit=limit)
    rows: list[list[object]] = [[p.year or "", p.venue or "", p.title, p.entity_count, p.id] for p in page.items]
    shown = f"{len(page.items)} of {page.total} paper{'s' * (page.total != 1)}"
    _print(page.items, ["year", "venue", "title", "entities", "id"], rows,
           shown + (" (--limit for more)" if page.total > len(page.items) else ""), as_json, wide)


@click.command()
@click.option("--type", "type_", type=click.Choice(list(ENTITY_LABELS)), help="Only entities of this type.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1), help="How many entities to list.")
@_wide_option
@store_options
@json_option
def entities(type_: str | None, limit: int, wide: bool, store_opts: StoreOptions, as_json: bool) -> None:
    """Entities, those in the most papers first (`kg entity NAME` shows one)."""
    with open_store(store_opts) as store:
        page = store.list_entities(type=type_, limit=limit)
    rows = [[e.paper_count, e.mention_count, e.type, e.name, e.id, ", ".join(e.aliases)] for e in page.items]
    what = f"{type_} entit" if type_ else "entit"
    shown = f"{len(page.items)} of {page.total} {what}{'ies' if page.total != 1 else 'y'}"
    _print(page.items, ["papers", "mentions", "type", "name", "id", "aliases"], rows,
           shown + (" (--limit for more)" if page.total > len(page.items) else ""), as_json, wide)
