"""`kg stats`, `kg paper ID|TITLE`, `kg entity NAME`, `kg search`: what the graph holds, for terminals or (--json)
scripts."""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

import click
import orjson
from pydantic import BaseModel

from kg.cli.main import json_option
from kg.cli.stores import StoreOptions, open_store, store_options
from kg.errors import NotFoundError

if TYPE_CHECKING:
    from kg.models import PaperDetail
    from kg.store.base import Store


def did_you_mean(store: Store, name: str, k: int = 3, *, type: str | None = None) -> str:
    """``; did you mean: mutual information, ...?`` from the fuzzy entity search (of ``type``'s entities first),
    or "" when nothing is close."""
    names: list[str] = []
    for t in dict.fromkeys((type, None)):
        for hit in store.list_entities(q=name, type=t, limit=10).items:  # names alone: search ranks by meaning
            if hit.name not in names:
                names.append(hit.name)
        if names:
            break
    return f"; did you mean: {', '.join(names[:k])}?" if names else ""


_COMMON = {"which", "these", "their", "there", "where", "using", "based", "about", "paper", "study"}


def _stems(text: str) -> set[str]:
    """The first five letters of each longer word: enough to see 'quantised' in 'quantized parameters'."""
    return {w[:5] for w in re.findall(r"[^\W\d_]{5,}", text.casefold()) if w not in _COMMON}


def _title_key(text: str) -> str:
    return " ".join(text.casefold().split())


def find_paper(store: Store, ref: str, k: int = 3) -> PaperDetail:
    """The paper ``ref`` names: by id; else the paper whose title it is (any case); else the one paper holding all
    its words (``list_papers``' word search). Ambiguous or not found: NotFoundError with suggestions (the word
    search's best matches, else the papers closest in meaning)."""
    try:
        return store.get_paper(ref)
    except NotFoundError:
        pass
    words = ref.strip()
    page = store.list_papers(q=words, limit=50) if words else None
    if page is not None:
        titled = [p for p in page.items if _title_key(p.title) == _title_key(ref)]
        if len(titled) == 1:
            return store.get_paper(titled[0].id)
        if page.total == 1:
            return store.get_paper(page.items[0].id)
    if page is not None and page.total > 1:
        close = titled or page.items
        raise NotFoundError(f"'{ref}' matches {page.total} papers; give an id or more of the title; did you mean: "
                            + ", ".join(f"{p.title} [{p.id}]" for p in close[:k]) + "?")
    # The papers closest in meaning, those sharing a word with it: search always ranks some papers first.
    hits = [h for h in store.search(words, limit=10) if h.kind == "paper"
            and _stems(ref) & _stems(f"{h.name} {h.sentence or ''}")][:k] if words else []
    hint = ("; did you mean: " + ", ".join(f"{h.name} [{h.id}]" for h in hits) + "?") if hits else ""
    raise NotFoundError(f"no paper with id, title or words '{ref}'" + hint)


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
    if st.results:  # reported results (kg leaderboard); a store built before issue 34 has none
        click.echo(f"results   {st.results}")
    click.echo("\nentities by type")
    for t, n in sorted(st.entities_by_type.items(), key=lambda kv: -kv[1]):
        click.echo(f"  {t:<14}{n:>8}")
    click.echo("\nedges by type")
    for t, n in sorted(st.edges_by_type.items(), key=lambda kv: -kv[1]):
        click.echo(f"  {t:<14}{n:>8}")


@click.command()
@click.argument("paper_ref", metavar="ID_OR_TITLE", nargs=-1, required=True)
@store_options
@json_option
@click.option("-k", "k", default=5, show_default=True, help="How many related papers to list.")
def paper(paper_ref: tuple[str, ...], store_opts: StoreOptions, as_json: bool, k: int) -> None:
    """A paper, its entities by edge type with evidence, and its related papers.

    The paper is named by its id, its title (any case), or words of its title or abstract that only it holds;
    when they fit several papers, the best matches are suggested.
    """
    with open_store(store_opts) as store:
        p = find_paper(store, " ".join(paper_ref))
        related = store.related_papers(p.id, k)
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
