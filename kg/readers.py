"""Read papers from seed abstract lists and JSON Lines (plain or gzip), streaming, with located skips."""

from __future__ import annotations

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
        if path.name.endswith(JSONL_SUFFIXES):
            yield from read_jsonl(path)
        else:
            yield from read_seed_list(path)


def _lines(path: Path) -> Iterator[tuple[int, bytes | Skip]]:
    """Numbered raw lines; a truncated or corrupt gzip ends the file with a Skip."""
    opener = gzip.open if path.name.endswith(".gz") else open
    n = 0
    try:
        with opener(path, "rb") as fh:
            for n, line in enumerate(fh, 1):  # noqa: B007 - n is used after the loop
                yield n, line
    except (EOFError, OSError, zlib.error) as exc:
        yield n + 1, Skip(f"{path}:{n + 1}", "unreadable file", f"{type(exc).__name__}: {exc}; stopped reading")


def _decode(raw: bytes, where: str) -> str | Skip:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skip(where, "not valid UTF-8", f"byte {exc.start}")


def read_seed_list(path: Path) -> Iterator[PaperRecord | Skip]:
    """A header line naming venue and year, then one abstract per blank-line-separated paragraph."""
    venue = year = None
    para: list[str] = []
    para_line = 0
    bad: Skip | None = None
    header_seen = False

    def flush() -> Iterator[PaperRecord | Skip]:
        if bad is not None:
            yield bad
        elif para:
            yield _seed_record(" ".join(para), f"{path}:{para_line}", venue, year)

    for n, raw in _lines(path):
        if isinstance(raw, Skip):
            yield from flush()
            yield raw
            return
        text = _decode(raw.rstrip(b"\r\n"), f"{path}:{n}")
        if not header_seen:
            if isinstance(text, Skip):
                yield text
                continue
            if not text.strip():
                continue
            header_seen = True
            venue, year = parse_seed_header(text.lstrip("\ufeff"))
            if venue is None and len(text) > 200:  # no header: the first line is already an abstract
                para, para_line = [text.strip()], n
            continue
        if isinstance(text, Skip):
            bad = bad or text
            para_line = para_line or n
            continue
        if text.strip():
            if not para and bad is None:
                para_line = n
            para.append(text.strip())
        else:
            yield from flush()
            para, bad, para_line = [], None, 0
    yield from flush()


def _seed_record(abstract: str, where: str, venue: str | None, year: int | None) -> PaperRecord | Skip:
    if len(abstract) > MAX_ABSTRACT_CHARS:
        return Skip(where, "abstract too long", f"{len(abstract)} characters, limit {MAX_ABSTRACT_CHARS}")
    return PaperRecord(id=content_id(abstract), abstract=abstract, venue=venue, year=year, source=where)


def read_jsonl(path: Path) -> Iterator[PaperRecord | Skip]:
    """JSON Lines with ``id, title, abstract, year, venue, authors``; bad lines become Skips."""
    for n, raw in _lines(path):
        if isinstance(raw, Skip):
            yield raw
            return
        where = f"{path}:{n}"
        text = _decode(raw, where)
        if isinstance(text, Skip):
            yield text
            continue
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
    if pid is None or pid == "":
        pid = content_id(abstract)
    elif isinstance(pid, bool) or not isinstance(pid, str | int):
        return _field_error(where, "id", "a string", pid)
    title = obj.get("title")
    if title is not None and not isinstance(title, str):
        return _field_error(where, "title", "a string", title)
    year = obj.get("year")
    if isinstance(year, str) and year.strip().isdigit():
        year = int(year)
    if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
        return _field_error(where, "year", "an integer", year)
    venue = obj.get("venue")
    if venue is not None and not isinstance(venue, str):
        return _field_error(where, "venue", "a string", venue)
    authors = obj.get("authors") or []
    if isinstance(authors, str):
        authors = [a.strip() for a in re.split(r",| and ", authors) if a.strip()]
    if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
        return _field_error(where, "authors", "a list of strings", authors)
    return PaperRecord(
        id=str(pid).strip(),
        abstract=abstract,
        title=" ".join(title.split()) or None if title else None,
        year=year,
        venue=venue.strip() or None if venue else None,
        authors=[" ".join(a.split()) for a in authors if a.strip()],
        source=where,
    )
