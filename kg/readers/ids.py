"""Paper ids from what a source knows: an arXiv id, else a DOI, else the source's own id, so that one paper read
from two sources (an arXiv feed and a BibTeX export) is one node."""

from __future__ import annotations

import re

_ARXIV = re.compile(r"^(?:arxiv:|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)?"
                    r"(?P<id>\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?(?:\.pdf)?$", re.IGNORECASE)
_DOI = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)?(?P<id>10\.\d{4,9}/\S+)$", re.IGNORECASE)


def arxiv_id(value: object) -> str | None:
    """``2401.00631v2``, ``arXiv:2401.00631``, ``https://arxiv.org/abs/cs/0112017v1`` -> ``arXiv:2401.00631``."""
    if not isinstance(value, str):
        return None
    m = _ARXIV.match(value.strip())
    return "arXiv:" + m.group("id") if m else None


def doi_id(value: object) -> str | None:
    """``https://doi.org/10.1038/NATURE12373`` -> ``doi:10.1038/nature12373`` (DOIs are case-insensitive)."""
    if not isinstance(value, str):
        return None
    m = _DOI.match(value.strip())
    return "doi:" + m.group("id").lower() if m else None


_ARXIV_DOI = re.compile(r"^doi:10\.48550/arxiv\.(.+)$")  # the DOIs DataCite gives arXiv papers


def paper_id(*, arxiv: object = None, doi: object = None, own: object = None) -> object:
    """The best id available; ``own`` (the source's id, any type) is returned as is for the record's checks."""
    d = doi_id(doi)
    m = _ARXIV_DOI.match(d) if d else None
    return arxiv_id(arxiv) or (arxiv_id(m.group(1)) if m else None) or d or own
