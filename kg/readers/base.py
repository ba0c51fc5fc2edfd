"""What every reader shares: the paper record, located skips, limits, content ids, and field validation."""

from __future__ import annotations

import gzip
import hashlib
import re
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, BinaryIO

from kg.files import NotAFile, open_input

MAX_ABSTRACT_CHARS = 100_000  # longer "abstracts" are full texts or junk; they would stall the parser
MAX_LINE_BYTES = 2 << 20  # a longer line cannot hold a valid record; it is skipped without being held in memory
MAX_FILE_BYTES = 512 << 20  # whole-file formats (JSON documents, BibTeX) are read into memory; Atom is streamed
MAX_LINES = 10_000_000  # lines per file, blank ones too (a gzip of nothing but newlines would run for hours)
RECORD_SECONDS = 10.0  # reading time allowed between two lines that hold something; past it the file is dropped
MAX_ID_CHARS = 300  # ids are path segments of the API and arguments of the CLI
MAX_TITLE_CHARS = 2_000
MAX_NAME_CHARS = 300  # venue and each author
UNREADABLE = "unreadable file"  # a Skip with this reason ends its file
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(slots=True)
class PaperRecord:
    """One paper as read from input, before extraction."""

    id: str
    abstract: str
    title: str | None = None
    year: int | None = None
    venue: str | None = None
    authors: list[str] = field(default_factory=list)
    source: str = ""  # "file:line", for messages
    published: str | None = None  # ISO date ("2024-01-31", or "2024-01" / "2024" when that is all the input says)


@dataclass(frozen=True, slots=True)
class Skip:
    """A record that could not be read; ``where`` is "file:line", ``reason`` is short and countable."""

    where: str
    reason: str
    detail: str = ""

    def message(self) -> str:
        return f"{self.where}: skipped: {self.reason}" + (f" ({self.detail})" if self.detail else "")


def content_id(abstract: str) -> str:
    """A stable id from the abstract's words, so re-ingesting the same text gives the same id."""
    norm = " ".join(abstract.split()).casefold()
    return "p-" + hashlib.sha1(norm.encode("utf-8")).hexdigest()[:12]


def opener(path: Path) -> Callable[..., BinaryIO | gzip.GzipFile]:
    """A function opening ``path`` for binary reading, through gzip for ``.gz``; anything but a regular file (a
    FIFO, a device, a directory, a dangling link) is refused with ``NotAFile`` (an OSError), never read."""
    return lambda p, mode="rb": open_input(p)


def unreadable(path: Path, exc: BaseException, n: int = 1, *, stopped: bool = False) -> Skip:
    """The Skip that ends a file that cannot be read (further)."""
    detail = str(exc) if isinstance(exc, NotAFile) else f"{type(exc).__name__}: {exc}"
    return Skip(f"{path}:{n}", UNREADABLE, detail + ("; stopped reading" if stopped else ""))


def bounded_lines(path: Path, readline: Callable[[int], Any]) -> Iterator[tuple[int, Any]]:
    """Numbered lines from ``readline`` (bytes or str), within the reading limits. A line over MAX_LINE_BYTES
    becomes a Skip (read past in chunks, never held whole). Past MAX_LINES lines, or after RECORD_SECONDS of
    reading without a line that holds something (time the caller spends between lines does not count), the
    file ends with an UNREADABLE Skip: no input runs unbounded."""
    n = 0
    clock = time.monotonic
    start = clock()  # since the last line with content, counting only the time spent here
    while line := readline(MAX_LINE_BYTES + 1):
        n += 1
        if n > MAX_LINES:
            yield n, Skip(f"{path}:{n}", UNREADABLE, f"over {MAX_LINES:,} lines, kg's limit for one file; stopped "
                                                     f"reading; split the file")
            return
        item = line
        if len(line) > MAX_LINE_BYTES:
            newline = b"\n" if isinstance(line, bytes) else "\n"
            while line and not line.endswith(newline):
                line = readline(1 << 20)
                if clock() - start > RECORD_SECONDS:
                    yield n, _stalled(path, n)
                    return
            item = Skip(f"{path}:{n}", "line too long", f"over {MAX_LINE_BYTES:,} bytes")
        now = clock()
        if now - start > RECORD_SECONDS:
            yield n, _stalled(path, n)
            return
        yield n, item
        if isinstance(item, Skip) or not item.isspace():
            start = clock()
        else:  # a blank line: the time the caller took over it is not reading time
            start += clock() - now


