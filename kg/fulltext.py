"""Full-text search over papers' titles and abstracts: a tantivy (BM25) index, written with the store.

Words are stemmed (tantivy's ``en_stem``: lower-cased, split at anything not a letter or digit, English
Snowball stems), so ``language models`` finds "language model". Every word of a query must occur in the
title or the abstract; ``"a quoted phrase"`` must occur as a phrase; a title match counts double. The index
holds the papers in id order and is written by one thread, so the same papers give the same index, and
equal scores are ordered by paper id: results and counts are the same after every rebuild.

A written index lists its files with their sizes and CRC-32s (``kg-fulltext.json``, version 2); opening it checks
them all (milliseconds: the index of 83k abstracts is about 40 MB), so a damaged file is one clear StoreError (503
over HTTP) naming it, never a wrong hit. What tantivy itself reports while searching is turned into the same.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import tantivy

from kg.errors import StoreError
from kg.files import NotAFile, open_regular

FULLTEXT_DIR = "fulltext"
META_FILE = "kg-fulltext.json"
VERSION = 2  # 2: META_FILE lists every file of the index with its size and CRC-32, checked on opening
READABLE = (1, 2)  # 1: written by kg before the checksums; opened unchecked (kg upgrade or a build rewrites it)
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


def _checksum(path: Path) -> list[int]:
    """[size, CRC-32] of a regular file."""
    size, crc = 0, 0
    with open_regular(path) as fh:
        while chunk := fh.read(1 << 20):
            size += len(chunk)
            crc = zlib.crc32(chunk, crc)
    return [size, crc]


def _manifest(folder: Path) -> dict[str, list[int]]:
    """Every file of the index in ``folder`` but tantivy's (empty) lock files: name -> [size, CRC-32]."""
    return {f.name: _checksum(f) for f in sorted(folder.iterdir())
            if f.name != META_FILE and not f.name.endswith(".lock")}


def _remove(path: Path) -> None:
    """Remove ``path`` whatever it is (a folder, a file, a link); nothing when absent."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        path.unlink(missing_ok=True)


def _damaged(path: Path | None, why: str) -> StoreError:
    """The error for a damaged index file ``path`` (inside ``<store>/fulltext``): names it and how to rebuild."""
    if path is None:
        return StoreError(f"the full-text index cannot be read ({why})")
    from kg.store.snapshot import rebuild_hint  # not at import: the store package imports this module

    store = path.parent if path.name == FULLTEXT_DIR else path.parent.parent
    return StoreError(f"{path}: damaged full-text index ({why}); {rebuild_hint(store)}")


class FullTextIndex:
    """An open index: ``search`` gives (total, [(paper id, score)]), best first."""

    def __init__(self, index: tantivy.Index, path: Path | None = None) -> None:
        self.index = index
        self.path = path
        self.schema = _schema()
        try:
            index.reload()
            self.searcher = index.searcher()
        except ValueError as exc:
            raise _damaged(path, str(exc)) from None

    @classmethod
    def build(cls, papers: Iterable[tuple[str, Mapping[str, Any]]], path: Path | None = None,
              source: Mapping[str, Any] | None = None) -> FullTextIndex:
        """Index ``(id, paper properties)`` pairs, in memory or (``path``) written whole to that directory."""
        tmp = None
        if path is not None:
            tmp = path.with_name(f".{path.name}.tmp")
            _remove(tmp)
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
        del writer, index  # tantivy's files are all written: what the manifest lists is what is opened
        meta = {"version": VERSION, "papers": n, "source": dict(source or {}), "files": _manifest(tmp)}
        (tmp / META_FILE).write_text(json.dumps(meta))
        old = path.with_name(f".{path.name}.old")
        _remove(old)
        if os.path.lexists(path):
            path.rename(old)
        tmp.rename(path)
        _remove(old)
        return cls(tantivy.Index.open(str(path)), path)

    @classmethod
    def open(cls, path: Path, source: Mapping[str, Any]) -> FullTextIndex | None:
        """The index written for ``source`` (the graph file it mirrors), its files checked against their
        checksums; None when it is missing or stale (it is built in memory then), a StoreError when damaged."""
        meta = _meta(path)
        if meta is None or meta.get("version") not in READABLE or meta.get("source") != dict(source):
            return None
        if meta["version"] >= 2:
            files = meta.get("files")
            if not isinstance(files, dict) or "meta.json" not in files:
                raise _damaged(path / META_FILE, "its list of files")
            for name, want in files.items():
                if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
                    raise _damaged(path / META_FILE, "its list of files")
                try:
                    got = _checksum(path / name)
                except NotAFile as exc:
                    raise _damaged(path / name, f"{exc.what}, not a regular file") from None
                except OSError as exc:  # missing
                    raise _damaged(path / name, exc.strerror or type(exc).__name__) from None
                if got != want:
                    raise _damaged(path / name, "checksum")
        try:
            return cls(tantivy.Index.open(str(path)), path)
        except ValueError as exc:
            raise _damaged(path, str(exc)) from None

    @staticmethod
    def current(path: Path) -> bool:
        """Whether the index in ``path`` was written by this kg's format (with its checksums)."""
        meta = _meta(path)
        return meta is not None and meta.get("version") == VERSION

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
        try:  # the files were checked when opened; what tantivy still finds wrong is damage, not the query's fault
            found = self.searcher.search(query, limit=offset + limit + PAD, count=True)
            doc = self.searcher.doc
            hits = sorted(((doc(addr)["id"][0], round(float(score), 6)) for score, addr in found.hits),
                          key=lambda h: (-h[1], h[0]))
            total = int(found.count)  # type: ignore[attr-defined]  # why: tantivy 0.27's stub omits SearchResult.count
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _damaged(self.path, str(exc) or type(exc).__name__) from None
        return total, hits[offset : offset + limit]


def _meta(path: Path) -> dict[str, Any] | None:
    """``kg-fulltext.json`` of the index in ``path``; None when absent or unreadable (the index is built in memory
    then: a right answer, only slower). Something else than a file in its place is a StoreError."""
    try:
        with open_regular(path / META_FILE) as fh:
            meta = json.loads(fh.read())
    except NotAFile as exc:
        raise _damaged(path / META_FILE, f"{exc.what}, not a regular file") from None
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None
