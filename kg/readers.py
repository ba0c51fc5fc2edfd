"""Read papers from seed abstract lists and JSON Lines (plain or gzip), streaming, with located skips."""

from __future__ import annotations

import datetime
import gzip
import hashlib
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from kg.errors import InputError

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".json.gz")
SEED_SUFFIXES = (".txt",)
MAX_ABSTRACT_CHARS = 100_000  # longer "abstracts" are full texts or junk; they would stall the parser
MAX_LINE_BYTES = 2 << 20  # a longer line cannot hold a valid record; it is skipped without being held in memory
MAX_ID_CHARS = 300  # ids are path segments of the API and arguments of the CLI
MAX_TITLE_CHARS = 2_000
MAX_NAME_CHARS = 300  # venue and each author
UNREADABLE = "unreadable file"  # a Skip with this reason ends its file
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_PUBLISHED = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ][0-9:.,]*(?:Z|[+-]\d{2}:?\d{2})?)?")  # a date or a timestamp


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
    published: str | None = None  # date of first publication, ISO 8601 ('2024-01-02')


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


_HEADER = re.compile(r"^\s*(?P<venue>[A-Za-z][A-Za-z&.\-]*(?:\s+[A-Z][A-Za-z&.\-]*)*?)\s*'?(?P<year>(?:19|20)\d\d)\b")


def parse_seed_header(line: str) -> tuple[str | None, int | None]:
    """``NeurIPS 2025 论文列表`` -> ("NeurIPS", 2025); unknown parts are None."""
    m = _HEADER.match(line)
    if not m:
        return None, None
    return m.group("venue").strip(), int(m.group("year"))


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Files named directly, and readable files inside named directories, in a stable order."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(
                f for f in p.rglob("*") if f.is_file() and f.name.endswith(JSONL_SUFFIXES + SEED_SUFFIXES)
            )
            if not found:
                raise InputError(f"{p}: no .txt, .jsonl or .jsonl.gz files in this directory")
            yield from found
        elif p.exists():
            yield p
        else:
            raise InputError(f"{p}: no such file or directory")


def read_papers(paths: Iterable[str | os.PathLike[str]]) -> Iterator[PaperRecord | Skip]:
    """Yield every paper (or located skip) from ``paths``, one record at a time."""
    for path in expand_paths(paths):
        reader = read_jsonl if path.name.endswith(JSONL_SUFFIXES) else read_seed_list
        found = False
        for item in reader(path):
            found = True
            yield item
        if not found:  # say so, or a file that holds nothing would pass unnoticed
            yield Skip(f"{path}:1", "no records in file", "empty" if _blank(path) else "only a header")


def _blank(path: Path) -> bool:
    return all(not isinstance(raw, Skip) and not raw.strip() for _, raw in _lines(path))


def _lines(path: Path) -> Iterator[tuple[int, bytes | Skip]]:
    """Numbered raw lines. A line over MAX_LINE_BYTES becomes a Skip (read past in chunks, never held whole);
    a truncated or corrupt gzip ends the file with an UNREADABLE Skip."""
    opener = gzip.open if path.name.endswith(".gz") else open
    n = 0
    try:
        with opener(path, "rb") as fh:
            while line := fh.readline(MAX_LINE_BYTES + 1):
                n += 1
                if len(line) > MAX_LINE_BYTES:
                    while line and not line.endswith(b"\n"):
                        line = fh.readline(1 << 20)
                    yield n, Skip(f"{path}:{n}", "line too long", f"over {MAX_LINE_BYTES:,} bytes")
                    continue
                yield n, line
    except (EOFError, OSError, zlib.error) as exc:
        yield n + 1, Skip(f"{path}:{n + 1}", UNREADABLE, f"{type(exc).__name__}: {exc}; stopped reading")


def _decode(raw: bytes, where: str) -> str | Skip:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skip(where, "not valid UTF-8", f"byte {exc.start}")


def read_seed_list(path: Path) -> Iterator[PaperRecord | Skip]:
    """A header line naming venue and year, then one abstract per blank-line-separated paragraph."""
    venue = year = None
    para: list[str] = []
    para_line = para_chars = 0
    bad: Skip | None = None
    header_seen = False

    def flush() -> Iterator[PaperRecord | Skip]:
        if bad is not None:
            yield bad
        elif para_chars > MAX_ABSTRACT_CHARS:
            yield Skip(f"{path}:{para_line}", "abstract too long", f"over {MAX_ABSTRACT_CHARS:,} characters")
        elif para:
            yield _seed_record(" ".join(para), f"{path}:{para_line}", venue, year)

    for n, raw in _lines(path):
        if isinstance(raw, Skip) and raw.reason == UNREADABLE:
            yield from flush()
            yield raw
            return
        text = raw if isinstance(raw, Skip) else _decode(raw.rstrip(b"\r\n"), f"{path}:{n}")
        if not header_seen:
            if isinstance(text, Skip):
                yield text
                continue
            if not text.strip():
                continue
            header_seen = True
            venue, year = parse_seed_header(text.lstrip("\ufeff"))
            if venue is None and len(text) > 200:  # no header: the first line is already an abstract
                para, para_line, para_chars = [text.strip()], n, len(text)
            continue
        if isinstance(text, Skip):
            bad = bad or text
            para_line = para_line or n
            continue
        if text.strip():
            if not para and bad is None and not para_chars:
                para_line = n
            para_chars += len(text) + 1
            if para_chars <= MAX_ABSTRACT_CHARS:  # past the limit, only count: the paragraph is skipped
                para.append(text.strip())
        else:
            yield from flush()
            para, bad, para_line, para_chars = [], None, 0, 0
    yield from flush()