def _stalled(path: Path, n: int) -> Skip:
    return Skip(f"{path}:{n}", UNREADABLE, f"nothing but blank or over-long lines for {RECORD_SECONDS:g} s of "
                                           f"reading, kg's limit for one record; stopped reading")


def read_lines(path: Path) -> Iterator[tuple[int, bytes | Skip]]:
    """Numbered raw lines, within the reading limits (``bounded_lines``); a file that cannot be opened, or a
    truncated or corrupt gzip, ends with an UNREADABLE Skip."""
    n = 0
    try:
        with open_input(path) as fh:
            for n, line in bounded_lines(path, fh.readline):
                yield n, line
    except (EOFError, OSError, zlib.error) as exc:
        yield n + 1, unreadable(path, exc, n + 1, stopped=not isinstance(exc, NotAFile))


def read_whole(path: Path) -> bytes | Skip:
    """The whole file (gunzipped), or an UNREADABLE Skip: too large, truncated or corrupt, not a regular file."""
    try:
        with open_input(path) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except (EOFError, OSError, zlib.error) as exc:
        return unreadable(path, exc)
    if len(data) > MAX_FILE_BYTES:
        return Skip(f"{path}:1", UNREADABLE, f"over {MAX_FILE_BYTES >> 20} MB; split it or use JSON Lines")
    return data


def decode(raw: bytes, where: str) -> str | Skip:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skip(where, "not valid UTF-8", f"byte {exc.start}")


def decode_document(data: bytes, where: str) -> str | Skip:
    """A whole document: UTF-8 (a byte-order mark dropped) or UTF-16 with its byte-order mark."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            return Skip(where, "not valid UTF-16", f"byte {exc.start}")
    text = decode(data, where)
    return text.removeprefix("\ufeff") if isinstance(text, str) else text


def line_of(text: str, offset: int) -> int:
    """1-based line number of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


_YEAR = re.compile(r"(?<!\d)((?:1[5-9]|20)\d\d)(?!\d)")
_PUBLISHED = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ][0-9:.,]*(?:Z|[+-]\d{2}:?\d{2})?)?")  # a date or a timestamp


def parse_date(value: object) -> tuple[int | None, str | None]:
    """(year, ISO date) from 2024, "2024-01-31", "2024-01-31T12:00:00Z", "May 2024": the date only when the value
    names a day (``published`` is a Cypher date); (None, None) when it names no year."""
    if isinstance(value, bool) or value is None:
        return None, None
    if isinstance(value, int):
        return (value, None) if 0 <= value <= 9999 else (None, None)
    if not isinstance(value, str):
        return None, None
    m = _PUBLISHED.fullmatch(value.strip())
    if m:
        try:
            day = date.fromisoformat(m.group(1))
            return day.year, day.isoformat()
        except ValueError:
            pass
    m = _YEAR.search(value)
    return (int(m.group(1)), None) if m else (None, None)


def split_authors(value: str) -> list[str]:
    """``A; B``, ``A and B``, ``A, B and C``, ``Last, First and Last, First``: one name per entry."""
    if ";" in value:
        return [_first_last(p) for p in value.split(";") if p.strip()]
    out: list[str] = []
    for part in re.split(r"\s+and\s+|\s*&\s*", value):
        pieces = [p.strip() for p in part.split(",") if p.strip()]
        # "Ann Smith, Bob Jones" is two names; "Smith, Ann" (each piece one word) is one, written last-first.
        out.extend(pieces if len(pieces) > 1 and all(" " in p for p in pieces) or len(pieces) > 2 else
                   [_first_last(", ".join(pieces))] if pieces else [])
    return out


