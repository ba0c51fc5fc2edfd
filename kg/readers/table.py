"""CSV and TSV exports (OpenReview, conference sites, Zotero, spreadsheets): a header row names the columns."""

from __future__ import annotations

import codecs
import csv
import io
import re
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from kg.errors import InputError
from kg.readers.base import (
    MAX_LINE_BYTES,
    UNREADABLE,
    PaperRecord,
    Skip,
    bounded_lines,
    make_record,
    opener,
    parse_date,
    read_lines,
    split_authors,
    unreadable,
)
from kg.readers.ids import arxiv_id, paper_id

# Column names (case-folded, spaces/underscores/hyphens as one space) -> the field they fill; first match wins.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "abstract": ("abstract", "summary", "abstract note", "abstractnote", "paper abstract", "description"),
    "title": ("title", "paper title", "article title", "document title", "name"),
    "id": ("id", "paper id", "paperid", "key", "uid", "openreview id", "forum"),
    "doi": ("doi",),
    "arxiv_id": ("arxiv id", "arxiv", "arxivid", "eprint"),
    "url": ("url", "link", "pdf", "landing page"),  # used only when it is an arXiv link
    "year": ("year", "publication year", "pub year"),
    "published": ("date", "publication date", "published", "pubdate", "date published"),
    "venue": ("venue", "journal", "booktitle", "conference", "publication title", "source title", "source"),
    "authors": ("authors", "author", "author names", "author(s)", "creators"),
}
FIELDS = tuple(SYNONYMS)
_LONG = "\ue000kg-long-line\ue000"  # stands for a line over MAX_LINE_BYTES; a row holding it is skipped
_BAD_UTF8 = re.compile(r"[\udc80-\udcff]")  # what surrogateescape makes of bytes that are not UTF-8

if csv.field_size_limit() < MAX_LINE_BYTES:  # the default (128 KiB) is less than the longest abstract kg reads
    csv.field_size_limit(MAX_LINE_BYTES)


def _norm(name: str) -> str:
    return " ".join(re.sub(r"[_\-]+", " ", name.removeprefix("\ufeff")).casefold().split())


