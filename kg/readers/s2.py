"""Semantic Scholar Academic Graph papers (``/paper``, ``/paper/batch``, ``/paper/search`` and datasets)."""

from __future__ import annotations

from typing import Any

from kg.readers.ids import paper_id


def is_semantic_scholar(obj: dict[str, Any]) -> bool:
    return "paperId" in obj or "externalIds" in obj or "corpusId" in obj


def s2_fields(obj: dict[str, Any]) -> dict[str, object]:
    """The record fields of one paper. ``abstract`` may be null (publisher-restricted): that paper is skipped."""
    ext = obj.get("externalIds")
    if not isinstance(ext, dict):
        ext = {}
    own = obj.get("paperId") or obj.get("corpusId") or ext.get("CorpusId")
    venue = obj.get("venue") or None
    for key in ("publicationVenue", "journal"):
        if not venue and isinstance(obj.get(key), dict):
            venue = obj[key].get("name")
    authors = obj.get("authors")
    if isinstance(authors, list):
        authors = [a.get("name") if isinstance(a, dict) else a for a in authors]
        authors = [a for a in authors if a]
    return {
        "id": paper_id(arxiv=ext.get("ArXiv"), doi=ext.get("DOI"), own=f"s2:{own}" if own else None),
        "abstract": obj.get("abstract"),
        "title": obj.get("title"),
        "year": obj.get("year"),
        "published": obj.get("publicationDate"),
        "venue": venue,
        "authors": authors,
    }
