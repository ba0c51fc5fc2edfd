"""Full-text search over papers' titles and abstracts: a tantivy (BM25) index, written with the store.

Words are stemmed (tantivy's ``en_stem``: lower-cased, split at anything not a letter or digit, English
Snowball stems), so ``language models`` finds "language model". Every word of a query must occur in the
title or the abstract; ``"a quoted phrase"`` must occur as a phrase; a title match counts double. The index
holds the papers in id order and is written by one thread, so the same papers give the same index, and
equal scores are ordered by paper id: results and counts are the same after every rebuild.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import tantivy

from kg.errors import StoreError

FULLTEXT_DIR = "fulltext"
META_FILE = "kg-fulltext.json"
VERSION = 1
_HEAP = 128_000_000  # tantivy's indexing buffer; more segments (and merging) when it is smaller
_PART = re.compile(r'"([^"]*)"|(\S+)')
_FIELDS = ["title", "abstract"]
_BOOSTS = {"title": 2.0}
PAD = 20  # extra hits fetched past a page, so that ties at its edge are ordered by id too


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("title", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("abstract", stored=False, tokenizer_name="en_stem")
    sb.add_integer_field("year", indexed=True, fast=True)
    sb.add_text_field("venue", stored=False, tokenizer_name="raw")
    return sb.build()


def query_text(q: str) -> str | None:
    """The tantivy query for ``q``: each word and each quoted phrase required; None when nothing is searchable.

    Every part is quoted, so the query language's operators (``-``, ``:``, ``^``, brackets) typed by a user
    are just text, which the tokenizer drops.
    """
    parts = []
    for phrase, word in _PART.findall(_utf8(q)):
        text = (phrase or word).replace("\\", " ").replace('"', " ")
        if any(ch.isalnum() for ch in text):
            parts.append(f'+"{text}"')
    return " ".join(parts) or None


def _utf8(text: str) -> str:
    """``text`` without lone surrogates, which tantivy (UTF-8 throughout) cannot take."""
    return text.encode("utf-8", "replace").decode("utf-8")


class FullTextIndex:
    """An open index: ``search`` gives (total, [(paper id, score)]), best first."""

    def __init__(self, index: tantivy.Index) -> None:
        self.index = index
        self.schema = _schema()
        index.reload()
        self.searcher = index.searcher()

    @classmethod
    def build(cls, papers: Iterable[tuple[str, Mapping[str, Any]]], path: Path | None = None,
              source: Mapping[str, Any] | None = None) -> FullTextIndex:
        """Index ``(id, paper properties)`` pairs, in memory or (``path``) written whole to that directory."""
        tmp = None
        if path is not None:
            tmp = path.with_name(f".{path.name}.tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
        index = tantivy.Index(_schema(), path=str(tmp) if tmp else None)
        writer = index.writer(heap_size=_HEAP, num_threads=1)
        n = 0
        for pid, d in sorted(papers, key=lambda x: x[0]):
            fields: dict[str, Any] = {"id": _utf8(pid), "title": _utf8(d.get("title") or ""),
                                      "abstract": _utf8(d.get("abstract") or ""),
                                      "venue": _utf8((d.get("venue") or "").casefold())}
            if isinstance(d.get("year"), int):
                fields["year"] = d["year"]
            writer.add_document(tantivy.Document(**fields))
            n += 1
        writer.commit()
        writer.wait_merging_threads()
        if path is None or tmp is None:
            return cls(index)
        (tmp / META_FILE).write_text(json.dumps({"version": VERSION, "papers": n, "source": dict(source or {})}))
        old = path.with_name(f".{path.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if path.exists():
            path.rename(old)
        tmp.rename(path)
        shutil.rmtree(old, ignore_errors=True)
        return cls(tantivy.Index.open(str(path)))

    @classmethod
    def open(cls, path: Path, source: Mapping[str, Any]) -> FullTextIndex | None:
        """The index written for ``source`` (the graph file it mirrors), or None when it is missing or stale."""
        try:
            meta = json.loads((path / META_FILE).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("version") != VERSION or meta.get("source") != dict(source):
            return None
        try:
            return cls(tantivy.Index.open(str(path)))
        except ValueError as exc:
            raise StoreError(f"{path}: damaged full-text index ({exc}); rebuild the store") from None

    def search(self, q: str, *, limit: int = 20, offset: int = 0, year: int | None = None,
               venue: str | None = None, ids: Iterable[str] | None = None) -> tuple[int, list[tuple[str, float]]]:
        """Papers matching every word and phrase of ``q`` (and the filters), best first, with the total."""
        text = query_text(q)
        if text is None:
            return 0, []
        query = self.index.parse_query(text, _FIELDS, field_boosts=_BOOSTS)
        must = [(tantivy.Occur.Must, query)]
        if year is not None:
            must.append((tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "year", year)))
        if venue is not None:
            must.append((tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "venue", _utf8(venue.casefold()))))
        if ids is not None:
            wanted = sorted({_utf8(i) for i in ids})
            if not wanted:
                return 0, []
            must.append((tantivy.Occur.Must, tantivy.Query.term_set_query(self.schema, "id", wanted)))
        if len(must) > 1:
            query = tantivy.Query.boolean_query(must)
        found = self.searcher.search(query, limit=offset + limit + PAD, count=True)
        doc = self.searcher.doc
        hits = sorted(((doc(addr)["id"][0], round(float(score), 6)) for score, addr in found.hits),
                      key=lambda h: (-h[1], h[0]))
        total = int(found.count)  # type: ignore[attr-defined]  # why: tantivy 0.27's stub omits SearchResult.count
        return total, hits[offset : offset + limit]
