"""Read papers from what researchers have: seed lists, JSON Lines, CSV/TSV, BibTeX, arXiv Atom, OpenAlex and
Semantic Scholar JSON; streaming where the format allows, every bad record a located skip."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from kg.errors import InputError
from kg.files import LINK_TO_NOWHERE, odd_file
from kg.readers.atom import read_atom
from kg.readers.base import (
    MAX_ABSTRACT_CHARS,
    MAX_FILE_BYTES,
    MAX_ID_CHARS,
    MAX_LINE_BYTES,
    MAX_LINES,
    MAX_NAME_CHARS,
    MAX_TITLE_CHARS,
    RECORD_SECONDS,
    UNREADABLE,
    PaperRecord,
    Skip,
    content_id,
    opener,
)
from kg.readers.bibtex import read_bibtex
from kg.readers.jsonl import read_json, read_jsonl, record_from_json
from kg.readers.seeds import parse_seed_header, read_seed_list
from kg.readers.table import FIELDS, map_columns, parse_map, read_table

__all__ = ["FIELDS", "FORMATS", "MAX_ABSTRACT_CHARS", "MAX_ID_CHARS", "MAX_LINES", "MAX_LINE_BYTES", "MAX_NAME_CHARS",
           "MAX_TITLE_CHARS", "RECORD_SECONDS", "UNREADABLE", "PaperRecord", "Skip", "content_id",
           "estimate_records", "expand_inputs", "expand_paths", "format_of", "parse_map", "parse_seed_header",
           "read_papers", "record_from_json"]

# Format by file name (a trailing .gz is read through gzip); each reader then checks the content is that format.
FORMATS: dict[str, tuple[str, ...]] = {
    "seeds": (".txt",),
    "jsonl": (".jsonl", ".ndjson"),
    "json": (".json",),
    "table": (".csv", ".tsv", ".tab"),
    "bibtex": (".bib", ".bibtex"),
    "atom": (".atom", ".xml"),
}
SUFFIXES = tuple(s + gz for group in FORMATS.values() for s in group for gz in ("", ".gz"))
JSONL_SUFFIXES = tuple(s for s in SUFFIXES if s.removesuffix(".gz") in (".jsonl", ".ndjson", ".json"))


def format_of(path: Path) -> str | None:
    name = path.name.lower().removesuffix(".gz")
    return next((fmt for fmt, sufs in FORMATS.items() if name.endswith(sufs)), None)


def expand_inputs(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path | Skip]:
    """Files named directly, and files of a known format inside named directories, in a stable order. Inside a
    directory, a file of a known format's name that is no regular file (a FIFO, a device, a socket) or a link to
    nowhere is a Skip saying so, never opened; named directly, it is an InputError, as a missing path is."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found: list[Path | Skip] = []
            for f in sorted(p.rglob("*")):
                if not format_of(f):
                    continue
                what = odd_file(f)
                if what is None:
                    found.append(f)
                elif what.startswith(LINK_TO_NOWHERE):
                    found.append(Skip(str(f), "dangling link", f"to {os.readlink(f)}, which does not exist"))
                elif what != "a directory":  # a folder named like a file is walked into, not read
                    found.append(Skip(str(f), "not a regular file", what))
            if not found:
                raise InputError(f"{p}: no .txt, .jsonl, .json, .csv, .tsv, .bib or .atom files in this directory")
            yield from found
        elif (what := odd_file(p)) is not None:
            raise InputError(f"{p} is {what}, not a regular file; kg reads papers from files and directories "
                             f"(a FIFO or a device could be read forever)")
        elif p.exists():
            if not format_of(p):
                raise InputError(f"{p}: unknown format; kg reads seed lists (.txt), JSON Lines (.jsonl), JSON "
                                 f"(.json: OpenAlex, Semantic Scholar), CSV/TSV, BibTeX (.bib) and arXiv Atom "
                                 f"(.atom, .xml), each also gzipped (.gz)")
            yield p
        else:
            raise InputError(f"{p}: no such file or directory")


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The files ``expand_inputs`` would read (its Skips left out)."""
    return (p for p in expand_inputs(paths) if isinstance(p, Path))


def _first_byte(path: Path) -> bytes:
    try:
        with opener(path)(path, "rb") as fh:
            return fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    except Exception:  # noqa: BLE001 - reading proper reports what is wrong with the file
        return b""


def _table_in_txt(path: Path) -> Skip | None:
    """A table saved as .txt (a header row naming an abstract column) would become one paper of every row."""
    try:
        with opener(path)(path, "rb") as fh:
            first = fh.readline(1 << 16).decode("utf-8", "replace").lstrip("\ufeff")
    except Exception:  # noqa: BLE001 - reading proper reports what is wrong with the file
        return None
    for delim in ("\t", ",", ";"):
        cols = first.rstrip("\r\n").split(delim)
        if len(cols) >= 2 and "abstract" in map_columns(cols):
            kind = "TSV" if delim == "\t" else "CSV"
            return Skip(f"{path}:1", f"a {kind} table, not a seed list",
                        f"the first line is a header row; name the file .{kind.lower()}")
    return None


def _reader(path: Path, column_map: Mapping[str, str] | None) -> Callable[[Path], Iterator[PaperRecord | Skip]]:
    fmt = format_of(path)
    if fmt == "seeds" and (table := _table_in_txt(path)) is not None:
        return lambda p: iter([table])
    if fmt == "jsonl" and _first_byte(path) == b"[":  # a JSON array saved as .jsonl
        fmt = "json"
    if fmt == "table":
        return lambda p: read_table(p, column_map)
    return {"seeds": read_seed_list, "jsonl": read_jsonl, "json": read_json, "bibtex": read_bibtex,
            "atom": read_atom}[fmt or "seeds"]


def read_papers(paths: Iterable[str | os.PathLike[str]], *,
                column_map: Mapping[str, str] | None = None) -> Iterator[PaperRecord | Skip]:
    """Yield every paper (or located skip) from ``paths``, one record at a time.

    ``column_map`` maps CSV/TSV column names to record fields (``{"Paper Abstract": "abstract"}``), beside the
    synonyms kg knows."""
    cmap = parse_map(column_map) if column_map else None
    for path in expand_inputs(paths):
        if isinstance(path, Skip):
            yield path
            continue
        found = False
        for item in _reader(path, cmap)(path):
            found = True
            yield item
        if not found:  # say so, or a file that holds nothing would pass unnoticed
            yield Skip(f"{path}:1", "no records in file", "empty" if _blank(path) else "only a header")


def _blank(path: Path) -> bool:
    try:
        with opener(path)(path, "rb") as fh:
            return not fh.read(1 << 16).strip()
    except Exception:  # noqa: BLE001
        return False


def estimate_records(path: Path) -> int:
    """A quick upper bound on the records in one file, for progress and ETA (within the reading limits)."""
    fmt = format_of(path)
    with opener(path)(path, "rb") as fh:
        if fmt in ("jsonl", "table"):  # streamed: a corpus can be far larger than memory
            lines, give_up = 0, time.monotonic() + RECORD_SECONDS
            for n in range(MAX_LINES):
                line = fh.readline(MAX_LINE_BYTES + 1)
                if not line:
                    break
                lines += not line.isspace()
                if (n & 0xFFFF == 0 or len(line) > MAX_LINE_BYTES) and time.monotonic() > give_up:
                    raise TimeoutError("too slow to count")  # count_records gives no estimate then
            return lines - (fmt == "table")
        data = fh.read(MAX_FILE_BYTES)
    if fmt == "seeds":
        return max(0, sum(1 for para in data.split(b"\n\n") if para.strip()) - 1)
    if fmt == "bibtex":
        return data.count(b"\n@") + data.startswith(b"@")
    if fmt == "atom":
        return data.count(b"<entry")
    return sum(1 for line in data.splitlines() if line.strip()) if data.lstrip()[:1] == b"{" \
        else data.count(b'"abstract')
