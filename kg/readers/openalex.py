"""OpenAlex works (``/works`` API results, snapshot lines): the abstract rebuilt from its inverted index."""

from __future__ import annotations

from typing import Any

from kg.readers.base import MAX_ABSTRACT_CHARS
from kg.readers.ids import arxiv_id, paper_id


def is_openalex(obj: dict[str, Any]) -> bool:
    return "abstract_inverted_index" in obj or "authorships" in obj or str(obj.get("id", "")).startswith(
        "https://openalex.org/")


class BadIndex(ValueError):
    """The inverted index is not {word: [position, ...]} or would rebuild a text over the abstract limit."""


def rebuild_abstract(index: object) -> str | None:
    """``{"Deep": [0], "nets": [1, 3], "learn": [2]}`` -> "Deep nets learn nets"; None for a missing index.

    Positions are sorted rather than used as list indexes, so a hostile index with a position of 10^12 costs
    nothing; the number of positions is bounded by the abstract limit.
    """
    if index is None:
        return None
    if not isinstance(index, dict):
        raise BadIndex(f"got {type(index).__name__}")
    words: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(isinstance(p, int) and not isinstance(p, bool)
                                                      for p in positions):
            raise BadIndex(f"positions of {word[:30]!r} are not a list of integers")
        for p in positions:
            words[p] = word
        if len(words) > MAX_ABSTRACT_CHARS:
            raise BadIndex(f"over {MAX_ABSTRACT_CHARS:,} words")
    return " ".join(words[p] for p in sorted(words)) or None


def _name(obj: object, *keys: str) -> object:
    """The first ``display_name`` found under ``keys`` (nested dicts), e.g. primary_location.source."""
    for key in keys:
        cur: object = obj
        for k in key.split("."):
            cur = cur.get(k) if isinstance(cur, dict) else None
        if isinstance(cur, dict) and isinstance(cur.get("display_name"), str):
            return cur["display_name"]
    return None


def openalex_fields(obj: dict[str, Any]) -> dict[str, object]:
    """The record fields of one work; raises BadIndex for an unusable abstract_inverted_index."""
    abstract = obj.get("abstract") or rebuild_abstract(obj.get("abstract_inverted_index"))
    ids = obj.get("ids")
    if not isinstance(ids, dict):
        ids = {}
    arxiv = None
    for loc in obj.get("locations") or []:  # an arXiv copy names the paper the way the arXiv corpus does
        if isinstance(loc, dict) and arxiv_id(loc.get("landing_page_url")):
            arxiv = loc["landing_page_url"]
            break
    own = obj.get("id")
    if isinstance(own, str) and own.startswith("https://openalex.org/"):
        own = "openalex:" + own.rsplit("/", 1)[1]
    authors = [a["author"]["display_name"] for a in obj.get("authorships") or []
               if isinstance(a, dict) and isinstance(a.get("author"), dict)
               and isinstance(a["author"].get("display_name"), str)]
    return {
        "id": paper_id(arxiv=arxiv, doi=obj.get("doi") or ids.get("doi"), own=own),
        "abstract": abstract,
        "title": obj.get("title") or obj.get("display_name"),
        "year": obj.get("publication_year"),
        "published": obj.get("publication_date"),
        "venue": _name(obj, "primary_location.source", "host_venue", "best_oa_location.source"),
        "authors": authors,
    }