def parse_map(items: Mapping[str, str] | list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["Paper Abstract=abstract"]`` -> {"paper abstract": "abstract"}; an unknown field is an InputError."""
    pairs = items.items() if isinstance(items, Mapping) else [i.partition("=")[::2] for i in items]
    out = {}
    for col, fld in pairs:
        if not col.strip() or fld.strip().lower() not in FIELDS:
            raise InputError(f"--map {col}={fld}: expected COLUMN=FIELD with FIELD one of {', '.join(FIELDS)}")
        out[_norm(col)] = fld.strip().lower()
    return out


def map_columns(header: list[str], column_map: Mapping[str, str] | None = None) -> dict[str, int]:
    """Field -> column index: the user's ``--map`` first, then the synonyms, each column used once."""
    names = [_norm(h) for h in header]
    roles: dict[str, int] = {}
    for col, fld in (column_map or {}).items():
        if col in names and fld not in roles:
            roles[fld] = names.index(col)
    used = set(roles.values())
    for fld, syns in SYNONYMS.items():
        if fld in roles:
            continue
        for s in syns:
            if s in names and names.index(s) not in used:
                roles[fld] = names.index(s)
                used.add(roles[fld])
                break
    return roles


def _text_lines(path: Path, trailer: list[Skip]) -> Iterator[str]:
    """Decoded lines: UTF-16 with a byte-order mark as such, else UTF-8 with bad bytes kept as surrogates so the
    row holding them is skipped, not the file. Either way within the reading limits (``bounded_lines``); a line
    over them is ``_LONG``. An unreadable tail goes into ``trailer``."""
    try:
        with opener(path)(path, "rb") as fh:
            bom = fh.read(2)
    except (EOFError, OSError, zlib.error) as exc:
        trailer.append(unreadable(path, exc))
        return
    if bom in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        try:
            with opener(path)(path, "rb") as fh, io.TextIOWrapper(fh, encoding="utf-16", newline="") as text:
                for _, line in bounded_lines(path, text.readline):
                    if isinstance(line, Skip) and line.reason == UNREADABLE:
                        trailer.append(line)
                        return
                    yield _LONG + "\n" if isinstance(line, Skip) else line
        except UnicodeDecodeError as exc:
            trailer.append(Skip(f"{path}", UNREADABLE, f"not valid UTF-16 ({exc.reason}); stopped reading"))
        except (EOFError, OSError, zlib.error) as exc:
            trailer.append(unreadable(path, exc, stopped=True))
        return
    for n, raw in read_lines(path):
        if isinstance(raw, Skip):
            if raw.reason == UNREADABLE:
                trailer.append(raw)
                return
            yield _LONG + "\n"
            continue
        line = raw.decode("utf-8", "surrogateescape")
        yield line.removeprefix("\ufeff") if n == 1 else line


def _delimiter(path: Path, header: str) -> str:
    if path.name.removesuffix(".gz").endswith((".tsv", ".tab")):
        return "\t"
    counts = {d: header.count(d) for d in (",", ";", "\t", "|")}  # Excel in many locales writes ';'
    return max(counts, key=lambda d: (counts[d], d == ","))


def read_table(path: Path, column_map: Mapping[str, str] | None = None) -> Iterator[PaperRecord | Skip]:
    """One paper per row; the header row names the columns (see SYNONYMS, or ``--map COLUMN=FIELD``)."""
    trailer: list[Skip] = []
    consumed = 0  # physical lines read so far, for "file:line" (a quoted field may span lines)

    def counted() -> Iterator[str]:
        nonlocal consumed
        for line in _text_lines(path, trailer):
            consumed += 1
            yield line

    lines = counted()
    first = next((ln for ln in lines if ln.strip()), None)
    if first is None:
        yield from trailer
        return
    if first.startswith(_LONG):  # no header to read the rows by
        yield Skip(f"{path}:{consumed}", "line too long", f"the header row is over {MAX_LINE_BYTES:,} bytes; "
                                                          f"stopped reading")
        yield from trailer
        return
    delim = _delimiter(path, first)
    header = next(csv.reader([first], delimiter=delim), [])
    roles = map_columns(header, column_map)
    if "abstract" not in roles:
        cols = ", ".join(repr(_short(h.strip())) for h in header[:12]) + (", ..." if len(header) > 12 else "")
        yield Skip(f"{path}:{consumed}", "no abstract column",
                   f"header: {cols}; name it with --map COLUMN=abstract")
        return
    reader = csv.reader(lines, delimiter=delim)
    while True:
        start = consumed + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            yield Skip(f"{path}:{start}", "malformed CSV row", str(exc))
            continue
        if any(c.strip() for c in row):
            yield _row_record(row, roles, f"{path}:{start}")
    yield from trailer


def _row_record(row: list[str], roles: dict[str, int], where: str) -> PaperRecord | Skip:
    if any(_LONG in c for c in row):
        return Skip(where, "line too long", f"over {MAX_LINE_BYTES:,} bytes")
    if any(_BAD_UTF8.search(c) for c in row):
        return Skip(where, "not valid UTF-8", "save the file as UTF-8")
    v = {f: (row[i].strip() or None) if i < len(row) else None for f, i in roles.items()}
    given_year = v.get("year")
    year: str | int | None = given_year
    published: str | None = None
    authors = v.get("authors")
    if v.get("published"):
        y, published = parse_date(v["published"])
        year = year or y
    elif given_year and not given_year.isdecimal():  # "2021-05-03" in a year column
        y, _ = parse_date(given_year)
        year = y if y is not None else given_year
    return make_record(where, abstract=v.get("abstract"), title=v.get("title"), year=year, venue=v.get("venue"),
                       id=paper_id(arxiv=v.get("arxiv_id") or arxiv_id(v.get("id")) or v.get("url"), doi=v.get("doi"),
                                   own=v.get("id")),
                       authors=split_authors(authors) if authors else None, published=published)


def _short(name: str, limit: int = 60) -> str:
    """A column name as a warning shows it: cut at ``limit`` characters (a header row may be megabytes long)."""
    return name if len(name) <= limit else name[: limit - 1] + "…"
