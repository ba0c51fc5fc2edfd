"""`kg build`: ingest abstracts into a store and print a summary."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import orjson

from kg.build import build as run_build
from kg.build import count_records
from kg.cli.main import json_option
from kg.cli.stores import StoreOptions, open_store, store_options
from kg.errors import InputError
from kg.procs import usable_cores
from kg.progress import Progress
from kg.readers import expand_paths, parse_map
from kg.resolve import Overrides


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@store_options
@click.option("--wait", is_flag=True, help="Wait for another build holding the store instead of failing.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Extraction processes (each loads its own spaCy pipeline, about 250 MB).")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="A progress bar with rate and ETA on a terminal; a line every 30 s otherwise.")
@click.option("--map", "column_map", multiple=True, metavar="COLUMN=FIELD",
              help="CSV/TSV: read COLUMN as FIELD (abstract, title, id, doi, arxiv_id, year, published, venue, "
                   "authors); repeatable. Common column names are known without it.")
@click.option("--overrides", "overrides_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Entity-resolution corrections ('split: A | B', 'merge: A = B', one a line), kept by the store "
                   "for every later build; an empty file drops them.")
@json_option
def build(paths: tuple[str, ...], store_opts: StoreOptions, wait: bool, jobs: int, progress: bool,
          column_map: tuple[str, ...], overrides_file: str | None, as_json: bool) -> None:
    """Read papers from PATHS (files or directories) into the graph.

    Formats, by extension and checked against the content: seed lists (.txt), JSON Lines (.jsonl), JSON (.json:
    kg records, OpenAlex works, Semantic Scholar papers), CSV/TSV with a header row, BibTeX (.bib) and arXiv
    API Atom feeds (.atom, .xml); any of them gzipped (.gz). Re-building the same input changes nothing;
    building another corpus into the same store merges. Without PATHS, the store is derived again from its
    extraction log: what puts right a store whose graph or index is damaged.
    """
    cmap = parse_map(column_map) if column_map else None  # a bad --map fails before the store is touched
    overrides = Overrides.read(overrides_file) if overrides_file else None  # so does a bad overrides file
    if paths:
        for _ in expand_paths(paths):  # so do a missing path, a FIFO or a device named, a folder of no papers
            pass
    elif not _has_log(store_opts):
        raise InputError(f"name the files or folders of papers to read; without them `kg build` derives a store "
                         f"again from its extraction log, and {store_opts.label()} has none")
    cpus = usable_cores()
    if jobs > cpus:
        click.echo(f"kg: warning: --jobs {jobs} is more than the {cpus} CPUs available; extraction will not "
                   f"get faster", err=True)
    fresh = _first_missing(Path(store_opts.store_dir)) if store_opts.kind == "embedded" else None
    ok = False
    try:
        with open_store(store_opts, writable=True, wait=wait) as store:
            bar = Progress(count_records(paths)) if progress else None
            s = run_build(paths, store, jobs=jobs, on_progress=bar, column_map=cmap, overrides=overrides)
            if bar:
                bar.finish()
        ok = s.read > 0 or not paths
    finally:
        if fresh is not None and not ok:
            _remove_new_store(Path(store_opts.store_dir), fresh)
    st = s.stats
    assert st is not None
    if as_json:
        click.echo(orjson.dumps({"read": s.read, "extracted": s.extracted, "reused": s.reused,
                                 "skipped": dict(s.skipped), "seconds": round(s.seconds, 3),
                                 "extract_seconds": round(s.extract_seconds, 3),
                                 "derive_seconds": round(s.derive_seconds, 3),
                                 "save_seconds": round(s.save_seconds, 3),
                                 "stats": st.model_dump()}, option=orjson.OPT_INDENT_2).decode())
    else:
        skipped = sum(s.skipped.values())
        click.echo(f"read {_papers(s.read)} ({s.extracted} extracted, {s.reused} unchanged), skipped {skipped}"
                   + (" (" + ", ".join(f"{n} {r}" for r, n in s.skipped.most_common()) + ")" if skipped else ""))
        click.echo(f"store {store_opts.label()}: {_papers(st.papers)}, {st.entities} entities, {st.edges} edges "
                   f"in {s.seconds:.1f} s")
        click.echo("entities: " + ", ".join(f"{t} {n}" for t, n in sorted(st.entities_by_type.items(),
                                                                          key=lambda kv: -kv[1])))
        click.echo("edges:    " + ", ".join(f"{t} {n}" for t, n in sorted(st.edges_by_type.items(),
                                                                          key=lambda kv: -kv[1])))
    if s.read == 0 and paths:
        raise InputError("no paper could be read from " + ", ".join(paths))
    sys.stdout.flush()


def _has_log(opts: StoreOptions) -> bool:
    """Whether the store keeps an extraction log to derive it from (every kind but the embedded store is
    asked when it opens)."""
    if opts.kind != "embedded":
        return True
    return (Path(opts.store_dir) / "inputs.jsonl").exists()


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (the build will make it), else None."""
    missing = None
    for p in (path, *path.parents):
        if p.exists():
            break
        missing = p
    return missing


def _remove_new_store(path: Path, top: Path) -> None:
    """A build that made its store folder and read no paper takes the folder away again (up to ``top``, the first
    folder it made), instead of leaving one that holds only ``.lock`` or an empty graph."""
    try:
        for name in (".lock", "graph.jsonl", "graph.snapshot", "inputs.jsonl"):
            (path / name).unlink(missing_ok=True)
        for p in (path, *path.parents):
            p.rmdir()  # fails, and stops, at a folder something else has put a file into
            if p == top:
                break
    except OSError:  # the build's own error is what the user needs to see
        pass


def _papers(n: int) -> str:
    return f"{n} paper{'' if n == 1 else 's'}"