def _seed_record(abstract: str, where: str, venue: str | None, year: int | None) -> PaperRecord | Skip:
    if len(abstract) > MAX_ABSTRACT_CHARS:
        return Skip(where, "abstract too long", f"{len(abstract)} characters, limit {MAX_ABSTRACT_CHARS}")
    return PaperRecord(id=content_id(abstract), abstract=abstract, venue=venue, year=year, source=where)


def read_jsonl(path: Path) -> Iterator[PaperRecord | Skip]:
    """JSON Lines with ``id, title, abstract, year, venue, authors``; bad lines become Skips."""
    for n, raw in _lines(path):
        if isinstance(raw, Skip):  # a line too long, or the file unreadable from here (then it is the last)
            yield raw
            continue
        where = f"{path}:{n}"
        text = _decode(raw, where)
        if isinstance(text, Skip):
            yield text
            continue
        if n == 1:
            text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
        if not text.strip():
            continue
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            yield Skip(where, "malformed JSON", str(exc).split(":")[0])
            continue
        yield record_from_json(obj, where)


def _field_error(where: str, name: str, expected: str, value: object) -> Skip:
    return Skip(where, f"field '{name}' is not {expected}", f"got {type(value).__name__}")


def record_from_json(obj: object, where: str) -> PaperRecord | Skip:
    """Validate one decoded JSON object into a PaperRecord, naming the offending field."""
    if not isinstance(obj, dict):
        return Skip(where, "not a JSON object", f"got {type(obj).__name__}")
    abstract = obj.get("abstract")
    if abstract is None or (isinstance(abstract, str) and not abstract.strip()):
        return Skip(where, "no abstract")
    if not isinstance(abstract, str):
        return _field_error(where, "abstract", "a string", abstract)
    if len(abstract) > MAX_ABSTRACT_CHARS:
        return Skip(where, "abstract too long", f"{len(abstract)} characters, limit {MAX_ABSTRACT_CHARS}")
    pid = obj.get("id")
    if isinstance(pid, bool) or not isinstance(pid, str | int | None):
        return _field_error(where, "id", "a string", pid)
    pid = str(pid).strip() if pid is not None else ""
    if not pid:
        pid = content_id(abstract)
    elif len(pid) > MAX_ID_CHARS:
        return Skip(where, "field 'id' is too long", f"{len(pid)} characters, limit {MAX_ID_CHARS}")
    elif _CONTROL.search(pid):
        return Skip(where, "field 'id' has control characters", repr(pid[:40]))
    title = obj.get("title")
    if title is not None and not isinstance(title, str):
        return _field_error(where, "title", "a string", title)
    if title is not None and len(title) > MAX_TITLE_CHARS:
        return Skip(where, "field 'title' is too long", f"{len(title)} characters, limit {MAX_TITLE_CHARS}")
    year = obj.get("year")
    if isinstance(year, str) and year.strip().isdecimal():  # not isdigit(): int("²") fails
        year = int(year)
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        return _field_error(where, "year", "an integer", year)
    if year is not None and not 0 <= year <= 9999:
        return Skip(where, "field 'year' is out of range", f"{year}, expected 0 to 9999")
    published = obj.get("published") or None
    if published is not None and not isinstance(published, str):
        return _field_error(where, "published", "a date string", published)
    if published is not None:
        m = _PUBLISHED.fullmatch(published.strip())
        try:
            published = datetime.date.fromisoformat(m.group(1)).isoformat() if m else None
        except ValueError:
            published = None
        if published is None:
            return Skip(where, "field 'published' is not a date", f"{obj['published'][:40]!r}, expected YYYY-MM-DD")
    venue = obj.get("venue")
    if venue is not None and not isinstance(venue, str):
        return _field_error(where, "venue", "a string", venue)
    authors = obj.get("authors") or []
    if isinstance(authors, str):
        authors = [a.strip() for a in re.split(r",| and ", authors) if a.strip()]
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        return _field_error(where, "authors", "a list of strings", authors)
    for name, value in [("venue", venue or "")] + [("authors", a) for a in authors]:
        if len(value) > MAX_NAME_CHARS:
            return Skip(where, f"field '{name}' is too long", f"{len(value)} characters, limit {MAX_NAME_CHARS}")
    return PaperRecord(
        id=pid,
        abstract=abstract,
        title=" ".join(title.split()) or None if title else None,
        year=year,
        venue=venue.strip() or None if venue else None,
        authors=[" ".join(a.split()) for a in authors if a.strip()],
        source=where,
        published=published,
    )
