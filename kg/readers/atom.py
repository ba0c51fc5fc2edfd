"""arXiv API Atom feeds (``.atom``, ``.xml``), parsed with defusedxml: entity tricks are refused, not expanded."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element, ParseError

from kg.readers.base import MAX_FILE_BYTES, UNREADABLE, PaperRecord, Skip, make_record, opener, unreadable
from kg.readers.ids import arxiv_id, doi_id, paper_id

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"


def _text(el: Element, tag: str) -> str | None:
    found = el.find(tag)
    return " ".join(found.text.split()) if found is not None and found.text and found.text.strip() else None


def _entry_record(entry: Element, where: str) -> PaperRecord | Skip:
    raw_id = _text(entry, ATOM + "id") or ""
    if "/api/errors" in raw_id:  # how the arXiv API reports a bad query: an entry titled "Error"
        return Skip(where, "arXiv API error entry", _text(entry, ATOM + "summary") or "")
    doi = _text(entry, ARXIV + "doi")
    for link in entry.findall(ATOM + "link"):
        if link.get("title") == "doi" and not doi:
            doi = link.get("href")
    published = _text(entry, ATOM + "published")
    journal = _text(entry, ARXIV + "journal_ref")
    return make_record(
        where, abstract=_text(entry, ATOM + "summary"), title=_text(entry, ATOM + "title"),
        id=paper_id(arxiv=raw_id, doi=doi, own=raw_id if not (arxiv_id(raw_id) or doi_id(doi)) else None),
        venue=journal or ("arXiv" if arxiv_id(raw_id) else None),
        authors=[n for a in entry.findall(ATOM + "author") if (n := _text(a, ATOM + "name"))],
        published=published[:10] if published else None)


class _TooLarge(Exception):
    pass


class _Bounded:
    """A file read through ``read``, at most MAX_FILE_BYTES of it (after gunzip): a feed is streamed, but a
    gzip of gigabytes of whitespace would otherwise be parsed for as long as it lasts."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.left = MAX_FILE_BYTES

    def read(self, n: int = -1) -> bytes:
        data: bytes = self.fh.read(n if n >= 0 else self.left + 1)
        self.left -= len(data)
        if self.left < 0:
            raise _TooLarge
        return data


def read_atom(path: Path) -> Iterator[PaperRecord | Skip]:
    """One record per ``<entry>``, streamed (at most MAX_FILE_BYTES); XML that breaks off keeps the entries
    before the break."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    n = 0
    root_seen = False
    try:
        with opener(path)(path, "rb") as fh:
            for event, el in iterparse(_Bounded(fh), events=("start", "end"), forbid_dtd=True):
                if event == "start":
                    if not root_seen:
                        root_seen = True
                        if el.tag != ATOM + "feed":
                            yield Skip(f"{path}:1", "not an Atom feed", f"root element <{el.tag}>")
                            return
                    continue
                if el.tag == ATOM + "entry":
                    n += 1
                    yield _entry_record(el, f"{path}: entry {n}")
                    el.clear()  # a feed of thousands of entries is never held whole
    except DefusedXmlException as exc:
        yield Skip(f"{path}:1", "unsafe XML", f"{type(exc).__name__}: DTDs and entities are refused")
    except ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else 1
        yield Skip(f"{path}:{line}", "malformed XML", f"{exc}; stopped reading" + (f" after entry {n}" if n else ""))
    except _TooLarge:
        yield Skip(f"{path}:1", UNREADABLE, f"over {MAX_FILE_BYTES >> 20} MB; stopped reading" +
                   (f" after entry {n}" if n else "") + "; split it")
    except (EOFError, OSError, zlib.error) as exc:
        yield unreadable(path, exc)
