"""JSON Lines and JSON documents of papers: kg's own records, OpenAlex works and Semantic Scholar papers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from kg.readers.base import PaperRecord, Skip, decode, decode_document, make_record, read_lines, read_whole
from kg.readers.openalex import BadIndex, is_openalex, openalex_fields
from kg.readers.s2 import is_semantic_scholar, s2_fields

_KG_FIELDS = ("id", "title", "abstract", "year", "venue", "authors", "published")


def record_from_json(obj: object, where: str) -> PaperRecord | Skip:
    """One decoded JSON object, in kg's own shape or an OpenAlex or Semantic Scholar one, as a PaperRecord."""
    if not isinstance(obj, dict):
        return Skip(where, "not a JSON object", f"got {type(obj).__name__}")
    if "abstract" in obj and not is_semantic_scholar(obj) and "abstract_inverted_index" not in obj:
        return make_record(where, **{k: obj.get(k) for k in _KG_FIELDS})
    if is_openalex(obj):
        try:
            return make_record(where, **openalex_fields(obj))
        except BadIndex as exc:
            return Skip(where, "field 'abstract_inverted_index' is unusable", str(exc))
    if is_semantic_scholar(obj):
        return make_record(where, **s2_fields(obj))
    return make_record(where, **{k: obj.get(k) for k in _KG_FIELDS})


def read_jsonl(path: Path) -> Iterator[PaperRecord | Skip]:
    """One JSON object per line; bad lines become Skips."""
    for n, raw in read_lines(path):
        if isinstance(raw, Skip):  # a line too long, or the file unreadable from here (then it is the last)
            yield raw
            continue
        where = f"{path}:{n}"
        text = decode(raw, where)
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


def _entries(doc: Any) -> list[Any] | None:
    """The papers of an API answer: a list, OpenAlex's ``results``, Semantic Scholar's ``data``, or one paper."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        for key in ("results", "data"):
            if isinstance(doc.get(key), list):
                return doc[key]
        return [doc]
    return None


def read_json(path: Path) -> Iterator[PaperRecord | Skip]:
    """A ``.json`` file: one JSON document (a list of papers, an API answer, a paper), or JSON Lines after all."""
    data = read_whole(path)
    if isinstance(data, Skip):
        yield data
        return
    text = decode_document(data, f"{path}:1")
    if isinstance(text, Skip):
        yield text
        return
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        head = text.lstrip()[:1]
        if head == "{" and "\n" in text.strip():  # several objects, one a line: JSON Lines named .json
            yield from read_jsonl(path)
            return
        yield Skip(f"{path}:1", "malformed JSON", str(exc).split(":")[0])
        return
    entries = _entries(doc)
    if entries is None:
        yield Skip(f"{path}:1", "not a JSON object or list", f"got {type(doc).__name__}")
        return
    for i, obj in enumerate(entries, 1):
        yield record_from_json(obj, f"{path}: entry {i}")
