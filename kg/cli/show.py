"""`kg stats`, `kg paper ID`, `kg entity NAME`: what the graph holds, for terminals or (--json) scripts."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import click
import orjson
from pydantic import BaseModel

from kg.cli.main import json_option
from kg.cli.stores import StoreOptions, open_store, store_options
from kg.errors import NotFoundError

if TYPE_CHECKING:
    from kg.store.base import Store


def did_you_mean(store: Store, name: str, k: int = 3) -> str:
    """``; did you mean: mutual information, ...?`` from the fuzzy entity search, or "" when nothing is close."""
    names = []
    for hit in store.list_entities(q=name, limit=10).items:  # names alone: search would rank papers by meaning
        if hit.name not in names:
            names.append(hit.name)
    return f"; did you mean: {', '.join(names[:k])}?" if names else ""


def _json(model: BaseModel) -> None:
    click.echo(orjson.dumps(model.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode())


def _wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(" ".join(text.split()), width=100, initial_indent=indent, subsequent_indent=indent)


def quote(text: str, indent: str) -> str:
    """The text in “curly quotes”, wrapped: the opening mark only on the first line, the rest aligned after it."""
    return textwrap.fill(" ".join(text.split()), width=100, initial_indent=indent + "“",
                         subsequent_indent=indent + " ") + "”"


@click.command()
@store_options
@json_option
def stats(store_opts: StoreOptions, as_json: bool) -> None:
    """Counts of papers, entities and edges by type."""
    with open_store(store_opts) as store:
        st = store.stats()
    if as_json:
        return _json(st)
    click.echo(f"papers    {st.papers}\nentities  {st.entities}\nedges     {st.edges}\n"
               f"authors   {st.authors}\nvenues    {st.venues}")
    click.echo("\nentities by type")
    for t, n in sorted(st.entities_by_type.items(), key=lambda kv: -kv[1]):
        click.echo(f"  {t:<14}{n:>8}")
    click.echo("\nedges by type")
    for t, n in sorted(st.edges_by_type.items(), key=lambda kv: -kv[1]):
        click.echo(f"  {t:<14}{n:>8}")


@click.command()
@click.argument("paper_id")
@store_options
@json_option
@click.option("-k", "k", default=5, show_default=True, help="How many related papers to list.")
def paper(paper_id: str, store_opts: StoreOptions, as_json: bool, k: int) -> None:
    """A paper, its entities by edge type with evidence, and its related papers."""
    with open_store(store_opts) as store:
        p = store.get_paper(paper_id)
        related = store.related_papers(paper_id, k)
    if as_json:
        click.echo(orjson.dumps({**p.model_dump(mode="json"), "related": [r.model_dump(mode="json") for r in related]},
                                option=orjson.OPT_INDENT_2).decode())
        return
    click.secho(p.title, bold=True)
    click.echo(f"{p.id} · {p.venue or '?'} {p.year or ''}" + (f" · {', '.join(p.authors[:5])}" if p.authors else ""))
    click.echo(_wrap(p.abstract))
    for edge, items in p.entities.items():
        click.secho(f"\n{edge} ({len(items)})", bold=True)
        for pe in items:
            click.echo(f"  {pe.entity.name}  [{pe.entity.type}, {pe.entity.id}]")
    if related:
        click.secho("\nRELATED", bold=True)
        for r in related:
            click.echo(f"  {r.score:.3f}  {r.paper.title}  [{r.paper.id}]")
            click.echo(f"         why: {r.why}")


@click.command()
@click.argument("query", nargs=-1, required=True)
@store_options
@json_option
@click.option("--limit", default=10, show_default=True, help="How many hits to list.")
def search(query: tuple[str, ...], store_opts: StoreOptions, as_json: bool, limit: int) -> None:
    """Papers by meaning and words (BM25 fused with embeddings), each with its closest sentence, and entities by
    name or alias, in one ranked list."""
    q = " ".join(query)
    with open_store(store_opts) as store:
        hits = store.search(q, limit=limit)
    if as_json:
        click.echo(orjson.dumps([h.model_dump(mode="json") for h in hits], option=orjson.OPT_INDENT_2).decode())
        return
    if not hits:
        click.echo("(no match)")
    for h in hits:
        if h.kind == "paper":
            click.echo(f"{h.score:.3f}  paper   {h.name}  [{h.id}]")
            if h.sentence:
                click.echo(quote(h.sentence, " " * 15))
        else:
            click.echo(f"{h.score:.3f}  {h.type:<7} {h.name}  [{h.id}]" + (f"  (as {h.matched})"
                                                                           if h.matched != h.name else ""))


@click.command()
@click.argument("name")
@store_options
@json_option
@click.option("--limit", default=20, show_default=True, help="How many papers and neighbours to list.")
def entity(name: str, store_opts: StoreOptions, as_json: bool, limit: int) -> None:
    """An entity by id, name or alias: its aliases, papers (with evidence) and neighbours."""
    with open_store(store_opts) as store:
        try:
            eid = store.resolve_entity(name)
        except NotFoundError as exc:
            raise NotFoundError(str(exc) + did_you_mean(store, name)) from None
        e = store.get_entity(eid, paper_limit=limit, neighbour_limit=limit)
    if as_json:
        return _json(e)
    click.secho(f"{e.name}  [{e.type}, {e.id}]", bold=True)
    if e.forms:
        click.secho("FORMS", bold=True)  # every other name this node holds, and why it is this node
        width = min(max(len(f.form) for f in e.forms), 40)
        for f in e.forms:
            click.echo(f"  {f.form:<{width}}  {f.why}" if f.why else f"  {f.form}")
    click.echo(f"{e.paper_count} papers, {e.mention_count} mentions")
    click.secho("\nPAPERS", bold=True)
    for ep in e.papers:
        click.echo(f"  {ep.edge:<13}{ep.paper.title}  [{ep.paper.id}]")
        click.echo(quote(ep.evidence.sentence, " " * 15))
    if e.neighbours:
        click.secho("\nNEIGHBOURS", bold=True)
        for nb in e.neighbours:
            arrow = f"-[{nb.edge}]->" if nb.direction == "out" else f"<-[{nb.edge}]-"
            click.echo(f"  {arrow} {nb.entity.name} [{nb.entity.type}]  ({nb.count} paper{'s' * (nb.count != 1)})")