def _first_last(name: str) -> str:
    """"Smith, Ann" -> "Ann Smith", as every other source writes it, so both are one Author node."""
    last, sep, first = name.strip().partition(",")
    if sep and first.strip() and "," not in first and first.strip().lower().rstrip(".") not in ("jr", "sr"):
        return f"{first.strip()} {last.strip()}"
    return name.strip()


def make_record(where: str, *, abstract: object, id: object = None, title: object = None, year: object = None,
                venue: object = None, authors: object = None, published: object = None) -> PaperRecord | Skip:
    """Validate one record's fields, naming the offending field in the Skip; a missing id becomes a content id."""
    if abstract is None or (isinstance(abstract, str) and not abstract.strip()):
        return Skip(where, "no abstract")
    if not isinstance(abstract, str):
        return _field_error(where, "abstract", "a string", abstract)
    if len(abstract) > MAX_ABSTRACT_CHARS:
        return Skip(where, "abstract too long", f"{len(abstract)} characters, limit {MAX_ABSTRACT_CHARS}")
    if isinstance(id, bool) or not isinstance(id, str | int | None):
        return _field_error(where, "id", "a string", id)
    pid = str(id).strip() if id is not None else ""
    if not pid:
        pid = content_id(abstract)
    elif len(pid) > MAX_ID_CHARS:
        return Skip(where, "field 'id' is too long", f"{len(pid)} characters, limit {MAX_ID_CHARS}")
    elif _CONTROL.search(pid):
        return Skip(where, "field 'id' has control characters", repr(pid[:40]))
    if title is not None and not isinstance(title, str):
        return _field_error(where, "title", "a string", title)
    if title is not None and len(title) > MAX_TITLE_CHARS:
        return Skip(where, "field 'title' is too long", f"{len(title)} characters, limit {MAX_TITLE_CHARS}")
    if isinstance(year, str) and year.strip().isdecimal():  # not isdigit(): int("²") fails
        year = int(year)
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        return _field_error(where, "year", "an integer", year)
    if year is not None and not 0 <= year <= 9999:
        return Skip(where, "field 'year' is out of range", f"{year}, expected 0 to 9999")
    published = published or None
    if published is not None and not isinstance(published, str):
        return _field_error(where, "published", "a date string", published)
    if venue is not None and not isinstance(venue, str):
        return _field_error(where, "venue", "a string", venue)
    authors = authors or []
    if isinstance(authors, str):
        authors = split_authors(authors)
    if not isinstance(authors, Sequence) or not all(isinstance(a, str) for a in authors):
        return _field_error(where, "authors", "a list of strings", authors)
    for name, value in [("venue", venue or "")] + [("authors", a) for a in authors]:
        if len(value) > MAX_NAME_CHARS:
            return Skip(where, f"field '{name}' is too long", f"{len(value)} characters, limit {MAX_NAME_CHARS}")
    if published is not None:
        raw, (y, published) = published, parse_date(published)
        if published is None:
            return Skip(where, "field 'published' is not a date", f"{raw[:40]!r}, expected YYYY-MM-DD")
        year = year if year is not None else y
    return PaperRecord(
        id=pid,
        abstract=abstract,
        title=" ".join(title.split()) or None if title else None,
        year=year,
        venue=" ".join(venue.split()) or None if venue else None,
        authors=[" ".join(a.split()) for a in authors if a.strip()],
        source=where,
        published=published,
    )


def _field_error(where: str, name: str, expected: str, value: object) -> Skip:
    return Skip(where, f"field '{name}' is not {expected}", f"got {type(value).__name__}")
