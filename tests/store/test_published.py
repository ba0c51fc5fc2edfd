"""A paper's `published` date, from the input to Cypher on both stores: stored as a date, compared with date()."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from kg.build import build
from kg.cache import record_hash
from kg.export import export
from kg.extract.types import Extraction
from kg.graph import PaperInput
from kg.readers import read_papers
from kg.store.base import Store
from kg.store.embedded import EmbeddedStore
from kg.store.snapshot import SNAPSHOT_FILE, Snapshot

RECORDS = [
    {"id": "arXiv:2401.00001", "title": "Early", "abstract": "We study early things.", "year": 2024,
     "published": "2024-01-02"},
    {"id": "arXiv:2506.00002", "title": "Late", "abstract": "We study late things.", "year": 2025,
     "published": "2025-06-03T10:11:12Z"},  # a timestamp keeps its date
    {"id": "arXiv:2512.00003", "title": "Undated", "abstract": "We study undated things.", "year": 2025},
]
LATE = "MATCH (p:Paper) WHERE p.published >= date('2025-06-01') RETURN p.id AS id ORDER BY id"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "papers.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in RECORDS))
    return path


def _build(store: Store, corpus: Path) -> None:
    # No extraction is needed to test a paper property: prime the cache with empty extractions.
    records = [r for r in read_papers([corpus]) if not hasattr(r, "reason")]
    store.cache.append((record_hash(r), PaperInput(r, Extraction())) for r in records)  # type: ignore[attr-defined]
    summary = build([corpus], store)
    assert summary.read == 3 and summary.extracted == 0


def test_published_compares_with_date_on_both_stores(empty_store: Store, corpus: Path) -> None:
    _build(empty_store, corpus)
    assert empty_store.cypher(LATE).rows == [["arXiv:2506.00002"]]
    rows = empty_store.cypher("MATCH (p:Paper) RETURN p.id, p.published, p.published.year ORDER BY p.id").rows
    assert rows == [["arXiv:2401.00001", "2024-01-02", 2024], ["arXiv:2506.00002", "2025-06-03", 2025],
                    ["arXiv:2512.00003", None, None]]
    node = empty_store.cypher("MATCH (p:Paper {id: 'arXiv:2401.00001'}) RETURN p").rows[0][0]
    assert node["published"] == "2024-01-02"
    later = empty_store.cypher("MATCH (p:Paper) WHERE p.published IS NOT NULL "
                               "RETURN p.id, toString(p.published + duration('P1M')) AS later ORDER BY p.id").rows
    assert later == [["arXiv:2401.00001", "2024-02-02"], ["arXiv:2506.00002", "2025-07-03"]]
    assert empty_store.cypher("MATCH (p:Paper) WHERE p.published = date('2024-01-02') RETURN p.id").rows == \
        [["arXiv:2401.00001"]]


def test_embedded_store_keeps_dates_as_text_on_disk(tmp_path: Path, corpus: Path) -> None:
    store = EmbeddedStore(tmp_path / "store", writable=True)
    _build(store, corpus)
    store.close()
    nodes = Snapshot(tmp_path / "store" / SNAPSHOT_FILE).graph()._node  # as stored, before `with_dates`
    published = {n: d.get("published") for n, d in nodes.items() if d["label"] == "Paper"}
    assert published == {"arXiv:2401.00001": "2024-01-02", "arXiv:2506.00002": "2025-06-03",
                         "arXiv:2512.00003": None}
    for fresh in (True, False):  # opened twice: the dates are dates each time
        reopened = EmbeddedStore(tmp_path / "store")
        assert reopened.cypher(LATE).rows == [["arXiv:2506.00002"]]
        out = tmp_path / f"export-{fresh}.jsonl"
        export(reopened, "jsonl", out)
        assert b'"published":"2025-06-03"' in out.read_bytes()
        reopened.close()


def test_a_bad_published_value_skips_the_record_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(orjson.dumps({"id": "x", "abstract": "Some text.", "published": "2024-02-30"}) + b"\n")
    (skip,) = list(read_papers([path]))
    assert skip.message() == f"{path}:1: skipped: field 'published' is not a date ('2024-02-30', expected YYYY-MM-DD)"
