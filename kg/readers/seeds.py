"""Seed lists (``.txt``): a header line naming venue and year, then one abstract per blank-line-separated paragraph."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from kg.readers.base import (
    MAX_ABSTRACT_CHARS,
    UNREADABLE,
    PaperRecord,
    Skip,
    content_id,
    decode,
    read_lines,
)

_HEADER = re.compile(r"^\s*(?P<venue>[A-Za-z][A-Za-z&.\-]*(?:\s+[A-Z][A-Za-z&.\-]*)*?)\s*'?(?P<year>(?:19|20)\d\d)\b")


def parse_seed_header(line: str) -> tuple[str | None, int | None]:
    """``NeurIPS 2025 论文列表`` -> ("NeurIPS", 2025); unknown parts are None."""
    m = _HEADER.match(line)
    if not m:
        return None, None
    return m.group("venue").strip(), int(m.group("year"))


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
            abstract = " ".join(para)
            yield PaperRecord(id=content_id(abstract), abstract=abstract, venue=venue, year=year,
                              source=f"{path}:{para_line}")

    for n, raw in read_lines(path):
        if isinstance(raw, Skip) and raw.reason == UNREADABLE:
            yield from flush()
            yield raw
            return
        text = raw if isinstance(raw, Skip) else decode(raw.rstrip(b"\r\n"), f"{path}:{n}")
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
